"""Input-specific sample sizes (rsutils.sequential.planned): the plan and its guarantee."""

from __future__ import annotations

import math

import pytest
from scipy.stats import norm

import rsutils as rs
from rsutils.core.confidence import min_samples_for_radius
from rsutils.sequential import PlannedDraws, settle
from rsutils.sequential.coverage import false_rate
from rsutils.sequential.planned import expected_radius as radius_at


def expected_radius(smooth, p, n, alpha, dim):
    return radius_at(smooth.noise, smooth.norm, p * n, n, alpha, dim)


def planned_draws(smooth, p_hat, n_max, alpha, loss, dim, min_draws=100):
    return PlannedDraws(n_max, alpha, loss, min_draws).draws_for(smooth, p_hat, dim)


SIGMA, ALPHA = 0.5, 0.001


@pytest.fixture
def smooth(line_2d) -> rs.Smooth:
    return rs.Smooth(line_2d, 2, rs.Gaussian(SIGMA), input_range=None)


def test_at_p_hat_one_the_plan_is_the_floor_of_the_ceiling_minus_the_loss(smooth) -> None:
    """At p = 1 the radius of n draws is σΦ⁻¹(alpha^(1/n)), so the plan is the fewest
    draws that certify the ceiling of n_max draws less the loss."""
    n_max, loss = 10_000, 0.05
    ceiling = SIGMA * norm.ppf(ALPHA ** (1 / n_max))
    assert expected_radius(smooth, 1.0, n_max, ALPHA, 2) == pytest.approx(ceiling)
    planned = planned_draws(smooth, 1.0, n_max, ALPHA, loss, 2)
    assert planned == min_samples_for_radius((ceiling - loss) / SIGMA, ALPHA)


@pytest.mark.parametrize("p_hat", [0.3, 0.62, 0.8, 0.97, 0.999, 1.0])
@pytest.mark.parametrize("loss", [0.0, 0.02, 0.1])
def test_the_plan_is_the_fewest_draws_within_the_loss(smooth, p_hat, loss) -> None:
    n_max = 3000
    planned = planned_draws(smooth, p_hat, n_max, ALPHA, loss, 2, min_draws=50)
    target = expected_radius(smooth, p_hat, n_max, ALPHA, 2) - loss
    assert 50 <= planned <= n_max
    assert expected_radius(smooth, p_hat, planned, ALPHA, 2) >= target
    if planned > 50:
        assert expected_radius(smooth, p_hat, planned - 1, ALPHA, 2) < target


def test_no_loss_is_certify_with_n_max(smooth, line_2d) -> None:
    x = line_2d.point_at_distance(0.3)  # pA = Φ(0.6) = 0.73: every draw counts
    plan = PlannedDraws(800, ALPHA, 0.0)
    planned = settle(plan, smooth, x, n0=50, batch_size=300, seed=4, index=9)
    assert planned.prediction == 1 and planned.n == 800
    assert planned == smooth.certify(x, 50, 800, ALPHA, batch_size=128, seed=4, index=9)


def test_an_input_that_would_abstain_gets_the_fewest_draws(smooth) -> None:
    assert planned_draws(smooth, 0.45, 10_000, ALPHA, 0.0, 2, min_draws=60) == 60


@pytest.mark.parametrize("loss", [-0.1, math.nan])
def test_a_bad_loss_is_refused(smooth, loss) -> None:
    with pytest.raises(ValueError, match="radius_loss"):
        planned_draws(smooth, 0.9, 100, ALPHA, loss, 2)


def test_coverage_false_certificates_within_alpha_plus_three_standard_errors() -> None:
    """pA = 0.9 at distance d from a linear boundary: a radius beyond d is false."""
    run = false_rate(PlannedDraws(2000, 0.05, 0.1, min_draws=20), 2000)
    assert run.runs == 2000 and run.holds


def test_the_coverage_check_catches_a_plan_whose_bound_is_weaker_than_it_claims() -> None:
    """Power: the same plan, its bound at four times the level it claims, fails the check."""

    class Overclaimed(PlannedDraws):
        def settle(self, smooth, draws):
            cert = super().settle(smooth, draws)
            return smooth.certificate(
                cert.count, cert.n, cert.selected, n0=draws.n0, alpha=4 * self.alpha,
                seed=draws.seed, index=draws.index, dim=draws.dim,
            )  # fmt: skip

    assert not false_rate(Overclaimed(2000, 0.05, 0.1, min_draws=20), 2000).holds
