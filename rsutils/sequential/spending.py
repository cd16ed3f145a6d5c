"""Alpha spent over a few looks: the union bound's test of a decision.

A :class:`LookSchedule` looks at the tested class's count after ``n_1 < n_2 < … <
n_K`` estimation draws and spends a level ``alpha_k`` at each look, the levels summing to
``alpha``. At look ``k``, for each radius still open:

- *certified* when the one-sided Clopper–Pearson lower bound on ``pA`` at level
  ``alpha_k`` certifies ``r`` (CERTIFY's rule at that look);
- *not certified* when even the upper bound at level ``alpha_k`` cannot, or at the
  last look.

Guarantee (alpha spending): with probability at least ``1 - alpha`` no look's lower
bound exceeds the true ``pA``, whatever the stopping rule (the union bound over looks),
so a *certified* holds with probability at least ``1 - alpha`` — CERTIFY's guarantee
(Cohen et al., Proposition 2) for the radius asked. With ``randomized`` each look's lower
bound is the randomised Clopper–Pearson bound
(:func:`~rsutils.sequential.confidence_sequence.randomized_clopper_pearson_lower`) with
one uniform ``u`` per input (:func:`~rsutils.sequential.decisions.randomization`),
stated in every decision: its test has level exactly ``alpha_k``, never certifies less
than Clopper–Pearson's, and can certify below the floor of non-randomised tests.

Registered twice in :data:`~rsutils.sequential.procedure.TESTS`, with
:meth:`LookSchedule.geometric`'s looks: ``spending`` and ``randomised``.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rsutils.core.confidence import check_alpha, clopper_pearson_lower, clopper_pearson_upper
from rsutils.core.settings import check_count
from rsutils.core.smooth import Smooth
from rsutils.sequential.confidence_sequence import (
    randomized_clopper_pearson_lower,
    randomized_clopper_pearson_pvalue,
)
from rsutils.sequential.decisions import Decision, certifies, randomization, threshold_pA
from rsutils.sequential.draws import Draws
from rsutils.sequential.procedure import register_test
from rsutils.sequential.rules import LookRule, Rules, clopper_pearson_rules, least_count

__all__ = ["LookSchedule"]


@dataclass(frozen=True)
class LookSchedule:
    """Prefix lengths ``looks`` of one stream of draws, and the level spent at each.

    ``looks`` increase strictly; ``alphas[k]`` is the level of the test at ``looks[k]``
    and their sum, :attr:`alpha`, is the test's failure probability; ``randomized``
    randomises each look's Clopper–Pearson bound (see the module).
    """

    looks: tuple[int, ...]
    alphas: tuple[float, ...]
    randomized: bool = False

    def __post_init__(self) -> None:
        if not self.looks or len(self.looks) != len(self.alphas):
            raise ValueError(
                f"need one level per look, got {len(self.looks)} looks and "
                f"{len(self.alphas)} levels"
            )
        for look in self.looks:
            check_count("a look", look)
        if any(b <= a for a, b in zip(self.looks, self.looks[1:], strict=False)):
            raise ValueError(f"looks must increase strictly, got {self.looks}")
        if any(not a > 0 for a in self.alphas):
            raise ValueError(f"every look's level must be positive, got {self.alphas}")
        check_alpha(self.alpha)

    @property
    def name(self) -> str:
        """The test's name in :data:`~rsutils.sequential.procedure.TESTS`."""
        return "randomised" if self.randomized else "spending"

    @property
    def alpha(self) -> float:
        """The overall failure probability (the levels' sum)."""
        return float(math.fsum(self.alphas))

    @property
    def n_max(self) -> int:
        """The draws of the last look, the most the test ever reads."""
        return self.looks[-1]

    def identity(self) -> dict[str, Any]:
        """The looks and levels (and ``randomized`` only when set)."""
        test = {"looks": list(self.looks), "alphas": list(self.alphas)}
        return test | ({"randomized": True} if self.randomized else {})

    @classmethod
    def geometric(
        cls,
        n_max: int,
        alpha: float,
        *,
        first: int = 32,
        growth: float = 2.0,
        final_share: float = 0.5,
        randomized: bool = False,
    ) -> LookSchedule:
        """Looks at ``first``, ``first·growth``, … below ``n_max``, and at ``n_max``.

        The last look gets ``final_share`` of ``alpha``, so that an input that needs all
        ``n_max`` draws loses little against CERTIFY at level ``alpha``; the earlier
        looks share the rest equally. With one look it is CERTIFY at ``alpha``.
        """
        check_count("n_max", n_max)
        check_count("first", first)
        check_alpha(alpha)
        if not growth > 1:
            raise ValueError(f"growth must exceed 1, got {growth!r}")
        if not 0 < final_share <= 1:
            raise ValueError(f"final_share must lie in (0, 1], got {final_share!r}")
        looks: list[int] = []
        size = float(first)
        while round(size) < n_max:
            if not looks or round(size) > looks[-1]:
                looks.append(round(size))
            size *= growth
        looks.append(n_max)
        if len(looks) == 1:
            return cls((n_max,), (alpha,), randomized)
        early = alpha * (1 - final_share) / (len(looks) - 1)
        levels = (early,) * (len(looks) - 1) + (alpha * final_share,)
        return cls(tuple(looks), levels, randomized)

    def settle(
        self, smooth: Smooth, draws: Draws, tested: int, radii: Sequence[float]
    ) -> list[Decision]:
        """The rule of the module's text at each of ``radii`` for class ``tested``; the
        counter is advanced only to the latest look some radius needs. A randomised
        schedule's lower bounds use the input's randomisation (its upper bounds, which
        only stop early, stay Clopper–Pearson's)."""
        last, dim = len(self.looks), draws.dim
        u = randomization(draws.seed, draws.index) if self.randomized else None
        thresholds = [threshold_pA(smooth, r, dim) for r in radii] if u is not None else []
        decisions: dict[int, Decision] = {}
        for look, (n, level) in enumerate(zip(self.looks, self.alphas, strict=True), 1):
            count = draws.count(tested, n)
            lower, upper = _bounds(count, n, level)
            randomized_lower = False  # the recorded bound of a randomised look, once computed
            for position, radius in enumerate(radii):
                if position in decisions:
                    continue
                if u is None:
                    certified = certifies(smooth, lower, radius, dim)
                else:  # the randomised bound reaches the threshold: its p-value there <= level
                    pvalue = randomized_clopper_pearson_pvalue(count, n, thresholds[position], u)
                    certified = bool(pvalue <= level and thresholds[position] < 1)
                if certified or look == last or not certifies(smooth, upper, radius, dim):
                    if u is not None and not randomized_lower:
                        lower = float(randomized_clopper_pearson_lower(count, n, level, u))
                        randomized_lower = True
                    decisions[position] = Decision(
                        certified=certified, radius=radius, selected=tested, count=count,
                        draws=n, look=look, pA_lower=lower, pA_upper=upper, n0=draws.n0,
                        alpha=self.alpha, alpha_spent=level, seed=draws.seed,
                        index=draws.index, u=u,
                    )  # fmt: skip
            if len(decisions) == len(radii):
                break
        return [decisions[position] for position in range(len(radii))]

    def rules(self, p0: float) -> Rules:
        """At each look the Clopper–Pearson lower bound at the look's level certifies,
        the upper bound below ``p0`` stops (:meth:`settle`'s comparisons). Randomised,
        the lower bound's test is its p-value ``P(X > k) + u·P(X = k)`` at most the
        level: at counts above the critical one ``K_j`` (the least certifying at ``u =
        0``) for every ``u``, at ``K_j`` for ``u ≤ τ_j``; between consecutive ``τ_j`` the
        rule is fixed, one rule per interval of ``u``, weighted by its length."""
        fixed = clopper_pearson_rules(self.looks, self.alphas, self.alphas, p0)
        if not self.randomized:
            return fixed
        stop_up_to = fixed[0][1].stop_up_to
        critical, cut = zip(
            *(_randomised_look(n, a, p0) for n, a in zip(self.looks, self.alphas, strict=True)),
            strict=True,
        )
        edges = sorted({0.0, 1.0, *(t for t in cut if 0.0 < t < 1.0)})
        rules = []
        for start, end in itertools.pairwise(edges):
            certify = tuple(k if t >= end else k + 1 for k, t in zip(critical, cut, strict=True))
            rules.append((end - start, LookRule(self.looks, certify, stop_up_to)))
        return tuple(rules)


