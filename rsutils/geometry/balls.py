"""Certified balls as geometric objects, for the certificate memory.

A memory (:mod:`rsutils.memory`) needs four questions answered about the region
certified at an input: does a region contain a point; are two regions disjoint; how
far must a new region shrink to avoid a stored one; how far to fit inside one. A
:class:`RegionGeometry` answers them, vectorised over the stored regions. Regions are
indexed by a scale ``r`` around their centre and shrink by lowering ``r``, so the same
interface carries ℓp balls now and ellipsoids (a centre, a shape, a scale) later.

Float rounding is handled in one place: the "largest" scales are found in closed form,
then lowered by a few ulps (doubling the step each time) until the predicate that
checks them holds exactly in floating point, so a stored memory satisfies its
invariants bit for bit.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from rsutils.geometry.norms import NORM_ORDERS, norm_order

__all__ = ["NormBall", "RegionGeometry", "norm_ball"]


class RegionGeometry(ABC):
    """Regions ``{c} ∪ {z : distance(z, c) < r}`` of one kind, vectorised.

    The centre always belongs to its region, so a region of scale 0 is the point
    itself: an uncertified answer that later regions must still avoid.
    """

    #: How a memory file records the kind of its regions (e.g. ``"l2-ball"``).
    name: str

    @abstractmethod
    def distances(self, centers: np.ndarray, x: np.ndarray) -> np.ndarray:
        """Distance (float64) from each stored centre ``(N, d)`` to ``x`` ``(d,)``."""

    @abstractmethod
    def contains(self, dist: np.ndarray, scales: np.ndarray) -> np.ndarray:
        """Whether each stored region holds the point at distances ``dist``."""

    @abstractmethod
    def separated(self, dist: np.ndarray, scales: np.ndarray, scale: np.ndarray) -> np.ndarray:
        """Whether a region of ``scale`` at distance ``dist`` misses each stored one."""

    @abstractmethod
    def nested(self, dist: np.ndarray, scales: np.ndarray, scale: np.ndarray) -> np.ndarray:
        """Whether a region of ``scale`` at distance ``dist`` lies inside each stored one."""

    @abstractmethod
    def largest_separated(self, dist: np.ndarray, scales: np.ndarray) -> np.ndarray:
        """Closed-form largest scale of a new region that misses each stored one."""

    @abstractmethod
    def largest_nested(self, dist: np.ndarray, scales: np.ndarray) -> np.ndarray:
        """Closed-form largest scale of a new region inside each stored one."""

    def shrink_to_avoid(
        self, dist: np.ndarray, scales: np.ndarray, scale: float
    ) -> tuple[float, bool]:
        """The largest scale ≤ ``scale`` missing every stored region, and whether one exists.

        None exists when the new centre lies in a stored region.
        """
        return self._largest(dist, scales, scale, self.largest_separated, self.separated)

    def shrink_to_fit(
        self, dist: np.ndarray, scales: np.ndarray, scale: float
    ) -> tuple[float, bool]:
        """The largest scale ≤ ``scale`` inside every stored region, and whether one exists."""
        return self._largest(dist, scales, scale, self.largest_nested, self.nested)

    def _largest(self, dist, scales, scale, closed_form, predicate) -> tuple[float, bool]:
        if len(dist) == 0:
            return float(scale), True
        candidate = np.float64(min(scale, float(np.min(closed_form(dist, scales)))))
        if candidate < 0:
            return 0.0, False
        step = np.spacing(candidate)
        while not bool(np.all(predicate(dist, scales, candidate))):
            if candidate == 0:
                return 0.0, False
            candidate, step = max(candidate - step, np.float64(0.0)), 2 * step
        return float(candidate), True


class NormBall(RegionGeometry):
    """Balls of an ℓp norm (p = 1, 2 or ∞): the certificates of isotropic smoothing.

    In a normed space the open balls ``B(x, t)`` and ``B(c, r)`` are disjoint exactly
    when ``‖x − c‖ ≥ t + r``, and ``B(x, t) ⊆ B(c, r)`` exactly when
    ``‖x − c‖ + t ≤ r`` (walk along the segment from c to x), so one set of formulas
    serves every p.
    """

    def __init__(self, norm: str) -> None:
        if not isinstance(norm, str):
            raise ValueError(f"norm must be one of {sorted(NORM_ORDERS)}, got {norm!r}")
        self.norm, self.order = norm, norm_order(norm)
        self.name = f"{norm}-ball"

    def distances(self, centers: np.ndarray, x: np.ndarray) -> np.ndarray:
        difference = np.asarray(centers, dtype=np.float64) - np.asarray(x, dtype=np.float64)
        if self.order == 2:
            return np.sqrt(np.square(difference).sum(axis=1))
        if self.order == 1:
            return np.abs(difference).sum(axis=1)
        return np.abs(difference).max(axis=1, initial=0.0)

    def contains(self, dist: np.ndarray, scales: np.ndarray) -> np.ndarray:
        return (dist < scales) | (dist == 0)

    def separated(self, dist: np.ndarray, scales: np.ndarray, scale: np.ndarray) -> np.ndarray:
        return (scales + scale <= dist) & (dist > 0)

    def nested(self, dist: np.ndarray, scales: np.ndarray, scale: np.ndarray) -> np.ndarray:
        # The new open ball lies in the stored one when d + t <= r; the new centre must
        # itself be in the stored region, which only adds a condition when t = 0.
        return (dist + scale <= scales) & ((dist < scales) | (dist == 0))

    def largest_separated(self, dist: np.ndarray, scales: np.ndarray) -> np.ndarray:
        return dist - scales

    def largest_nested(self, dist: np.ndarray, scales: np.ndarray) -> np.ndarray:
        return scales - dist


_BALLS = {norm: NormBall(norm) for norm in NORM_ORDERS}


def norm_ball(norm: str) -> NormBall:
    """The geometry of the balls of ``norm`` (``"l1"``, ``"l2"`` or ``"linf"``)."""
    try:
        return _BALLS[norm]
    except (KeyError, TypeError):
        raise ValueError(
            f"unknown norm {norm!r} for certified balls; choose one of {sorted(_BALLS)}"
        ) from None
