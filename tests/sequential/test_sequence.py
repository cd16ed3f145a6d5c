"""Confidence-sequence decisions (rsutils.sequential.sequence) and randomised Clopper–Pearson
looks: closed forms at pA = 1 and 0, coverage at the worst case with a power check,
agreement between the live procedures and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy.special import betaln
from scipy.stats import norm

import rsutils as rs
from rsutils.core.confidence import min_samples_for_radius
from rsutils.sequential import Decide, LookSchedule, settle
from rsutils.sequential.confidence_sequence import cs_min_draws_all_successes
from rsutils.sequential.coverage import all_hits_draws, false_rate, radius_beyond
from rsutils.sequential.decisions import randomization, threshold_pA


def decide_label_radii(smooth, x, label, radii, test, **where):
    """The true label's decisions at ``radii`` by ``test``, live."""
    return settle(Decide(test, tuple(radii), true_label=True), smooth, x, label=label, **where)


class Constant(torch.nn.Module):
    """Class 0 on every input: p_0 = 1 and p_1 = 0 exactly."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.zeros(x.shape[0], dtype=torch.long)


SIGMA = 0.5
ALPHA = 0.001
RADII = (0.0, 0.3, 0.8, 1.2, 1.5)
X = torch.full((1, 4, 4), 0.5)


def constant_smooth() -> rs.Smooth:
    return rs.Smooth(Constant().eval(), 2, rs.Gaussian(SIGMA))


def test_geometric_looks_grow_by_the_factor_and_end_at_n_max() -> None:
    schedule = rs.AnytimeSchedule.geometric(1000, ALPHA, first=10, growth=1.5)
    assert schedule.looks[:3] == (10, 15, 22) and schedule.n_max == 1000
    ratios = np.diff(np.log(schedule.looks[:-1]))
    assert np.all(np.abs(ratios - math.log(1.5)) < 0.1)
    assert all(b > a for a, b in zip(schedule.looks, schedule.looks[1:], strict=False))
    assert rs.AnytimeSchedule.geometric(5, ALPHA, first=10).looks == (5,)


def test_threshold_is_phi_of_r_over_sigma_for_gaussian_l2() -> None:
    smooth = constant_smooth()
    assert threshold_pA(smooth, 0.0, 16) == 0.5
    for r in (0.1, 0.5, 1.3):
        assert threshold_pA(smooth, r, 16) == pytest.approx(norm.cdf(r / SIGMA), abs=1e-12)
        assert threshold_pA(smooth, r, 16) >= norm.cdf(r / SIGMA) - 1e-15


def test_at_p_one_each_radius_is_certified_at_the_first_look_past_the_sequences_floor() -> None:
    """All draws in the class: the one-sided test certifies r at the first look n with
    n >= cs_min_draws_all_successes(Φ(r/σ)), and its lower bound is the two-sided
    sequence's closed form (alpha·B(1/2 + n, 1/2)/B(1/2, 1/2))^(1/n)."""
    schedule = rs.AnytimeSchedule.geometric(8192, ALPHA, first=8, final_share=0)
    decisions = decide_label_radii(constant_smooth(), X, 0, RADII, schedule, seed=1)
    for radius, decision in zip(RADII, decisions, strict=True):
        p0 = max(0.5, norm.cdf(radius / SIGMA))
        needed = cs_min_draws_all_successes(p0, ALPHA, one_sided=True)
        expected = next(n for n in schedule.looks if n >= needed)
        assert decision.certified and decision.draws == expected == decision.count
        assert all_hits_draws(schedule, p0) == expected  # read off the test's rule
        assert decision.alpha_spent == ALPHA and decision.u is None
        closed = math.exp(
            (math.log(ALPHA) + betaln(0.5 + expected, 0.5) - betaln(0.5, 0.5)) / expected
        )
        assert decision.pA_lower == pytest.approx(closed, rel=1e-9)
        # the fixed-n floor at the full alpha is below it, by less than a third
        floor = min_samples_for_radius(radius / SIGMA, ALPHA)
        assert floor <= needed < 1.35 * floor + 3


