"""The published sequential designs (rsutils.sequential.published): level, cost, inputs."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import betaln
from scipy.stats import beta, binom, norm

from rsutils.core.confidence import clopper_pearson_lower, clopper_pearson_upper
from rsutils.core.streams import derived_seed
from rsutils.sequential.confidence_sequence import (
    cs_decide,
    cs_first_certification,
    cs_log_martingale,
    cs_lower,
    cs_min_draws_all_successes,
)
from rsutils.sequential.coverage import all_hits_draws
from rsutils.sequential.horvath import HorvathStaged, horvath_stages, staged_test
from rsutils.sequential.procedure import TESTS
from rsutils.sequential.published import PublishedTest
from rsutils.sequential.voracek import (
    union_bound_looks,
    voracek_betting_test,
    voracek_union_bound_test,
)

ALPHA = 0.05
RUNS = 2000
BOUND = ALPHA + 3 * math.sqrt(ALPHA * (1 - ALPHA) / RUNS)
STAGES = (60, 240, 700)  # fresh stages, tenfold-ish growth as in the paper, 1,000 draws


def bernoulli_paths(p: float, draws: int, case: int, runs: int = RUNS) -> np.ndarray:
    rng = np.random.default_rng(derived_seed(25, case, "bernoulli"))
    return (rng.random((runs, draws)) < p).astype(np.int8)


def rate(decisions, field: str = "certified") -> float:
    return float(np.mean([getattr(d, field) for d in decisions]))


# -- level at the worst case (pA = p0) and a wrong procedure that fails the same check --


@pytest.mark.slow
def test_the_staged_test_holds_its_level_and_needs_the_split() -> None:
    """pA = p0 = 0.9, fresh stages: false certificates within alpha + 3 s.e.; the same
    stages each at level alpha (no Bonferroni split over the 3 stages) exceed it."""
    paths = bernoulli_paths(0.9, sum(STAGES), case=300)
    assert rate(staged_test(h, 0.9, ALPHA, stages=STAGES) for h in paths) <= BOUND
    unsplit = rate(staged_test(h, 0.9, 3 * ALPHA, stages=STAGES) for h in paths)
    assert unsplit > BOUND


@pytest.mark.slow
def test_the_staged_test_holds_its_level_on_reused_draws_and_below_p0() -> None:
    """Cumulative stages (Voráček's re-run) at pA = p0, and fresh stages at pA < p0."""
    paths = bernoulli_paths(0.9, 1000, case=301)
    cumulative = [
        staged_test(h, 0.9, ALPHA, stages=(100, 300, 1000), cumulative=True) for h in paths
    ]
    assert rate(cumulative) <= BOUND
    below = bernoulli_paths(0.88, sum(STAGES), case=302)
    assert rate(staged_test(h, 0.9, ALPHA, stages=STAGES) for h in below) <= BOUND


@pytest.mark.slow
def test_the_betting_test_holds_its_level_on_both_sides_at_once() -> None:
    """pA = p0 = 0.9, 2,000 draws: one wealth process at 1/alpha, so *any* answer (each is
    wrong here) comes within alpha + 3 s.e.; Clopper–Pearson read after every draw at
    level alpha (a wrong procedure) certifies far more often."""
    paths = bernoulli_paths(0.9, 2000, case=303)
    decisions = [voracek_betting_test(h, 0.9, ALPHA) for h in paths]
    assert rate(decisions) <= BOUND
    assert rate(decisions, "settled") <= BOUND
    # Clopper–Pearson's lower bound at t draws reaches 0.9 iff P(Bin(t, 0.9) >= k) <= alpha,
    # i.e. k exceeds the (1 - alpha) quantile.
    t = np.arange(1, 2001)
    peeking = (np.cumsum(paths, axis=1) > binom.ppf(1 - ALPHA, t, 0.9)).any(axis=1)
    assert peeking.mean() > BOUND
    k = np.arange(1500, 2001)
    cp = clopper_pearson_lower(k, 2000, ALPHA) >= 0.9
    assert np.array_equal(cp, k > binom.ppf(1 - ALPHA, 2000, 0.9))


@pytest.mark.slow
def test_the_union_bound_test_holds_its_level_and_needs_the_spending() -> None:
    """pA = p0 = 0.9: within alpha + 3 s.e.; the same looks each at level alpha exceed it."""
    paths = bernoulli_paths(0.9, 2000, case=304)
    assert rate(voracek_union_bound_test(h, 0.9, ALPHA) for h in paths) <= BOUND
    looks, _ = union_bound_looks(2000, ALPHA)
    k = np.cumsum(paths, axis=1)[:, looks - 1]
    unspent = (clopper_pearson_lower(k, looks, ALPHA) >= 0.9).any(axis=1)
    assert unspent.mean() > BOUND


# -- closed forms at pA = 1 --


def staged_all_hits(p0: float, alpha: float, stages: tuple[int, ...]) -> int:
    """Fresh stage i certifies n_i hits iff (alpha/s)^(1/n_i) >= p0 (scipy's Beta(n, 1)
    quantile); the draws are the stages read up to the first such stage."""
    level = alpha / len(stages)
    for i, n in enumerate(stages):
        assert beta.ppf(level, n, 1) == pytest.approx(level ** (1 / n), rel=1e-12)
        if level ** (1 / n) >= p0:
            return sum(stages[: i + 1])
    return 0


def betting_all_hits(p0: float, alpha: float, n_max: int) -> int:
    """The least m with B(m + 1/2, 1/2)/π ≥ p0^m / alpha (the KT wealth after m hits)."""
    m = np.arange(1, n_max + 1)
    wealth = betaln(m + 0.5, 0.5) - math.log(math.pi) - m * math.log(p0)
    crossed = wealth >= math.log(1 / alpha)
    return int(m[np.argmax(crossed)]) if crossed.any() else 0


def union_bound_all_hits(p0: float, alpha: float, n_max: int) -> int:
    """Looks at the first T > 1.1^K (then K += 1), level 5·alpha/((K + 4)(K + 5)) at the
    K-th; T hits certify iff alpha_K^(1/T) >= p0. Written as Voráček's loop, draw by draw."""
    k = 0
    for t in range(1, n_max + 1):
        if t > 1.1**k:
            k += 1
            if (5 * alpha / ((k + 4) * (k + 5))) ** (1 / t) >= p0:
                return t
    return 0


#: Draws at pA = 1, alpha = 0.001, for p0 = Φ(1), Φ(2), Φ(3) (the fixed-n floor: 40, 301,
#: 5,114), at n_max = 10,000 and 100,000; 0: not certified within n_max.
ALL_HITS = {
    ("horvath-staged", 10_000): (100, 1_100, 10_000),
    ("horvath-staged", 100_000): (1_000, 1_000, 11_000),
    ("voracek-betting", 10_000): (55, 459, 8_904),
    ("voracek-betting", 100_000): (55, 459, 8_904),
    ("voracek-union-bound", 10_000): (81, 653, 0),
    ("voracek-union-bound", 100_000): (81, 653, 11_389),
}


#: The published designs' names in the registry.
DESIGNS = ("horvath-staged", "voracek-betting", "voracek-union-bound")


def test_the_registry_holds_the_three_designs() -> None:
    published = [n for n, entry in TESTS.items() if isinstance(entry(1000, 0.01), PublishedTest)]
    assert published == list(DESIGNS)


@pytest.mark.parametrize("n_max", [10_000, 100_000])
@pytest.mark.parametrize("design", DESIGNS)
def test_draws_at_pA_one_match_the_closed_forms(design: str, n_max: int) -> None:
    """The closed forms, the design on a stream of hits only, and the draws its rule
    gives (all_hits_draws) agree; for the betting test also the library's closed form
    of the two-sided Jeffreys sequence (cs_min_draws_all_successes)."""
    expected = ALL_HITS[design, n_max]
    test = TESTS[design](n_max, 0.001)
    for z, draws in zip((1, 2, 3), expected, strict=True):
        p0 = float(norm.cdf(z))
        if design == "horvath-staged":
            algebra = staged_all_hits(p0, 0.001, horvath_stages(n_max))
        elif design == "voracek-betting":
            algebra = betting_all_hits(p0, 0.001, n_max)
            assert algebra == cs_min_draws_all_successes(p0, 0.001)
        else:
            algebra = union_bound_all_hits(p0, 0.001, n_max)
        assert algebra == draws
        assert all_hits_draws(test, p0) == draws
        decision = test.decide(np.ones(n_max, dtype=np.int8), p0)
        assert decision.certified == (draws > 0)
        assert decision.draws == (draws if draws else n_max)
        floor = math.ceil(math.log(0.001) / math.log(p0))
        assert decision.draws >= floor


def test_the_bounds_at_the_stop_are_the_designs_bounds() -> None:
    """At pA = 1 the staged lower bound is (alpha/s)^(1/n); the betting sequence's is
    (alpha·B(m + 1/2, 1/2)/π)^(1/m), the library's cs_lower."""
    p0 = float(norm.cdf(2))
    hits = np.ones(10_000, dtype=np.int8)
    staged = staged_test(hits, p0, 0.001)
    assert staged.looks == 2 and staged.lower == pytest.approx((0.001 / 3) ** (1 / 1000))
    betting = voracek_betting_test(hits, p0, 0.001)
    m = betting.draws
    closed = (0.001 * math.exp(betaln(m + 0.5, 0.5)) / math.pi) ** (1 / m)
    assert betting.lower == pytest.approx(closed, rel=1e-12)
    assert betting.lower == pytest.approx(float(cs_lower(m, m, 0.001)), rel=1e-12)
    assert betting.upper == 1.0 and betting.lower > p0


# -- the designs' rules on given streams --


def test_the_betting_test_stops_where_the_libraries_sequence_first_excludes_p0() -> None:
    """On random streams the first crossing (either side) is the first t with
    ln M_t(p0) ≥ ln(1/alpha), computed directly; its certificates are cs_decide's."""
    paths = bernoulli_paths(0.92, 3000, case=305, runs=40)
    for h in paths:
        decision = voracek_betting_test(h, 0.9, 0.01)
        k, t = np.cumsum(h), np.arange(1, 3001)
        crossed = cs_log_martingale(k, t, 0.9) >= math.log(100)
        first = int(np.argmax(crossed)) + 1 if crossed.any() else 3000
        assert decision.draws == first and decision.settled == bool(crossed.any())
        if decision.certified:
            assert decision.draws == cs_first_certification(h, 0.9, 0.01)
            assert cs_decide(k[first - 1], first, 0.9, 0.01)


def test_misses_stop_every_design_early_and_not_certified() -> None:
    misses = np.zeros(10_000, dtype=bool)
    staged = staged_test(misses, 0.9, 0.001)
    assert (staged.certified, staged.draws, staged.looks) == (False, 100, 1)
    assert staged.upper < 0.9  # the early stop at level beta/(s - 1)
    for decide in (voracek_betting_test, voracek_union_bound_test):
        decision = decide(misses, 0.9, 0.001)
        assert decision.settled and not decision.certified and decision.draws < 100


def test_the_staged_test_reads_whole_stages_and_answers_at_the_last() -> None:
    """A stream at pA = p0 exactly reaches the last stage and answers not certified."""
    hits = np.tile([1] * 9 + [0], 100)  # 90 % hits, 1,000 draws
    decision = staged_test(hits, 0.9, 0.05, stages=STAGES)
    assert (decision.certified, decision.draws, decision.looks) == (False, 1000, 3)
    # The last stage's 700 fresh draws hold 630 hits; its bounds are at level alpha/3.
    assert decision.lower == pytest.approx(float(clopper_pearson_lower(630, 700, 0.05 / 3)))
    assert decision.upper == pytest.approx(float(clopper_pearson_upper(630, 700, 0.05 / 3)))
    cumulative = staged_test(hits, 0.9, 0.05, stages=(100, 1000), cumulative=True)
    assert cumulative.draws == 1000 and cumulative.looks == 2


def test_union_bound_looks_spend_alpha() -> None:
    looks, levels = union_bound_looks(10**6, 0.001)
    assert looks[:5].tolist() == [2, 3, 4, 5, 6]
    assert np.all(np.diff(looks) >= 1) and looks[-1] <= 10**6
    assert np.all(np.diff(looks)[-20:] >= 0.09 * looks[-21:-1])  # about 10 % apart
    k = np.arange(1, looks.size + 1)
    assert levels == pytest.approx(0.005 / ((k + 4) * (k + 5)))
    assert levels.sum() < 0.001 and 0.001 - levels.sum() == pytest.approx(0.005 / (looks.size + 5))


def test_default_stages_keep_the_tenfold_growth_and_the_budget() -> None:
    assert horvath_stages(100_000) == (1_000, 10_000, 89_000)
    assert horvath_stages(10_000) == (100, 1_000, 8_900)


# -- bad input --


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: staged_test(np.ones((2, 5)), 0.9, 0.01), "1-D array of 0/1"),
        (lambda: staged_test([], 0.9, 0.01), "non-empty"),
        (lambda: voracek_betting_test([0, 2, 1], 0.9, 0.01), "0/1"),
        (lambda: voracek_betting_test([1, 1], 1.0, 0.01), "p0 must lie strictly"),
        (lambda: voracek_union_bound_test([1, 1], 0.0, 0.01), "p0 must lie strictly"),
        (lambda: voracek_betting_test([1, 1], True, 0.01), "p0 must be a number"),
        (lambda: voracek_union_bound_test([1, 1], 0.9, 0.0), "alpha must lie"),
        (lambda: voracek_union_bound_test([1, 1], 0.9, 0.01, growth=1.0), "growth must"),
        (lambda: staged_test(np.ones(50), 0.9, 0.01), "pass stages explicitly"),
        (lambda: staged_test(np.ones(50), 0.9, 0.01, stages=(10, 50)), "hits holds 50"),
        (
            lambda: staged_test(np.ones(50), 0.9, 0.01, stages=(20, 10), cumulative=True),
            "must increase",
        ),
        (lambda: staged_test(np.ones(50), 0.9, 0.01, stages=(0, 10)), "each stage"),
        (lambda: staged_test(np.ones(50), 0.9, 0.01, stages=(10,), beta=1.5), "beta must"),
        (lambda: TESTS["voracek-betting"](0, 0.01), "n_max must"),
        (lambda: HorvathStaged(50, 0.01), "need n_max >= 100"),
        (lambda: union_bound_looks(1, 0.01), "leave no look"),
    ],
)
def test_bad_input_names_the_fix(call, match) -> None:
    with pytest.raises(ValueError, match=match):
        call()
