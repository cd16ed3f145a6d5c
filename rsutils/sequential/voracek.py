"""Voráček (NeurIPS 2024)'s two confidence sequences, as tests of decisions.

- :func:`voracek_betting_test` — Algorithm 2: the betting confidence sequence whose bets
  follow the Krichevsky–Trofimov estimate ``(H + 1/2)/(T + 1)``; ``p0`` leaves it when
  the wealth ``W_T(p0)`` reaches ``1/alpha`` (Theorem 2.11), on the side of the empirical
  mean. This is *the same process* as this library's Jeffreys mixture
  (:func:`~rsutils.sequential.confidence_sequence.cs_log_martingale` with the default
  prior and ``one_sided=False``).
- :func:`voracek_union_bound_test` — Algorithm 1 with the settings of his experiments
  (Appendix C.2): Clopper–Pearson bounds recomputed each time the draws pass ``1.1^K``,
  the ``K``-th at level ``alpha_K = 5·alpha/((K + 4)(K + 5))``, which sum to ``alpha``.

Written from Voráček's text; no code is copied. :class:`VoracekBetting` and
:class:`VoracekUnionBound` are the designs as tests of
:class:`~rsutils.sequential.decisions.Decide` (``--test voracek-betting``,
``--test voracek-union-bound``), with what every published design shares in
:mod:`rsutils.sequential.published`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike
from scipy.optimize import brentq
from scipy.special import betaln

from rsutils.core.confidence import check_alpha
from rsutils.sequential.confidence_sequence import cs_log_martingale
from rsutils.sequential.procedure import register_test
from rsutils.sequential.published import (
    PublishedDecision,
    PublishedTest,
    check_draws,
    check_hits,
    check_p0,
    cp_lower,
    cp_upper,
)
from rsutils.sequential.rules import LookRule, Rules, clopper_pearson_rules

__all__ = [
    "VORACEK_GROWTH",
    "VoracekBetting",
    "VoracekUnionBound",
    "union_bound_looks",
    "voracek_betting_test",
    "voracek_union_bound_test",
]

#: Voráček's growth of the draws between two recomputed bounds (Appendix C.2).
VORACEK_GROWTH = 1.1


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
    x = check_hits(hits)
    check_p0(p0)
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
    n_max = check_draws("n_max", n_max)
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
    x = check_hits(hits)
    check_p0(p0)
    check_alpha(alpha)
    if not growth > 1:
        raise ValueError(f"growth must exceed 1 (the factor between looks), got {growth!r}")
    looks, levels = _looks(x.size, float(growth))
    levels = alpha * levels
    counts = np.cumsum(x)[looks - 1]
    lower = cp_lower(counts, looks, levels)
    upper = cp_upper(counts, looks, levels)
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
