"""Sequential looks at the radius (rsutils.sequential.radius_looks): rule, replay, coverage."""

from __future__ import annotations

import math

import pytest
import torch
from scipy.stats import norm

import rsutils as rs
from rsutils.sequential import LookSchedule, RadiusLooks, record_draws, replay, settle
from rsutils.sequential.coverage import CoverageSetting, false_rate


def certify_looks(smooth, x, n0, schedule, radius_loss, batch_size=1000, *, seed, index=0,
                  **options):  # fmt: skip
    procedure = RadiusLooks(schedule, radius_loss, **options)
    return settle(procedure, smooth, x, n0=n0, batch_size=batch_size, seed=seed, index=index)


SIGMA, ALPHA = 0.5, 0.001


class Constant(torch.nn.Module):
    """Class 0 on every input: pA = 1 exactly."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.zeros(x.shape[0], dtype=torch.long)


@pytest.fixture
def smooth(line_2d) -> rs.Smooth:
    return rs.Smooth(line_2d, 2, rs.Gaussian(SIGMA), input_range=None)


@pytest.mark.parametrize("loss", [0.0, 0.05, 0.2, 0.5])
def test_at_pA_one_the_stopping_look_is_known_in_closed_form(loss) -> None:
    """pA = 1: look k certifies σΦ⁻¹(alpha_k^(1/n_k)) and n_max draws would give the
    ceiling σΦ⁻¹(alpha^(1/n_max)), so the procedure stops at the first look within
    ``loss`` of the ceiling (or the last)."""
    smooth = rs.Smooth(Constant().eval(), 2, rs.Gaussian(SIGMA))
    schedule = LookSchedule.geometric(4096, ALPHA, first=16)
    ceiling = SIGMA * norm.ppf(ALPHA ** (1 / 4096))
    levels = zip(schedule.looks, schedule.alphas, strict=True)
    radii = [SIGMA * norm.ppf(a ** (1 / n)) for n, a in levels]
    stop = next((k for k, r in enumerate(radii) if r >= ceiling - loss), len(radii) - 1)
    answer = certify_looks(smooth, torch.full((1, 4, 4), 0.5), 10, schedule, loss, seed=3)
    assert answer.look == stop + 1 and answer.certificate.n == schedule.looks[stop]
    assert answer.radius == pytest.approx(radii[stop], rel=1e-9)
    assert answer.alpha_spent == schedule.alphas[stop] == answer.certificate.alpha
    assert answer.alpha == pytest.approx(ALPHA)
    assert answer.forward_passes == 10 + schedule.looks[stop]


def test_one_look_is_certify(smooth, line_2d) -> None:
    x = line_2d.point_at_distance(0.4)
    schedule = LookSchedule((700,), (ALPHA,))
    answer = certify_looks(smooth, x, 40, schedule, 0.05, batch_size=256, seed=5, index=2)
    assert answer.certificate == smooth.certify(x, 40, 700, ALPHA, seed=5, index=2)


@pytest.mark.parametrize("judge", ["estimate", "upper"])
@pytest.mark.parametrize("keep_best", [False, True])
def test_the_replay_gives_the_live_answer(smooth, line_2d, judge, keep_best) -> None:
    schedule = LookSchedule.geometric(3000, ALPHA, first=50)
    for index, distance in enumerate((-0.1, 0.05, 0.3, 0.9, 1.6)):
        x = line_2d.point_at_distance(abs(distance), side=1 if distance >= 0 else 0)
        record = record_draws(smooth, x, 30, 3000, batch_size=512, seed=8, index=index)
        options = {"judge": judge, "keep_best": keep_best}
        live = certify_looks(smooth, x, 30, schedule, 0.05, seed=8, index=index, **options)
        assert replay(RadiusLooks(schedule, 0.05, **options), smooth, record) == live


def test_the_upper_judge_reads_at_least_the_estimates_draws(smooth, line_2d) -> None:
    schedule = LookSchedule.geometric(4000, ALPHA, first=50)
    for index in range(6):
        x = line_2d.point_at_distance(0.2 * index + 0.1)
        estimate = certify_looks(smooth, x, 30, schedule, 0.05, seed=1, index=index)
        upper = certify_looks(smooth, x, 30, schedule, 0.05, seed=1, index=index, judge="upper")
        assert upper.look >= estimate.look


def test_an_input_that_abstains_at_n_max_too_stops_early(smooth, line_2d) -> None:
    x = line_2d.point_at_distance(0.0)  # pA = 1/2: n_max draws abstain as well
    schedule = LookSchedule.geometric(8000, ALPHA, first=100)
    answer = certify_looks(smooth, x, 30, schedule, 0.05, seed=2, index=4)
    assert answer.prediction == rs.ABSTAIN and answer.look < len(schedule.looks)


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"radius_loss": -0.1}, "radius_loss"),
        ({"radius_loss": math.nan}, "radius_loss"),
        ({"judge": "median"}, "judge must be"),
        ({"gamma": 0.0}, "alpha must lie"),
        ({"schedule": LookSchedule((50, 100), (1e-4, 1e-4), randomized=True)}, "randomized"),
    ],
)
def test_bad_input_is_refused(smooth, line_2d, options, match) -> None:
    arguments = {
        "n0": 20, "schedule": LookSchedule((50, 100), (1e-4, 1e-4)), "radius_loss": 0.05,
    }  # fmt: skip
    arguments |= options
    with pytest.raises(ValueError, match=match):
        certify_looks(smooth, line_2d.point_at_distance(0.3), **arguments, seed=0)


@pytest.mark.parametrize("keep_best", [False, True])
def test_coverage_false_certificates_within_alpha_plus_three_standard_errors(keep_best) -> None:
    """pA = 0.9 at distance d from a linear boundary: a radius beyond d is false. With no
    loss allowed every run reads all looks, and ``keep_best`` takes the largest bound
    of eight: the union bound is what keeps it within alpha."""
    schedule = LookSchedule.geometric(2000, 0.05, first=16)
    procedure = RadiusLooks(schedule, 0.0, keep_best=keep_best)
    run = false_rate(procedure, 2000, CoverageSetting(seed=21))
    assert run.runs == 2000 and run.holds


def test_power_without_alpha_spending_the_rate_exceeds_alpha() -> None:
    """The wrong procedure: every look at the full 0.05, the best of them kept. It
    must fail the check that the procedure above passes."""
    looks = LookSchedule.geometric(2000, 0.05, first=16).looks
    wrong = RadiusLooks(LookSchedule(looks, (0.05,) * len(looks)), 0.0, keep_best=True)
    run = false_rate(wrong, 2000, CoverageSetting(seed=21), claimed_alpha=0.05)
    assert not run.holds
