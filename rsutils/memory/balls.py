"""The certificate memory of ℓp balls: data-dependent smoothing's certificates (DDRS §3.5).

With a noise level chosen per input (:mod:`rsutils.ddrs`), every certificate is a ball
``B(x, R) = {x} ∪ {z : ‖z − x‖_p < R}`` of one norm (``"l2"`` for Gaussian noise,
``"l1"`` for uniform noise), and two of them can contradict each other.
:class:`CertificateMemory` is the memory engine (:mod:`rsutils.memory.engine`) with
:class:`NormBalls` as its shape.

**Exact.** In a normed space two open balls are disjoint exactly when
``‖x − c‖ ≥ t + r``, and ``B(x, t) ⊆ B(c, r)`` exactly when ``‖x − c‖ + t ≤ r``
(:mod:`rsutils.geometry.balls`). The memory evaluates these on float64 distances
between the stored float32 inputs; each largest scale is found in closed form and then
lowered by a few ulps until the predicate holds in floating point, so the stored memory
satisfies its invariant bit for bit on the numbers it stores.

The analysis helpers :func:`conflicting_pairs`, :func:`closest_conflict` and
:func:`replay` read raw Monte Carlo certificates: how many pairs the memory would have
to resolve, how close the nearest conflict is, and what the memory answers when the
same certificates arrive in another order.
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import torch

from rsutils.core.smooth import ABSTAIN
from rsutils.geometry.balls import NormBall, norm_ball
from rsutils.memory.engine import MemoryAnswer, RegionMemory
from rsutils.memory.shapes import Placement, Regions, RegionShape

__all__ = [
    "CertificateMemory",
    "NormBalls",
    "closest_conflict",
    "conflicting_pairs",
    "replay",
]


class NormBalls(RegionShape):
    """Balls of ``norm`` (``"l1"``, ``"l2"`` or ``"linf"``) as the memory's regions.

    No per-region data: a region is its centre and scale. Distances are computed in
    float64 from the stored float32 inputs, once per admission, and reused by the
    shrink steps.
    """

    kind = "ball"
    plural = "balls"
    opened_by = "CertificateMemory"

    def __init__(self, norm: str) -> None:
        self.geometry: NormBall = norm_ball(norm)
        self.norm = norm

    def place(self, regions: Regions, x: np.ndarray, extra: np.ndarray) -> Placement:
        """Stored balls holding ``x``: ``‖x − c‖ < r``, or ``x = c``."""
        if len(regions.centers) == 0:
            distances = np.empty(0, dtype=np.float64)
        else:
            distances = self.geometry.distances(regions.centers, x)
        inside = self.geometry.contains(distances, regions.scales)
        return Placement(x, extra, inside, distances)

    def fit_inside(
        self, regions: Regions, placement: Placement, holder: int, upper: float
    ) -> float:
        """The largest ``t ≤ upper`` with ``‖x − c‖ + t ≤ r`` (exact)."""
        dist, scales = _measured(placement)[[holder]], regions.scales[[holder]]
        radius, _ = self.geometry.shrink_to_fit(dist, scales, upper)
        return radius

    def shrink_to_avoid(
        self, regions: Regions, placement: Placement, others: np.ndarray, upper: float
    ) -> float | None:
        """The largest ``t ≤ upper`` with ``r + t ≤ ‖x − c‖`` for every other ball (exact)."""
        dist, scales = _measured(placement)[others], regions.scales[others]
        scale, possible = self.geometry.shrink_to_avoid(dist, scales, upper)
        return scale if possible else None

    def conflicting_pairs(self, regions: Regions) -> list[tuple[int, int]]:
        """Pairs of balls of different classes with ``r_i + r_j > ‖x_i − x_j‖``, or one centre."""
        points, classes, radii = regions.centers, regions.classes, regions.scales
        found = []
        for i in range(len(points)):
            if classes[i] == ABSTAIN:
                continue
            dist = self.geometry.distances(points, points[i])
            bad = (classes != classes[i]) & (classes != ABSTAIN)
            bad &= ~self.geometry.separated(dist, radii, radii[i])
            found += [(i, int(j)) for j in np.flatnonzero(bad) if j > i]
        return found


def _measured(placement: Placement) -> np.ndarray:
    """The distances :meth:`NormBalls.place` measured."""
    if placement.distances is None:
        raise ValueError("the placement has no distances; place the input with NormBalls.place")
    return placement.distances


class CertificateMemory(RegionMemory):
    """A persistent memory of certified answers; ``path=None`` keeps it in RAM only.

    The regions are balls of ``norm`` (``"l2"`` for Gaussian noise, ``"l1"`` for
    uniform noise; see :mod:`rsutils.geometry.balls`). All inputs must have the same
    number of elements; they are stored as float32, and distances are computed from
    the stored values. The rules and the invariant are in :mod:`rsutils.memory`.
    """

    region_shape: NormBalls

    def __init__(self, path: str | os.PathLike[str] | None = None, *, norm: str = "l2"):
        super().__init__(path, NormBalls(norm))

    @property
    def geometry(self) -> NormBall:
        """The balls' geometry (:class:`~rsutils.geometry.balls.NormBall`)."""
        return self.region_shape.geometry

    def admit(
        self,
        x: torch.Tensor | np.ndarray,
        prediction: int,
        radius: float,
        *,
        key: str | None = None,
    ) -> MemoryAnswer:
        """Admit the Monte Carlo certificate ``(prediction, radius)`` at ``x``.

        Returns the memory's answer, which is what the certified classifier answers
        at ``x``. If ``key`` was admitted before (for the same input), the stored
        answer is returned unchanged, so a resumed run gets the same answers; a key
        reused for another input is an error.
        """
        return self.admit_region(x, prediction, radius, key=key)


