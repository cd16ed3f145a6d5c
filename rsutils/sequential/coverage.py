"""How often a procedure certifies a radius that is false, on draws whose answer is known.

The draws are those of :class:`~rsutils.checks.classifiers.LinearClassifier` with
Gaussian noise of ``sigma`` at a point whose exact radius ``d = σΦ⁻¹(p_a)`` is known: each
draw falls in the point's class (1) with probability ``p_a`` and in the other class (0)
otherwise, independently. So a certificate of class 1 beyond ``d``, or of class 0 at
all, is false, and its rate can be counted over many independent runs. A procedure with
failure probability ``alpha`` must stay within ``alpha`` plus a few binomial standard
errors (:class:`CoverageRun`).

:func:`false_rate` draws those Bernoulli classes directly (numpy, stream ``coverage``)
and runs the procedure on them as on any recorded draws
(:func:`~rsutils.sequential.procedure.replay`): exactly the distribution of the live
draws, thousands of runs in seconds. :func:`live_false_rate` runs the same check with
the classifier itself, the noise drawn and classified by the model, for a few runs: the
check that the two agree is that replays are the live procedure (tested per procedure).

For a decision procedure, ask about a radius just beyond ``d``
(:func:`radius_beyond`): the tested class's probability then sits at the threshold that
radius needs, the worst case, and every *certified* is false.

**Exactly, without sampling.** :func:`certify_probability` computes the probability
that a test of :class:`~rsutils.sequential.decisions.Decide` certifies ``pA > p0`` when
every draw falls in the tested class with probability ``p`` (``p0`` by default: every
certificate then false), and :func:`exact_false_rate` what :func:`false_rate` estimates,
by a dynamic programme over the looks. Each test looks after ``n_1 < n_2 < … < n_K``
draws and, at look ``j``, certifies when the count ``k`` reaches ``c_j``, stops *not
certified* when ``k ≤ d_j``, and reads on otherwise (a :class:`LookRule`). The
distribution of the count among the runs still reading is a vector over counts;
convolved with the binomial of the draws up to the next look it gives the next look's,
from which the mass at ``k ≥ c_j`` (certified) and at ``k ≤ d_j`` (stopped) is removed.
The certified masses add up to the probability, each term a sum of products of binomial
probabilities: exact up to floating-point rounding. A randomised test is a mixture, over
the intervals of its uniform ``u`` on which its thresholds are fixed, of such
deterministic tests, weighted by their lengths: exact too.

The thresholds are read off each test's own decision functions at ``p0``
(:func:`look_rules`: its bounds, levels, p-values, boundaries, wealth), the comparisons
its ``settle`` makes; the library's tests check, look by look, that the rule answers as
the procedure does on streams that reach each look with each boundary count, and the
whole computation against brute-force enumeration and :func:`false_rate`. It applies to every
test of :data:`~rsutils.sequential.procedure.TESTS`; not to
:class:`~rsutils.sequential.planned.PlannedDraws`,
:class:`~rsutils.sequential.radius_looks.RadiusLooks` or
:class:`~rsutils.sequential.certify.Certify`, whose answer is a radius estimated from
the counts rather than a test of one ``p0`` (their level is checked by
:func:`false_rate` only).

Guarantee it checks: every test promises ``P(certified) ≤ alpha`` whenever ``pA ≤ p0``.
Each test's thresholds are monotone in the count (more hits never stop it *not
certified* where fewer would read on, nor leave it reading where fewer certify), so
raising ``p`` can only make it certify sooner: the probability at ``p = p0`` is the
largest over ``pA ≤ p0``, and ``certify_probability(test, p0).probability ≤ alpha`` is
the guarantee itself, at that ``p0``, computed rather than sampled.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from scipy.stats import binom, norm

from rsutils.checks.classifiers import LinearClassifier
from rsutils.core.confidence import check_alpha, clopper_pearson_lower, clopper_pearson_upper
from rsutils.core.noise import Gaussian
from rsutils.core.smooth import ABSTAIN, Smooth
from rsutils.core.streams import derived_seed
from rsutils.sequential.confidence_sequence import (
    cs_log_martingale,
    randomized_clopper_pearson_pvalue,
)
from rsutils.sequential.decisions import Decide, threshold_pA
from rsutils.sequential.procedure import Answer, Procedure, Test, replay, settle
from rsutils.sequential.published import HORVATH_BETA, horvath_stages, union_bound_looks
from rsutils.sequential.record import DrawRecord
from rsutils.sequential.sequence import AnytimeSchedule
from rsutils.sequential.spending import LookSchedule

__all__ = [
    "RULES",
    "CoverageRun",
    "CoverageSetting",
    "ExactCoverage",
    "LookRule",
    "certify_probability",
    "exact_false_rate",
    "false_rate",
    "live_false_rate",
    "look_rules",
    "radius_beyond",
]

#: The class of the point whose draws are drawn; the other class is 0.
TRUE_CLASS = 1


@dataclass(frozen=True)
class CoverageRun:
    """``false`` certificates in ``runs`` runs of a procedure at level ``alpha``."""

    false: int
    runs: int
    alpha: float

    @property
    def rate(self) -> float:
        return self.false / self.runs

    @property
    def bound(self) -> float:
        """``alpha`` plus three binomial standard errors at ``alpha``: the most a sound
        procedure's observed rate exceeds with probability about 0.1%."""
        return self.alpha + 3 * math.sqrt(self.alpha * (1 - self.alpha) / self.runs)

    @property
    def holds(self) -> bool:
        return self.rate <= self.bound


