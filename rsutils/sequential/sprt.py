"""Wald's sequential probability ratio test: is ``pA > p0``, one draw at a time?

For each radius ``r``, with ``p0`` the least ``pA`` that certifies it
(:func:`~rsutils.sequential.decisions.threshold_pA`), :class:`WaldSPRT` tests ``pA ≤
p0`` against the simple alternative ``pA = p1`` (Wald, 1945). After ``t`` draws of which
``k`` fell in the tested class, the likelihood ratio of ``p1`` to ``p0`` is::

    Λ_t = (p1/p0)^k · ((1 − p1)/(1 − p0))^(t − k).

The test looks after every draw. It certifies at the first ``t`` with ``Λ_t ≥ 1/alpha``,
stops *not certified* at the first with ``Λ_t ≤ B``, Wald's lower bound ``B = β/(1 −
alpha)`` with ``β = alpha`` (his approximation for missing ``p1`` with probability
about ``β``), and answers *not certified* after ``n_max`` draws (truncated).

The alternative is ``p1 = 1 − (1 − p0)/2``, the ``pA`` that halves the miss rate
``1 − p0``: an input worth certifying at ``r`` is one whose ``pA`` clears the threshold
by a margin, and the test is quickest near ``p1`` (among tests with its two error
rates, Wald and Wolfowitz's optimality at ``p0`` and ``p1``). A ``p1`` nearer 1
certifies a stream of hits sooner (the fixed-``n`` floor as ``p1 → 1``) but is stopped
by the first few misses; halving the miss rate keeps both sides: at ``pA = 1`` it
certifies after ``⌈ln(1/alpha)/ln(p1/p0)⌉`` draws, about twice the floor
``ln(1/alpha)/ln(1/p0)`` for ``p0`` near 1.

Guarantee: under ``pA = p0`` each draw multiplies ``Λ`` by ``p1/p0`` or ``(1 − p1)/(1 −
p0)``, with mean ``p0·p1/p0 + (1 − p0)(1 − p1)/(1 − p0) = 1``: ``Λ_t`` is a
nonnegative martingale of mean 1, and for ``pA < p0`` the mean factor ``pA·p1/p0 + (1 −
pA)(1 − p1)/(1 − p0)`` is below 1 (``p1 > p0``), a supermartingale. By Ville's
inequality ``P(∃ t: Λ_t ≥ 1/alpha) ≤ alpha`` whenever ``pA ≤ p0``, so a *certified*
is wrong with probability at most ``alpha``, however the test stops: the stop at ``B``
and the truncation at ``n_max`` only remove certificates. ``B`` changes the cost and
the missed certificates, never the level. Each radius is its own test at level
``alpha``.

``ln Λ_t = k·a − (t − k)·b`` with ``a = ln(p1/p0) > 0`` and ``b = ln((1 − p0)/(1 −
p1)) = ln 2``, increasing in ``k``: at each ``t`` the test certifies from one count and
stops up to another (:meth:`WaldSPRT.boundaries`), compared with the running count of
the stream (a cumulative sum). As the published designs do
(:class:`~rsutils.sequential.published.PublishedTest`), it reads the tested class's
hits among all ``n_max`` draws and states in each decision the draws it read: live, the
model runs on all ``n_max`` draws. Registered in
:data:`~rsutils.sequential.procedure.TESTS` as ``sprt``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from rsutils.core.confidence import check_alpha
from rsutils.core.settings import check_count
from rsutils.core.smooth import Smooth
from rsutils.sequential.decisions import Decision, threshold_pA
from rsutils.sequential.draws import Draws
from rsutils.sequential.procedure import register_test
from rsutils.sequential.rules import LookRule, Rules

__all__ = ["WaldSPRT", "alternative"]


def alternative(p0: float) -> float:
    """The alternative ``p1 = 1 − (1 − p0)/2`` the test weighs ``p0`` against: the
    ``pA`` that halves the miss rate (see the module)."""
    return 1.0 - (1.0 - p0) / 2.0


@dataclass(frozen=True)
class WaldSPRT:
    """Wald's SPRT of ``pA ≤ p0`` against ``p1 = 1 − (1 − p0)/2`` at level ``alpha``,
    looking after every draw, truncated at ``n_max`` draws (see the module).

    Each decision's ``look`` and ``draws`` are the draws read; ``pA_lower`` is ``p0``
    when certified (the certificate's claim ``pA > p0``, at level ``alpha``) and 0
    otherwise; the test states no upper bound (``pA_upper`` 1).
    """

    name: ClassVar[str] = "sprt"
    #: The SPRT is not randomised.
    randomized: ClassVar[bool] = False

    n_max: int
    alpha: float

    def __post_init__(self) -> None:
        check_count("n_max", self.n_max)
        check_alpha(self.alpha)

    def identity(self) -> dict[str, Any]:
        return {"test": self.name, "n": self.n_max, "alpha": self.alpha}

    def boundaries(self, p0: float) -> tuple[np.ndarray, np.ndarray]:
        """For each ``t = 1 … n_max``: the least count with ``Λ_t ≥ 1/alpha`` (``t + 1``:
        none) and the greatest with ``Λ_t ≤ B`` (-1: none), for ``0 < p0 < 1``."""
        return _boundaries(float(p0), float(self.alpha), self.n_max)

    def rules(self, p0: float) -> Rules:
        """:meth:`boundaries` at every draw: the comparisons :meth:`settle` makes."""
        certify_from, stop_up_to = self.boundaries(p0)
        looks = tuple(range(1, self.n_max + 1))
        certify, stop = tuple(certify_from.tolist()), tuple(stop_up_to.tolist())
        return ((1.0, LookRule(looks, certify, stop)),)

    def settle(
        self, smooth: Smooth, draws: Draws, tested: int, radii: Sequence[float]
    ) -> list[Decision]:
        """The decision at each of ``radii`` for class ``tested``: the first draw at
        which the running count reaches a boundary, else *not certified* after
        ``n_max``; a radius no ``pA < 1`` certifies is *not certified* after no draw."""
        counts = np.cumsum(draws.hits(tested, self.n_max))
        decisions = []
        for radius in radii:
            p0 = threshold_pA(smooth, radius, draws.dim)
            t, certified = 0, False
            if p0 < 1:
                certify_from, stop_up_to = self.boundaries(p0)
                crossed = (counts >= certify_from) | (counts <= stop_up_to)
                t = int(np.argmax(crossed)) + 1 if crossed.any() else self.n_max
                certified = bool(counts[t - 1] >= certify_from[t - 1])
            decision = Decision(
                certified=certified, radius=float(radius), selected=tested,
                count=int(counts[t - 1]) if t else 0, draws=t, look=t,
                pA_lower=p0 if certified else 0.0, pA_upper=1.0, n0=draws.n0,
                alpha=self.alpha, alpha_spent=self.alpha, seed=draws.seed, index=draws.index,
            )  # fmt: skip
            decisions.append(decision)
        return decisions


@functools.lru_cache(maxsize=64)
def _boundaries(p0: float, alpha: float, n_max: int) -> tuple[np.ndarray, np.ndarray]:
    """:meth:`WaldSPRT.boundaries`: ``ln Λ_t = k(a + b) − t·b`` is solved for ``k`` at
    ``ln(1/alpha)`` and at ``ln B``, and each count checked against ``ln Λ_t`` itself
    (one step either way) so that rounding cannot move a boundary."""
    if not 0.0 < p0 < 1.0:
        raise ValueError(f"p0 must lie strictly between 0 and 1 (the pA a radius needs), got {p0}")
    a = math.log1p((1.0 - p0) / (2.0 * p0))  # ln(p1/p0)
    b = math.log(2.0)  # ln((1 - p0)/(1 - p1))
    t = np.arange(1, n_max + 1, dtype=float)

    def log_ratio(k: np.ndarray) -> np.ndarray:
        return k * a - (t - k) * b

    upper, lower = -math.log(alpha), math.log(alpha / (1.0 - alpha))
    certify = np.ceil((upper + t * b) / (a + b))
    certify = np.where(log_ratio(certify - 1) >= upper, certify - 1, certify)
    certify = np.where(log_ratio(certify) < upper, certify + 1, certify)
    stop = np.floor((lower + t * b) / (a + b))
    stop = np.where(log_ratio(stop + 1) <= lower, stop + 1, stop)
    stop = np.where(log_ratio(stop) > lower, stop - 1, stop)
    out = np.minimum(certify, t + 1).astype(np.int64), np.maximum(stop, -1).astype(np.int64)
    for array in out:
        array.setflags(write=False)
    return out


register_test(
    WaldSPRT.name,
    label="Wald's SPRT",
    description="Wald's sequential probability ratio test against the pA that halves the "
    "miss rate, after every draw",
    make=WaldSPRT,
)
