"""The memory-based certifier for anisotropic certificates (super-ellipsoids), on SQLite.

The anisotropic counterpart of :class:`rsutils.ddrs.memory.CertificateMemory`. With
a noise shape chosen per input, a certificate is a region
``E(x, sigma, R) = {x} ∪ {z : ‖(z − x) ⊘ sigma‖_p < R}`` whose shape ``sigma``
changes from input to input (possibly by orders of magnitude), and two certificates can
contradict each other. The memory keeps every answer and its region, and admits a new
Monte Carlo certificate ``(x, class, R, sigma)`` by the rules of the ball memory:

1. if ``x`` lies in a stored region of another class, the answer becomes that class
   and the scale shrinks so that the region fits inside the stored one ("adopted");
2. the scale then shrinks until the region misses every stored region of another class
   ("shrunk"), otherwise it is kept as certified ("kept");
3. the answer and its region are stored; an abstention outside every region is stored
   without a region ("abstained"). Only the scale ``R`` ever shrinks; the shape stays.

Invariant after any sequence of admissions: no two stored regions of different
classes intersect, and every stored input lies in its own region and in no region of
another class (the second follows from the first: a centre belongs to its region).

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
Fitting inside a stored region (rule 1) is exact for ``p`` = 1 and ∞ and uses the
triangle inequality for ``p = 2``, which may shrink an adopted region more than needed.
Points of another class in scale-0 regions are avoided exactly.

Storage, keys and concurrency are those of the ball memory: one SQLite file (write-ahead
log, full sync), one ``BEGIN IMMEDIATE`` transaction per admission, so readers see a
consistent memory, another process picks up what one wrote, a process killed mid-write
leaves the last committed state, and writers are serialised by the database lock.
"""

from __future__ import annotations

import math
import os

import numpy as np
import torch

from rsutils.core.smooth import ABSTAIN
from rsutils.ddrs.memory import (
    _ENTRY_COLUMNS as _BALL_COLUMNS,
)
from rsutils.ddrs.memory import (
    MemoryAnswer,
    MemoryInconsistencyError,
    SQLiteMemory,
    _as_vector,
    _Transaction,
)
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

