"""When are two axis-aligned super-ellipsoids disjoint? Exact tests with floating-point proofs.

A region is ``E(c, s, R) = {c} ∪ {z : ‖(z − c) ⊘ s‖_p < R}`` (``⊘`` element-wise
division; ``s > 0`` its shape, ``R ≥ 0`` its scale, ``a = R·s`` its semi-axes; ``R = 0``
is the point ``c``), for ``p`` = 1, 2 or ∞ and ``q`` the dual exponent (1/p + 1/q = 1).

**The proof.** For ``w ≠ 0`` the region reaches ``sup_{z∈E} w·z = w·c + ‖a ⊙ w‖_q``
(Hölder), and an open region does not reach its supremum. So for two regions A, B and
``Δ = c_B − c_A``, any ``w`` with

    ``w·Δ ≥ ‖a_A ⊙ w‖_q + ‖a_B ⊙ w‖_q``  (and ``w·Δ > 0``)                         (∗)

puts A and B strictly on the two sides of a hyperplane: they are disjoint, touching
included. Conversely two disjoint convex sets, one of them open (or two distinct
points), are separated by a hyperplane (Hahn–Banach), so some ``w`` satisfies (∗): the
test is exact. Whatever searched for ``w``, :func:`proves_disjoint` checks (∗) in
floating point with a margin that bounds every rounding error, so "disjoint" is a
proof; anything else reads "not proven disjoint", which callers treat as intersecting.

**The search** (it affects tightness, never soundness). In the coordinates ``z ⊘ s``
of a new region of shape ``s``, that region is an ℓp ball and a stored region an
axis-aligned super-ellipsoid, so the largest scale ``t`` at which the new region misses
the stored one is the ℓp distance from the new centre to the stored region, and the
normal of the best hyperplane is read off the nearest point:

- ``p = ∞`` (boxes): the best coordinate, ``max_j (|Δ_j| − a_j)/s_j``. Exact.
- ``p = 1`` (cross-polytopes): maximise ``Σ_j |Δ_j| min(1/s_j, M/a_j) − M`` over
  ``M ≥ 0``, a concave piecewise-linear function whose maximum lies at ``0`` or at a
  breakpoint ``a_j/s_j``. Exact.
- ``p = 2`` (ellipsoids): the nearest point of the ellipsoid is ``Δ_j a_j²/(a_j² + μ s_j²)``
  with ``μ > 0`` the root of a monotone secular equation (Brent's method); the normal
  ``w_j = Δ_j/(a_j² + μ s_j²)`` is the separating normal of the Minkowski-sum argument
  (``μ = λt²``). Exact up to the root's tolerance (relative 1e-15).

Disjointness of two regions is the case ``t = 1`` with ``s = a_B``. Containment of a
point is decided exactly (:func:`contains`: floating point where it is clear, rational
arithmetic in the thin band where rounding could decide it). Nothing here imports
another part of rsutils except :mod:`rsutils.geometry.norms`.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

import numpy as np
from scipy.optimize import brentq

from rsutils.geometry.norms import norm_order

__all__ = [
    "bounding_reach",
    "contains",
    "disjoint",
    "far_apart",
    "largest_nested_scale",
    "largest_separated_scale",
    "proves_disjoint",
    "proves_disjoint_many",
    "quick_proofs",
    "rounding_margin",
    "scaled_distance",
    "separating_normal",
    "separation_certificate",
]

_EPS = float(np.finfo(np.float64).eps)
_ORDERS = (1.0, 2.0, np.inf)
_DENORMAL = float(np.finfo(np.float64).smallest_subnormal)


def _order(p: float | str) -> float:
    """The exponent of ``p`` (a name such as ``"l2"`` or a number), which must be 1, 2 or ∞."""
    order = norm_order(p)
    if order not in _ORDERS:
        raise ValueError(
            f"separation is implemented for p = 1, 2 and inf (l1, l2, linf), got {p!r}"
        )
    return order


def rounding_margin(size: np.ndarray | float, dim: int, factor: float = 1.0) -> np.ndarray:
    """A bound on the rounding error of the float64 evaluation of (∗), times ``factor``.

    ``size`` is the sum of the magnitudes involved (``Σ|w_j Δ_j|`` plus the two dual
    norms, or the analogous sum of a distance test). Each side of (∗) is a sum of ``d``
    products of numbers that carry at most a few roundings each (``Δ`` a difference,
    ``a = R·s`` a product), so its error is at most ``γ_{d+8}·size`` with
    ``γ_n = n·u/(1 − n·u)`` (Higham, Thm 3.1 and Lemma 3.3), ``u = 2⁻⁵³``; ``4(d+8)·eps =
    8(d+8)·u`` bounds it twice over. An underflowed operation is off by at most one
    subnormal spacing whatever the scale of ``w``, which the absolute term covers. The
    constant 1e-9 is a buffer on top (it loses a relative 1e-9 of tightness): it keeps
    a proof re-derived from differently rounded numbers (another search, another order
    of summation) from failing where the first one held.
    """
    relative = 1e-9 + 4.0 * (dim + 8) * _EPS
    return factor * (relative * np.asarray(size) + 8.0 * (dim + 8) * _DENORMAL)


# -- verification -----------------------------------------------------------------------------


def _dual_norm(v: np.ndarray, p: float) -> np.ndarray:
    """``‖v‖_q`` along the last axis, ``q`` the dual exponent of ``p``."""
    if p == 1:
        return np.max(np.abs(v), axis=-1, initial=0.0)
    if p == 2:
        return np.sqrt(np.sum(v * v, axis=-1))
    return np.sum(np.abs(v), axis=-1)


def _primal_norm(v: np.ndarray, p: float) -> np.ndarray:
    if p == 1:
        return np.sum(np.abs(v), axis=-1)
    if p == 2:
        return np.sqrt(np.sum(v * v, axis=-1))
    return np.max(np.abs(v), axis=-1, initial=0.0)


def _unit_rows(w: np.ndarray) -> np.ndarray:
    """Rescale rows of ``w`` whose largest entry is far from 1 (so that no term underflows).

    A proof holds for any scaling of ``w``; rows with ``max|w_j|`` in ``[2⁻⁶⁰, 2⁶⁰]``
    are left as they are, the others are divided by that maximum.
    """
    top = np.max(np.abs(w), axis=-1, keepdims=True, initial=0.0)
    odd = ((top < 2.0**-60) | (top > 2.0**60)) & (top > 0)
    if not odd.any():
        return w
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(odd, w / np.where(odd, top, 1.0), w)


def proves_disjoint_many(
    delta: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    p: float,
    w: np.ndarray,
    *,
    factor: float = 1.0,
) -> np.ndarray:
    """Whether each normal ``w[i]`` proves (∗) for the pair ``(delta[i], a[i], b[i])``.

    Arrays are ``(N, d)`` (``b`` may be one ``(d,)`` row); ``delta = c_B − c_A`` and
    ``a``, ``b`` the semi-axes ``R·s`` of A and B, each possibly off by a few roundings
    (covered by :func:`rounding_margin`, scaled by ``factor``). True only when (∗)
    holds in exact arithmetic: a rigorous proof that the two open regions are disjoint.
    Rows with a non-finite or zero ``w`` are not proven.
    """
    p = _order(p)
    delta, a, b = (np.asarray(v, dtype=np.float64) for v in (delta, a, b))
    w = _unit_rows(np.asarray(w, dtype=np.float64))
    with np.errstate(over="ignore", invalid="ignore"):
        along = w * delta
        reach = np.sum(along, axis=-1)
        size = np.sum(np.abs(along, out=along), axis=-1)
        spread = _dual_norm(a * w, p) + _dual_norm(b * w, p)
        margin = rounding_margin(size + spread, delta.shape[-1], factor)
        return np.isfinite(size + spread) & (reach - spread >= margin) & np.any(w != 0, axis=-1)


def proves_disjoint(
    delta: np.ndarray, a: np.ndarray, b: np.ndarray, p: float, w: np.ndarray | None
) -> bool:
    """Whether ``w`` proves that regions with semi-axes ``a`` and ``b`` are disjoint.

    ``delta = c_B − c_A``. True only with a verified separating hyperplane (∗); a
    ``None`` normal proves nothing.
    """
    if w is None:
        return False
    return bool(proves_disjoint_many(delta[None], a[None], b[None], p, np.asarray(w)[None])[0])


# -- search ---------------------------------------------------------------------------------------


def _best_normal(delta: np.ndarray, a: np.ndarray, s: np.ndarray, p: float) -> np.ndarray | None:
    """The normal that best separates ``E(0, a)`` from regions of shape ``s`` around ``delta``.

    It maximises ``(w·Δ − ‖a⊙w‖_q)/‖s⊙w‖_q``, the largest scale of a region of shape
    ``s`` at ``delta`` that the hyperplane keeps clear of ``E(0, a)``: the distance from
    ``delta`` to ``E(0, a)`` in the metric ``‖·⊘s‖_p``. ``None`` when ``delta`` lies in
    the closed stored region (no positive distance).
    """
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        if p == np.inf:
            return _box_normal(delta, a, s)
        if p == 1:
            return _cross_polytope_normal(delta, a, s)
        return _ellipsoid_normal(delta, a, s)


def _box_normal(delta, a, s):
    gaps = (np.abs(delta) - a) / s
    j = int(np.argmax(gaps))
    if not gaps[j] >= 0 or delta[j] == 0:
        return None
    w = np.zeros_like(delta)
    w[j] = np.sign(delta[j])
    return w


def _cross_polytope_normal(delta, a, s):
    size = np.abs(delta)
    free = a <= 0  # coordinates along which the stored region has no extent
    base = float(np.sum(size[free] / s[free]))
    level = 0.0
    spread = ~free
    if spread.any():
        breaks, by_s, by_a = (
            a[spread] / s[spread],
            size[spread] / s[spread],
            size[spread] / a[spread],
        )
        order = np.argsort(breaks)
        breaks, by_s, by_a = breaks[order], by_s[order], by_a[order]
        before = np.cumsum(by_s)  # Σ over breakpoints ≤ M of |Δ_j|/s_j
        after = np.concatenate([np.cumsum(by_a[::-1])[::-1][1:], [0.0]])  # Σ beyond M of |Δ_j|/a_j
        values = base + before + breaks * (after - 1.0)
        best = int(np.argmax(values))
        if values[best] > base:
            level = float(breaks[best])
    with np.errstate(divide="ignore"):
        magnitude = np.where(free, 1.0 / s, np.minimum(1.0 / s, level / np.where(free, 1.0, a)))
    w = np.sign(delta) * magnitude
    if not np.any(w) or float(w @ delta) - float(np.max(np.abs(a * w))) <= 0:
        return None
    return w


def _ellipsoid_normal(delta, a, s):
    point, axes = delta / s, a / s  # the new region becomes a Euclidean ball
    if not np.any(axes > 0):  # the stored region is a point
        return point / s if np.any(point) else None
    # The nearest point scales with the picture: bring it to unit size, and keep squares
    # of semi-axes above underflow (a search approximation; the proof uses the true a).
    unit = max(float(np.max(np.abs(point))), float(np.max(axes)))
    point, axes = point / unit, np.maximum(axes / unit, 1e-150)
    if np.sum((point / axes) ** 2) <= 1:
        return None
    weight = axes * point

    def excess(mu: float) -> float:
        return float(np.sum((weight / (axes * axes + mu)) ** 2)) - 1.0

    top = float(np.sqrt(np.sum(weight * weight)))  # excess(top) <= 0
    mu = brentq(excess, 0.0, top, xtol=max(top * 4 * _EPS, _DENORMAL), rtol=4 * _EPS)
    return point / (axes * axes + mu) / s


def _metric(b: np.ndarray, a: np.ndarray) -> np.ndarray:
    """A positive shape to search in: ``b`` itself, or ``a`` when ``B`` is a point."""
    if np.all(b > 0):
        return b
    if not np.any(b > 0):
        return a if np.all(a > 0) else np.ones_like(a)
    return np.maximum(b, np.finfo(np.float64).tiny)  # b underflowed in places


def separating_normal(
    delta: np.ndarray, a: np.ndarray, b: np.ndarray, p: float
) -> np.ndarray | None:
    """A normal ``w`` for (∗), found by the exact search, or ``None`` when there is none.

    ``delta = c_B − c_A``; ``a``, ``b`` the semi-axes ``R·s`` (all zero for a point).
    The result is a candidate only; :func:`proves_disjoint` decides.
    """
    p = _order(p)
    delta, a, b = (np.asarray(v, dtype=np.float64) for v in (delta, a, b))
    if not np.any(a > 0) and not np.any(b > 0):
        return delta.copy() if np.any(delta) else None
    return _best_normal(delta, a, _metric(b, a), p)


def disjoint(delta: np.ndarray, a: np.ndarray, b: np.ndarray, p: float) -> bool:
    """Whether the regions ``A = E(c_A, ·)`` and ``B = E(c_A + delta, ·)`` are proven disjoint.

    ``a``, ``b`` are their semi-axes ``R·s``. Sound (True only with a verified
    hyperplane) and exact up to the rounding margin (a relative 1e-9): regions apart
    by more are always proven disjoint, touching ones are not. The search is run from
    both sides, so the answer does not depend on which region is called A.
    """
    p = _order(p)
    delta, a, b = (np.asarray(v, dtype=np.float64) for v in (delta, a, b))
    if proves_disjoint(delta, a, b, p, separating_normal(delta, a, b, p)):
        return True
    mirrored = separating_normal(-delta, b, a, p)
    return mirrored is not None and proves_disjoint(delta, a, b, p, -mirrored)


def _candidate_normal(delta, a, b, p, attempt: int, lam: np.ndarray) -> np.ndarray:
    """A cheap normal for (∗) per row of ``(N, d)`` arrays: a guess, not a search.

    ``p = ∞``: the best coordinate (exact). ``p = 1``: ``sign(Δ)/max(a, b)`` and
    ``sign(Δ)/(a + b)``. ``p = 2``: the Minkowski-sum normal
    ``Δ/((1 + 1/λ)a² + (1 + λ)b²)``, ``λ`` moved towards its optimum ``‖a⊙w‖/‖b⊙w‖``
    (updated in place).
    """
    if p == np.inf:
        rows = np.arange(len(delta))
        best = np.argmax(np.abs(delta) - a - b, axis=-1)
        w = np.zeros_like(delta)
        w[rows, best] = np.sign(delta[rows, best])
        return w
    if p == 1:
        return np.sign(delta) / (np.maximum(a, b) if attempt == 0 else a + b)
    if attempt > 0:
        previous = _candidate_normal(delta, a, b, p, attempt - 1, lam)
        ratio = _dual_norm(a * previous, 2) / _dual_norm(b * previous, 2)
        lam[:] = np.where(np.isfinite(ratio) & (ratio > 0), ratio, 1.0)
    return delta / ((1 + 1 / lam[:, None]) * a * a + (1 + lam[:, None]) * b * b)


_ATTEMPTS = {1.0: 2, 2.0: 3, np.inf: 1}


def quick_proofs(
    delta: np.ndarray, a: np.ndarray, b: np.ndarray, p: float, *, factor: float = 1.0
) -> tuple[np.ndarray, np.ndarray]:
    """Try a few cheap normals on every row (vectorised): which pairs they prove disjoint.

    ``delta``, ``a`` ``(N, d)``, ``b`` ``(N, d)`` or ``(d,)``, all semi-axes positive.
    Returns the mask of rows proven disjoint (each with a verified normal, so True is a
    proof; False is inconclusive) and the normals, for rechecking at smaller scales.
    For ``p = ∞`` the candidate is the exact one.
    """
    p = _order(p)
    delta, a = np.asarray(delta, dtype=np.float64), np.asarray(a, dtype=np.float64)
    b = np.broadcast_to(np.asarray(b, dtype=np.float64), delta.shape)
    proven = np.zeros(len(delta), dtype=bool)
    normals = np.zeros_like(delta)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for attempt in range(_ATTEMPTS[p]):
            todo = np.flatnonzero(~proven)
            if len(todo) == 0:
                break
            lam = np.ones(len(todo))
            w = _candidate_normal(delta[todo], a[todo], b[todo], p, attempt, lam)
            good = proves_disjoint_many(delta[todo], a[todo], b[todo], p, w, factor=factor)
            normals[todo[good]], proven[todo[good]] = w[good], True
    return proven, normals


# -- scales ---------------------------------------------------------------------------------------


def _lower_until(t: float, holds: Callable[[float], bool]) -> float | None:
    """Lower ``t ≥ 0`` by a growing number of ulps until ``holds(t)``; ``None`` if never."""
    t = float(t)
    step = float(np.spacing(t)) if t > 0 else 0.0
    while not holds(t):
        if t <= 0:
            return None
        t, step = max(t - step, 0.0), 2 * step
    return t


def _provable_scale(delta, a, s, p, w, factor: float) -> float:
    """The largest ``t`` for which ``w`` proves (∗) with ``b = t·s`` under ``factor``'s margin."""
    w = _unit_rows(w)
    d = delta.size
    reach, size = float(w @ delta), float(np.abs(w) @ np.abs(delta))
    fixed, per_unit = float(_dual_norm(a * w, p)), float(_dual_norm(s * w, p))
    relative = factor * (1e-9 + 4.0 * (d + 8) * _EPS)
    floor = float(rounding_margin(0.0, d, factor))
    return (reach - fixed - relative * (size + fixed) - floor) / (per_unit * (1 + relative))


