"""Sequential decisions with a confidence sequence: look as often as you like.

:class:`~rsutils.core.sequential.LookSchedule` splits ``alpha`` over a few looks (the
union bound), so each look tests at a fraction of ``alpha`` and looks must be few. An
:class:`AnytimeSchedule` tests at *every* look at the full ``alpha``, with the
anytime-valid test of :mod:`rsutils.core.confidence_sequence`: at look ``t`` it
certifies radius ``r`` when the mixture martingale ``M_t(p0)`` at the least ``pA``
that certifies ``r`` (``p0``, :func:`~rsutils.core.sequential.threshold_pA`) reaches
``1/alpha`` with more than ``p0·t`` draws in the tested class; by Ville's inequality
the chance that this ever happens when ``pA ≤ p0`` is at most ``alpha``, however many
looks there are and whenever the procedure stops. By default (``one_sided``) the
prior of the mixture is Jeffreys' truncated to ``[p0, 1]``, which spends nothing on
``pA < p0`` and certifies an input with ``pA = 1`` at about 1.17 times the fixed-``n``
floor (:func:`~rsutils.core.confidence_sequence.cs_min_draws_all_successes`).

It stops *not certified* when the two-sided ``(1 - alpha)`` confidence sequence lies
entirely below ``p0`` (the draws say ``pA < p0``), or at the last look. Stopping for
*not certified* never makes a false certificate, so this rule changes the cost, not
the guarantee.

Guarantee: if a decision is *certified*, then with probability at least
``1 - alpha`` the smoothed classifier predicts the tested class everywhere within
``r`` of ``x`` (Cohen et al., Theorem 1, with ``pA > p0``). Each radius of
:meth:`AnytimeSchedule.settle` is its own test at level ``alpha``, as each radius of
:func:`~rsutils.core.sequential.decide_radii` is.

Looks are where the draws are cut into batches of the base model, so they trade
model throughput (few, large batches) against overshoot (the draws read past the
first moment the test could have stopped, at most a factor ``growth``).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rsutils.core.confidence import check_alpha
from rsutils.core.confidence_sequence import JEFFREYS, cs_decide, cs_log_martingale, cs_lower
from rsutils.core.sequential import Counter, Decision, threshold_pA
from rsutils.core.settings import check_count
from rsutils.core.smooth import Smooth

__all__ = ["AnytimeSchedule"]


@dataclass(frozen=True)
class AnytimeSchedule:
    """Looks at ``looks`` draws, each testing at the full ``alpha`` (see the module).

    ``one_sided`` truncates the prior to ``[p0, 1]`` (the default: fewer draws); the
    two-sided mixture is a confidence sequence for ``pA`` itself. ``prior`` is the
    Beta prior of the mixture, Jeffreys' by default (the Krichevsky–Trofimov bettor).
    """

    looks: tuple[int, ...]
    alpha: float
    one_sided: bool = True
    prior: tuple[float, float] = JEFFREYS

    def __post_init__(self) -> None:
        if not self.looks:
            raise ValueError("need at least one look")
        for look in self.looks:
            check_count("a look", look)
        if any(b <= a for a, b in zip(self.looks, self.looks[1:], strict=False)):
            raise ValueError(f"looks must increase strictly, got {self.looks}")
        check_alpha(self.alpha)

    @property
    def n_max(self) -> int:
        """The draws of the last look, the most the procedure ever spends."""
        return self.looks[-1]

    @classmethod
    def geometric(
        cls,
        n_max: int,
        alpha: float,
        *,
        first: int = 10,
        growth: float = 1.1,
        one_sided: bool = True,
    ) -> AnytimeSchedule:
        """Looks at ``first``, then each about ``growth`` times the last (at least one
        draw more), and at ``n_max``."""
        check_count("n_max", n_max)
        check_count("first", first)
        if not growth > 1:
            raise ValueError(f"growth must exceed 1, got {growth!r}")
        looks, size = [], float(min(first, n_max))
        while round(size) < n_max:
            looks.append(round(size))
            size = max(size * growth, round(size) + 1.0)
        return cls((*looks, n_max), alpha, one_sided)

    def settle(
        self,
        smooth: Smooth,
        counter: Counter,
        tested: int,
        radii: Sequence[float],
        *,
        dim: int,
        n0: int,
        seed: int,
        index: int,
    ) -> list[Decision]:
        """The decisions at each of ``radii`` for class ``tested``, from one pass over
        ``counter``'s prefixes (advanced only as far as some radius needs); each
        decision's ``draws`` are what it alone would read."""
        bounds = [self.boundaries(threshold_pA(smooth, r, dim)) for r in radii]
        decisions: dict[int, Decision] = {}
        for look, n in enumerate(self.looks, 1):
            count = int(counter.advance(n)[tested])
            for position, (certify_from, below_up_to) in enumerate(bounds):
                if position in decisions:
                    continue
                certified = bool(count >= certify_from[look - 1])
                if certified or count <= below_up_to[look - 1] or look == len(self.looks):
                    decisions[position] = self._decision(
                        certified, radii[position], tested, count, n, look,
                        n0=n0, seed=seed, index=index,
                    )  # fmt: skip
            if len(decisions) == len(radii):
                break
        return [decisions[position] for position in range(len(radii))]

    def boundaries(self, p0: float) -> tuple[np.ndarray, np.ndarray]:
        """Per look, the least count that certifies ``pA > p0`` and the greatest count
        at which the two-sided sequence lies below ``p0`` (-1 if none).

        The test is monotone in the count (the likelihood ratios of ``θ ≥ p0`` grow
        with it; below ``p0·t`` the two-sided mixture falls as it grows), so each
        look's answer is a comparison of its count with these two numbers, found once
        by bisection; for ``p0 >= 1`` nothing certifies and every look stops.
        """
        return _boundaries(self.looks, self.alpha, self.one_sided, self.prior, float(p0))

    def _decision(
        self,
        certified: bool,
        radius: float,
        tested: int,
        count: int,
        n: int,
        look: int,
        *,
        n0: int,
        seed: int,
        index: int,
    ) -> Decision:
        lower, upper = _bounds(count, n, self.alpha, self.prior)
        return Decision(
            certified=certified, radius=float(radius), selected=tested, count=count,
            draws=n, look=look, pA_lower=lower, pA_upper=upper, n0=n0,
            alpha=self.alpha, alpha_spent=self.alpha, seed=seed, index=index,
        )  # fmt: skip