def _as_certificates(points: np.ndarray, classes: np.ndarray, radii: np.ndarray) -> Regions:
    """Raw certificates as the memory stores them: float32 rows, float64 radii."""
    points = np.asarray(points, dtype=np.float32)
    points = points.reshape(len(points), -1) if len(points) else points
    empty = np.empty((len(points), 0), dtype=np.float32)
    return Regions(points, empty, np.asarray(classes), np.asarray(radii, dtype=np.float64))


def conflicting_pairs(
    points: np.ndarray, classes: np.ndarray, radii: np.ndarray, norm: str = "l2"
) -> list[tuple[int, int]]:
    """Index pairs ``i < j`` of regions with different classes that intersect.

    ``points`` ``(N, d)``, ``classes`` and ``radii`` ``(N,)`` describe certificates
    (abstentions, class ABSTAIN, are skipped). Applied to raw Monte Carlo
    certificates of a data-dependent classifier, each pair is a contradiction the
    memory would have to resolve. The regions are balls of ``norm``.
    """
    shape = NormBalls(norm)
    return shape.conflicting_pairs(_as_certificates(points, classes, radii))


def closest_conflict(
    points: np.ndarray, classes: np.ndarray, radii: np.ndarray, norm: str = "l2"
) -> float:
    """The smallest distance / (r_i + r_j) over pairs of certificates of different classes.

    Below 1 the two regions intersect; the further above 1, the further the
    certificates are from any conflict. ``inf`` when no pair has a positive radius sum.
    Distances are measured in ``norm``.
    """
    geometry = norm_ball(norm)
    points, _, classes, radii = _as_certificates(points, classes, radii)
    best = np.inf
    for i in range(len(points)):
        if classes[i] == ABSTAIN:
            continue
        other = (classes != classes[i]) & (classes != ABSTAIN) & (radii + radii[i] > 0)
        if other.any():
            dist = geometry.distances(points[other], points[i])
            best = min(best, float(np.min(dist / (radii[other] + radii[i]))))
    return best


def replay(
    points: np.ndarray,
    predictions: np.ndarray,
    radii: np.ndarray,
    order: np.ndarray,
    *,
    norm: str = "l2",
) -> pd.DataFrame:
    """Admit the certificates in ``order`` to a fresh in-RAM memory; one row per input.

    The rows come back in the original order (columns ``prediction``, ``radius``,
    ``action``), so replays in different orders can be compared row by row.
    """
    rows = {}
    with CertificateMemory(norm=norm) as memory:
        for i in np.asarray(order):
            answer = memory.admit(points[i], int(predictions[i]), float(radii[i]))
            rows[int(i)] = (answer.prediction, answer.radius, answer.action)
    frame = pd.DataFrame.from_dict(rows, orient="index", columns=["prediction", "radius", "action"])
    return frame.sort_index()