def separation_certificate(
    delta: np.ndarray, a: np.ndarray, shape: np.ndarray, p: float, upper: float,
    *, factor: float = 1.0,
) -> tuple[float, np.ndarray | None]:  # fmt: skip
    """The largest proven scale ``t ≤ upper`` and its normal (``(0.0, None)`` if none).

    The new region is ``E(c_A + delta, shape, t)``, the stored one has semi-axes ``a``.
    The returned ``t`` is proven with twice ``factor``'s margin, so a recheck at ``t``
    or below with ``factor``'s margin holds.
    """
    p = _order(p)
    delta, a, shape = (np.asarray(v, dtype=np.float64) for v in (delta, a, shape))
    w = _best_normal(delta, a, shape, p)
    if w is None:
        return 0.0, None
    target = min(float(upper), _provable_scale(delta, a, shape, p, w, 2 * factor))
    if not target >= 0:
        return 0.0, None

    def holds(t: float) -> bool:
        return bool(
            proves_disjoint_many(delta[None], a[None], t * shape, p, w[None], factor=2 * factor)[0]
        )

    t = _lower_until(target, holds)
    return (0.0, None) if t is None else (t, w)


def largest_separated_scale(
    delta: np.ndarray, stored_axes: np.ndarray, new_shape: np.ndarray, p: float, upper: float
) -> tuple[float, bool]:
    """The largest ``t ≤ upper`` with ``E(c + delta, new_shape, t)`` proven disjoint from
    the stored region ``E(c, ·)`` of semi-axes ``stored_axes``; and whether one exists.

    ``(0.0, False)`` when not even ``t = 0`` is proven (the new centre inside, on, or
    within the rounding margin of the stored region). Sound, and exact up to the margin:
    the result falls short of the true largest scale by about
    ``2e-9·(Σ|w_j Δ_j| + ‖a⊙w‖_q)/‖s⊙w‖_q``, a relative 1e-8 when the new region is not
    much smaller than the distance between the centres (for ``p = 2`` add the secular
    root's relative 1e-15).
    """
    t, w = separation_certificate(delta, stored_axes, new_shape, _order(p), upper)
    return t, w is not None


