"""The memory-based certifier of data-dependent smoothing (DDRS §3.5), on SQLite.

With a noise level chosen per input, the smoothed classifier is no longer one fixed
classifier, and two certificates can contradict each other: the region certified at
one input may contain another input answered with a different class. The memory
keeps every answer and its region, and admits a new Monte Carlo certificate
``(x, class, radius)`` so that this cannot happen:

1. if ``x`` lies in a stored region of another class, the answer becomes that class
   and the region shrinks to fit inside the stored one ("adopted");
2. the region then shrinks until it misses every stored region of another class
   ("shrunk"), otherwise it is kept as certified ("kept");
3. the answer and its region are stored.

Invariant after any sequence of admissions: no two stored regions of different
classes intersect, and every stored input lies in its own region and in no region of
another class. An abstention outside every region is stored without a region.

Storage is a SQLite file (write-ahead log, full sync): every admission is one
transaction, so concurrent readers see a consistent memory, a second process picks up
what the first wrote, and a process killed mid-write leaves the last committed state.
Admissions from several processes are serialised by the database lock.
"""

from __future__ import annotations

import math
import os
import sqlite3
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Self

import numpy as np
import pandas as pd
import torch

from rsutils.core.smooth import ABSTAIN
from rsutils.geometry.balls import RegionGeometry, norm_ball