def _randomised_look(n: int, level: float, p0: float) -> tuple[int, float]:
    """The critical count ``K`` of a randomised look (``n + 1``: none) and the ``τ`` up
    to which ``u`` certifies there, from the test's own p-value, which is linear in
    ``u``: at most the level from ``u = 0`` to ``τ``."""

    def pvalue(k: int, u: float) -> float:
        return float(randomized_clopper_pearson_pvalue(k, n, p0, u))

    critical = least_count(n, lambda k: pvalue(k, 0.0) <= level)
    if critical > n:
        return critical, 0.0
    at_zero, at_one = pvalue(critical, 0.0), pvalue(critical, 1.0)
    return critical, (level - at_zero) / (at_one - at_zero)


@functools.lru_cache(maxsize=65536)
def _bounds(count: int, n: int, level: float) -> tuple[float, float]:
    """The one-sided Clopper–Pearson bounds at ``level`` after ``count`` of ``n`` draws
    (remembered: across inputs the same counts come back at the same looks)."""
    lower = float(clopper_pearson_lower(count, n, level))
    return lower, float(clopper_pearson_upper(count, n, level))


register_test(
    "spending",
    label="spending",
    description="splits alpha over doubling looks, Clopper-Pearson at each",
    make=LookSchedule.geometric,
)
register_test(
    "randomised",
    label="randomised",
    description="randomises Clopper-Pearson at the same looks (u in the log)",
    make=functools.partial(LookSchedule.geometric, randomized=True),
)
