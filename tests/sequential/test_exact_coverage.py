"""The exact false-certification probability (rsutils.sequential.coverage.certify_probability):
closed forms, brute force, the procedures' own answers look by look, the guarantee at the
book's level, and agreement with the Monte Carlo check.

The tests are taken from the registry, so a test added to
:data:`~rsutils.sequential.procedure.TESTS` is checked here without a line more: its
rule against its own answers, its level at the book's settings, its cost at pA = 1."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.stats import binom, norm

from rsutils.book.profiles import PROFILES
from rsutils.core.confidence import clopper_pearson_lower, clopper_pearson_upper
from rsutils.sequential import spending
from rsutils.sequential.coverage import (
    CoverageSetting,
    all_hits_draws,
    certify_probability,
    exact_false_rate,
    false_rate,
    radius_beyond,
)
from rsutils.sequential.decisions import Decide, threshold_pA
from rsutils.sequential.horvath import HorvathStaged
from rsutils.sequential.planned import PlannedDraws
from rsutils.sequential.procedure import TESTS, replay
from rsutils.sequential.record import DrawRecord
from rsutils.sequential.rules import LookRule
from rsutils.sequential.sequence import AnytimeSchedule
from rsutils.sequential.spending import LookSchedule

SMOOTH = CoverageSetting().smooth()  # Gaussian, sigma = 1, inputs of 2 numbers
DIM = 2
#: The chapter's decision radii, in units of sigma.
R_OVER_SIGMA = (0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0)


def p0_of(radius: float) -> float:
    """The pA that ``radius`` needs on the coverage classifier (what Decide tests)."""
    return threshold_pA(SMOOTH, radius, DIM)


def answer(test, radius: float, hits: np.ndarray):
    """What ``Decide(test)`` answers at ``radius`` on the stream ``hits`` (1: the class)."""
    record = DrawRecord(
        np.zeros(0, dtype=np.int64), hits.astype(np.int64), num_classes=2, seed=0, index=0,
        dim=DIM,
    )  # fmt: skip
    return replay(Decide(test, (radius,), true_label=True), SMOOTH, record, label=1)[0]


# --- closed forms and brute force ----------------------------------------------------


@pytest.mark.parametrize(("n", "alpha", "radius", "p"), [
    (100, 0.05, 0.5, None), (1000, 0.001, 1.0, None), (1000, 0.001, 1.0, 0.9),
    (5000, 0.01, 0.25, 0.55),
])  # fmt: skip
def test_one_look_is_the_binomial_tail(n, alpha, radius, p) -> None:
    """One look is CERTIFY: certified iff k >= c, the least count whose Clopper–Pearson
    bound reaches p0 (found here over every count), so P = binom.sf(c - 1, n, p)."""
    p0 = p0_of(radius)
    p = p0 if p is None else p
    c = int(np.argmax(clopper_pearson_lower(np.arange(n + 1), n, alpha) >= p0))
    exact = certify_probability(LookSchedule((n,), (alpha,)), p0, p)
    assert exact.probability == binom.sf(c - 1, n, p)
    assert exact.per_look == (exact.probability,)


@pytest.mark.parametrize(("n", "alpha", "radius"), [(50, 0.05, 0.3), (2000, 0.001, 1.0)])
def test_one_randomised_look_spends_its_level_exactly(n, alpha, radius) -> None:
    """A randomised test has level exactly alpha at pA = p0 (its guarantee): the mixture
    over u reproduces it to rounding."""
    test = LookSchedule((n,), (alpha,), randomized=True)
    assert certify_probability(test, p0_of(radius)).probability == pytest.approx(alpha, rel=1e-12)


def brute_force(test, radius: float, looks: tuple[int, int], p: float) -> float:
    """P(certified) over every pair of counts (k1 in the first look's draws, j in the
    second batch's), each answered by the procedure itself on a stream with those counts."""
    n1, n2 = looks
    total = 0.0
    for k1, j in itertools.product(range(n1 + 1), range(n2 - n1 + 1)):
        hits = np.zeros(test.n_max, dtype=np.int64)
        hits[:k1], hits[n1 : n1 + j] = 1, 1
        if answer(test, radius, hits).certified:
            total += binom.pmf(k1, n1, p) * binom.pmf(j, n2 - n1, p)
    return total


@pytest.mark.parametrize(
    "test",
    [
        LookSchedule((20, 60), (0.02, 0.03)),
        LookSchedule((20, 60), (0.05, 0.05)),  # every look at the full level
        AnytimeSchedule((20, 60), 0.05, final_share=0.5),
        AnytimeSchedule((25, 60), 0.1, one_sided=False),
    ],
    ids=["spending", "full level", "sequence", "two-sided sequence"],
)
@pytest.mark.parametrize("p_shift", [0.0, -0.1])
def test_two_looks_match_the_brute_force_enumeration(test, p_shift) -> None:
    radius = 0.4
    p = p0_of(radius) + p_shift
    exact = certify_probability(test, p0_of(radius), p).probability
    assert exact > 1e-6  # the rule certifies something, so the comparison can fail
    assert exact == pytest.approx(brute_force(test, radius, test.looks, p), rel=1e-10, abs=1e-15)


def test_two_randomised_looks_match_the_enumeration_over_counts_and_u() -> None:
    """Given the counts, the randomised test certifies for the u below the larger of the
    two looks' cuts (below the first's only, if the first look stops); the cut at a
    count is where its p-value P(X > k) + u·P(X = k) reaches the level."""
    n1, n2, levels, p0 = 20, 60, (0.02, 0.03), p0_of(0.4)

    def cut(k: int, n: int, level: float) -> float:
        return float(np.clip((level - binom.sf(k, n, p0)) / binom.pmf(k, n, p0), 0, 1))

    total = 0.0
    for k1, j in itertools.product(range(n1 + 1), range(n2 - n1 + 1)):
        first = cut(k1, n1, levels[0])
        stops = clopper_pearson_upper(k1, n1, levels[0]) < p0
        chance = first if stops else max(first, cut(k1 + j, n2, levels[1]))
        total += binom.pmf(k1, n1, p0) * binom.pmf(j, n2 - n1, p0) * chance
    test = LookSchedule((n1, n2), levels, randomized=True)
    assert certify_probability(test, p0).probability == pytest.approx(total, rel=1e-10)


def test_the_staged_design_matches_the_enumeration_of_its_fresh_stages() -> None:
    """Horváth et al.'s three fresh stages at n_max = 100 (1, 10 and 89 draws): every
    triple of stage counts, answered by the design itself."""
    test, radius = HorvathStaged(100, 0.3), 0.3
    p = p0_of(radius)
    sizes = (1, 10, 89)
    total = 0.0
    for counts in itertools.product(*(range(s + 1) for s in sizes)):
        hits = np.concatenate([np.arange(s) < k for s, k in zip(sizes, counts, strict=True)])
        if answer(test, radius, hits).certified:
            total += math.prod(binom.pmf(k, s, p) for s, k in zip(sizes, counts, strict=True))
    exact = certify_probability(test, p).probability
    assert exact > 1e-6
    assert exact == pytest.approx(total, rel=1e-10)


# --- the rule is the procedure, look by look ----------------------------------------


def counts_reaching(rule: LookRule, look: int, count: int) -> list[int] | None:
    """Counts at looks 0..look that read on before ``look`` and end at ``count`` there
    (each look's own count for fresh stages), or None if no stream reaches it."""
    trials = [rule.trials(j) for j in range(len(rule.looks))]
    if not 0 <= count <= trials[look]:
        return None
    bounds = zip(rule.certify_from, rule.stop_up_to, strict=True)
    reading = [(max(d + 1, 0), min(c - 1, trials[j])) for j, (c, d) in enumerate(bounds)]
    if rule.fresh:
        if any(low > high for low, high in reading[:look]):
            return None
        return [low for low, _ in reading[:look]] + [count]
    low, high = 0, trials[0]  # the counts reachable at each look, reading on before it
    windows = []
    for j in range(look):
        low, high = max(low, reading[j][0]), min(high, reading[j][1])
        if low > high:
            return None
        windows.append((low, high))
        low, high = low, high + rule.looks[j + 1] - rule.looks[j]
    if not low <= count <= high:
        return None
    path = [count]
    for j in reversed(range(look)):
        batch = rule.looks[j + 1] - rule.looks[j]
        path.append(max(windows[j][0], path[-1] - batch))
    return path[::-1]


def stream_of(rule: LookRule, counts: list[int], n_max: int) -> np.ndarray:
    """Hits (first in each batch) with the given counts at the first looks."""
    hits = np.zeros(n_max, dtype=np.int64)
    start, before = 0, 0
    for look, count in zip(rule.looks, counts, strict=False):
        new = count if rule.fresh else count - before
        hits[start : start + new] = 1
        start, before = look, count
    return hits


def disagreements(
    test, radius: float, rule: LookRule, most_looks: int | None = None
) -> list[tuple[int, int]]:
    """(look, count) at each look's boundary counts where the procedure answers
    otherwise than ``rule``: at a look before the last, certified there iff count >=
    certify_from, stopped there not certified iff count <= stop_up_to, else reading on;
    at the last, certified iff count >= certify_from. With ``most_looks``, a rule of
    more looks is checked at that many, evenly spread, the first and last among them."""
    wrong, last = [], len(rule.looks) - 1
    checked = range(last + 1)
    if most_looks is not None and last >= most_looks:
        checked = sorted(set(np.linspace(0, last, most_looks).round().astype(int).tolist()))
    for j in checked:
        c, d = rule.certify_from[j], rule.stop_up_to[j]
        for count in sorted({c - 1, c, d, d + 1}):
            counts = counts_reaching(rule, j, count)
            if counts is None:
                continue
            decision = answer(test, radius, stream_of(rule, counts, test.n_max))
            if j == last:
                agrees = decision.certified == (count >= c)
            elif count >= c or count <= d:
                agrees = decision.certified == (count >= c) and decision.draws == rule.looks[j]
            else:
                agrees = decision.draws > rule.looks[j]
            if not agrees:
                wrong.append((j, count))
    return wrong


@pytest.mark.parametrize("name", sorted(TESTS))
@pytest.mark.parametrize("radius", [0.0, 0.5, 1.2])
def test_each_rule_answers_as_the_procedure_does_at_every_look(name, radius, monkeypatch) -> None:
    """Every registered test at n_max = 300, alpha = 0.05: at each look, on streams that
    read on until it and reach each boundary count there, Decide answers as the rule
    says (a randomised test at a u inside each of its rule's intervals)."""
    test = TESTS[name](300, 0.05)
    rules = test.rules(p0_of(radius))
    assert sum(weight for weight, _ in rules) == pytest.approx(1.0)
    start = 0.0
    for weight, rule in rules:
        u = start + weight / 2
        monkeypatch.setattr(spending, "randomization", lambda seed, index, u=u: u)
        assert disagreements(test, radius, rule) == [], f"u = {u}"
        start += weight


@pytest.mark.parametrize("name", sorted(TESTS))
def test_each_rule_answers_as_the_procedure_does_at_the_books_level(name, monkeypatch) -> None:
    """The same at alpha = 0.001 with 5,000 draws, where small levels (a staged
    design's early stop at beta/(s - 1), the late looks' shares of alpha) decide the
    boundary counts; a test that looks after every draw is checked at 200 of its
    5,000 looks (every look of 300 draws above: all 5,000 would take minutes)."""
    test = TESTS[name](5000, 0.001)
    start = 0.0
    for weight, rule in test.rules(p0_of(1.0)):
        u = start + weight / 2
        monkeypatch.setattr(spending, "randomization", lambda seed, index, u=u: u)
        assert disagreements(test, 1.0, rule, most_looks=200) == [], f"u = {u}"
        start += weight


# --- the guarantee at the book's level ----------------------------------------------


def test_every_test_of_the_book_holds_its_level_exactly() -> None:
    """At the book's alpha and n (the smoke profile's CERTIFY), at each decision radius
    of chapter 08, no test certifies pA > p0 with probability above alpha at pA = p0;
    testing every look of the spending schedule at the full alpha does."""
    n, alpha = PROFILES["smoke"].certify.n, PROFILES["smoke"].certify.alpha
    assert_every_test_holds(n, alpha, R_OVER_SIGMA)
    schedule = LookSchedule.geometric(n, alpha)
    naive = LookSchedule(schedule.looks, (alpha,) * len(schedule.looks))
    unsound = certify_probability(naive, float(norm.cdf(1.0)), claimed_alpha=alpha)
    assert not unsound.holds and unsound.probability > 2 * alpha


@pytest.mark.slow
@pytest.mark.parametrize(("profile", "r_over_sigma"), [("cpu", R_OVER_SIGMA), ("paper", (1.0,))])
def test_every_test_holds_its_level_exactly_at_larger_scales(profile, r_over_sigma) -> None:
    n, alpha = PROFILES[profile].certify.n, PROFILES[profile].certify.alpha
    assert_every_test_holds(n, alpha, r_over_sigma)


def assert_every_test_holds(n: int, alpha: float, r_over_sigma: tuple[float, ...]) -> None:
    for name, make in sorted(TESTS.items()):
        for k in r_over_sigma:
            exact = certify_probability(make(n, alpha), float(norm.cdf(k)))
            assert exact.holds, (name, k, exact.probability)
            assert exact.probability == pytest.approx(math.fsum(exact.per_look))


@pytest.mark.parametrize("name", sorted(TESTS))
def test_the_chance_grows_with_pA_so_p0_is_the_worst_case(name) -> None:
    """Below p0 every certificate is false too, and less likely than at p0; at pA = 1 a
    test certifies surely exactly when a stream of hits certifies within n_max, after
    the draws its rule gives (a randomised test: at most those, whatever its u)."""
    test, p0 = TESTS[name](1000, 0.01), p0_of(1.0)
    chances = [certify_probability(test, p0, p).probability for p in (0.0, 0.7, 0.8, p0)]
    assert chances[0] == 0.0 and chances == sorted(chances) and chances[-1] > chances[-2]
    at_one = certify_probability(test, p0, 1.0).probability
    decision = answer(test, 1.0, np.ones(1000, dtype=np.int64))
    assert at_one == pytest.approx(1.0 if decision.certified else 0.0)
    draws = all_hits_draws(test, p0)
    assert draws > 0  # 1,000 draws certify sigma at 0.01 (the floor is 27): it can fail
    assert decision.certified and decision.draws <= draws
    assert decision.draws == draws or test.randomized


# --- agreement with the Monte Carlo check -------------------------------------------


RUNS = 2000
SMALL = 400  # draws of the small setting, at alpha = 0.05


def small_procedures() -> dict[str, Decide]:
    beyond = (radius_beyond(),)
    spend = LookSchedule.geometric(SMALL, 0.05, first=25)
    naive = LookSchedule(spend.looks, (0.05,) * len(spend.looks))
    procedures = {
        "selecting, spending": Decide(spend, beyond),
        "every look at full alpha": Decide(naive, beyond, true_label=True),
        "randomised": Decide(LookSchedule.geometric(SMALL, 0.05, randomized=True), beyond, True),
    }
    for name in ("sequence", "horvath-staged", "voracek-betting", "voracek-union-bound"):
        procedures[name] = Decide(TESTS[name](SMALL, 0.05), beyond, true_label=True)
    return procedures


SLOW_TO_SAMPLE = ("randomised", "horvath-staged", "voracek-union-bound")


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(name, marks=[pytest.mark.slow] if name in SLOW_TO_SAMPLE else [])
        for name in small_procedures()
    ],
)
def test_the_monte_carlo_rate_agrees_within_four_standard_errors(name) -> None:
    """false_rate over 2,000 runs (fixed seed) lies within 4 binomial standard errors
    sqrt(P(1 - P)/runs) of the exact P; the selecting procedure also mixes in the runs
    whose selection picked the other class."""
    procedure = small_procedures()[name]
    setting = CoverageSetting(seed=11)
    exact = exact_false_rate(procedure, setting, claimed_alpha=0.05)
    sampled = false_rate(procedure, RUNS, setting, claimed_alpha=0.05)
    spread = 4 * math.sqrt(exact.probability * (1 - exact.probability) / RUNS)
    assert exact.probability > 0
    assert abs(sampled.rate - exact.probability) <= spread, (sampled.rate, exact.probability)
    assert exact.holds == (name != "every look at full alpha")