@functools.lru_cache(maxsize=4096)
def _boundaries(
    looks: tuple[int, ...], alpha: float, one_sided: bool, prior: tuple[float, float], p0: float
) -> tuple[np.ndarray, np.ndarray]:
    n = np.asarray(looks, dtype=np.int64)
    if p0 >= 1:
        return n + 1, n
    threshold = -math.log(alpha)

    def certifies(k: np.ndarray) -> np.ndarray:
        return cs_decide(k, n, p0, alpha, prior, one_sided)

    def below(k: np.ndarray) -> np.ndarray:
        log_m = cs_log_martingale(k, n, p0, prior)
        return (k < p0 * n) & (log_m >= threshold)

    # least k in [0, n + 1] with certifies(k) (n + 1: none), by bisection on every look
    low, high = np.zeros_like(n), n + 1
    while np.any(low < high):
        middle = (low + high) // 2
        ok = np.where(middle <= n, certifies(np.minimum(middle, n)), True)
        high, low = np.where(ok, middle, high), np.where(ok, low, middle + 1)
    certify_from = high
    # greatest k in [-1, n] with below(k) (-1: none)
    low, high = np.full_like(n, -1), n.copy()
    while np.any(low < high):
        middle = (low + high + 1) // 2
        ok = below(np.maximum(middle, 0))
        low, high = np.where(ok, middle, low), np.where(ok, high, middle - 1)
    below_up_to = low
    certify_from.setflags(write=False)
    below_up_to.setflags(write=False)
    return certify_from, below_up_to


@functools.lru_cache(maxsize=65536)
def _bounds(count: int, n: int, alpha: float, prior: tuple[float, float]) -> tuple[float, float]:
    """The two-sided sequence's bounds on ``pA`` after ``count`` of ``n`` draws."""
    lower = float(cs_lower(count, n, alpha, prior))
    upper = 1.0 - float(cs_lower(n - count, n, alpha, prior[::-1]))
    return lower, upper