@dataclass(frozen=True)
class CoverageSetting:
    """The point's probability ``p_a`` of its class, the noise's ``sigma``, the ``n0``
    selection draws of a selecting procedure, and the ``seed`` of the runs."""

    p_a: float = 0.9
    sigma: float = 1.0
    n0: int = 50
    seed: int = 0

    @property
    def distance(self) -> float:
        """The exact radius ``d = σΦ⁻¹(p_a)``."""
        return self.sigma * float(norm.ppf(self.p_a))

    def smooth(self) -> Smooth:
        """The smoothed linear classifier whose point is at distance ``d``."""
        line = LinearClassifier(torch.tensor([3.0, -4.0]), b=0.5)
        return Smooth(line, 2, Gaussian(self.sigma), input_range=None)

    def point(self) -> torch.Tensor:
        line = LinearClassifier(torch.tensor([3.0, -4.0]), b=0.5)
        return line.point_at_distance(self.distance, side=1)


def radius_beyond(setting: CoverageSetting = CoverageSetting()) -> float:
    """A radius just beyond the exact one, where every certificate is false."""
    return setting.distance + 1e-6


def false_rate(
    procedure: Procedure,
    runs: int,
    setting: CoverageSetting = CoverageSetting(),
    *,
    claimed_alpha: float | None = None,
) -> CoverageRun:
    """``procedure``'s false certificates in ``runs`` runs on recorded Bernoulli draws
    (see the module). The rate is held against ``claimed_alpha`` (default: the
    procedure's), so that a procedure that claims less than it spends is caught."""
    smooth, false = setting.smooth(), 0
    n0 = setting.n0 if procedure.selects else 0
    for i in range(runs):
        record = DrawRecord(
            _bernoulli(setting, i, 0, n0), _bernoulli(setting, i, 1, procedure.n_max),
            num_classes=2, seed=setting.seed, index=i, dim=2,
        )  # fmt: skip
        false += is_false(replay(procedure, smooth, record, label=TRUE_CLASS), setting)
    return CoverageRun(false, runs, _claimed(procedure, claimed_alpha))


def live_false_rate(
    procedure: Procedure,
    runs: int,
    setting: CoverageSetting = CoverageSetting(),
    *,
    claimed_alpha: float | None = None,
) -> CoverageRun:
    """:func:`false_rate` with the classifier run live on its noise (slow: a few runs)."""
    smooth, x = setting.smooth(), setting.point()
    answers = (
        settle(procedure, smooth, x, n0=setting.n0, seed=setting.seed, index=i, label=TRUE_CLASS)
        for i in range(runs)
    )
    false = sum(is_false(answer, setting) for answer in answers)
    return CoverageRun(false, runs, _claimed(procedure, claimed_alpha))


def is_false(answer: Answer, setting: CoverageSetting) -> bool:
    """Whether ``answer`` certifies something false at the setting's point: class 1
    beyond its exact radius, or class 0 at all."""
    if answer.prediction == ABSTAIN:
        return False
    return answer.prediction != TRUE_CLASS or answer.radius > setting.distance


def _bernoulli(setting: CoverageSetting, run: int, phase: int, size: int) -> np.ndarray:
    rng = np.random.default_rng(derived_seed(setting.seed, run, "coverage", phase))
    return (rng.random(size) < setting.p_a).astype(np.int64)


