"""Alpha spent over looks (rsutils.sequential.spending): levels, draw counts, coverage."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy.stats import norm

import rsutils as rs
from rsutils.core.confidence import min_samples_for_radius
from rsutils.sequential import Decide, LookSchedule, settle
from rsutils.sequential.coverage import false_rate, radius_beyond


def decide(smooth, x, radii, n0, schedule, **where):
    """The decisions of the spending test at ``radii``, live."""
    return settle(Decide(schedule, tuple(radii)), smooth, x, n0=n0, **where)


class Constant(torch.nn.Module):
    """Class 0 on every input: pA = 1 exactly."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.zeros(x.shape[0], dtype=torch.long)


def test_geometric_schedule_spends_alpha_with_half_at_the_last_look() -> None:
    schedule = LookSchedule.geometric(1000, 0.01, first=100, growth=2.0)
    assert schedule.looks == (100, 200, 400, 800, 1000)
    assert schedule.alphas[-1] == pytest.approx(0.005)
    assert schedule.alphas[:-1] == pytest.approx((0.00125,) * 4)
    assert schedule.alpha == pytest.approx(0.01)
    assert LookSchedule.geometric(50, 0.01, first=100) == LookSchedule((50,), (0.01,))


@pytest.mark.parametrize(
    ("looks", "alphas", "match"),
    [
        ((10, 10), (0.01, 0.01), "increase strictly"),
        ((10, 20), (0.01,), "one level per look"),
        ((10, 20), (0.01, 0.0), "positive"),
        ((10, 20), (0.6, 0.6), "alpha must lie"),
        ((0, 20), (0.01, 0.01), "positive integer"),
    ],
)
def test_bad_schedules_are_refused(looks, alphas, match) -> None:
    with pytest.raises(ValueError, match=match):
        LookSchedule(looks, alphas)


def test_draw_count_where_the_answer_is_known_in_closed_form() -> None:
    """pA = 1: look k certifies r exactly when σΦ⁻¹(alpha_k^(1/n_k)) >= r."""
    sigma, n0 = 0.5, 10
    smooth = rs.Smooth(Constant().eval(), 2, rs.Gaussian(sigma))
    schedule = LookSchedule.geometric(4096, 0.001, first=16)
    x = torch.full((1, 4, 4), 0.5)
    for radius in (0.0, 0.3, 0.8, 1.2, 1.5, 1.7):
        expected = next(
            (
                n
                for n, a in zip(schedule.looks, schedule.alphas, strict=True)
                if a ** (1 / n) >= 0.5 and sigma * norm.ppf(a ** (1 / n)) >= radius
            ),
            None,
        )
        (decision,) = decide(smooth, x, [radius], n0, schedule, seed=1)
        assert decision.certified == (expected is not None)
        assert decision.draws == (expected or schedule.n_max)
        assert decision.forward_passes == n0 + decision.draws
        # No valid test certifies r with fewer draws than the floor at its own level.
        if expected:
            floor = min_samples_for_radius(radius / sigma, decision.alpha_spent)
            assert floor <= decision.draws
            assert decision.draws < 2 * floor or decision.look == 1


def test_looks_are_prefixes_of_certifys_stream_and_one_pass_equals_separate_ones(cnn) -> None:
    smooth = rs.Smooth(cnn, 10, rs.Gaussian(0.5))
    x = torch.rand(1, 28, 28, generator=torch.Generator().manual_seed(0))
    schedule = LookSchedule.geometric(600, 0.001, first=50)
    radii = [0.0, 0.2, 0.4, 5.0]
    together = decide(smooth, x, radii, 40, schedule, batch_size=64, seed=3, index=7)
    alone = [decide(smooth, x, [r], 40, schedule, batch_size=200, seed=3, index=7) for r in radii]
    assert list(together) == [a[0] for a in alone]
    cert = smooth.certify(x, 40, 600, 0.001, batch_size=128, seed=3, index=7)
    counter = smooth.prefix_counter(x, 600, 100, seed=3, index=7)
    for decision in together:
        assert decision.selected == cert.selected
        assert decision.count == int(counter.advance(decision.draws)[cert.selected])
        counter = smooth.prefix_counter(x, 600, 100, seed=3, index=7)
    whole = smooth.sample_counts(x, 600, 128, seed=3, index=7)
    assert np.array_equal(counter.advance(600).numpy(), whole)
    assert whole[cert.selected] == cert.count


@pytest.mark.parametrize("radius", [-0.1, math.nan, math.inf, True])
def test_a_bad_radius_is_refused(radius) -> None:
    smooth = rs.Smooth(Constant().eval(), 2, rs.Gaussian(0.5))
    with pytest.raises(ValueError, match="radius"):
        decide(smooth, torch.zeros(1, 2, 2), [radius], 10, LookSchedule((10,), (0.01,)))


def test_coverage_false_certificates_within_alpha_plus_three_standard_errors() -> None:
    """pA = 0.9 at the exact radius d of a linear classifier; decisions just beyond d
    are all false (rsutils.sequential.coverage, on recorded Bernoulli draws)."""
    schedule = LookSchedule.geometric(2000, 0.05, first=25)
    run = false_rate(Decide(schedule, (radius_beyond(),)), 2000)
    assert run.bound == pytest.approx(0.05 + 3 * math.sqrt(0.05 * 0.95 / 2000))
    assert run.holds
    # The check has power: testing every look at the full alpha (no spending) fails it.
    naive = LookSchedule(schedule.looks, (0.05,) * len(schedule.looks))
    assert not false_rate(Decide(naive, (radius_beyond(),)), 2000, claimed_alpha=0.05).holds


def test_decisions_are_deterministic_for_a_seed(cnn) -> None:
    smooth = rs.Smooth(cnn, 10, rs.Gaussian(0.25))
    x = torch.rand(1, 28, 28, generator=torch.Generator().manual_seed(1))
    schedule = LookSchedule.geometric(400, 0.001)
    (first,) = decide(smooth, x, [0.1], 30, schedule, seed=5)
    assert decide(smooth, x, [0.1], 30, schedule, seed=5)[0] == first
    assert np.isfinite(first.pA_lower) and first.pA_lower <= first.pA_upper
