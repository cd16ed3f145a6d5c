"""The certificate memory of axis-aligned super-ellipsoids: anisotropic certificates (UCAN).

With a noise shape chosen per input (:mod:`rsutils.anisotropic`), a certificate is a
region ``E(x, sigma, R) = {x} ∪ {z : ‖(z − x) ⊘ sigma‖_p < R}`` whose shape ``sigma``
changes from input to input (possibly by orders of magnitude), and two certificates can
contradict each other. :class:`AnisotropicMemory` is the memory engine
(:mod:`rsutils.memory.engine`) with :class:`SuperEllipsoids` as its shape: each region
stores its ``sigma`` (column ``shape``), and only the scale ``R`` ever shrinks.

**Why the intersection test is sound.** Two regions of the same ``p`` are disjoint
exactly when a hyperplane separates them: for a normal ``w``, region A reaches
``w·c_A + R_A‖sigma_A ⊙ w‖_q`` (q the dual exponent) and does not touch that value, so
``w·(c_B − c_A) ≥ R_A‖sigma_A ⊙ w‖_q + R_B‖sigma_B ⊙ w‖_q`` proves disjointness. The
memory stores a region only with such a ``w`` verified in floating point with a margin
that bounds every rounding error (:mod:`rsutils.geometry.separation`), so the invariant
holds in exact arithmetic on the stored numbers: centres and shapes as float32, scales
as float64. Whether the new input lies in a stored region is decided exactly (rational
arithmetic where floating point is too close to call).

**Exact and conservative.** Disjointness is exact for ``p`` = 1, ∞ and (up to a root
finder's 1e-15) for ``p = 2``, less a relative 1e-9 margin: touching regions count as
intersecting, and a shrunk scale is about 1e-9 (relative) below the largest possible.
Fitting inside a stored region (the adoption rule) is exact for ``p`` = 1 and ∞ and
uses the triangle inequality for ``p = 2``, which may shrink an adopted region more
than needed. Points of another class in scale-0 regions are avoided exactly.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import numpy as np
import torch

from rsutils.core.smooth import ABSTAIN
from rsutils.geometry.norms import NORM_ORDERS
from rsutils.geometry.separation import (
    bounding_reach,
    contains,
    disjoint,
    far_apart,
    largest_nested_scale,
    proves_disjoint_many,
    quick_proofs,
    separation_certificate,
)
from rsutils.memory.engine import MemoryAnswer, RegionMemory
from rsutils.memory.shapes import Placement, Regions, RegionShape

__all__ = ["AnisotropicMemory", "SuperEllipsoids", "anisotropic_conflicting_pairs"]

#: The memory proves what it stores with twice the margin that the checks
#: (``violations``, :func:`anisotropic_conflicting_pairs`) require, so a check that
#: re-derives a proof from differently rounded numbers cannot fail.
_STRICT = 2.0


def _order(norm: str) -> float:
    if not isinstance(norm, str) or norm not in NORM_ORDERS:
        raise ValueError(
            f"unknown norm {norm!r} for anisotropic regions; choose one of {sorted(NORM_ORDERS)}"
        )
    return NORM_ORDERS[norm]


def _as_shape(sigma: object, size: int) -> np.ndarray:
    """``sigma`` as a flat float32 vector of ``size`` positive finite numbers, or a ValueError."""
    if sigma is None:
        raise ValueError(
            "super-ellipsoid regions need their shape sigma (one noise level per "
            "element of x); pass it to admit"
        )
    if isinstance(sigma, torch.Tensor):
        sigma = sigma.detach().cpu().numpy()
    raw = np.asarray(sigma, dtype=np.float64).ravel()
    if raw.size != size:
        raise ValueError(
            f"sigma has {raw.size} elements but x has {size}; pass one noise level per "
            "element of x (the anisotropic sigma at this input)"
        )
    if not (np.isfinite(raw).all() and (raw > 0).all()):
        raise ValueError(
            "sigma must hold finite numbers > 0 (the region's shape); got "
            f"min {raw.min()!r}, max {raw.max()!r}; clip or fix the noise levels first"
        )
    shape = np.ascontiguousarray(raw.astype(np.float32))
    if not (np.isfinite(shape).all() and (shape > 0).all()):
        raise ValueError(
            "sigma is stored as float32 and some of its values leave that range "
            "(below 1.4e-45 or above 3.4e38); rescale the noise levels"
        )
    return shape


class SuperEllipsoids(RegionShape):
    """Super-ellipsoids ``{z : ‖(z − x) ⊘ sigma‖_p < R}`` of one ``norm`` as the regions.

    Per-region data: the shape ``sigma`` (float32, one value per element of the input).
    Membership is exact; disjointness is proven by separating hyperplanes
    (:mod:`rsutils.geometry.separation`).
    """

    kind = "superellipsoid"
    plural = "super-ellipsoids"
    opened_by = "AnisotropicMemory"
    extra_column = "shape"

    def __init__(self, norm: str) -> None:
        self.p = _order(norm)
        self.norm = norm

    def extra_data(self, extra: object, size: int) -> np.ndarray:
        """``sigma`` checked: ``size`` finite positive numbers that survive float32."""
        return _as_shape(extra, size)

    def place(self, regions: Regions, x: np.ndarray, extra: np.ndarray) -> Placement:
        """Stored regions holding ``x``, decided exactly."""
        if len(regions.centers) == 0:
            inside = np.zeros(0, dtype=bool)
        else:
            inside = contains(regions.centers, regions.extras, regions.scales, x, self.p)
        return Placement(x, extra, inside)

    def fit_inside(
        self, regions: Regions, placement: Placement, holder: int, upper: float
    ) -> float:
        """A nested scale by :func:`~rsutils.geometry.separation.largest_nested_scale`."""
        delta = placement.x.astype(np.float64) - regions.centers[holder]
        fit = largest_nested_scale(
            delta, regions.extras[holder], float(regions.scales[holder]), placement.extra, self.p
        )
        return min(upper, fit)

    def shrink_to_avoid(
        self, regions: Regions, placement: Placement, others: np.ndarray, upper: float
    ) -> float | None:
        """The largest scale ≤ ``upper`` proven to miss the stored regions ``others``.

        The centre lies outside all of them (decided exactly), so scale 0 (the point
        itself) always qualifies. Bounding balls dismiss the far regions at once; each
        near one gets the exact search; the final scale is verified against all of
        them, with the memory's strict margin.
        """
        chosen = np.flatnonzero(others)
        if upper == 0 or len(chosen) == 0:
            return upper
        p, shape64 = self.p, placement.extra.astype(np.float64)
        delta = placement.x.astype(np.float64) - regions.centers[chosen]
        axes = regions.scales[chosen, None] * regions.extras[chosen].astype(np.float64)
        reach = bounding_reach(regions.scales[chosen], regions.extras[chosen])
        first_look = far_apart(delta, reach, upper * float(shape64.max()), p, factor=_STRICT)
        near = np.flatnonzero(~first_look)
        proven, normals = quick_proofs(delta[near], axes[near], upper * shape64, p, factor=_STRICT)
        scale = upper
        for row in np.flatnonzero(~proven):
            i = near[row]
            scale, normal = separation_certificate(delta[i], axes[i], shape64, p, scale)
            if normal is None:
                return 0.0
            normals[row] = normal

        def verified(t: float) -> bool:
            apart = far_apart(delta, reach, t * float(shape64.max()), p, factor=_STRICT)
            proven = proves_disjoint_many(
                delta[near], axes[near], t * shape64, p, normals, factor=_STRICT
            )
            apart[near] |= proven
            return bool(apart.all())

        if scale == upper:  # every proof above was verified at this very scale
            return scale
        return _lower_to_verified(scale, verified)

    def conflicting_pairs(self, regions: Regions) -> list[tuple[int, int]]:
        """Pairs of different classes without a proof of disjointness (bounding balls,
        cheap normals, then the exact search; a point against a region exactly)."""
        points, shapes, classes, radii = regions
        p = self.p
        reach = bounding_reach(radii, shapes) if len(points) else radii
        found = []
        for i in range(len(points)):
            if classes[i] == ABSTAIN:
                continue
            later = np.arange(i + 1, len(points))
            later = later[(classes[later] != classes[i]) & (classes[later] != ABSTAIN)]
            delta = points[later].astype(np.float64) - points[i]
            near = ~far_apart(delta, reach[i], reach[later], p)
            sized = near & (radii[later] > 0) & (radii[i] > 0)
            if sized.any():
                axes_i = radii[i] * shapes[i].astype(np.float64)
                axes_j = radii[later[sized], None] * shapes[later[sized]].astype(np.float64)
                proven, _ = quick_proofs(
                    delta[sized], np.broadcast_to(axes_i, axes_j.shape), axes_j, p
                )
                near[np.flatnonzero(sized)[proven]] = False
            found += [
                (i, int(j))
                for j in later[near]
                if not _pair_disjoint(
                    points[i], shapes[i], radii[i], points[j], shapes[j], radii[j], p
                )
            ]
        return found


def _lower_to_verified(scale: float, verified: Callable[[float], bool]) -> float:
    """Lower ``scale`` by a growing number of ulps until ``verified``; 0 at worst."""
    step = float(np.spacing(scale))
    while scale > 0 and not verified(scale):
        scale, step = max(scale - step, 0.0), 2 * step
    return scale


def _pair_disjoint(center_i, shape_i, scale_i, center_j, shape_j, scale_j, p) -> bool:
    """Whether two stored regions are proven disjoint (a point is tested exactly)."""
    if scale_i == 0 and scale_j == 0:
        return not np.array_equal(center_i, center_j)
    if scale_i == 0 or scale_j == 0:
        point, region = (center_i, (center_j, shape_j, scale_j))
        if scale_j == 0:
            point, region = (center_j, (center_i, shape_i, scale_i))
        holder, holder_shape, holder_scale = region
        return not contains(holder[None], holder_shape[None], np.array([holder_scale]), point, p)[0]
    delta = center_j.astype(np.float64) - center_i
    axes_i = scale_i * shape_i.astype(np.float64)
    return disjoint(delta, axes_i, scale_j * shape_j.astype(np.float64), p)


class AnisotropicMemory(RegionMemory):
    """A persistent memory of anisotropic certified answers; ``path=None`` keeps it in RAM.

    The regions are super-ellipsoids ``{z : ‖(z − x) ⊘ sigma‖_p < R}`` of one ``norm``
    (``"l1"``, ``"l2"`` or ``"linf"``). All inputs must have the same number of
    elements; inputs and shapes are stored as float32 and every test is computed from
    the stored values. The rules and the invariant are in :mod:`rsutils.memory`, the
    geometry in this module's docstring.
    """

    region_shape: SuperEllipsoids

    def __init__(self, path: str | os.PathLike[str] | None = None, *, norm: str = "l2"):
        super().__init__(path, SuperEllipsoids(norm))

    @property
    def p(self) -> float:
        """The exponent of the norm (1, 2 or ∞)."""
        return self.region_shape.p

    @property
    def shapes(self) -> np.ndarray:
        """The shapes (sigma) of the stored regions, ``(N, d)`` float32."""
        return self._table.view().extras

    def admit(
        self,
        x: torch.Tensor | np.ndarray,
        prediction: int,
        radius: float,
        sigma: torch.Tensor | np.ndarray,
        *,
        key: str | None = None,
    ) -> MemoryAnswer:
        """Admit the Monte Carlo certificate ``{z : ‖(z − x) ⊘ sigma‖_p < radius}`` of class
        ``prediction`` at ``x``.

        Returns the memory's answer (``radius`` is the stored scale ``R``; the shape
        ``sigma`` is kept), which is what the certified classifier answers at ``x``. If
        ``key`` was admitted before (for the same input), the stored answer is returned
        unchanged, so a resumed run gets the same answers; a key reused for another
        input is an error.
        """
        return self.admit_region(x, prediction, radius, sigma, key=key)


def anisotropic_conflicting_pairs(
    points: np.ndarray,
    shapes: np.ndarray,
    classes: np.ndarray,
    radii: np.ndarray,
    norm: str = "l2",
) -> list[tuple[int, int]]:
    """Index pairs ``i < j`` of certificates of different classes not proven disjoint.

    ``points`` and ``shapes`` ``(N, d)`` (flattened per row; stored as float32, like the
    memory does), ``classes`` and ``radii`` ``(N,)`` describe anisotropic certificates
    ``{z : ‖(z − x) ⊘ sigma‖_p < R}``; abstentions (class ABSTAIN) are skipped. Applied
    to raw Monte Carlo certificates, each pair is an overlap the memory would have to
    resolve (regions closer than a relative 1e-9 count as overlapping).
    """
    shape = SuperEllipsoids(norm)
    points = np.asarray(points, dtype=np.float32)
    points = points.reshape(len(points), -1) if len(points) else points
    shapes = np.asarray(shapes, dtype=np.float32).reshape(points.shape)
    classes, radii = np.asarray(classes), np.asarray(radii, dtype=np.float64)
    return shape.conflicting_pairs(Regions(points, shapes, classes, radii))
