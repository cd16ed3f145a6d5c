"""Wald's SPRT (rsutils.sequential.sprt): its exact level, its boundaries against the
likelihood ratio, its answers against its rule, its sampled level, its cost at pA = 1.

The checks every registered test gets (its rule against its own answers at each look,
its level at the book's settings, the command line, the book's tables) run in
test_exact_coverage, test_procedure and the CLI tests without naming it."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

from rsutils.core.streams import derived_seed
from rsutils.sequential.coverage import (
    CoverageSetting,
    all_hits_draws,
    certify_probability,
    exact_false_rate,
    false_rate,
    radius_beyond,
)
from rsutils.sequential.decisions import Decide, threshold_pA
from rsutils.sequential.procedure import TESTS, replay
from rsutils.sequential.record import DrawRecord
from rsutils.sequential.sprt import WaldSPRT, alternative

SMOOTH = CoverageSetting().smooth()  # Gaussian, sigma = 1, inputs of 2 numbers
DIM = 2
#: Radii of the coverage classifier and the pA each needs (what Decide tests there).
RADII = (0.0, 0.5, 1.0, 2.0)
P0 = {r: threshold_pA(SMOOTH, r, DIM) for r in RADII}


def log_ratio(k: np.ndarray, t: np.ndarray, p0: float) -> np.ndarray:
    """ln Λ_t of the module, written from the likelihoods of p1 and p0."""
    p1 = alternative(p0)
    return k * np.log(p1 / p0) + (t - k) * np.log((1 - p1) / (1 - p0))


def answers(test: WaldSPRT, hits: np.ndarray):
    """Decide(test)'s decisions at RADII on the stream ``hits`` (1: the class)."""
    record = DrawRecord(
        np.zeros(0, dtype=np.int64), hits.astype(np.int64), num_classes=2, seed=0, index=0,
        dim=DIM,
    )  # fmt: skip
    return replay(Decide(test, RADII, true_label=True), SMOOTH, record, label=1)


def test_it_is_registered_and_p1_halves_the_miss_rate() -> None:
    entry = TESTS["sprt"]
    assert entry.label == "Wald's SPRT" and entry(100, 0.01) == WaldSPRT(100, 0.01)
    assert alternative(0.5) == 0.75 and alternative(0.9) == pytest.approx(0.95)


@pytest.mark.parametrize(("n_max", "alpha"), [(2000, 0.001), (500, 0.05)])
def test_the_exact_false_certificate_probability_is_within_alpha(n_max, alpha) -> None:
    """certify_probability at pA = p0 at several p0: at most alpha, and near it (the
    test spends its level); claiming alpha with the certificate threshold of 4·alpha
    is caught, so the check can fail."""
    test = WaldSPRT(n_max, alpha)
    chances = [certify_probability(test, p0).probability for p0 in P0.values()]
    assert all(0 < chance <= alpha for chance in chances), chances
    assert max(chances) > alpha / 2
    loose = WaldSPRT(n_max, 4 * alpha)
    caught = [certify_probability(loose, p0, claimed_alpha=alpha) for p0 in P0.values()]
    assert not all(exact.holds for exact in caught)


def test_the_boundaries_are_where_the_likelihood_ratio_crosses() -> None:
    """Per draw t: the certifying count is the least with ln Λ_t ≥ ln(1/alpha) (t + 1:
    none), the stopping count the greatest with ln Λ_t ≤ ln(alpha/(1 − alpha)) (-1:
    none), checked by the ratio of the two likelihoods on either side."""
    alpha, n_max = 0.001, 3000
    upper, lower = math.log(1 / alpha), math.log(alpha / (1 - alpha))
    for p0 in P0.values():
        c, d = WaldSPRT(n_max, alpha).boundaries(p0)
        t = np.arange(1, n_max + 1)
        reach = c <= t
        assert np.all(log_ratio(c[reach], t[reach], p0) >= upper - 1e-9)
        assert np.all(log_ratio(c - 1, t, p0) < upper + 1e-9)
        stops = d >= 0
        assert np.all(log_ratio(d[stops], t[stops], p0) <= lower + 1e-9)
        assert np.all(log_ratio(d + 1, t, p0) > lower - 1e-9)
        assert reach.any() and stops.any()