__all__ = ["AnisotropicMemory", "anisotropic_conflicting_pairs"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS entries (
    id INTEGER PRIMARY KEY,
    key TEXT UNIQUE,
    prediction INTEGER NOT NULL,
    radius REAL NOT NULL,
    mc_prediction INTEGER NOT NULL,
    mc_radius REAL NOT NULL,
    action TEXT NOT NULL,
    center BLOB NOT NULL,
    shape BLOB NOT NULL
);
"""

_COLUMNS = _BALL_COLUMNS | {"shape"}

#: The memory proves what it stores with twice the margin that the checks
#: (``violations``, :func:`anisotropic_conflicting_pairs`) require, so a check that
#: re-derives a proof from differently rounded numbers cannot fail.
_STRICT = 2.0


def _geometry_name(norm: str) -> str:
    return f"{norm}-superellipsoid"


def _order(norm: str) -> float:
    if not isinstance(norm, str) or norm not in NORM_ORDERS:
        raise ValueError(
            f"unknown norm {norm!r} for anisotropic regions; choose one of {sorted(NORM_ORDERS)}"
        )
    return NORM_ORDERS[norm]


def _as_shape(sigma: torch.Tensor | np.ndarray, size: int) -> np.ndarray:
    """``sigma`` as a flat float32 vector of ``size`` positive finite numbers, or a ValueError."""
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


class AnisotropicMemory(SQLiteMemory):
    """A persistent memory of anisotropic certified answers; ``path=None`` keeps it in RAM.

    The regions are super-ellipsoids ``{z : ‖(z − x) ⊘ sigma‖_p < R}`` of one ``norm``
    (``"l1"``, ``"l2"`` or ``"linf"``). All inputs must have the same number of
    elements; inputs and shapes are stored as float32 and every test is computed from
    the stored values. The invariant and the rules are in the module docstring.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, *, norm: str = "l2"):
        self.p = _order(norm)
        self.norm = norm
        self._connect(path, _geometry_name(norm))
        self._reach = np.empty(0, dtype=np.float64)
        self._shapes = np.empty((0, 0), dtype=np.float32)
        self._sync()

    # -- storage -------------------------------------------------------------------------

    def _open(self, geometry: str) -> None:
        """Check the file is ours (before writing to it), set up the journal and tables."""
        self._check_tables()
        if self.path is not None:
            self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        with _Transaction(self._db):
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    self._db.execute(statement)
            stored = dict(self._db.execute("SELECT name, value FROM meta").fetchall())
            if "geometry" not in stored:
                self._db.execute("INSERT INTO meta VALUES ('geometry', ?)", (geometry,))
            elif stored["geometry"] != geometry:
                self._refuse_geometry(stored["geometry"])

    def _refuse_geometry(self, held: str) -> None:
        norm, _, kind = held.partition("-")
        if kind == "ball":
            raise ValueError(
                f"{self.path} holds a certificate memory of {norm} balls, not anisotropic "
                f"regions; open it with CertificateMemory(path, norm={norm!r}) or use another file"
            )
        raise ValueError(
            f"{self.path} holds {norm} super-ellipsoids, not {self.norm} ones; "
            f"open it with norm={norm!r} or use another file"
        )

    def _check_tables(self) -> None:
        """Refuse (and leave untouched) another application's SQLite file or a ball memory."""
        tables = {row[0] for row in self._db.execute("SELECT name FROM sqlite_master")}
        ours = {"meta", "entries"} | {t for t in tables if t.startswith("sqlite_")}
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(entries)")}
        if not (tables - ours) and columns == _BALL_COLUMNS and "meta" in tables:
            held = self._db.execute("SELECT value FROM meta WHERE name = 'geometry'").fetchone()
            self._refuse_geometry(held[0] if held else "l2-ball")
        if (tables - ours) or ("entries" in tables and columns != _COLUMNS):
            raise ValueError(
                f"{self.path} is an SQLite database of another application "
                f"(tables: {', '.join(sorted(tables))}); it was left untouched. "
                "Choose another file for the anisotropic certificate memory"
            )

    def _sync(self) -> None:
        """Load the regions committed since the last call (by this or another process)."""
        rows = self._db.execute(
            "SELECT id, prediction, radius, center, shape FROM entries WHERE id > ? ORDER BY id",
            (self._last_id,),
        ).fetchall()
        for entry, prediction, radius, center_blob, shape_blob in rows:
            self._last_id = entry
            center = np.frombuffer(center_blob, dtype=np.float32)
            self._check_dim(center.size)
            if prediction != ABSTAIN:
                shape = np.frombuffer(shape_blob, dtype=np.float32)
                self._append(entry, prediction, radius, center, shape)

    def _append(self, entry, prediction, radius, center, shape) -> None:
        if self._count == len(self._centers):  # grow by doubling
            size = max(16, 2 * self._count)
            self._centers = _grown(self._centers, size, center.size)
            self._shapes = _grown(self._shapes, size, center.size)
            self._classes = np.resize(self._classes, size)
            self._scales = np.resize(self._scales, size)
            self._reach = np.resize(self._reach, size)
        n = self._count
        self._centers[n], self._shapes[n] = center, shape
        self._classes[n], self._scales[n] = prediction, radius
        self._reach[n] = bounding_reach(np.float64(radius), shape)
        self._ids.append(entry)
        self._count += 1

    # -- queries ---------------------------------------------------------------------------

    @property
    def shapes(self) -> np.ndarray:
        """The shapes (sigma) of the stored regions, ``(N, d)`` float32."""
        return self._shapes[: self._count]

    def lookup(self, x: torch.Tensor | np.ndarray) -> int | None:
        """The class of the first stored region containing ``x`` (decided exactly), or ``None``."""
        self._sync()
        holders = self._holders(_as_vector(x))
        return int(self.classes[np.argmax(holders)]) if holders.any() else None

    def violations(self) -> list[tuple[int, int]]:
        """Entry ids of stored regions that break the invariant (empty when sound).

        A pair of different classes counts unless it is proven disjoint.
        """
        self._sync()
        pairs = anisotropic_conflicting_pairs(
            self.centers, self.shapes, self.classes, self.radii, self.norm
        )
        return [(self._ids[i], self._ids[j]) for i, j in pairs]

    def _holders(self, center: np.ndarray) -> np.ndarray:
        if self._count == 0:
            return np.zeros(0, dtype=bool)
        self._check_dim(center.size)
        return contains(self.centers, self.shapes, self.radii, center, self.p)

    # -- admission -------------------------------------------------------------------------

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
        prediction, radius = int(prediction), float(radius)
        if not (math.isfinite(radius) and radius >= 0):
            raise ValueError(f"radius must be finite and >= 0, got {radius!r}")
        if prediction < ABSTAIN:
            raise ValueError(f"prediction must be a class index or ABSTAIN, got {prediction}")
        if prediction == ABSTAIN and radius != 0:
            raise ValueError(f"an abstention certifies nothing: its radius must be 0, got {radius}")
        center = _as_vector(x)
        shape = _as_shape(sigma, center.size)
        with _Transaction(self._db):
            if key is not None:
                stored = self._by_key(key, center)
                if stored is not None:
                    return stored
            self._sync()
            self._check_dim(center.size)
            final, scale, action = self._resolve(center, shape, prediction, radius)
            cursor = self._db.execute(
                "INSERT INTO entries (key, prediction, radius, mc_prediction, mc_radius, "
                "action, center, shape) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (key, final, scale, prediction, radius, action, center.tobytes(), shape.tobytes()),
            )
            entry = int(cursor.lastrowid or 0)
        self._sync()
        return MemoryAnswer(final, scale, prediction, radius, action, entry)

    def _resolve(
        self, center: np.ndarray, shape: np.ndarray, prediction: int, radius: float
    ) -> tuple[int, float, str]:
        classes = self.classes
        inside = self._holders(center)
        holders = inside & (classes != prediction)
        action = "kept"
        if holders.any():
            first = int(np.argmax(holders))
            prediction, action = int(classes[first]), "adopted"
            delta = center.astype(np.float64) - self.centers[first]
            fit = largest_nested_scale(
                delta, self.shapes[first], float(self.radii[first]), shape, self.p
            )
            radius = min(radius, fit)
        elif prediction == ABSTAIN:
            return ABSTAIN, 0.0, "abstained"
        other = classes != prediction
        if (inside & other).any():
            raise MemoryInconsistencyError(
                "the new input lies in stored regions of two different classes; the memory "
                f"{self.path or '(in RAM)'} is inconsistent (run .violations() to list them)"
            )
        scale = self._shrink_to_avoid(center, shape, radius, np.flatnonzero(other))
        if scale < radius and action == "kept":
            action = "shrunk"
        return prediction, scale, action

    def _shrink_to_avoid(
        self, center: np.ndarray, shape: np.ndarray, upper: float, others: np.ndarray
    ) -> float:
        """The largest scale ≤ ``upper`` proven to miss the stored regions ``others``.

        The centre is known to lie outside all of them (decided exactly), so scale 0
        (the point itself) always qualifies. Bounding balls dismiss the far regions at
        once; each near one gets the exact search; the final scale is verified against
        all of them, with the memory's strict margin.
        """
        if upper == 0 or len(others) == 0:
            return upper
        delta = center.astype(np.float64) - self.centers[others]
        axes = self.radii[others, None] * self.shapes[others].astype(np.float64)
        reach, shape64 = self._reach[others], shape.astype(np.float64)
        first_look = far_apart(delta, reach, upper * float(shape64.max()), self.p, factor=_STRICT)
        near = np.flatnonzero(~first_look)
        proven, normals = quick_proofs(
            delta[near], axes[near], upper * shape64, self.p, factor=_STRICT
        )
        scale = upper
        for row in np.flatnonzero(~proven):
            i = near[row]
            scale, normal = separation_certificate(delta[i], axes[i], shape64, self.p, scale)
            if normal is None:
                return 0.0
            normals[row] = normal

        def verified(t: float) -> bool:
            apart = far_apart(delta, reach, t * float(shape64.max()), self.p, factor=_STRICT)
            proven = proves_disjoint_many(
                delta[near], axes[near], t * shape64, self.p, normals, factor=_STRICT
            )
            apart[near] |= proven
            return bool(apart.all())

        if scale == upper:  # every proof above was verified at this very scale
            return scale
        return _lower_to_verified(scale, verified)


