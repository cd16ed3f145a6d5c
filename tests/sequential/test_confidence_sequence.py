"""Anytime-valid and randomised lower bounds (rsutils.sequential.confidence_sequence)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import beta as beta_function
from scipy.stats import norm

from rsutils.core.confidence import clopper_pearson_lower
from rsutils.core.streams import derived_seed
from rsutils.sequential.confidence_sequence import (
    cs_decide,
    cs_first_certification,
    cs_log_martingale,
    cs_lower,
    cs_min_draws_all_successes,
    randomized_clopper_pearson_lower,
    randomized_clopper_pearson_pvalue,
)

ALPHA = 0.05
RUNS = 2000
BOUND = ALPHA + 3 * math.sqrt(ALPHA * (1 - ALPHA) / RUNS)


def bernoulli_paths(p: float, runs: int, draws: int, case: int) -> np.ndarray:
    rng = np.random.default_rng(derived_seed(25, case, "bernoulli"))
    return (rng.random((runs, draws)) < p).astype(np.int8)


def first_exceeding_counts(p: float, horizon: int, alpha: float) -> np.ndarray:
    """For each t ≤ horizon, the fewest successes whose cs_lower exceeds p (t + 1: none)."""
    threshold = np.empty(horizon, dtype=np.int64)
    for t in range(1, horizon + 1):
        k = np.arange(math.floor(p * t), t + 1)
        above = cs_lower(k, t, alpha) > p
        threshold[t - 1] = k[np.argmax(above)] if above.any() else t + 1
    return threshold


@pytest.mark.slow
def test_the_sequence_covers_p_at_every_time_at_once() -> None:
    """2,000 paths of 2,000 draws at p = 0.9: the fraction whose lower bound ever
    exceeds p is within alpha + 3 s.e.; peeking at Clopper–Pearson after every draw
    (a wrong procedure) fails the same check."""
    p, horizon = 0.9, 2000
    k = np.cumsum(bernoulli_paths(p, RUNS, horizon, case=0), axis=1)
    t = np.arange(1, horizon + 1)
    ever = (k >= first_exceeding_counts(p, horizon, ALPHA)).any(axis=1)
    assert ever.mean() <= BOUND
    # cs_decide answers the same question without root finding.
    assert np.array_equal(cs_decide(k, t, p, ALPHA).any(axis=1), ever)
    peeking = (clopper_pearson_lower(k, t, ALPHA) > p).any(axis=1)
    assert peeking.mean() > BOUND


@pytest.mark.slow
@pytest.mark.parametrize(("p", "p0", "case"), [(0.9, 0.9, 1), (0.85, 0.9, 2)])
def test_the_one_sided_test_holds_its_level_over_the_whole_null(p, p0, case) -> None:
    """The truncated-prior test of p ≤ p0 is a supermartingale under every p ≤ p0."""
    k = np.cumsum(bernoulli_paths(p, RUNS, 2000, case=case), axis=1)
    t = np.arange(1, 2001)
    ever = cs_decide(k, t, p0, ALPHA, one_sided=True).any(axis=1)
    assert ever.mean() <= BOUND


def test_all_successes_in_closed_form() -> None:
    """k = t = m: M_m(q) = B(m + 1/2, 1/2)/(π q^m), so the bound is
    (alpha·B(m + 1/2, 1/2)/π)^(1/m); (alpha/(m + 1))^(1/m) for the uniform prior."""
    m = np.array([1, 2, 5, 10, 100, 1000, 100_000])
    jeffreys = (ALPHA * beta_function(m + 0.5, 0.5) / math.pi) ** (1 / m)
    assert cs_lower(m, m, ALPHA) == pytest.approx(jeffreys, rel=1e-12)
    uniform = (ALPHA / (m + 1)) ** (1 / m)
    assert cs_lower(m, m, ALPHA, prior=(1, 1)) == pytest.approx(uniform, rel=1e-12)
    # Below the fixed-n Clopper–Pearson bound alpha^(1/m): the price of looking always.
    assert np.all(cs_lower(m, m, ALPHA) < clopper_pearson_lower(m, m, ALPHA))


def test_the_jeffreys_mixture_is_the_krichevsky_trofimov_bettors_wealth() -> None:
    """Betting the fraction KT = (k + 1/2)/(t + 1) of the wealth on a success at the
    odds of q multiplies it by KT/q on a success and (1 − KT)/(1 − q) on a failure."""
    x = bernoulli_paths(0.7, 1, 300, case=3)[0]
    for q in (0.3, 0.6, 0.9):
        log_wealth, k = 0.0, 0
        for t, draw in enumerate(x):
            kt = (k + 0.5) / (t + 1)
            log_wealth += math.log(kt / q) if draw else math.log((1 - kt) / (1 - q))
            k += int(draw)
            assert cs_log_martingale(k, t + 1, q) == pytest.approx(log_wealth, rel=1e-9, abs=1e-9)


def test_the_lower_end_solves_the_martingale_equation_and_is_monotone() -> None:
    t = 200
    k = np.arange(0, t + 1)
    lower = cs_lower(k, t, ALPHA)
    inside = (k > 0) & (k < t)
    assert cs_log_martingale(k[inside], t, lower[inside]) == pytest.approx(-math.log(ALPHA))
    assert np.all(np.diff(lower) > 0) and lower[0] == 0
    assert np.all(lower <= k / t)
    # More failures lower it; a larger alpha raises it; it is never above Clopper–Pearson.
    assert np.all(np.diff(cs_lower(150, np.arange(150, 400), ALPHA)) < 0)
    by_alpha = [float(cs_lower(150, 180, alpha)) for alpha in (0.001, 0.01, 0.05, 0.2)]
    assert np.all(np.diff(by_alpha) > 0)
    grid_t = np.arange(1, 301)[:, None]
    grid_k = np.arange(0, 301)[None, :]
    valid = grid_k <= grid_t
    kk, tt = np.broadcast_arrays(grid_k, grid_t)
    assert np.all(
        cs_lower(kk[valid], tt[valid], ALPHA)
        <= clopper_pearson_lower(kk[valid], tt[valid], ALPHA) + 1e-12
    )
    # The decision is the same as reading the bound (away from ties).
    p0 = np.linspace(0.01, 0.99, 99)[:, None]
    decided = cs_decide(k[None, :], t, p0, ALPHA)
    clear = np.abs(lower[None, :] - p0) > 1e-9
    assert np.array_equal(decided[clear], (lower[None, :] > p0)[clear])


def test_trials_zero_gives_zero_and_vectorises() -> None:
    assert cs_lower(0, 0, ALPHA) == 0
    assert cs_lower([[3], [5]], [5, 10], ALPHA).shape == (2, 2)


@pytest.mark.parametrize("radius", [0.5, 1.0, 2.0, 3.0, 4.0])
def test_draws_to_certify_at_pA_one_against_the_clopper_pearson_floor(radius) -> None:
    """At pA = 1, certifying Φ(r) at alpha = 0.001 takes the floor ln(alpha)/ln Φ(r) for a
    fixed-n test; the sequence pays ½ln(πm)/ln(1/p0) more, the one-sided test ~15%."""
    alpha, p0 = 0.001, norm.cdf(radius)
    floor = math.ceil(math.log(alpha) / math.log(p0))
    two = cs_min_draws_all_successes(p0, alpha)
    one = cs_min_draws_all_successes(p0, alpha, one_sided=True)
    assert floor < one < two
    assert one <= 1.2 * floor and two <= 2.1 * floor
    assert cs_decide(two, two, p0, alpha) and not cs_decide(two - 1, two - 1, p0, alpha)
    assert cs_lower(two, two, alpha) > p0 >= cs_lower(two - 1, two - 1, alpha)
    assert cs_decide(one, one, p0, alpha, one_sided=True)
    assert not cs_decide(one - 1, one - 1, p0, alpha, one_sided=True)
    if two <= 10_000:
        assert cs_first_certification(np.ones(two + 5, dtype=int), p0, alpha) == two


def test_first_certification_stops_at_the_first_crossing() -> None:
    x = bernoulli_paths(0.95, 50, 400, case=4)
    first = cs_first_certification(x, 0.8, ALPHA)
    k = np.cumsum(x, axis=1)
    for row, stop in zip(k, first, strict=True):
        hits = np.flatnonzero(cs_decide(row, np.arange(1, 401), 0.8, ALPHA))
        assert stop == (hits[0] + 1 if hits.size else 0)
    assert np.all(first > 0)


@pytest.mark.parametrize(("p", "n", "case"), [(0.3, 40, 10), (0.9, 100, 11), (0.99, 100, 12)])
def test_randomized_clopper_pearson_has_exact_level(p, n, case) -> None:
    """P(bound > p) = alpha within 3 s.e. (20,000 runs); Clopper–Pearson's own rate is
    lower by more than that at these p (it is conservative), so the check has power."""
    runs = 20_000
    rng = np.random.default_rng(derived_seed(25, case, "bernoulli"))
    k = rng.binomial(n, p, size=runs)
    u = rng.random(runs)
    exceed = randomized_clopper_pearson_lower(k, n, ALPHA, u) > p
    se = math.sqrt(ALPHA * (1 - ALPHA) / runs)
    assert abs(exceed.mean() - ALPHA) <= 3 * se
    assert (clopper_pearson_lower(k, n, ALPHA) > p).mean() < ALPHA - 3 * se
    # The bound exceeds p exactly when the randomised p-value of p is below alpha.
    below = randomized_clopper_pearson_pvalue(k, n, p, u) < ALPHA
    assert np.array_equal(exceed, below)


def test_randomized_clopper_pearson_against_the_non_randomised_bound() -> None:
    """u = 1 is Clopper–Pearson; u → 0 is Clopper–Pearson at k + 1; in between it
    decreases in u, so it is never below Clopper–Pearson and above it for u < 1."""
    n = 60
    k = np.arange(0, n + 1)
    cp = clopper_pearson_lower(k, n, ALPHA)
    assert randomized_clopper_pearson_lower(k, n, ALPHA, 1.0) == pytest.approx(cp, abs=1e-12)
    at_zero = randomized_clopper_pearson_lower(k, n, ALPHA, 0.0)
    nxt = np.append(clopper_pearson_lower(k[1:], n, ALPHA), 1.0)
    assert at_zero == pytest.approx(nxt, abs=1e-12)
    us = np.linspace(0, 1, 21)[:, None]
    bounds = randomized_clopper_pearson_lower(k[None, :], n, ALPHA, us)
    assert np.all(np.diff(bounds, axis=0) <= 1e-12)
    assert np.all(bounds[:-1, 1:] > cp[None, 1:])
    # k = n: (alpha/u)^(1/n) for u > alpha, and 1 (every q rejected) for u ≤ alpha.
    for u in (0.9, 0.3, 0.06):
        assert randomized_clopper_pearson_lower(n, n, ALPHA, u) == pytest.approx(
            (ALPHA / u) ** (1 / n)
        )
    assert randomized_clopper_pearson_lower(n, n, ALPHA, 0.04) == 1.0
    # k = 0: 0 unless u < alpha.
    assert randomized_clopper_pearson_lower(0, n, ALPHA, 0.5) == 0.0
    assert randomized_clopper_pearson_lower(0, n, ALPHA, 0.01) > 0.0


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: cs_lower(5, 4, ALPHA), "successes <= trials"),
        (lambda: cs_lower(-1, 4, ALPHA), "successes <= trials"),
        (lambda: cs_lower(1.5, 4, ALPHA), "whole counts"),
        (lambda: cs_lower(1, 4, 1.5), "alpha must lie"),
        (lambda: cs_lower(1, 4, ALPHA, prior=(0, 1)), "positive finite Beta"),
        (lambda: cs_lower(1, 4, ALPHA, prior=3), "pair"),
        (lambda: cs_decide(1, 4, 1.0, ALPHA), "p0 must lie"),
        (lambda: cs_min_draws_all_successes(0.0, ALPHA), "p0 must lie"),
        (lambda: cs_min_draws_all_successes(0.999999, ALPHA, max_draws=10), "raise max_draws"),
        (lambda: cs_first_certification([0, 2], 0.5, ALPHA), "0/1 outcomes"),
        (lambda: randomized_clopper_pearson_lower(1, 4, ALPHA, 1.2), "Uniform"),
        (lambda: randomized_clopper_pearson_lower(1, 0, ALPHA, 0.5), "trials >= 1"),
        (lambda: randomized_clopper_pearson_pvalue(1, 4, 1.5, 0.5), "p0 must lie"),
    ],
)
def test_bad_input_is_refused_with_the_fix(call, match) -> None:
    with pytest.raises(ValueError, match=match):
        call()


def test_the_randomised_bound_of_one_count_is_the_vectorised_one() -> None:
    """One count takes Brent's method, an array the bisection: the same bound."""
    k = np.array([0, 1, 17, 480, 499, 500])
    for u in (0.0004, 0.003, 0.37, 0.999):
        vectorised = randomized_clopper_pearson_lower(k, 500, ALPHA, np.full(k.shape, u))
        one = [float(randomized_clopper_pearson_lower(int(c), 500, ALPHA, u)) for c in k]
        assert np.allclose(one, vectorised, rtol=0, atol=1e-12), u