def largest_nested_scale(
    delta: np.ndarray,
    stored_shape: np.ndarray,
    stored_scale: float,
    new_shape: np.ndarray,
    p: float,
) -> float:
    """A scale ``t`` with ``E(c + delta, new_shape, t) ⊆ E(c, stored_shape, stored_scale)``.

    For ``p`` = 1 and 2 by the triangle inequality in the stored region's metric:
    ``‖(z − c)⊘s_i‖ ≤ ‖delta⊘s_i‖ + max_j(s_j/s_i,j)·‖(z − x)⊘s‖``, so
    ``t = (R_i − ‖delta⊘s_i‖)/max_j(s_j/s_i,j)``; exact for ``p = 1`` (the vertices of the
    new cross-polytope decide), conservative for ``p = 2``. For ``p = ∞`` exactly,
    coordinate by coordinate: ``t = min_j (R_i s_i,j − |delta_j|)/s_j``. The result is
    lowered until the containment inequality holds in floating point; 0 when the new
    centre is not inside. (The memory does not rely on it for soundness.)
    """
    p = _order(p)
    delta, stored_shape, new_shape = (
        np.asarray(v, dtype=np.float64) for v in (delta, stored_shape, new_shape)
    )
    if p == np.inf:
        room = stored_scale * stored_shape - np.abs(delta)

        def holds(t: float) -> bool:
            return bool(np.all(np.abs(delta) + t * new_shape <= stored_scale * stored_shape))

        start = float(np.min(room / new_shape))
    else:
        offset = float(_primal_norm(delta / stored_shape, p))
        stretch = float(np.max(new_shape / stored_shape))

        def holds(t: float) -> bool:
            return offset + stretch * t <= stored_scale

        start = (stored_scale - offset) / stretch
    if not start > 0:
        return 0.0
    return _lower_until(start, holds) or 0.0