@pytest.mark.parametrize("p", [0.3, 0.7, 0.85, 0.95])
def test_settle_stops_where_its_rule_says_on_random_streams(p) -> None:
    """On 30 streams per p, each radius's decision is the rule's walk: the first draw
    at which the count reaches certify_from (certified) or stop_up_to (not), else not
    certified after n_max; every stop is at a boundary count."""
    n_max, alpha = 400, 0.01
    test = WaldSPRT(n_max, alpha)
    rng = np.random.default_rng(derived_seed(7, int(100 * p), "bernoulli"))
    for _ in range(30):
        hits = (rng.random(n_max) < p).astype(np.int64)
        for radius, decision in zip(RADII, answers(test, hits), strict=True):
            ((_, rule),) = test.rules(P0[radius])
            expected = (False, n_max)
            for t, count in enumerate(np.cumsum(hits), 1):
                if count >= rule.certify_from[t - 1] or count <= rule.stop_up_to[t - 1]:
                    expected = (bool(count >= rule.certify_from[t - 1]), t)
                    break
            assert (decision.certified, decision.draws) == expected, (p, radius)
            assert decision.count == hits[: decision.draws].sum()


def test_the_monte_carlo_rate_is_within_its_bound_and_agrees_with_the_exact_one() -> None:
    """At a radius just beyond the exact one (every certificate false), selecting its
    class and testing the label: false_rate over 2,000 runs holds its bound and lies
    within 4 binomial standard errors of exact_false_rate."""
    beyond = (radius_beyond(),)
    setting = CoverageSetting(seed=13)
    for true_label in (False, True):
        procedure = Decide(WaldSPRT(400, 0.05), beyond, true_label=true_label)
        sampled = false_rate(procedure, 2000, setting)
        exact = exact_false_rate(procedure, setting).probability
        assert sampled.holds and 0 < exact <= 0.05
        assert abs(sampled.rate - exact) <= 4 * math.sqrt(exact * (1 - exact) / 2000)


@pytest.mark.parametrize("alpha", [0.001, 0.05])
def test_a_stream_of_hits_certifies_where_the_boundarys_closed_form_says(alpha) -> None:
    """All hits: ln Λ_t = t·ln(p1/p0), so the test certifies after ⌈ln(1/alpha) /
    ln(p1/p0)⌉ draws, above the fixed-n floor ⌈ln alpha / ln p0⌉; its rule
    (all_hits_draws) says the same. All misses: ln Λ_t = −t·ln 2, so it stops after
    ⌈ln((1 − alpha)/alpha) / ln 2⌉ draws, not certified."""
    n_max = 5000
    test = WaldSPRT(n_max, alpha)
    certified = answers(test, np.ones(n_max, dtype=np.int64))
    for radius, decision in zip(RADII, certified, strict=True):
        p0 = P0[radius]
        closed = math.ceil(math.log(1 / alpha) / math.log(alternative(p0) / p0))
        assert decision.certified and decision.draws == closed == all_hits_draws(test, p0)
        assert decision.pA_lower == p0 and closed >= math.ceil(math.log(alpha) / math.log(p0))
    stopped = answers(test, np.zeros(n_max, dtype=np.int64))
    misses = math.ceil(math.log((1 - alpha) / alpha) / math.log(2))
    assert all(not d.certified and d.draws == misses for d in stopped)
    p0 = float(norm.cdf(3.0))  # 3σ needs more draws than 500: not certified within them
    assert all_hits_draws(WaldSPRT(500, alpha), p0) == 0


def test_a_radius_no_pA_below_1_certifies_is_answered_after_no_draw() -> None:
    (decision,) = replay(
        Decide(WaldSPRT(50, 0.01), (40.0,), true_label=True), SMOOTH,
        DrawRecord(np.zeros(0, dtype=np.int64), np.ones(50, dtype=np.int64), num_classes=2,
                   seed=0, index=0, dim=DIM),
        label=1,
    )  # fmt: skip
    assert (decision.certified, decision.draws, decision.count) == (False, 0, 0)


def test_bad_settings_are_refused_with_what_to_do() -> None:
    with pytest.raises(ValueError, match="n_max"):
        WaldSPRT(0, 0.01)
    with pytest.raises(ValueError, match="alpha must lie strictly between 0 and 1"):
        WaldSPRT(100, 1.5)
    with pytest.raises(ValueError, match="p0 must lie strictly between 0 and 1"):
        WaldSPRT(100, 0.01).boundaries(1.0)