def _grown(array: np.ndarray, rows: int, dim: int) -> np.ndarray:
    grown = np.empty((rows, dim), dtype=array.dtype)
    if len(array):
        grown[: len(array)] = array
    return grown


def _lower_to_verified(scale: float, verified) -> float:
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
    p = _order(norm)
    points = np.asarray(points, dtype=np.float32)
    points = points.reshape(len(points), -1) if len(points) else points
    shapes = np.asarray(shapes, dtype=np.float32).reshape(points.shape)
    classes, radii = np.asarray(classes), np.asarray(radii, dtype=np.float64)
    reach = bounding_reach(radii, shapes) if len(points) else radii
    found = []
    for i in range(len(points)):
        if classes[i] == ABSTAIN:
            continue
        later = np.arange(i + 1, len(points))
        later = later[(classes[later] != classes[i]) & (classes[later] != ABSTAIN)]
        delta = points[later].astype(np.float64) - points[i]
        near = ~far_apart(delta, reach[i], reach[later], p)
        regions = near & (radii[later] > 0) & (radii[i] > 0)
        if regions.any():
            axes_i = radii[i] * shapes[i].astype(np.float64)
            axes_j = radii[later[regions], None] * shapes[later[regions]].astype(np.float64)
            proven, _ = quick_proofs(
                delta[regions], np.broadcast_to(axes_i, axes_j.shape), axes_j, p
            )
            near[np.flatnonzero(regions)[proven]] = False
        near = later[near]
        found += [
            (i, int(j))
            for j in near
            if not _pair_disjoint(points[i], shapes[i], radii[i], points[j], shapes[j], radii[j], p)
        ]
    return found