# -- points ---------------------------------------------------------------------------------------


def scaled_distance(centers: np.ndarray, shapes: np.ndarray, x: np.ndarray, p: float) -> np.ndarray:
    """``‖(x − c_i) ⊘ s_i‖_p`` (float64) for each stored centre ``(N, d)`` and shape ``(N, d)``."""
    delta = np.asarray(x, dtype=np.float64) - np.asarray(centers, dtype=np.float64)
    return _primal_norm(delta / np.asarray(shapes, dtype=np.float64), _order(p))


def _exactly_inside(x, center, shape, scale, p) -> bool:
    """``x ∈ E(center, shape, scale)`` in rational arithmetic on the given floats."""
    if np.array_equal(x, center):
        return True
    terms = [
        abs(Fraction(float(u)) - Fraction(float(v))) / Fraction(float(w))
        for u, v, w in zip(x, center, shape, strict=True)
        if u != v
    ]
    bound = Fraction(float(scale))
    if p == 1:
        return sum(terms, Fraction(0)) < bound
    if p == 2:
        return sum((t * t for t in terms), Fraction(0)) < bound * bound
    return max(terms) < bound


def contains(
    centers: np.ndarray, shapes: np.ndarray, scales: np.ndarray, x: np.ndarray, p: float
) -> np.ndarray:
    """Whether each stored region ``E(c_i, s_i, R_i)`` holds ``x``: exact.

    Decided in floating point where the scaled distance is clear of ``R_i`` by more than
    its rounding error, and in rational arithmetic on the given float values in the
    thin band where it is not. The centre always belongs to its region.
    """
    p = _order(p)
    centers = np.asarray(centers)
    if len(centers) == 0:
        return np.zeros(0, dtype=bool)
    scales = np.asarray(scales, dtype=np.float64)
    dist = scaled_distance(centers, shapes, x, p)
    slack = rounding_margin(dist + scales, centers.shape[1])
    inside = dist + slack < scales
    unclear = ~inside & (dist - slack < scales)
    inside |= np.all(centers == np.asarray(x), axis=1)
    for i in np.flatnonzero(unclear & ~inside):
        inside[i] = _exactly_inside(x, centers[i], np.asarray(shapes)[i], scales[i], p)
    return inside


