"""The published sequential designs for "is ``pA > p0``?", re-implemented on a stream of hits.

Chapter 08 compares its own procedures with two published ones *on the same draws*. Each
function here takes ``hits``, the tested class's outcomes (1 = the base classifier
answered that class) in the order they were drawn, of length ``n_max`` (the most draws
the comparison allows), reads a prefix of it as the design would, and returns a
:class:`PublishedDecision`: whether it certified ``pA > p0`` and how many draws it read.
For Gaussian ℓ2 smoothing at radius ``r``, ``p0 = Φ(r/σ)``. Written here, from Voráček's
text and, for Horváth et al., from Voráček's account of their method (§3.1, App. C.2.1)
and the settings of their released experiments; no code is copied.

- :func:`staged_test` — Horváth, Müller, Fischer and Vechev (ICLR 2022), "adaptive
  sampling" for a predetermined radius: ``s`` stages of growing size; at stage ``i`` a
  one-sided Clopper–Pearson lower bound at level ``alpha/s`` (Bonferroni over the stages)
  certifies, and before the last stage an upper bound at level ``beta/(s − 1)`` that
  cannot reach ``p0`` stops it *not certified*; the last stage answers either way.
- :func:`voracek_betting_test` — Voráček (NeurIPS 2024), Algorithm 2: the betting
  confidence sequence whose bets follow the Krichevsky–Trofimov estimate
  ``(H + 1/2)/(T + 1)``; ``p0`` leaves it when the wealth ``W_T(p0)`` reaches
  ``1/alpha`` (Theorem 2.11), on the side of the empirical mean. This is *the same
  process* as this library's Jeffreys mixture
  (:func:`~rsutils.sequential.confidence_sequence.cs_log_martingale` with the default prior
  and ``one_sided=False``): the KT bettor's wealth is the ``Beta(1/2, 1/2)`` mixture
  likelihood ratio, and one wealth process at one threshold serves both sides, so the
  decision is wrong with probability at most ``alpha`` whichever answer it gives.
- :func:`voracek_union_bound_test` — Voráček's Algorithm 1 with the settings of his
  experiments (Appendix C.2): Clopper–Pearson bounds recomputed each time the draws
  pass ``1.1^K``, the ``K``-th at level ``alpha_K = 5·alpha/((K + 4)(K + 5))``, which sum
  to ``alpha``.

Guarantee (all three): if the draws are i.i.d. Bernoulli(``pA``) with ``pA ≤ p0``, the
probability of ``certified`` is at most ``alpha``, whatever the stream's length; none
can certify with fewer draws than the fixed-``n`` floor ``ceil(ln alpha / ln p0)``
(:func:`~rsutils.core.confidence.min_samples_for_radius`). A design that reaches the end
of ``hits`` undecided answers *not certified* with ``settled=False``.

:class:`PublishedTest` makes each design a test of
:class:`~rsutils.sequential.decisions.Decide`, one class each (:class:`HorvathStaged`,
:class:`VoracekBetting`, :class:`VoracekUnionBound`), registered in
:data:`~rsutils.sequential.procedure.TESTS` (``--test horvath-staged`` and so on), so
it runs, replays and is checked as every procedure is; each states its exact rule
(:meth:`PublishedTest.rules`), from which
:func:`~rsutils.sequential.coverage.all_hits_draws` gives what it spends on a stream
of hits only (``pA = 1``), the cheapest it can ever certify. Each radius ``r`` is its
own test of ``pA > p0`` with ``p0`` the least probability that certifies it
(:func:`~rsutils.sequential.decisions.threshold_pA`); a radius no ``pA < 1`` certifies is
answered *not certified* after no draw. The designs read a stream draw by draw, so the
test reads the tested class's hits among all ``n_max`` draws and states in each decision
the draws the design read: live, the model runs on all ``n_max`` draws (the designs are
run here as the book's comparisons, on recorded draws).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike
from scipy.optimize import brentq
from scipy.special import betaln
from scipy.stats import beta as beta_distribution

from rsutils.core.confidence import check_alpha, clopper_pearson_lower
from rsutils.core.smooth import Smooth
from rsutils.sequential.confidence_sequence import cs_log_martingale
from rsutils.sequential.decisions import Decision, threshold_pA
from rsutils.sequential.draws import Draws
from rsutils.sequential.procedure import register_test
from rsutils.sequential.rules import LookRule, Rules, clopper_pearson_rules

__all__ = [
    "HorvathStaged",
    "PublishedDecision",
    "PublishedTest",
    "VoracekBetting",
    "VoracekUnionBound",
    "horvath_stages",
    "staged_test",
    "union_bound_looks",
    "voracek_betting_test",
    "voracek_union_bound_test",
]

#: Horváth et al.'s level of the early "not certified" stop (their released code's default).
HORVATH_BETA = 1e-4

#: Voráček's growth of the draws between two recomputed bounds (Appendix C.2).
VORACEK_GROWTH = 1.1


@dataclass(frozen=True)
class PublishedDecision:
    """What one published design answered on one recorded stream.

    ``certified`` says whether it certified ``pA > p0``; ``draws`` is how many of the
    stream's draws it had read when it stopped (the forward passes it spent: a staged
    design reads whole stages). ``lower``/``upper`` are its bounds on ``pA`` at the stop,
    at the level it spent there; ``looks`` counts the tests it made (stages, or
    recomputed bounds, or draws for the betting sequence). ``settled`` is False when the
    stream ran out before the design answered (it then answers *not certified*).
    """

    design: str
    certified: bool
    draws: int
    lower: float
    upper: float
    looks: int
    settled: bool


def horvath_stages(n_max: int) -> tuple[int, ...]:
    """The default three fresh stages of :func:`staged_test` for a budget of ``n_max`` draws.

    The CIFAR-10 example of Horváth et al.'s released code uses three stages of ``1,000``,
    ``10,000`` and ``125,000`` fresh draws (136,000 at most, against CERTIFY's ``n = 100,000``);
    Voráček reports ``10², 10³, 10⁴, 1.2·10⁵`` for them. Both grow about tenfold and
    end near CERTIFY's ``n``. To compare on the same ``n_max`` draws, this keeps the
    tenfold growth and the budget: ``(n_max // 100, n_max // 10, the rest)``, i.e.
    ``(1,000, 10,000, 89,000)`` at ``n_max = 100,000``. Pass ``stages`` to
    :func:`staged_test` for their exact schedule (with a stream long enough).
    """
    n_max = _check_draws("n_max", n_max)
    if n_max < 100:
        raise ValueError(
            f"the default stages need n_max >= 100 draws, got {n_max}; pass stages explicitly"
        )
    first, second = n_max // 100, n_max // 10
    return (first, second, n_max - first - second)


def staged_test(
    hits: ArrayLike,
    p0: float,
    alpha: float,
    stages: Sequence[int] | None = None,
    beta: float = HORVATH_BETA,
    cumulative: bool = False,
) -> PublishedDecision:
    """Horváth et al. (ICLR 2022)'s adaptive sampling for a predetermined radius.

    The stages are ``stages`` (default :func:`horvath_stages`): with ``cumulative=False``
    (their design) stage ``i`` reads ``stages[i]`` *fresh* draws, the next ones of the
    stream, and tests their count alone; with ``cumulative=True`` (how Voráček re-ran
    it) ``stages`` are increasing prefix lengths and stage ``i`` tests the whole prefix.
    At stage ``i`` of ``s``, with ``k`` hits of ``n``:

    - *certified* if the one-sided Clopper–Pearson lower bound at level ``alpha/s`` is at
      least ``p0`` (their "``σ·Φ⁻¹(p_lower) ≥ r``");
    - else, before the last stage, *not certified* if the one-sided upper bound at level
      ``beta/(s − 1)`` is below ``p0`` (the radius is not worth pursuing);
    - else the next stage; at the last stage, *not certified*.

    Guarantee: each stage's certification errs with probability at most ``alpha/s`` when
    ``pA ≤ p0``, so the test errs with probability at most ``alpha`` (the union bound;
    fresh or reused draws alike). ``beta`` only trades missed certificates for draws.
    ``draws`` sums the stages read. Their code also re-draws ``n0 = 100`` selection
    draws at every stage; add ``n0 · looks`` to count those (true-label evaluation has
    none). The stages must fit in ``hits``.
    """
    x = _check_hits(hits)
    _check_p0(p0)
    check_alpha(alpha)
    if not 0.0 < float(beta) < 1.0:
        raise ValueError(
            f"beta must lie strictly between 0 and 1 (the level of the early 'not certified' "
            f"stop; Horváth et al. use 1e-4), got {beta!r}"
        )
    sizes = horvath_stages(x.size) if stages is None else _check_stages(stages, cumulative)
    ends = np.asarray(sizes) if cumulative else np.cumsum(sizes)
    if ends[-1] > x.size:
        raise ValueError(
            f"the stages read {int(ends[-1])} draws but hits holds {x.size}; "
            "record a longer stream or pass smaller stages"
        )
    starts = np.zeros_like(ends) if cumulative else ends - np.asarray(sizes)
    prefix = np.concatenate(([0], np.cumsum(x)))
    counts = prefix[ends] - prefix[starts]
    trials = ends - starts
    s = len(sizes)
    # Before the last stage the upper bound is the early stop's (level beta/(s - 1));
    # at the last stage it is reported at the level of the lower bound.
    upper_levels = np.array([beta / max(s - 1, 1)] * (s - 1) + [alpha / s])
    lower = clopper_pearson_lower(counts, trials, alpha / s)
    upper = _cp_upper(counts, trials, upper_levels)
    for i in range(s):
        certified = bool(lower[i] >= p0)
        if certified or i == s - 1 or upper[i] < p0:
            return PublishedDecision(
                design="horvath-staged",
                certified=certified,
                draws=int(ends[i]),
                lower=float(lower[i]),
                upper=float(upper[i]),
                looks=i + 1,
                settled=True,
            )
    raise AssertionError("unreachable: the last stage always answers")


def voracek_betting_test(hits: ArrayLike, p0: float, alpha: float) -> PublishedDecision:
    """Voráček (NeurIPS 2024)'s decision by the betting confidence sequence (Algorithm 2).

    After every draw ``T`` (``H`` hits) the KT bettor's log-wealth against ``p0`` is
    ``ln W_T(p0) = Σ_t [x_t ln q̂_t + (1 − x_t) ln(1 − q̂_t)] − H ln p0 − (T − H) ln(1 − p0)``
    with ``q̂_t = (H_{t−1} + 1/2)/t``; it stops at the first ``T`` with ``W_T(p0) ≥ 1/alpha``
    (``p0`` has left the sequence): *certified* if ``H/T > p0``, *not certified* if
    ``H/T < p0``. It never stops otherwise; at the end of ``hits`` it answers *not
    certified*, ``settled=False``. The threshold is the paper's (Algorithm 2 and the
    proof of Theorem 2.11).

    Guarantee: ``W_T(p0)`` is a nonnegative martingale of mean 1 under ``pA = p0`` (and
    ``W_T(p0) ≤ W_T(pA)`` on the certifying side when ``pA < p0``), so by Ville's
    inequality the test certifies with probability at most ``alpha`` when ``pA ≤ p0``,
    and under ``pA = p0`` it stops at all (either way) with probability at most
    ``alpha``. ``lower``/``upper`` are the ends of the ``(1 − alpha)`` sequence
    (:func:`~rsutils.sequential.confidence_sequence.cs_lower`) at the stop. The crossing
    counts depend on ``(p0, alpha, n_max)`` only and are computed once per triple.
    """
    x = _check_hits(hits)
    _check_p0(p0)
    check_alpha(alpha)
    up, down = _betting_thresholds(float(p0), float(alpha), x.size)
    k = np.cumsum(x)
    crossed = (k >= up) | (k <= down)
    settled = bool(crossed.any())
    t = int(np.argmax(crossed)) + 1 if settled else x.size
    hits_at_t = int(k[t - 1])
    return PublishedDecision(
        design="voracek-betting",
        certified=settled and hits_at_t > p0 * t,
        draws=t,
        lower=_sequence_lower(hits_at_t, t, alpha),
        upper=1.0 - _sequence_lower(t - hits_at_t, t, alpha),
        looks=t,
        settled=settled,
    )


def union_bound_looks(
    n_max: int, alpha: float, growth: float = VORACEK_GROWTH
) -> tuple[np.ndarray, np.ndarray]:
    """The draws at which :func:`voracek_union_bound_test` recomputes its bounds, and levels.

    Voráček's Algorithm 1 recomputes at ``T = 2^K``; his experiments (Appendix C.2)
    replace this with "the first ``T > growth^K``" (``growth = 1.1``), after which ``K``
    grows by one, and spend ``alpha_K = 5·alpha/((K + 4)(K + 5))`` at the ``K``-th look
    (``K = 1, 2, …``; the levels sum to ``alpha``). So the looks are ``T_K = max(T_{K−1} +
    1, floor(growth^(K−1)) + 1)``: every draw at first (``T = 2, 3, …``, while ``T``
    outruns ``growth^K``), then about every 10 % more draws. Returns the looks up to
    ``n_max`` and their levels.
    """
    n_max = _check_draws("n_max", n_max)
    check_alpha(alpha)
    looks, levels = _looks(n_max, float(growth))
    return looks.copy(), alpha * levels


def voracek_union_bound_test(
    hits: ArrayLike, p0: float, alpha: float, growth: float = VORACEK_GROWTH
) -> PublishedDecision:
    """Voráček (NeurIPS 2024)'s decision by the union-bound confidence sequence (Algorithm 1).

    At each look ``T_K`` of :func:`union_bound_looks`, with ``H`` hits: *certified* if
    the one-sided Clopper–Pearson lower bound at level ``alpha_K`` is at least ``p0``,
    *not certified* if the upper bound at level ``alpha_K`` is below ``p0``; else it
    reads on. At the end of ``hits`` it answers *not certified*, ``settled=False``.
    (His Theorem 2.7 states the widths with randomised Clopper–Pearson bounds; his
    experiments' thresholds, and this function, use the deterministic ones.)

    Guarantee: the levels sum to ``alpha``, so the probability that any look's lower
    bound exceeds ``pA`` is at most ``alpha`` (the union bound): a certificate with
    ``pA ≤ p0`` has probability at most ``alpha``, and so has a wrong *not certified*
    with ``pA > p0`` (each side spends ``alpha``).
    """
    x = _check_hits(hits)
    _check_p0(p0)
    check_alpha(alpha)
    if not growth > 1:
        raise ValueError(f"growth must exceed 1 (the factor between looks), got {growth!r}")
    looks, levels = _looks(x.size, float(growth))
    levels = alpha * levels
    counts = np.cumsum(x)[looks - 1]
    lower = _cp_lower(counts, looks, levels)
    upper = _cp_upper(counts, looks, levels)
    stop = (lower >= p0) | (upper < p0)
    settled = bool(stop.any())
    j = int(np.argmax(stop)) if settled else looks.size - 1
    return PublishedDecision(
        design="voracek-union-bound",
        certified=bool(settled and lower[j] >= p0),
        draws=int(looks[j]) if settled else x.size,
        lower=float(lower[j]),
        upper=float(upper[j]),
        looks=j + 1,
        settled=settled,
    )


def _sequence_lower(k: int, t: int, alpha: float) -> float:
    """:func:`~rsutils.sequential.confidence_sequence.cs_lower` for one ``(k, t)``, by Brent's
    method instead of 200 vectorised bisections (the chapter asks for thousands).

    The root in ``(0, k/t]`` of ``ln B(k + 1/2, t − k + 1/2) − ln π + ln alpha − k ln q −
    (t − k) ln(1 − q)``, which decreases there from ``+∞`` to at most ``ln alpha``.
    """
    if k == 0:
        return 0.0
    log_mix = float(betaln(k + 0.5, t - k + 0.5) - betaln(0.5, 0.5)) + math.log(alpha)
    if k == t:
        return math.exp(log_mix / t)
    return float(
        brentq(
            lambda q: log_mix - k * math.log(q) - (t - k) * math.log1p(-q),
            1e-300,
            k / t,
            xtol=1e-300,
            rtol=4 * np.finfo(float).eps,
        )
    )


def _cp_lower(counts: np.ndarray, trials: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """:func:`~rsutils.core.confidence.clopper_pearson_lower` with one level per entry:
    the ``levels`` quantile of ``Beta(k, n − k + 1)``, 0 at ``k = 0``."""
    k = np.asarray(counts, dtype=float)
    n = np.asarray(trials, dtype=float)
    with np.errstate(invalid="ignore"):
        bound = beta_distribution.ppf(levels, k, n - k + 1)
    return np.where(k == 0, 0.0, bound)


def _cp_upper(counts: np.ndarray, trials: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """The one-sided upper bound, per entry: the lower bound of the misses, reflected."""
    n = np.asarray(trials, dtype=float)
    return 1.0 - _cp_lower(n - np.asarray(counts, dtype=float), n, levels)


@lru_cache(maxsize=64)
def _looks(n_max: int, growth: float) -> tuple[np.ndarray, np.ndarray]:
    looks: list[int] = []
    levels: list[float] = []
    previous, k = 0, 1
    while True:
        look = max(previous + 1, math.floor(growth ** (k - 1)) + 1)
        if look > n_max:
            break
        looks.append(look)
        levels.append(5.0 / ((k + 4) * (k + 5)))
        previous, k = look, k + 1
    if not looks:
        raise ValueError(f"n_max={n_max} draws leave no look (the first is at 2 draws)")
    out = np.asarray(looks, dtype=np.int64), np.asarray(levels)
    for array in out:
        array.setflags(write=False)
    return out


@lru_cache(maxsize=32)
def _betting_thresholds(p0: float, alpha: float, n_max: int) -> tuple[np.ndarray, np.ndarray]:
    """For each ``T ≤ n_max``: the fewest hits above ``p0·T`` with ``W_T(p0) ≥ 1/alpha``
    (``T + 1``: none), and the most hits below ``p0·T`` with it (``−1``: none)."""
    t = np.arange(1, n_max + 1, dtype=float)
    up = _upper_crossing(t, p0, alpha)
    # The Jeffreys prior is symmetric: k hits against p0 is T − k misses against 1 − p0.
    down = t - _upper_crossing(t, 1.0 - p0, alpha)
    out = up, down
    for array in out:
        array.setflags(write=False)
    return out


def _upper_crossing(t: np.ndarray, p0: float, alpha: float) -> np.ndarray:
    """Least whole ``k`` in ``(p0·t, t]`` with ``ln M_t(p0) ≥ ln(1/alpha)``, else ``t + 1``.

    ``ln M_t`` is convex in ``k`` and at most 0 where ``k/t = p0``, so above ``p0·t`` the
    crossing is one threshold: bisect for it, all ``t`` at once.
    """
    threshold = -math.log(alpha)
    lo = np.floor(p0 * t)  # not above p0·t: never certifies
    hi = t.copy()
    crosses = cs_log_martingale(hi, t, p0) >= threshold
    while np.any(hi - lo > 1):
        mid = np.floor(0.5 * (lo + hi))
        ok = cs_log_martingale(mid, t, p0) >= threshold
        lo = np.where(ok, lo, mid)
        hi = np.where(ok, mid, hi)
    return np.where(crosses, hi, t + 1)


def _check_hits(hits: ArrayLike) -> np.ndarray:
    x = np.asarray(hits)
    if x.ndim != 1 or x.size == 0 or not np.all((x == 0) | (x == 1)):
        raise ValueError(
            "hits must be a non-empty 1-D array of 0/1 (or bool) outcomes, the tested "
            f"class's draws in stream order; got shape {x.shape}"
        )
    return x.astype(np.int64)


def _check_p0(p0: float) -> None:
    if isinstance(p0, bool) or not isinstance(p0, int | float | np.floating):
        raise ValueError(f"p0 must be a number in (0, 1), e.g. norm.cdf(r / sigma); got {p0!r}")
    if not 0.0 < float(p0) < 1.0:
        raise ValueError(
            f"p0 must lie strictly between 0 and 1 (the pA a radius needs, Φ(r/σ)), got {p0!r}"
        )


def _check_draws(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise ValueError(f"{name} must be a positive whole number of draws, got {value!r}")
    return int(value)


def _check_stages(stages: Sequence[int], cumulative: bool) -> tuple[int, ...]:
    sizes = tuple(_check_draws("each stage", n) for n in stages)
    if not sizes:
        raise ValueError("stages must hold at least one stage size")
    if cumulative and any(b <= a for a, b in itertools.pairwise(sizes)):
        raise ValueError(f"cumulative stages are prefix lengths and must increase, got {sizes}")
    return sizes


@dataclass(frozen=True)
class PublishedTest:
    """A published design as a test of :class:`~rsutils.sequential.decisions.Decide`,
    with at most ``n_max`` draws at level ``alpha`` and the design's default settings
    (see the module's text); a subclass per design gives its :meth:`decide` on a stream
    of hits and its :meth:`rules`.

    Each decision's ``look`` counts the design's tests, ``alpha_spent`` is ``alpha``,
    and its bounds are the design's at the stop.
    """

    #: The design's name in :data:`~rsutils.sequential.procedure.TESTS`.
    name: ClassVar[str]
    #: The designs are not randomised.
    randomized: ClassVar[bool] = False

    n_max: int
    alpha: float

    def __post_init__(self) -> None:
        _check_draws("n_max", self.n_max)
        check_alpha(self.alpha)

    def identity(self) -> dict[str, Any]:
        return {"test": self.name, "n": self.n_max, "alpha": self.alpha}

    def decide(self, hits: np.ndarray, p0: float) -> PublishedDecision:
        """The design's answer on the stream ``hits`` for ``0 < p0 < 1``."""
        raise NotImplementedError

    def rules(self, p0: float) -> Rules:
        """The design's :meth:`decide` as thresholds on the count at each look."""
        raise NotImplementedError

    def settle(
        self, smooth: Smooth, draws: Draws, tested: int, radii: Sequence[float]
    ) -> list[Decision]:
        """The design's decision at each of ``radii`` for class ``tested``."""
        hits = draws.hits(tested, self.n_max)
        decisions = []
        for radius in radii:
            p0 = threshold_pA(smooth, radius, draws.dim)
            if p0 < 1:
                answer = self.decide(hits, p0)
            else:  # no pA < 1 certifies the radius: not certified, after no draw
                answer = PublishedDecision(self.name, False, 0, 0.0, 1.0, 0, True)
            decision = Decision(
                certified=answer.certified, radius=float(radius), selected=tested,
                count=int(hits[: answer.draws].sum()), draws=answer.draws,
                look=answer.looks, pA_lower=answer.lower, pA_upper=answer.upper,
                n0=draws.n0, alpha=self.alpha, alpha_spent=self.alpha,
                seed=draws.seed, index=draws.index,
            )  # fmt: skip
            decisions.append(decision)
        return decisions


@dataclass(frozen=True)
class HorvathStaged(PublishedTest):
    """Horváth et al.'s staged test, :func:`staged_test` with its default fresh stages
    (:func:`horvath_stages`, which need ``n_max >= 100``)."""

    name: ClassVar[str] = "horvath-staged"

    def __post_init__(self) -> None:
        super().__post_init__()
        horvath_stages(self.n_max)

    def decide(self, hits: np.ndarray, p0: float) -> PublishedDecision:
        return staged_test(hits, p0, self.alpha)

    def rules(self, p0: float) -> Rules:
        """Each fresh stage's Clopper–Pearson lower bound at ``alpha/s`` certifies, before
        the last its upper bound at ``beta/(s − 1)`` below ``p0`` stops."""
        sizes = horvath_stages(self.n_max)
        s = len(sizes)
        levels = [self.alpha / s] * s
        stop_levels = [HORVATH_BETA / (s - 1)] * (s - 1) + [None]
        ends = np.cumsum(sizes).tolist()
        return clopper_pearson_rules(ends, levels, stop_levels, p0, fresh=True)


@dataclass(frozen=True)
class VoracekBetting(PublishedTest):
    """Voráček's betting test, :func:`voracek_betting_test`."""

    name: ClassVar[str] = "voracek-betting"

    def decide(self, hits: np.ndarray, p0: float) -> PublishedDecision:
        return voracek_betting_test(hits, p0, self.alpha)

    def rules(self, p0: float) -> Rules:
        """After every draw ``T``: certified from the fewest hits above ``p0·T`` whose
        wealth reaches ``1/alpha``, stopped up to the most hits below it whose wealth
        does (the design's own crossing counts)."""
        up, down = _betting_thresholds(float(p0), float(self.alpha), self.n_max)
        looks = tuple(range(1, self.n_max + 1))
        certify, stop = tuple(up.astype(int).tolist()), tuple(down.astype(int).tolist())
        return ((1.0, LookRule(looks, certify, stop)),)


@dataclass(frozen=True)
class VoracekUnionBound(PublishedTest):
    """Voráček's union-bound test, :func:`voracek_union_bound_test`."""

    name: ClassVar[str] = "voracek-union-bound"

    def decide(self, hits: np.ndarray, p0: float) -> PublishedDecision:
        return voracek_union_bound_test(hits, p0, self.alpha)

    def rules(self, p0: float) -> Rules:
        """At each of :func:`union_bound_looks`, the Clopper–Pearson lower bound at the
        look's level at least ``p0`` certifies, the upper one below ``p0`` stops."""
        looks, levels = union_bound_looks(self.n_max, self.alpha)
        return clopper_pearson_rules(looks.tolist(), levels.tolist(), levels.tolist(), p0)


register_test(
    HorvathStaged.name,
    label="Horváth et al.",
    description="Horváth et al.'s staged test, alpha split over three fresh stages",
    make=HorvathStaged,
)
register_test(
    VoracekBetting.name,
    label="Voráček, betting",
    description="Voráček's betting confidence sequence, tested after every draw",
    make=VoracekBetting,
)
register_test(
    VoracekUnionBound.name,
    label="Voráček, union bound",
    description="Voráček's Clopper-Pearson bounds at looks 10% apart, a union bound",
    make=VoracekUnionBound,
)
