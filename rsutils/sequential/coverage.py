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
by a dynamic programme over the looks. Each test states its decision at ``p0`` as a
:class:`~rsutils.sequential.rules.LookRule` (its
:meth:`~rsutils.sequential.procedure.Test.rules`): it looks after ``n_1 < n_2 < … <
n_K`` draws and, at look ``j``, certifies when the count ``k`` reaches ``c_j``, stops
*not certified* when ``k ≤ d_j``, and reads on otherwise. The distribution of the count
among the runs still reading is a vector over counts; convolved with the binomial of the
draws up to the next look it gives the next look's, from which the mass at ``k ≥ c_j``
(certified) and at ``k ≤ d_j`` (stopped) is removed. The certified masses add up to the
probability, each term a sum of products of binomial probabilities: exact up to
floating-point rounding. A randomised test is a mixture, over the intervals of its
uniform ``u`` on which its thresholds are fixed, of such deterministic tests, weighted
by their lengths: exact too. :func:`all_hits_draws` reads off the same rule the draws a
test needs when every draw falls in the class.

Each test reads its thresholds off its own decision functions at ``p0`` (its bounds,
levels, p-values, boundaries, wealth), the comparisons its ``settle`` makes; the
library's tests check, look by look, that the rule answers as the procedure does on
streams that reach each look with each boundary count, and the whole computation
against brute-force enumeration and :func:`false_rate`. It applies to every test of
:data:`~rsutils.sequential.procedure.TESTS`; not to
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

import math
from dataclasses import dataclass

import numpy as np
import torch
from scipy.stats import binom, norm

from rsutils.checks.classifiers import LinearClassifier
from rsutils.core.confidence import check_alpha
from rsutils.core.noise import Gaussian
from rsutils.core.smooth import ABSTAIN, Smooth
from rsutils.core.streams import derived_seed
from rsutils.sequential.decisions import Decide, threshold_pA
from rsutils.sequential.procedure import Answer, Procedure, Test, replay, settle
from rsutils.sequential.record import DrawRecord
from rsutils.sequential.rules import LookRule, Rules

__all__ = [
    "CoverageRun",
    "CoverageSetting",
    "ExactCoverage",
    "all_hits_draws",
    "certify_probability",
    "exact_false_rate",
    "false_rate",
    "live_false_rate",
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


def certify_probability(
    test: Test, p0: float, p: float | None = None, *, claimed_alpha: float | None = None
) -> ExactCoverage:
    """The exact probability that ``test`` certifies ``pA > p0`` when each draw falls in
    the tested class independently with probability ``p`` (default ``p0``: every
    certificate false, the worst case of ``pA ≤ p0``), by the dynamic programme of the
    module's text, held against ``claimed_alpha`` (default: the test's ``alpha``).

    ``p0`` is the probability a radius needs
    (:func:`~rsutils.sequential.decisions.threshold_pA`); at ``p0 ≥ 1`` no test
    certifies. Applies to every test that states its rule
    (:meth:`~rsutils.sequential.procedure.Test.rules`), every test of
    :data:`~rsutils.sequential.procedure.TESTS`.
    """
    p0 = _check_probability("p0", p0)
    if p0 == 0:
        raise ValueError("p0 must exceed 0: it is the pA a radius needs, at least 1/2")
    p = p0 if p is None else _check_probability("p", p)
    alpha = test.alpha if claimed_alpha is None else claimed_alpha
    check_alpha(alpha)
    if p0 >= 1:  # no pA < 1 certifies: every test answers not certified
        return ExactCoverage(0.0, (0.0,), (test.n_max,), alpha)
    rules = _rules(test, p0)
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


def all_hits_draws(test: Test, p0: float) -> int:
    """The draws after which ``test`` certifies ``pA > p0`` when every draw falls in the
    tested class (``pA = 1``), read off its rule: the cheapest it can ever certify
    ``p0``; 0 if it does not within its ``n_max`` draws, or if ``p0 >= 1``.

    A randomised test is answered for every ``u``: the draws after which it certifies
    whatever its ``u`` (the most over the rules of its mixture; 0 if at some ``u`` it
    does not certify within ``n_max``). Luckier ``u`` certify sooner, some below the
    floor of non-randomised tests.
    """
    p0 = _check_probability("p0", p0)
    if p0 == 0:
        raise ValueError("p0 must exceed 0: it is the pA a radius needs, at least 1/2")
    if p0 >= 1:
        return 0
    draws = [rule.all_hits_draws() for _, rule in _rules(test, p0)]
    return 0 if 0 in draws else max(draws)


def _rules(test: Test, p0: float) -> Rules:
    """``test``'s :meth:`~rsutils.sequential.procedure.Test.rules` at ``p0``, or a
    ``ValueError`` saying what a test needs for an exact answer."""
    rules = getattr(test, "rules", None)
    if rules is None:
        raise ValueError(
            f"the test {test.name!r} states no exact rule; give its class a rules(p0) "
            "method (rsutils.sequential.rules.LookRule) to compute its exact level"
        )
    return rules(p0)


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


def _check_probability(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.floating):
        raise ValueError(f"{name} must be a probability in [0, 1], got {value!r}")
    if not 0.0 <= float(value) <= 1.0:
        raise ValueError(f"{name} must lie in [0, 1] (a probability), got {value!r}")
    return float(value)