# -- cheap filter ---------------------------------------------------------------------------------


def bounding_reach(scales: np.ndarray, shapes: np.ndarray) -> np.ndarray:
    """``R_i·max_j s_i,j``: the radius of an ℓp ball around each centre holding its region."""
    shapes = np.asarray(shapes, dtype=np.float64)
    return np.asarray(scales, dtype=np.float64) * np.max(shapes, axis=-1, initial=0.0)


def far_apart(
    delta: np.ndarray, reach: np.ndarray, new_reach: float, p: float, *, factor: float = 1.0
) -> np.ndarray:
    """Whether each pair is proven disjoint by its bounding balls (vectorised over rows).

    ``‖(z − c)‖_p ≤ max(s)·‖(z − c)⊘s‖_p``, so a region lies in the ℓp ball of radius
    ``reach = R·max(s)``; two open balls with ``‖Δ‖_p ≥ reach + new_reach`` are disjoint
    (this is (∗) for ``w`` = the sign vector, ``Δ/‖Δ‖`` or the largest coordinate). The
    inequality is checked with :func:`rounding_margin`.
    """
    delta = np.asarray(delta, dtype=np.float64)
    gap = _primal_norm(delta, _order(p))
    total = reach + new_reach
    with np.errstate(invalid="ignore"):
        return (gap - total >= rounding_margin(gap + total, delta.shape[-1], factor)) & (gap > 0)