def _claimed(procedure: Procedure, claimed_alpha: float | None) -> float:
    return procedure.alpha if claimed_alpha is None else claimed_alpha


# --- Exactly: a dynamic programme over the looks (see the module's text) ----------------


@dataclass(frozen=True)
class LookRule:
    """A test of ``pA > p0`` at one ``p0`` as thresholds on the count at each look.

    At look ``j``, after ``looks[j]`` draws, the test certifies when the count is at
    least ``certify_from[j]`` (more than the look's draws: never), else stops *not
    certified* when it is at most ``stop_up_to[j]`` (-1: never), else reads on; after
    the last look it answers *not certified*. With ``fresh`` each look counts only the
    draws since the previous look (a staged design's fresh stages), else all of them.
    """

    looks: tuple[int, ...]
    certify_from: tuple[int, ...]
    stop_up_to: tuple[int, ...]
    fresh: bool = False

    def __post_init__(self) -> None:
        sizes = {len(self.looks), len(self.certify_from), len(self.stop_up_to)}
        if len(sizes) != 1 or not self.looks:
            raise ValueError("need one certifying and one stopping count per look, and a look")
        if self.looks[0] < 1 or any(b <= a for a, b in itertools.pairwise(self.looks)):
            raise ValueError(f"looks must be positive and increase strictly, got {self.looks}")

    def trials(self, look: int) -> int:
        """The draws the count at ``look`` (0-based) counts."""
        previous = self.looks[look - 1] if look else 0
        return self.looks[look] - previous if self.fresh else self.looks[look]


@dataclass(frozen=True)
class ExactCoverage:
    """The exact probability that a test certified falsely (``probability``), the part
    of it certified at each of ``looks`` (``per_look``), and the level ``alpha`` it
    claims."""

    probability: float
    per_look: tuple[float, ...]
    looks: tuple[int, ...]
    alpha: float

    @property
    def holds(self) -> bool:
        """Whether the probability is at most ``alpha`` (up to floating-point rounding,
        1e-12 relative: a randomised test can spend its level exactly)."""
        return self.probability <= self.alpha * (1 + 1e-12)


#: A test's rule at ``p0``: ``(weight, rule)`` pairs, the weights (the chance of each
#: rule under the test's randomisation) adding up to 1; one pair if not randomised.
Rules = tuple[tuple[float, LookRule], ...]


def certify_probability(
    test: Test, p0: float, p: float | None = None, *, claimed_alpha: float | None = None
) -> ExactCoverage:
    """The exact probability that ``test`` certifies ``pA > p0`` when each draw falls in
    the tested class independently with probability ``p`` (default ``p0``: every
    certificate false, the worst case of ``pA ≤ p0``), by the dynamic programme of the
    module's text, held against ``claimed_alpha`` (default: the test's ``alpha``).

    ``p0`` is the probability a radius needs
    (:func:`~rsutils.sequential.decisions.threshold_pA`); at ``p0 ≥ 1`` no test
    certifies. Applies to the tests of :data:`RULES` (every test of
    :data:`~rsutils.sequential.procedure.TESTS`).
    """
    p0 = _check_probability("p0", p0)
    if p0 == 0:
        raise ValueError("p0 must exceed 0: it is the pA a radius needs, at least 1/2")
    p = p0 if p is None else _check_probability("p", p)
    alpha = test.alpha if claimed_alpha is None else claimed_alpha
    check_alpha(alpha)
    if p0 >= 1:  # no pA < 1 certifies: every test answers not certified
        return ExactCoverage(0.0, (0.0,), (test.n_max,), alpha)
    rules = look_rules(test, p0)
    per_look = sum(weight * _certified_per_look(rule, p) for weight, rule in rules)
    looks = rules[0][1].looks
    return ExactCoverage(float(math.fsum(per_look)), tuple(map(float, per_look)), looks, alpha)


