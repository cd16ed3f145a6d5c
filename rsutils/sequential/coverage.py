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
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
from scipy.stats import norm

from rsutils.checks.classifiers import LinearClassifier
from rsutils.core.noise import Gaussian
from rsutils.core.smooth import ABSTAIN, Smooth
from rsutils.core.streams import derived_seed
from rsutils.sequential.procedure import Answer, Procedure, replay, settle
from rsutils.sequential.record import DrawRecord

__all__ = [
    "CoverageRun",
    "CoverageSetting",
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