def test_at_p_zero_the_sequence_stops_as_soon_as_it_lies_below_the_threshold() -> None:
    """p = 0: the two-sided sequence excludes p0 once (1 - p0)^(-n)·B(1/2, 1/2 + n)/B(1/2, 1/2)
    reaches 1/alpha; no radius is certified and each stops at that look."""
    schedule = rs.AnytimeSchedule.geometric(4096, ALPHA, first=8, final_share=0)
    decisions = decide_label_radii(constant_smooth(), X, 1, RADII, schedule, seed=1)
    for radius, decision in zip(RADII, decisions, strict=True):
        p0 = max(0.5, norm.cdf(radius / SIGMA))
        log_m = [
            betaln(0.5, 0.5 + n) - betaln(0.5, 0.5) - n * math.log1p(-p0) for n in schedule.looks
        ]
        expected = next(
            n for n, m in zip(schedule.looks, log_m, strict=True) if m >= -math.log(ALPHA)
        )
        assert not decision.certified and decision.count == 0
        assert decision.draws == expected


def test_anytime_decisions_agree_between_decide_and_the_label() -> None:
    """Where decide selects the label, both test it on the same counts."""
    schedule = rs.AnytimeSchedule.geometric(2048, ALPHA)
    (selected,) = settle(Decide(schedule, (0.8,)), constant_smooth(), X, n0=50, seed=4)
    (label,) = decide_label_radii(constant_smooth(), X, 0, [0.8], schedule, seed=4)
    assert selected.selected == 0 and selected.n0 == 50 and label.n0 == 0
    assert (selected.certified, selected.draws, selected.count) == (
        label.certified, label.draws, label.count,
    )  # fmt: skip


def test_a_radius_no_probability_reaches_is_never_certified() -> None:
    schedule = rs.AnytimeSchedule.geometric(512, ALPHA)
    (decision,) = decide_label_radii(constant_smooth(), X, 0, [100.0], schedule, seed=1)
    assert not decision.certified and decision.draws == schedule.looks[0]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"looks": (), "alpha": 0.01}, "at least one look"),
        ({"looks": (5, 5), "alpha": 0.01}, "increase strictly"),
        ({"looks": (0, 5), "alpha": 0.01}, "positive integer"),
        ({"looks": (5,), "alpha": 1.5}, "alpha"),
    ],
)
def test_bad_schedules_are_refused(kwargs, match) -> None:
    with pytest.raises(ValueError, match=match):
        rs.AnytimeSchedule(**kwargs)


def test_growth_must_exceed_one() -> None:
    with pytest.raises(ValueError, match="growth must exceed 1"):
        rs.AnytimeSchedule.geometric(100, ALPHA, growth=1.0)


def test_randomization_is_fixed_by_seed_and_index_and_uniform() -> None:
    us = np.array([randomization(3, i) for i in range(4000)])
    assert randomization(3, 7) == us[7] and randomization(4, 7) != us[7]
    assert ((us > 0) & (us < 1)).all()
    # Kolmogorov-Smirnov at the 0.1% level: sup |F_n - F| < 1.95/sqrt(n)
    ecdf = np.arange(1, us.size + 1) / us.size
    assert np.abs(np.sort(us) - ecdf).max() < 1.95 / math.sqrt(us.size)


def test_randomised_looks_certify_below_the_floor_exactly_when_u_allows() -> None:
    """p = 1, randomised CP: look k certifies p0 iff (alpha_k/u)^(1/n_k) >= p0 (or
    u <= alpha_k), so with u small enough a look before the floor certifies; the
    decision states u."""
    schedule = LookSchedule.geometric(4096, ALPHA, first=4, randomized=True)
    for index in range(40):
        u = randomization(1, index)
        (decision,) = decide_label_radii(
            constant_smooth(), X, 0, [0.8], schedule, seed=1, index=index
        )
        p0 = norm.cdf(0.8 / SIGMA)
        expected = next(
            n for n, a in zip(schedule.looks, schedule.alphas, strict=True)
            if u <= a or (a / u) ** (1 / n) >= p0
        )  # fmt: skip
        assert decision.u == u and decision.certified and decision.draws == expected