def exact_false_rate(
    procedure: Decide,
    setting: CoverageSetting = CoverageSetting(),
    *,
    claimed_alpha: float | None = None,
) -> ExactCoverage:
    """The probability that :func:`false_rate` counts a run of ``procedure`` false, exactly.

    ``procedure`` is a :class:`~rsutils.sequential.decisions.Decide` at one radius.
    A selecting one tests class 1 when more than half its ``n0`` selection draws fall
    in it (class 0 wins ties, as CERTIFY's ``argmax`` picks the lowest), else class 0,
    whose every certificate is false; class 1's is false beyond the setting's exact
    radius. Each is :func:`certify_probability` at the radius's ``p0`` with its class's
    probability; their mixture is the answer, per look too.
    """
    if not isinstance(procedure, Decide):
        raise TypeError(
            f"the exact rate applies to Decide, a test of given radii; got "
            f"{type(procedure).__name__}, whose level false_rate checks by sampling"
        )
    if len(procedure.radii) != 1:
        raise ValueError(
            f"ask one radius (the joint answer at several is not one test), got {procedure.radii}"
        )
    radius = procedure.radii[0]
    p0 = threshold_pA(setting.smooth(), radius, setting.point().numel())
    n0 = 0 if procedure.true_label else setting.n0
    tests_true = 1.0 if n0 == 0 else float(binom.sf(n0 // 2, n0, setting.p_a))
    true_class = certify_probability(procedure.test, p0, setting.p_a)
    other_class = certify_probability(procedure.test, p0, 1 - setting.p_a)
    false_true = tests_true * (radius > setting.distance) * np.asarray(true_class.per_look)
    false_other = (1 - tests_true) * np.asarray(other_class.per_look)
    per_look = false_true + false_other
    return ExactCoverage(
        float(math.fsum(per_look)), tuple(map(float, per_look)), true_class.looks,
        _claimed(procedure, claimed_alpha),
    )  # fmt: skip


def look_rules(test: Test, p0: float) -> Rules:
    """``test``'s :class:`LookRule` at ``p0`` (a mixture for a randomised test), built by
    its entry of :data:`RULES` from the test's own decision functions; a ``ValueError``
    names the tests it applies to."""
    if test.name not in RULES:
        raise ValueError(
            f"no exact rule for the test {test.name!r}; it applies to {', '.join(sorted(RULES))}"
        )
    return RULES[test.name](test, p0)


def _certified_per_look(rule: LookRule, p: float) -> np.ndarray:
    """The probability that ``rule`` certifies at each look, draws Bernoulli(``p``)."""
    alive, low = np.ones(1), 0  # alive[i]: P(count low + i, still reading)
    certified = np.zeros(len(rule.looks))
    batches: dict[int, _Batch] = {}
    for j, c in enumerate(rule.certify_from):
        if rule.fresh:
            alive, low = np.array([alive.sum()]), 0
        m = rule.looks[j] - (rule.looks[j - 1] if j else 0)
        if m not in batches:
            batches[m] = _Batch(m, p)
        batch = batches[m]
        counts = low + np.arange(alive.size)
        certified[j] = alive @ batch.at_least(c - counts)
        if j + 1 == len(rule.looks):
            break
        alive, low = _reading_on(alive, low, batch, rule.stop_up_to[j] + 1, c - 1)
        if alive.size == 0:
            break
    return certified


class _Batch:
    """The binomial of ``m`` draws at ``p``: its probabilities and upper tails."""

    def __init__(self, m: int, p: float) -> None:
        self.m = m
        self.pmf = binom.pmf(np.arange(m + 1), m, p)
        # tail[i] = P(X ≥ i) for i in [0, m + 1], from the survival function (accurate
        # deep in the tail, where a sum of probabilities would lose digits)
        self.tail = binom.sf(np.arange(-1, m + 1), m, p)

    def at_least(self, needed: np.ndarray) -> np.ndarray:
        """``P(X ≥ needed)``, elementwise."""
        return self.tail[np.minimum(np.maximum(needed, 0), self.m + 1)]


def _reading_on(
    alive: np.ndarray, low: int, batch: _Batch, lowest: int, highest: int
) -> tuple[np.ndarray, int]:
    """The distribution after one more batch, restricted to the counts in
    ``[lowest, highest]`` (those that read on), and its lowest count."""
    top = low + alive.size - 1
    lowest, highest = max(lowest, low), min(highest, top + batch.m)
    if lowest > highest:
        return np.zeros(0), 0
    first, last = max(0, lowest - top), min(batch.m, highest - low)
    convolved = np.convolve(alive, batch.pmf[first : last + 1])
    start = lowest - (low + first)
    return convolved[start : start + highest - lowest + 1], lowest


def _least_count(trials: int, holds: Callable[[int], bool]) -> int:
    """The least count in ``[0, trials]`` at which ``holds`` (monotone: once true, true
    for every larger count), by bisection; ``trials + 1`` if none."""
    low, high = 0, trials + 1
    while low < high:
        middle = (low + high) // 2
        if holds(middle):
            high = middle
        else:
            low = middle + 1
    return low


def _clopper_pearson_look(
    n: int, level: float, stop_level: float | None, p0: float
) -> tuple[int, int]:
    """At a look at a count of ``n`` draws: the least count whose one-sided
    Clopper–Pearson lower bound at ``level`` reaches ``p0`` (certified), and the greatest
    whose upper bound at ``stop_level`` lies below ``p0`` (stopped; -1 if none, or
    without a ``stop_level``)."""
    certify = _least_count(n, lambda k: clopper_pearson_lower(k, n, level) >= p0)
    if stop_level is None:
        return certify, -1
    return certify, _least_count(n, lambda k: clopper_pearson_upper(k, n, stop_level) >= p0) - 1


def _clopper_pearson_rules(
    looks: Sequence[int],
    levels: Sequence[float],
    stop_levels: Sequence[float | None],
    p0: float,
    fresh: bool = False,
) -> Rules:
    """The rule of a test that compares Clopper–Pearson bounds with ``p0`` at each look."""
    per_look = [
        _clopper_pearson_look(trials, level, stop_level, p0)
        for trials, level, stop_level in zip(
            _trials(looks, fresh), levels, stop_levels, strict=True
        )
    ]
    certify, stop = (tuple(column) for column in zip(*per_look, strict=True))
    return ((1.0, LookRule(tuple(looks), certify, stop, fresh)),)


def _trials(looks: Sequence[int], fresh: bool) -> list[int]:
    """The draws each look's count counts: all so far, or those since the last look."""
    looks = [int(n) for n in looks]
    return [b - a for a, b in zip([0, *looks], looks, strict=False)] if fresh else looks


def _spending_rules(test: LookSchedule, p0: float) -> Rules:
    """:class:`~rsutils.sequential.spending.LookSchedule`: at each look its
    Clopper–Pearson lower bound at the look's level certifies, its upper bound below
    ``p0`` stops; randomised, the lower bound's test is its randomised p-value."""
    if test.randomized:
        return _randomised_rules(test, p0)
    return _clopper_pearson_rules(test.looks, test.alphas, test.alphas, p0)


def _randomised_rules(test: LookSchedule, p0: float) -> Rules:
    """A randomised schedule certifies at look ``j`` when its randomised p-value
    ``P(X > k) + u·P(X = k)`` is at most the level: at counts above the critical one
    ``K_j`` (the least certifying at ``u = 0``) for every ``u``, at ``K_j`` for ``u ≤
    τ_j``. Between consecutive ``τ_j`` the rule is fixed: one rule per interval of
    ``u``, weighted by its length. Its upper bounds, which only stop, are
    Clopper–Pearson's."""
    critical, cut = zip(
        *(_randomised_look(n, level, p0) for n, level in zip(test.looks, test.alphas, strict=True)),
        strict=True,
    )
    ((_, fixed),) = _clopper_pearson_rules(test.looks, test.alphas, test.alphas, p0)
    edges = sorted({0.0, 1.0, *(t for t in cut if 0.0 < t < 1.0)})
    rules = []
    for start, end in itertools.pairwise(edges):
        certify = tuple(k if t >= end else k + 1 for k, t in zip(critical, cut, strict=True))
        rules.append((end - start, LookRule(test.looks, certify, fixed.stop_up_to)))
    return tuple(rules)


def _randomised_look(n: int, level: float, p0: float) -> tuple[int, float]:
    """The critical count ``K`` of a randomised look (``n + 1``: none) and the ``τ`` up
    to which ``u`` certifies there, from the test's own p-value, which is linear in
    ``u``: at most the level from ``u = 0`` to ``τ``."""

    def pvalue(k: int, u: float) -> float:
        return float(randomized_clopper_pearson_pvalue(k, n, p0, u))

    critical = _least_count(n, lambda k: pvalue(k, 0.0) <= level)
    if critical > n:
        return critical, 0.0
    at_zero, at_one = pvalue(critical, 0.0), pvalue(critical, 1.0)
    return critical, (level - at_zero) / (at_one - at_zero)


def _sequence_rules(test: AnytimeSchedule, p0: float) -> Rules:
    """:class:`~rsutils.sequential.sequence.AnytimeSchedule`: its own
    :meth:`~rsutils.sequential.sequence.AnytimeSchedule.boundaries`, and at the last
    look also CERTIFY's test at the share of ``alpha`` kept for it."""
    certify_from, below_up_to = test.boundaries(p0)
    certify = [int(c) for c in certify_from]
    if test.final_share > 0:
        level = test.alpha * test.final_share
        fixed_n, _ = _clopper_pearson_look(test.looks[-1], level, None, p0)
        certify[-1] = min(certify[-1], fixed_n)
    stop = tuple(int(d) for d in below_up_to)
    return ((1.0, LookRule(test.looks, tuple(certify), stop)),)


def _horvath_rules(test: Test, p0: float) -> Rules:
    """Horváth et al.'s staged test (:func:`~rsutils.sequential.published.staged_test`
    with its default fresh stages): each stage's Clopper–Pearson lower bound at
    ``alpha/s`` certifies, before the last its upper bound at ``beta/(s − 1)`` below
    ``p0`` stops."""
    sizes = horvath_stages(test.n_max)
    s = len(sizes)
    levels = [test.alpha / s] * s
    stop_levels = [HORVATH_BETA / (s - 1)] * (s - 1) + [None]
    return _clopper_pearson_rules(np.cumsum(sizes).tolist(), levels, stop_levels, p0, fresh=True)


def _betting_rules(test: Test, p0: float) -> Rules:
    """Voráček's betting test: after every draw ``T``, certified when the wealth
    ``W_T(p0)`` (:func:`~rsutils.sequential.confidence_sequence.cs_log_martingale`,
    Jeffreys' two-sided mixture) reaches ``1/alpha`` with more than ``p0·T`` hits,
    stopped when it does with fewer; above ``p0·T`` the wealth grows with the hits,
    below it with the misses, so each side is one threshold (the misses against
    ``1 − p0`` on the lower side, as the design counts them)."""
    t = np.arange(1, test.n_max + 1, dtype=float)
    up = _wealth_crossing(t, p0, test.alpha)
    down = t - _wealth_crossing(t, 1.0 - p0, test.alpha)
    looks = tuple(range(1, test.n_max + 1))
    return (
        (1.0, LookRule(looks, tuple(up.astype(int).tolist()), tuple(down.astype(int).tolist()))),
    )


def _wealth_crossing(t: np.ndarray, p0: float, alpha: float) -> np.ndarray:
    """Per ``T``, the least count above ``p0·T`` whose wealth reaches ``1/alpha``
    (``T + 1``: none), by bisection over every ``T`` at once."""
    low, high = np.floor(p0 * t) + 1, t + 1  # the answer lies in [low, high]
    while np.any(low < high):
        middle = np.floor((low + high) / 2)
        crosses = cs_log_martingale(np.minimum(middle, t), t, p0) >= -math.log(alpha)
        high = np.where((low < high) & crosses, middle, high)
        low = np.where((low < high) & ~crosses, middle + 1, low)
    return low


def _union_bound_rules(test: Test, p0: float) -> Rules:
    """Voráček's union-bound test: at each of its looks, the Clopper–Pearson bounds at
    the look's level, the lower one at least ``p0`` certifying, the upper one below
    ``p0`` stopping."""
    looks, levels = union_bound_looks(test.n_max, test.alpha)
    return _clopper_pearson_rules(looks.tolist(), levels.tolist(), levels.tolist(), p0)


#: The rule of each test of :data:`~rsutils.sequential.procedure.TESTS` at ``p0``, by
#: the test's name: ``RULES[test.name](test, p0)``.
RULES: dict[str, Callable[[Test, float], Rules]] = {
    "spending": _spending_rules,  # type: ignore[dict-item]
    "randomised": _spending_rules,  # type: ignore[dict-item]
    "sequence": _sequence_rules,  # type: ignore[dict-item]
    "horvath-staged": _horvath_rules,
    "voracek-betting": _betting_rules,
    "voracek-union-bound": _union_bound_rules,
}


def _check_probability(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.floating):
        raise ValueError(f"{name} must be a probability in [0, 1], got {value!r}")
    if not 0.0 <= float(value) <= 1.0:
        raise ValueError(f"{name} must lie in [0, 1] (a probability), got {value!r}")
    return float(value)
