"""True-label evaluation (Decide with true_label): closed forms, agreement with the
selected class's decisions, coverage at the worst case, bad input."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
import torch
from scipy.stats import norm

import rsutils as rs
from rsutils.core.confidence import min_samples_for_radius
from rsutils.sequential import Decide, LookSchedule, settle
from rsutils.sequential.coverage import false_rate, radius_beyond


def decide_label_radii(smooth, x, label, radii, test, batch_size=1000, **where):
    """The true label's decisions at ``radii`` by ``test``, live."""
    procedure = Decide(test, tuple(radii), true_label=True)
    return list(settle(procedure, smooth, x, label=label, batch_size=batch_size, **where))


def decide_label(smooth, x, label, radius, test, **where):
    (decision,) = decide_label_radii(smooth, x, label, [radius], test, **where)
    return decision


def decide_radii(smooth, x, radii, n0, test, batch_size, **where):
    """The selected class's decisions at ``radii``, live."""
    procedure = Decide(test, tuple(radii))
    return list(settle(procedure, smooth, x, n0=n0, batch_size=batch_size, **where))


class Constant(torch.nn.Module):
    """Class 0 on every input: p_0 = 1 and p_1 = 0 exactly."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.zeros(x.shape[0], dtype=torch.long)


SIGMA = 0.5
SCHEDULE = LookSchedule.geometric(4096, 0.001, first=16)
RADII = (0.0, 0.3, 0.8, 1.2, 1.5, 1.7)


def constant_smooth() -> rs.Smooth:
    return rs.Smooth(Constant().eval(), 2, rs.Gaussian(SIGMA))


def test_at_p_one_the_label_is_certified_at_the_first_look_past_the_floor() -> None:
    """p_y = 1: look k certifies r exactly when σΦ⁻¹(alpha_k^(1/n_k)) >= r (all n_k draws
    in the label's class), and the forward passes are that n_k: no selection draws."""
    x = torch.full((1, 4, 4), 0.5)
    decisions = decide_label_radii(constant_smooth(), x, 0, RADII, SCHEDULE, seed=1)
    for radius, decision in zip(RADII, decisions, strict=True):
        expected = next(
            (
                n
                for n, a in zip(SCHEDULE.looks, SCHEDULE.alphas, strict=True)
                if a ** (1 / n) >= 0.5 and SIGMA * norm.ppf(a ** (1 / n)) >= radius
            ),
            None,
        )
        assert decision.certified == (expected is not None), radius
        assert decision.draws == (expected or SCHEDULE.n_max)
        assert decision.count == decision.draws
        assert decision.n0 == 0 and decision.forward_passes == decision.draws
        assert decision.selected == 0 and decision.prediction == (0 if expected else rs.ABSTAIN)
        if expected:
            # The floor at the look's own level: no non-randomised test certifies r with
            # fewer draws, and the geometric looks overshoot it by less than their growth.
            floor = min_samples_for_radius(radius / SIGMA, decision.alpha_spent)
            assert floor <= decision.draws
            assert decision.draws < 2 * floor or decision.look == 1
            assert decision.pA_lower == pytest.approx(decision.alpha_spent ** (1 / decision.draws))
        assert decision == decide_label(constant_smooth(), x, 0, radius, SCHEDULE, seed=1)


def test_a_label_that_never_occurs_stops_at_the_first_look() -> None:
    """p_y = 0: the upper bound 1 - alpha_1^(1/n_1) is below 1/2, so no radius can be
    certified and every radius is settled after n_1 draws."""
    x = torch.full((1, 4, 4), 0.5)
    n, level = SCHEDULE.looks[0], SCHEDULE.alphas[0]
    assert 1 - level ** (1 / n) < 0.5
    for decision in decide_label_radii(constant_smooth(), x, 1, RADII, SCHEDULE, seed=1):
        assert not decision.certified and decision.prediction == rs.ABSTAIN
        assert (decision.look, decision.draws, decision.count) == (1, n, 0)
        assert decision.pA_upper == pytest.approx(1 - level ** (1 / n))


def test_label_decisions_are_decide_without_the_selection_draws(cnn) -> None:
    """Where decide selects the label, both look at the same counts after the same
    draws: the decisions differ only in n0 (so in forward passes)."""
    smooth = rs.Smooth(cnn, 10, rs.Gaussian(0.5))
    schedule = LookSchedule.geometric(600, 0.001, first=50)
    radii = [0.0, 0.2, 0.4, 5.0]
    for index in range(3):
        x = torch.rand(1, 28, 28, generator=torch.Generator().manual_seed(index))
        chosen = decide_radii(smooth, x, radii, 40, schedule, batch_size=64, seed=3, index=index)
        label = chosen[0].selected
        given = decide_label_radii(smooth, x, label, radii, schedule, 128, seed=3, index=index)
        assert given == [dataclasses.replace(d, n0=0) for d in chosen]
        for g, c in zip(given, chosen, strict=True):
            assert c.forward_passes - g.forward_passes == 40
        # Another label is tested on the same draws: its count is that class's.
        other = (label + 1) % 10
        counter = smooth.prefix_counter(x, 600, 100, seed=3, index=index)
        decision = decide_label(smooth, x, other, 0.0, schedule, seed=3, index=index)
        assert decision.selected == other
        assert decision.count == int(counter.advance(decision.draws)[other])


def test_decisions_are_deterministic_for_a_seed(cnn) -> None:
    smooth = rs.Smooth(cnn, 10, rs.Gaussian(0.25))
    x = torch.rand(1, 28, 28, generator=torch.Generator().manual_seed(1))
    schedule = LookSchedule.geometric(400, 0.001)
    first = decide_label(smooth, x, 3, 0.1, schedule, seed=5)
    assert decide_label(smooth, x, np.int64(3), 0.1, schedule, seed=5) == first
    assert decide_label(smooth, x, torch.tensor(3), 0.1, schedule, seed=5) == first
    assert np.isfinite(first.pA_lower) and first.pA_lower <= first.pA_upper


@pytest.mark.parametrize(
    ("label", "match"),
    [
        (-1, r"lie in \[0, 2\)"),
        (2, r"lie in \[0, 2\)"),
        (True, "int\\(label\\)"),
        (1.0, "int\\(label\\)"),
        ("cat", "int\\(label\\)"),
        (torch.tensor(1.0), "int\\(label\\)"),
    ],
)
def test_a_bad_label_is_refused(label, match) -> None:
    with pytest.raises(ValueError, match=match):
        decide_label(constant_smooth(), torch.zeros(1, 2, 2), label, 0.1, SCHEDULE)


@pytest.mark.parametrize("radius", [-0.1, math.nan, math.inf, True])
def test_a_bad_radius_is_refused(radius) -> None:
    with pytest.raises(ValueError, match="radius"):
        decide_label(constant_smooth(), torch.zeros(1, 2, 2), 0, radius, SCHEDULE)


def test_coverage_false_certificates_within_alpha_plus_three_standard_errors() -> None:
    """The label's probability 0.9 sits exactly at the threshold Φ(r/σ) of the radius
    asked (a linear classifier, just beyond its exact radius): every *certified* is
    false, and their rate must stay within alpha + 3 s.e. over 2,000 runs."""
    schedule = LookSchedule.geometric(2000, 0.05, first=25)
    run = false_rate(Decide(schedule, (radius_beyond(),), true_label=True), 2000)
    assert run.bound == pytest.approx(0.05 + 3 * math.sqrt(0.05 * 0.95 / 2000))
    assert run.holds
    # The check has power: testing every look at the full alpha (no spending) fails it.
    naive = LookSchedule(schedule.looks, (0.05,) * len(schedule.looks))
    procedure = Decide(naive, (radius_beyond(),), true_label=True)
    assert not false_rate(procedure, 2000, claimed_alpha=0.05).holds