def test_coverage_at_the_worst_case_within_alpha_plus_three_standard_errors() -> None:
    """pA = 0.9 at the threshold of the radius asked: every *certified* is false; over
    2,000 runs at alpha = 0.05 the rate stays within alpha + 3 s.e., for the selected
    class and the label, with looks 1.5 times apart (more looks than the default; the
    randomised test is checked with every procedure in test_procedure.py)."""
    schedule = rs.AnytimeSchedule.geometric(2000, 0.05, first=10, growth=1.5)
    beyond = (radius_beyond(),)
    assert false_rate(Decide(schedule, beyond), 2000).holds
    assert false_rate(Decide(schedule, beyond, true_label=True), 2000).holds


def test_the_coverage_check_catches_peeking_at_the_anytime_looks() -> None:
    """Power: Clopper–Pearson at the full alpha at every one of the same looks (what the
    sequence replaces) certifies falsely far more often than alpha + 3 s.e."""
    looks = rs.AnytimeSchedule.geometric(2000, 0.05, first=10, growth=1.5).looks
    naive = LookSchedule(looks, (0.05,) * len(looks))
    procedure = Decide(naive, (radius_beyond(),), true_label=True)
    assert not false_rate(procedure, 2000, claimed_alpha=0.05).holds


@pytest.mark.parametrize("one_sided", [True, False])
def test_the_boundaries_are_the_test_at_every_count(one_sided) -> None:
    """The per-look comparisons settle uses give the martingale test's own answer at
    every count of every look (the test is monotone in the count)."""
    from rsutils.sequential.confidence_sequence import cs_decide, cs_log_martingale

    schedule = rs.AnytimeSchedule.geometric(300, 0.01, first=5, growth=1.4, one_sided=one_sided)
    for p0 in (0.5, 0.7, 0.93, 0.999):
        certify_from, below_up_to = schedule.boundaries(p0)
        for look, n in enumerate(schedule.looks):
            k = np.arange(n + 1)
            level = schedule.sequence_alpha
            direct = cs_decide(k, n, p0, level, one_sided=one_sided)
            assert np.array_equal(k >= certify_from[look], direct), (p0, n)
            below = (k < p0 * n) & (cs_log_martingale(k, n, p0) >= -math.log(level))
            assert np.array_equal(k <= below_up_to[look], below), (p0, n)


def test_the_last_look_keeps_certifys_test_for_its_share_of_alpha() -> None:
    """p = 1 and a radius the sequence cannot reach with n_max draws but Clopper–Pearson
    at alpha/2 can: certified at the last look, with pA_lower = (alpha/2)^(1/n_max);
    the sequence alone (final_share = 0) does not certify it."""
    n_max = 5800  # CP at alpha/2 reaches 3σ from 5,627 draws, the sequence at alpha from 5,977
    radius = 3 * SIGMA
    assert min_samples_for_radius(3.0, ALPHA / 2) <= n_max
    assert cs_min_draws_all_successes(norm.cdf(3.0), ALPHA, one_sided=True) > n_max
    hybrid = rs.AnytimeSchedule.geometric(n_max, ALPHA)
    (decision,) = decide_label_radii(constant_smooth(), X, 0, [radius], hybrid, seed=1)
    assert decision.certified and decision.draws == n_max and decision.look == len(hybrid.looks)
    assert decision.pA_lower == pytest.approx((ALPHA / 2) ** (1 / n_max))
    pure = rs.AnytimeSchedule.geometric(n_max, ALPHA, final_share=0)
    (decision,) = decide_label_radii(constant_smooth(), X, 0, [radius], pure, seed=1)
    assert not decision.certified
    p0 = float(norm.cdf(3.0))
    assert (all_hits_draws(hybrid, p0), all_hits_draws(pure, p0)) == (n_max, 0)
    with pytest.raises(ValueError, match="final_share"):
        rs.AnytimeSchedule((5,), ALPHA, final_share=1.0)
