"""Horváth, Müller, Fischer and Vechev (ICLR 2022)'s staged test, as a test of decisions.

"Adaptive sampling" for a predetermined radius (:func:`staged_test`): ``s`` stages of
growing size; at stage ``i`` a one-sided Clopper–Pearson lower bound at level
``alpha/s`` (Bonferroni over the stages) certifies, and before the last stage an upper
bound at level ``beta/(s − 1)`` that cannot reach ``p0`` stops it *not certified*; the
last stage answers either way. Written from Voráček's account of the method (§3.1, App.
C.2.1) and the settings of their released experiments; no code is copied.
:class:`HorvathStaged` is the design as a test of
:class:`~rsutils.sequential.decisions.Decide` (``--test horvath-staged``), with what
every published design shares in :mod:`rsutils.sequential.published`.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike

from rsutils.core.confidence import check_alpha, clopper_pearson_lower
from rsutils.sequential.procedure import register_test
from rsutils.sequential.published import (
    PublishedDecision,
    PublishedTest,
    check_draws,
    check_hits,
    check_p0,
    cp_upper,
)
from rsutils.sequential.rules import Rules, clopper_pearson_rules

__all__ = ["HORVATH_BETA", "HorvathStaged", "horvath_stages", "staged_test"]

#: Horváth et al.'s level of the early "not certified" stop (their released code's default).
HORVATH_BETA = 1e-4


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
    n_max = check_draws("n_max", n_max)
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
    x = check_hits(hits)
    check_p0(p0)
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
    upper = cp_upper(counts, trials, upper_levels)
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


def _check_stages(stages: Sequence[int], cumulative: bool) -> tuple[int, ...]:
    sizes = tuple(check_draws("each stage", n) for n in stages)
    if not sizes:
        raise ValueError("stages must hold at least one stage size")
    if cumulative and any(b <= a for a, b in itertools.pairwise(sizes)):
        raise ValueError(f"cumulative stages are prefix lengths and must increase, got {sizes}")
    return sizes


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


register_test(
    HorvathStaged.name,
    label="Horváth et al.",
    description="Horváth et al.'s staged test, alpha split over three fresh stages",
    make=HorvathStaged,
)
