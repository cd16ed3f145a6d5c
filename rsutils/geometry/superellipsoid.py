"""The certified region of anisotropic smoothing as a geometric object (UCAN §III-B).

UCAN's region ``S = {δ : ‖δ ⊘ sigma‖_p < R}`` is a generalised super-ellipsoid with
semi-axes ``sigma_i·R``. This module answers the questions asked of it: does a
perturbation lie inside; how large an ℓp ball fits inside (``min(sigma)·R``,
UCAN Corollary 4); its Lebesgue measure (UCAN Theorem 6)

    ``V = (2R·Γ(1 + 1/p))^d · ∏ sigma_i / Γ(1 + d/p)``

(``p = ∞`` reads ``Γ(1) = 1``: a box of side ``2·sigma_i·R``); and UCAN's ALM, the
geometric mean of the semi-axes ``(∏ sigma_i)^(1/d)·R``, which is ``(V/V_ball)^(1/d)``
for ``V_ball`` the volume of the unit ℓp ball. Volumes are computed in log space: for
an ImageNet input (``d = 150,528``) ``∏ sigma_i`` and ``R^d`` leave the float range
long before the answer does.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import gammaln

from rsutils.geometry.norms import norm_order

__all__ = [
    "SuperEllipsoid",
    "geometric_mean",
    "log_unit_ball_volume",
    "monte_carlo_volume",
]


def geometric_mean(values: ArrayLike) -> float:
    """``(∏ v_i)^(1/d)`` computed as ``exp(mean(log v))``: no overflow for any ``d``."""
    v = np.asarray(values, dtype=float).reshape(-1)
    if v.size == 0 or np.any(~(v > 0)):
        raise ValueError("the geometric mean needs positive values")
    return float(np.exp(np.mean(np.log(v))))


def log_unit_ball_volume(d: int, p: float) -> float:
    """``log`` of the volume of the unit ℓp ball in ``R^d``: ``d·log(2Γ(1+1/p)) − logΓ(1+d/p)``."""
    if np.isinf(p):
        return d * np.log(2.0)
    return float(d * (np.log(2.0) + gammaln(1.0 + 1.0 / p)) - gammaln(1.0 + d / p))


@dataclass(frozen=True)
class SuperEllipsoid:
    """``{δ : ‖δ ⊘ sigma‖_p < radius}`` for flat ``sigma`` (one entry per dimension).

    The region is open: on its boundary the worst-case classifier of the tight
    certificates ties (``pA' = 1/2``), so a boundary point is not certified.
    """

    sigma: np.ndarray
    radius: float
    norm: str | float = "l2"

    def __post_init__(self) -> None:
        sigma = np.asarray(self.sigma, dtype=float).reshape(-1)
        if sigma.size == 0 or np.any(~(sigma > 0)) or not np.all(np.isfinite(sigma)):
            raise ValueError("sigma must hold finite positive numbers, one per dimension")
        if not (np.isfinite(self.radius) and self.radius >= 0):
            raise ValueError(f"radius must be a finite number >= 0, got {self.radius!r}")
        norm_order(self.norm)  # an unknown norm fails here, not at first use
        object.__setattr__(self, "sigma", sigma)
        object.__setattr__(self, "radius", float(self.radius))

    @property
    def p(self) -> float:
        return norm_order(self.norm)

    @property
    def dim(self) -> int:
        return int(self.sigma.size)

    @property
    def semi_axes(self) -> np.ndarray:
        """``sigma_i·R``: how far the region reaches along each coordinate axis."""
        return self.sigma * self.radius

    def scaled_norm(self, delta: ArrayLike) -> np.ndarray:
        """``‖δ ⊘ sigma‖_p`` for each row of ``delta`` (shape ``(..., d)``)."""
        delta = np.asarray(delta, dtype=float)
        if delta.shape[-1] != self.dim:
            raise ValueError(f"delta has {delta.shape[-1]} numbers per row, the region {self.dim}")
        return np.linalg.norm(delta / self.sigma, ord=self.p, axis=-1)

    def contains(self, delta: ArrayLike) -> np.ndarray:
        """Whether each perturbation (row of ``delta``) is certified: ``‖δ ⊘ sigma‖_p < R``."""
        return self.scaled_norm(delta) < self.radius

    def inscribed_radius(self) -> float:
        """Radius of the largest ℓp ball inside the region: ``min(sigma)·R`` (Corollary 4).

        Exact: the axis of the smallest ``sigma_i`` leaves the region at ``min(sigma)·R``,
        and ``‖δ ⊘ sigma‖_p ≤ ‖δ‖_p / min(sigma)`` for every ``δ``.
        """
        return float(self.sigma.min()) * self.radius

    def alm(self) -> float:
        """UCAN's ALM: the geometric mean of the semi-axes, ``(∏ sigma_i)^(1/d)·R``."""
        return geometric_mean(self.sigma) * self.radius

    def log_volume(self) -> float:
        """``log`` of the Lebesgue measure (UCAN Theorem 6); ``-inf`` when ``R = 0``."""
        if self.radius == 0:
            return -np.inf
        return (
            log_unit_ball_volume(self.dim, self.p)
            + float(np.sum(np.log(self.sigma)))
            + self.dim * np.log(self.radius)
        )

    def volume(self) -> float:
        """The Lebesgue measure itself (overflows to ``inf`` or underflows to 0 in high ``d``)."""
        with np.errstate(over="ignore", under="ignore"):
            return float(np.exp(self.log_volume()))

    def worst_direction(self) -> np.ndarray:
        """Unit vector along the shortest semi-axis: where the region is thinnest."""
        e = np.zeros(self.dim)
        e[int(np.argmin(self.sigma))] = 1.0
        return e


def monte_carlo_volume(
    region: SuperEllipsoid, draws: int, seed: int = 0, *, margin: float = 1.25, chunk: int = 200_000
) -> tuple[float, float]:
    """Hit-or-miss estimate of the region's volume and its standard error.

    Points are uniform in the box ``∏ [−m·sigma_i R, m·sigma_i R]`` (``m = margin`` > 1,
    so that the box is not the region itself when ``p = ∞``); the volume is the box's
    times the fraction inside, with the binomial standard error.
    """
    if not margin > 1:
        raise ValueError(f"margin must exceed 1, got {margin}")
    rng = np.random.default_rng(seed)
    half = margin * region.semi_axes
    inside = done = 0
    while done < draws:
        k = min(chunk, draws - done)
        points = rng.uniform(-half, half, size=(k, region.dim))
        inside += int(np.count_nonzero(region.contains(points)))
        done += k
    box = float(np.prod(2 * half))
    fraction = inside / draws
    return box * fraction, box * np.sqrt(fraction * (1 - fraction) / draws)