def test_the_selection_splits_the_runs_between_the_classes() -> None:
    """With 51 selection draws at p_a = 0.52 class 0 is selected, and tested, with
    probability P(Binom(51, 0.52) <= 25), near one half; its certificates are all false,
    class 1's true at a radius within the exact one, so the false rate is class 0's
    chance of certifying times that; testing the true label, it is 0."""
    test = LookSchedule.geometric(SMALL, 0.05, first=25)
    setting = CoverageSetting(p_a=0.52, n0=51)
    radius = setting.distance / 2  # within the exact radius: class 1's answers are true
    exact = exact_false_rate(Decide(test, (radius,)), setting)
    other = certify_probability(test, threshold_pA(SMOOTH, radius, DIM), 0.48).probability
    assert exact.probability == pytest.approx(binom.cdf(25, 51, 0.52) * other)
    assert exact_false_rate(Decide(test, (radius,), true_label=True), setting).probability == 0


# --- inputs --------------------------------------------------------------------------


def test_bad_inputs_are_refused_with_what_to_do() -> None:
    test = LookSchedule.geometric(1000, 0.01)
    with pytest.raises(ValueError, match="alpha must lie strictly between 0 and 1"):
        certify_probability(test, 0.8, claimed_alpha=1.5)
    with pytest.raises(ValueError, match="alpha must lie strictly between 0 and 1"):
        certify_probability(test, 0.8, claimed_alpha=0.0)
    for p0 in (-0.1, 1.5, float("nan"), True, "0.8"):
        with pytest.raises(ValueError, match="p0 must"):
            certify_probability(test, p0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="p0 must exceed 0"):
        certify_probability(test, 0.0)
    with pytest.raises(ValueError, match="p must lie in"):
        certify_probability(test, 0.8, 1.2)
    with pytest.raises(TypeError, match="applies to Decide"):
        exact_false_rate(PlannedDraws(1000, 0.05, 0.1))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="one radius"):
        exact_false_rate(Decide(test, (0.1, 0.2)))

    class Other:
        name, alpha, n_max = "other", 0.01, 100

    with pytest.raises(ValueError, match="test 'other' states no exact rule; give its class"):
        certify_probability(Other(), 0.8)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="test 'other' states no exact rule"):
        all_hits_draws(Other(), 0.8)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="p0 must exceed 0"):
        all_hits_draws(test, 0.0)
    assert all_hits_draws(test, 1.0) == 0
    with pytest.raises(ValueError, match="increase strictly"):
        LookRule((10, 10), (11, 11), (-1, -1))
    assert certify_probability(test, 1.0).probability == 0.0
