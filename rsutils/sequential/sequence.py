"""Sequential decisions with a confidence sequence: look as often as you like.

:class:`~rsutils.sequential.spending.LookSchedule` splits ``alpha`` over a few looks (the
union bound), so each look tests at a fraction of ``alpha`` and looks must be few. An
:class:`AnytimeSchedule` tests at *every* look at the full ``alpha``, with the
anytime-valid test of :mod:`rsutils.sequential.confidence_sequence`: at look ``t`` it
certifies radius ``r`` when the mixture martingale ``M_t(p0)`` at the least ``pA``
that certifies ``r`` (``p0``, :func:`~rsutils.sequential.decisions.threshold_pA`) reaches
``1/alpha`` with more than ``p0·t`` draws in the tested class; by Ville's inequality
the chance that this ever happens when ``pA ≤ p0`` is at most ``alpha``, however many
looks there are and whenever the procedure stops. By default (``one_sided``) the
prior of the mixture is Jeffreys' truncated to ``[p0, 1]``, which spends nothing on
``pA < p0`` and certifies an input with ``pA = 1`` at about 1.17 times the fixed-``n``
floor (:func:`~rsutils.sequential.confidence_sequence.cs_min_draws_all_successes`).

It stops *not certified* when the two-sided ``(1 - alpha)`` confidence sequence lies
entirely below ``p0`` (the draws say ``pA < p0``), or at the last look. Stopping for
*not certified* never makes a false certificate, so this rule changes the cost, not
the guarantee.

Guarantee: if a decision is *certified*, then with probability at least
``1 - alpha`` the smoothed classifier predicts the tested class everywhere within
``r`` of ``x`` (Cohen et al., Theorem 1, with ``pA > p0``). Each radius of
:meth:`AnytimeSchedule.settle` is its own test at level ``alpha``, as each radius of
every test of :class:`~rsutils.sequential.decisions.Decide` is.

Looks are where the draws are cut into batches of the base model, so they trade
model throughput (few, large batches) against overshoot (the draws read past the
first moment the test could have stopped, at most a factor ``growth``).

Registered in :data:`~rsutils.sequential.procedure.TESTS` as ``sequence``, with
:meth:`AnytimeSchedule.geometric`'s looks.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from rsutils.core.confidence import check_alpha, clopper_pearson_lower
from rsutils.core.settings import check_count
from rsutils.core.smooth import Smooth
from rsutils.sequential.confidence_sequence import (
    JEFFREYS,
    cs_decide,
    cs_log_martingale,
    cs_lower,
)
from rsutils.sequential.decisions import Decision, certifies, threshold_pA
from rsutils.sequential.draws import Draws
from rsutils.sequential.procedure import register_test
from rsutils.sequential.rules import LookRule, Rules, clopper_pearson_look

__all__ = ["AnytimeSchedule"]


@dataclass(frozen=True)
class AnytimeSchedule:
    """Looks at ``looks`` draws, each testing the sequence (see the module).

    ``one_sided`` truncates the prior to ``[p0, 1]`` (the default: fewer draws); the
    two-sided mixture is a confidence sequence for ``pA`` itself. ``prior`` is the
    Beta prior of the mixture, Jeffreys' by default (the Krichevsky–Trofimov bettor).
    ``final_share`` keeps that share of ``alpha`` for CERTIFY's own test at the last
    look (one-sided Clopper–Pearson with all ``n_max`` draws), the sequence testing at
    the rest: an input that needs every draw then loses little against CERTIFY, whose
    fixed-``n`` bound is tighter there than any sequence's. The two tests' levels add
    up to ``alpha`` (the union bound).
    """

    name: ClassVar[str] = "sequence"
    #: A confidence sequence is not randomised.
    randomized: ClassVar[bool] = False

    looks: tuple[int, ...]
    alpha: float
    one_sided: bool = True
    prior: tuple[float, float] = JEFFREYS
    final_share: float = 0.0

    def __post_init__(self) -> None:
        if not self.looks:
            raise ValueError("need at least one look")
        for look in self.looks:
            check_count("a look", look)
        if any(b <= a for a, b in zip(self.looks, self.looks[1:], strict=False)):
            raise ValueError(f"looks must increase strictly, got {self.looks}")
        check_alpha(self.alpha)
        if not 0 <= self.final_share < 1:
            raise ValueError(f"final_share must lie in [0, 1), got {self.final_share!r}")

    @property
    def sequence_alpha(self) -> float:
        """The level of the sequence, ``alpha`` less the final test's share."""
        return self.alpha * (1 - self.final_share)

    @property
    def n_max(self) -> int:
        """The draws of the last look, the most the procedure ever spends."""
        return self.looks[-1]

    def identity(self) -> dict[str, Any]:
        """The looks, level, sidedness and prior, and the share kept for the last look."""
        test = {"test": "confidence sequence", "looks": list(self.looks)}
        test |= {"alpha": self.alpha, "one_sided": self.one_sided, "prior": list(self.prior)}
        return test | {"final_share": self.final_share}

    @classmethod
    def geometric(
        cls,
        n_max: int,
        alpha: float,
        *,
        first: int = 10,
        growth: float = 1.1,
        one_sided: bool = True,
        final_share: float = 0.5,
    ) -> AnytimeSchedule:
        """Looks at ``first``, then each about ``growth`` times the last (at least one
        draw more), and at ``n_max``; half of ``alpha`` kept for the last look's fixed-``n``
        test by default, as :meth:`~rsutils.sequential.spending.LookSchedule.geometric` does."""
        check_count("n_max", n_max)
        check_count("first", first)
        if not growth > 1:
            raise ValueError(f"growth must exceed 1, got {growth!r}")
        looks, size = [], float(min(first, n_max))
        while round(size) < n_max:
            looks.append(round(size))
            size = max(size * growth, round(size) + 1.0)
        return cls((*looks, n_max), alpha, one_sided, final_share=final_share)

    def settle(
        self, smooth: Smooth, draws: Draws, tested: int, radii: Sequence[float]
    ) -> list[Decision]:
        """The decisions at each of ``radii`` for class ``tested``, from one pass over
        the prefixes of ``draws`` (advanced only as far as some radius needs); each
        decision's ``draws`` are what it alone would read."""
        dim = draws.dim
        bounds = [self.boundaries(threshold_pA(smooth, r, dim)) for r in radii]
        last = len(self.looks)
        decisions: dict[int, Decision] = {}
        for look, n in enumerate(self.looks, 1):
            count = draws.count(tested, n)
            for position, (certify_from, below_up_to) in enumerate(bounds):
                if position in decisions:
                    continue
                certified = bool(count >= certify_from[look - 1])
                final = look == last and not certified and self.final_share > 0
                fixed_n = None
                if final:  # CERTIFY's test with the share of alpha kept for it
                    level = self.alpha * self.final_share
                    fixed_n = float(clopper_pearson_lower(count, n, level))
                    certified = certifies(smooth, fixed_n, radii[position], dim)
                if certified or count <= below_up_to[look - 1] or look == last:
                    lower, upper = _bounds(count, n, self.sequence_alpha, self.prior)
                    decisions[position] = Decision(
                        certified=certified, radius=float(radii[position]), selected=tested,
                        count=count, draws=n, look=look,
                        pA_lower=lower if fixed_n is None else max(lower, fixed_n),
                        pA_upper=upper, n0=draws.n0, alpha=self.alpha,
                        alpha_spent=self.alpha, seed=draws.seed, index=draws.index,
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
        return _boundaries(self.looks, self.sequence_alpha, self.one_sided, self.prior, float(p0))

    def rules(self, p0: float) -> Rules:
        """Its :meth:`boundaries` at ``p0``, and at the last look also CERTIFY's test at
        the share of ``alpha`` kept for it (:meth:`settle`'s comparisons)."""
        certify_from, below_up_to = self.boundaries(p0)
        certify = [int(c) for c in certify_from]
        if self.final_share > 0:
            level = self.alpha * self.final_share
            fixed_n, _ = clopper_pearson_look(self.looks[-1], level, None, p0)
            certify[-1] = min(certify[-1], fixed_n)
        stop = tuple(int(d) for d in below_up_to)
        return ((1.0, LookRule(self.looks, tuple(certify), stop)),)


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


register_test(
    "sequence",
    label="confidence sequence",
    description="tests a confidence sequence after every batch at the full alpha",
    make=AnytimeSchedule.geometric,
)
