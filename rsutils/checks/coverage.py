"""How often the fewer-draw procedures certify a radius that is false.

The classifier is :class:`~rsutils.checks.classifiers.LinearClassifier` at a point
whose exact radius ``d = σΦ⁻¹(pA)`` is known, so a certificate of more than ``d`` is
false and its rate can be counted over many independent runs (each run is one input
index, hence its own noise). A procedure with failure probability ``alpha`` must stay
within ``alpha`` plus a few binomial standard errors.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from scipy.stats import norm

from rsutils.checks.classifiers import LinearClassifier
from rsutils.core.evaluation import decide_label
from rsutils.core.noise import Gaussian
from rsutils.core.sample_size import certify_planned
from rsutils.core.sequential import LookSchedule, Schedule, decide
from rsutils.core.sequential_radius import certify_looks
from rsutils.core.smooth import Smooth

__all__ = [
    "CoverageRun",
    "label_false_rate",
    "looks_false_rate",
    "planned_false_rate",
    "sequential_false_rate",
]


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


def _setting(p_a: float, sigma: float) -> tuple[Smooth, torch.Tensor, float]:
    line = LinearClassifier(torch.tensor([3.0, -4.0]), b=0.5)
    distance = sigma * float(norm.ppf(p_a))
    x = line.point_at_distance(distance, side=1)
    return Smooth(line, 2, Gaussian(sigma), input_range=None), x, distance


def sequential_false_rate(
    schedule: Schedule,
    runs: int,
    *,
    p_a: float = 0.9,
    sigma: float = 1.0,
    n0: int = 50,
    seed: int = 0,
    claimed_alpha: float | None = None,
) -> CoverageRun:
    """:func:`~rsutils.core.sequential.decide` asked about a radius just beyond the
    exact one (``pA = p_a``) in ``runs`` runs: every *certified* is false. The rate is
    held against ``claimed_alpha`` (default: the schedule's, the sum of its levels), so
    a schedule that claims less than it spends can be caught."""
    smooth, x, distance = _setting(p_a, sigma)
    false = sum(
        decide(smooth, x, distance + 1e-6, n0, schedule, seed=seed, index=i).certified
        for i in range(runs)
    )
    return CoverageRun(false, runs, schedule.alpha if claimed_alpha is None else claimed_alpha)


def label_false_rate(
    schedule: Schedule,
    runs: int,
    *,
    p_a: float = 0.9,
    sigma: float = 1.0,
    seed: int = 0,
    claimed_alpha: float | None = None,
) -> CoverageRun:
    """:func:`~rsutils.core.evaluation.decide_label` asked whether the true label
    (class 1, of probability ``p_a``) is certified at a radius just beyond the exact
    one, in ``runs`` runs: the label's probability sits at the threshold that radius
    needs, the worst case, and every *certified* is false. The rate is held against
    ``claimed_alpha`` (default: the schedule's)."""
    smooth, x, distance = _setting(p_a, sigma)
    false = sum(
        decide_label(smooth, x, 1, distance + 1e-6, schedule, seed=seed, index=i).certified
        for i in range(runs)
    )
    return CoverageRun(false, runs, schedule.alpha if claimed_alpha is None else claimed_alpha)


def planned_false_rate(
    n_max: int,
    alpha: float,
    radius_loss: float,
    runs: int,
    *,
    p_a: float = 0.9,
    sigma: float = 1.0,
    n0: int = 50,
    min_draws: int = 20,
    seed: int = 0,
) -> CoverageRun:
    """:func:`~rsutils.core.sample_size.certify_planned` in ``runs`` runs at
    ``pA = p_a``: a certificate whose radius exceeds the exact one is false."""
    smooth, x, distance = _setting(p_a, sigma)
    false = 0
    for i in range(runs):
        cert = certify_planned(
            smooth, x, n0, n_max, alpha, radius_loss, seed=seed, index=i, min_draws=min_draws
        )
        false += cert.prediction == 1 and cert.radius > distance
    return CoverageRun(false, runs, alpha)


def looks_false_rate(
    schedule: LookSchedule,
    radius_loss: float,
    runs: int,
    *,
    p_a: float = 0.9,
    sigma: float = 1.0,
    n0: int = 50,
    keep_best: bool = False,
    seed: int = 0,
    claimed_alpha: float | None = None,
) -> CoverageRun:
    """:func:`~rsutils.core.sequential_radius.certify_looks` in ``runs`` runs at
    ``pA = p_a``: a certificate whose radius exceeds the exact one is false. The rate is
    held against ``claimed_alpha`` (default: the schedule's level)."""
    smooth, x, distance = _setting(p_a, sigma)
    false = 0
    for i in range(runs):
        answer = certify_looks(
            smooth, x, n0, schedule, radius_loss, seed=seed, index=i, keep_best=keep_best
        )
        false += answer.prediction == 1 and answer.radius > distance
    return CoverageRun(false, runs, schedule.alpha if claimed_alpha is None else claimed_alpha)