__all__ = [
    "CertificateMemory",
    "MemoryAnswer",
    "MemoryInconsistencyError",
    "SQLiteMemory",
    "closest_conflict",
    "conflicting_pairs",
    "copy_memory",
    "replay",
]

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
    center BLOB NOT NULL
);
"""

_ENTRY_COLUMNS = {
    "id",
    "key",
    "prediction",
    "radius",
    "mc_prediction",
    "mc_radius",
    "action",
    "center",
}


def _check_writable(path: Path) -> None:
    """The memory's file and folder must exist or be creatable, and be writable."""
    if path.is_dir():
        raise ValueError(f"{path} is a directory; pass a file such as {path / 'memory.sqlite'}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ValueError(f"cannot create the folder of {path} ({error.strerror})") from None
    for where in (path, path.parent):
        if where.exists() and not os.access(where, os.W_OK):
            raise ValueError(
                f"{where} is read-only, and the certificate memory {path} is written on every "
                "admission (and its journal next to it); make it writable or choose another file"
            )


def _open_error(path: Path | None, error: sqlite3.DatabaseError) -> str:
    if "readonly" in str(error) or "unable to open" in str(error):
        return f"cannot write the certificate memory {path} ({error}); check its permissions"
    return f"{path} is not a certificate memory ({error}); choose another file"


#: What the memory did to a Monte Carlo certificate.
ACTIONS = ("kept", "shrunk", "adopted", "abstained")


class MemoryInconsistencyError(RuntimeError):
    """A new input lies in stored regions of two different classes (a corrupted memory)."""


@dataclass(frozen=True)
class MemoryAnswer:
    """The memory's answer for one input: class (or ABSTAIN) and certified radius.

    ``mc_prediction`` and ``mc_radius`` are the Monte Carlo certificate it was given;
    ``action`` is one of ``kept``, ``shrunk``, ``adopted``, ``abstained``; ``repeated``
    is true when ``key`` was already in the memory (the stored answer is returned).
    """

    prediction: int
    radius: float
    mc_prediction: int
    mc_radius: float
    action: str
    entry: int
    repeated: bool = False


class SQLiteMemory:
    """What the certificate memories share: the SQLite file, keys, the loaded regions.

    A subclass opens its file with ``_connect`` (which calls its ``_open`` to set up
    and check the tables) and keeps its regions in the arrays set up there, in
    admission order; :mod:`rsutils.anisotropic.memory` adds a shape per region.
    """

    path: Path | None

    def _connect(self, path: str | os.PathLike[str] | None, geometry: str) -> None:
        """Open (or create) the memory's file, refusing one that is not ours."""
        self.path = None if path is None else Path(path)
        if self.path is not None:
            _check_writable(self.path)
        target = ":memory:" if self.path is None else str(self.path)
        self._db = sqlite3.connect(target, timeout=60.0, isolation_level=None)
        try:
            self._open(geometry)
        except sqlite3.DatabaseError as error:
            self._db.close()
            raise ValueError(_open_error(self.path, error)) from None
        except ValueError:
            self._db.close()
            raise
        self._last_id = 0
        self._ids: list[int] = []
        self._classes = np.empty(0, dtype=np.int64)
        self._scales = np.empty(0, dtype=np.float64)
        self._centers = np.empty((0, 0), dtype=np.float32)
        self._count = 0
        self._dim: int | None = None

    def _open(self, geometry: str) -> None:
        raise NotImplementedError

    def _check_dim(self, size: int) -> None:
        if self._dim is None:
            self._dim = size
        elif size != self._dim:
            raise ValueError(
                f"this memory holds inputs of {self._dim} elements, got one of {size}; "
                "use one memory per input shape"
            )

    @property
    def centers(self) -> np.ndarray:
        """The stored inputs that carry a region, ``(N, d)`` float32, in admission order."""
        return self._centers[: self._count]

    @property
    def classes(self) -> np.ndarray:
        return self._classes[: self._count]

    @property
    def radii(self) -> np.ndarray:
        """The scales of the stored regions (float64)."""
        return self._scales[: self._count]

    def __len__(self) -> int:
        (count,) = self._db.execute("SELECT COUNT(*) FROM entries").fetchone()
        return int(count)

    def entries(self) -> pd.DataFrame:
        """Every stored answer (regions and abstentions), without the inputs."""
        return pd.read_sql_query(
            "SELECT id, key, prediction, radius, mc_prediction, mc_radius, action "
            "FROM entries ORDER BY id",
            self._db,
        )

    def _by_key(self, key: str, center: np.ndarray) -> MemoryAnswer | None:
        """The stored answer of ``key``, if any; a key reused for another input is an error."""
        row = self._db.execute(
            "SELECT prediction, radius, mc_prediction, mc_radius, action, id, center "
            "FROM entries WHERE key = ?",
            (key,),
        ).fetchone()
        if row is None:
            return None
        if row[-1] != center.tobytes():
            raise ValueError(
                f"key {key!r} was admitted for another input; keys must identify inputs "
                "(use a new key for a new input)"
            )
        return MemoryAnswer(*row[:-1], repeated=True)

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class CertificateMemory(SQLiteMemory):
    """A persistent memory of certified answers; ``path=None`` keeps it in RAM only.

    The regions are balls of ``norm`` (``"l2"`` for Gaussian noise, ``"l1"`` for
    uniform noise; see :mod:`rsutils.geometry.balls`). All inputs must have the same
    number of elements; they are stored as float32, and distances are computed from
    the stored values.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, *, norm: str = "l2"):
        self.geometry: RegionGeometry = norm_ball(norm)
        self.norm = norm
        self._connect(path, self.geometry.name)
        self._sync()

    def _open(self, geometry: str) -> None:
        """Set up the journal, create the tables, check the stored geometry."""
        self._check_foreign_tables()  # before anything writes to the file
        if self.path is not None:
            self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        with self._transaction():
            self._create_schema()
            stored = dict(self._db.execute("SELECT name, value FROM meta").fetchall())
            if "geometry" not in stored:
                self._db.execute("INSERT INTO meta VALUES ('geometry', ?)", (geometry,))
            elif stored["geometry"] != geometry:
                held = stored["geometry"].removesuffix("-ball")
                raise ValueError(
                    f"{self.path} holds {held} balls, not {self.norm} balls; "
                    f"open it with norm={held!r} or use another file"
                )

    # -- storage -------------------------------------------------------------------------

    def _check_foreign_tables(self) -> None:
        """Refuse (and leave untouched) an SQLite file that holds another application's data."""
        tables = {row[0] for row in self._db.execute("SELECT name FROM sqlite_master")}
        foreign = sorted(
            tables - {"meta", "entries"} - {t for t in tables if t.startswith("sqlite_")}
        )
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(entries)")}
        if foreign or ("entries" in tables and columns != _ENTRY_COLUMNS):
            raise ValueError(
                f"{self.path} is an SQLite database of another application "
                f"(tables: {', '.join(sorted(tables))}); it was left untouched. "
                "Choose another file for the certificate memory"
            )

    def _create_schema(self) -> None:
        for statement in _SCHEMA.split(";"):
            if statement.strip():
                self._db.execute(statement)

    def _transaction(self):
        return _Transaction(self._db)

    def _sync(self) -> None:
        """Load the regions committed since the last call (by this or another process)."""
        rows = self._db.execute(
            "SELECT id, prediction, radius, center FROM entries WHERE id > ? ORDER BY id",
            (self._last_id,),
        ).fetchall()
        for entry, prediction, radius, blob in rows:
            self._last_id = entry
            center = np.frombuffer(blob, dtype=np.float32)
            self._check_dim(center.size)
            if prediction != ABSTAIN:
                self._append(entry, prediction, radius, center)

    def _append(self, entry: int, prediction: int, radius: float, center: np.ndarray) -> None:
        if self._count == len(self._centers):  # grow by doubling
            grown = np.empty((max(16, 2 * self._count), center.size), dtype=np.float32)
            if self._count:
                grown[: self._count] = self._centers[: self._count]
            self._centers = grown
            self._classes = np.resize(self._classes, len(grown))
            self._scales = np.resize(self._scales, len(grown))
        self._centers[self._count] = center
        self._classes[self._count] = prediction
        self._scales[self._count] = radius
        self._ids.append(entry)
        self._count += 1

    # -- queries ---------------------------------------------------------------------------

    def lookup(self, x: torch.Tensor | np.ndarray) -> int | None:
        """The class of the first stored region containing ``x``, or ``None``."""
        self._sync()
        center = _as_vector(x)
        holders = self.geometry.contains(self._distances(center), self.radii)
        return int(self.classes[np.argmax(holders)]) if holders.any() else None

    def violations(self) -> list[tuple[int, int]]:
        """Entry ids of stored regions that break the invariant (empty when sound)."""
        self._sync()
        pairs = conflicting_pairs(self.centers, self.classes, self.radii, self.norm)
        return [(self._ids[i], self._ids[j]) for i, j in pairs]

    def _distances(self, center: np.ndarray) -> np.ndarray:
        if self._count == 0:
            return np.empty(0, dtype=np.float64)
        self._check_dim(center.size)
        return self.geometry.distances(self.centers, center)

    # -- admission -------------------------------------------------------------------------

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
        prediction, radius = int(prediction), float(radius)
        if not (math.isfinite(radius) and radius >= 0):
            raise ValueError(f"radius must be finite and >= 0, got {radius!r}")
        if prediction < ABSTAIN:
            raise ValueError(f"prediction must be a class index or ABSTAIN, got {prediction}")
        if prediction == ABSTAIN and radius != 0:
            raise ValueError(f"an abstention certifies nothing: its radius must be 0, got {radius}")
        center = _as_vector(x)
        with self._transaction():
            if key is not None:
                stored = self._by_key(key, center)
                if stored is not None:
                    return stored
            self._sync()
            self._check_dim(center.size)
            final, final_radius, action = self._resolve(center, prediction, radius)
            cursor = self._db.execute(
                "INSERT INTO entries (key, prediction, radius, mc_prediction, mc_radius, "
                "action, center) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (key, final, final_radius, prediction, radius, action, center.tobytes()),
            )
            entry = int(cursor.lastrowid or 0)
        self._sync()
        return MemoryAnswer(final, final_radius, prediction, radius, action, entry)

    def _resolve(
        self, center: np.ndarray, prediction: int, radius: float
    ) -> tuple[int, float, str]:
        dist = self._distances(center)
        classes, radii = self.classes, self.radii
        holders = self.geometry.contains(dist, radii) & (classes != prediction)
        action = "kept"
        if holders.any():
            first = int(np.argmax(holders))
            prediction, action = int(classes[first]), "adopted"
            radius, _ = self.geometry.shrink_to_fit(dist[[first]], radii[[first]], radius)
        elif prediction == ABSTAIN:
            return ABSTAIN, 0.0, "abstained"
        other = classes != prediction
        shrunk, possible = self.geometry.shrink_to_avoid(dist[other], radii[other], radius)
        if not possible:
            raise MemoryInconsistencyError(
                "the new input lies in stored regions of two different classes; the memory "
                f"{self.path or '(in RAM)'} is inconsistent (run .violations() to list them)"
            )
        if shrunk < radius and action == "kept":
            action = "shrunk"
        return prediction, shrunk, action


def copy_memory(source: str | os.PathLike[str], target: str | os.PathLike[str]) -> None:
    """Copy a memory file (a consistent snapshot, even while others write to it).

    Does nothing if ``target`` exists, so a resumed run keeps its own copy. The copy
    is written to a temporary file and renamed, so a kill leaves no partial target.
    """
    target = Path(target)
    if target.exists():
        return
    partial = target.with_name(target.name + ".partial")
    partial.unlink(missing_ok=True)
    with closing(sqlite3.connect(source)) as src, closing(sqlite3.connect(partial)) as dst:
        src.backup(dst)
    os.replace(partial, target)


def conflicting_pairs(
    points: np.ndarray, classes: np.ndarray, radii: np.ndarray, norm: str = "l2"
) -> list[tuple[int, int]]:
    """Index pairs ``i < j`` of regions with different classes that intersect.

    ``points`` ``(N, d)``, ``classes`` and ``radii`` ``(N,)`` describe certificates
    (abstentions, class ABSTAIN, are skipped). Applied to raw Monte Carlo
    certificates of a data-dependent classifier, each pair is a contradiction the
    memory would have to resolve. The regions are balls of ``norm``.
    """
    geometry = norm_ball(norm)
    points = np.asarray(points, dtype=np.float32)
    points = points.reshape(len(points), -1) if len(points) else points
    classes, radii = np.asarray(classes), np.asarray(radii, dtype=np.float64)
    found = []
    for i in range(len(points)):
        if classes[i] == ABSTAIN:
            continue
        dist = geometry.distances(points, points[i])
        bad = (classes != classes[i]) & (classes != ABSTAIN)
        bad &= ~geometry.separated(dist, radii, radii[i])
        found += [(i, int(j)) for j in np.flatnonzero(bad) if j > i]
    return found


def closest_conflict(
    points: np.ndarray, classes: np.ndarray, radii: np.ndarray, norm: str = "l2"
) -> float:
    """The smallest distance / (r_i + r_j) over pairs of certificates of different classes.

    Below 1 the two regions intersect; the further above 1, the further the
    certificates are from any conflict. ``inf`` when no pair has a positive radius sum.
    Distances are measured in ``norm``.
    """
    geometry = norm_ball(norm)
    points = np.asarray(points, dtype=np.float32)
    points = points.reshape(len(points), -1) if len(points) else points
    classes, radii = np.asarray(classes), np.asarray(radii, dtype=np.float64)
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


class _Transaction:
    """``BEGIN IMMEDIATE`` … ``COMMIT`` (``ROLLBACK`` on error): one writer at a time."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind: object, *exc: object) -> None:
        self.db.execute("ROLLBACK" if kind is not None else "COMMIT")


def _as_vector(x: torch.Tensor | np.ndarray) -> np.ndarray:
    if isinstance(x, torch.Tensor):
        x = x.detach().cpu().numpy()
    vector = np.ascontiguousarray(np.asarray(x, dtype=np.float32).ravel())
    if not np.isfinite(vector).all():
        raise ValueError("x contains NaN or infinite values; clean the input first")
    return vector
