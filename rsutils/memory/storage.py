"""The certificate memory's SQLite file: one table of answers, one of metadata.

Every memory, whatever the shape of its regions, is one SQLite file (or an in-RAM
database) with two tables: ``meta`` (``name``, ``value``; the row ``geometry`` names
the kind of region, e.g. ``"l2-ball"`` or ``"l2-superellipsoid"``) and ``entries``, one
row per admitted input in admission order: ``id``, ``key`` (unique, optional),
``prediction``, ``radius`` (the stored answer and scale), ``mc_prediction``,
``mc_radius`` (the Monte Carlo certificate given), ``action``, ``center`` (the input as
float32 bytes) and, for shapes with per-region data, one more BLOB column (the
super-ellipsoid's ``shape``, float32 bytes).

The file is in write-ahead-log mode with full sync, and every admission is one
``BEGIN IMMEDIATE`` transaction: concurrent readers see a consistent memory, another
process picks up what one committed, a process killed mid-write leaves the last
committed state, and writers are serialised by the database lock.

Opening refuses, before writing anything: a folder, a read-only file or folder, a file
that is not an SQLite database, an SQLite database of another application (left
untouched), and a memory of another geometry (naming how to open it).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path

import numpy as np
import pandas as pd

from rsutils.memory.shapes import RegionShape, known_shapes

__all__ = ["ENTRY_COLUMNS", "MemoryFile", "copy_memory"]

#: The columns of ``entries`` that every memory has, whatever its regions.
ENTRY_COLUMNS = (
    "id",
    "key",
    "prediction",
    "radius",
    "mc_prediction",
    "mc_radius",
    "action",
    "center",
)

_DECLARATIONS = (
    "id INTEGER PRIMARY KEY",
    "key TEXT UNIQUE",
    "prediction INTEGER NOT NULL",
    "radius REAL NOT NULL",
    "mc_prediction INTEGER NOT NULL",
    "mc_radius REAL NOT NULL",
    "action TEXT NOT NULL",
    "center BLOB NOT NULL",
)

# The answer's columns, in the order of MemoryAnswer's fields.
_ANSWER_COLUMNS = "prediction, radius, mc_prediction, mc_radius, action, id"


def _schema(shape: RegionShape) -> tuple[str, str]:
    """The two CREATE statements, laid out as the first memories wrote them."""
    declarations = list(_DECLARATIONS)
    if shape.extra_column:
        declarations.append(f"{shape.extra_column} BLOB NOT NULL")
    body = ",\n".join(f"    {line}" for line in declarations)
    return (
        "\nCREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
        f"\nCREATE TABLE IF NOT EXISTS entries (\n{body}\n)",
    )


def _columns(shape: type[RegionShape] | RegionShape) -> set[str]:
    extra = shape.extra_column
    return set(ENTRY_COLUMNS) | ({extra} if extra else set())


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


class MemoryFile:
    """The SQLite file of one memory of ``shape``'s regions; ``path=None`` keeps it in RAM.

    Opening creates the file if needed and refuses (with a ValueError naming the fix,
    before anything is written) one that is not a memory of this geometry.
    """

    def __init__(self, path: str | os.PathLike[str] | None, shape: RegionShape) -> None:
        self.path = None if path is None else Path(path)
        self.shape = shape
        if self.path is not None:
            _check_writable(self.path)
        target = ":memory:" if self.path is None else str(self.path)
        self._db = sqlite3.connect(target, timeout=60.0, isolation_level=None)
        try:
            self._open()
        except sqlite3.DatabaseError as error:
            self._db.close()
            raise ValueError(_open_error(self.path, error)) from None
        except ValueError:
            self._db.close()
            raise

    # -- opening -------------------------------------------------------------------------

    def _open(self) -> None:
        """Check the file (reading only), then set up the journal, the tables, the geometry."""
        self._check_file()
        if self.path is not None:
            self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        with self.transaction():
            for statement in _schema(self.shape):
                self._db.execute(statement)
            held = self._held_geometry()
            if held is None:
                self._db.execute("INSERT INTO meta VALUES ('geometry', ?)", (self.shape.name,))
            elif held != self.shape.name:  # another process created it meanwhile
                raise ValueError(self._other_geometry(held))

    def _check_file(self) -> None:
        """Refuse another application's SQLite file or a memory of another geometry."""
        tables = {row[0] for row in self._db.execute("SELECT name FROM sqlite_master")}
        foreign = tables - {"meta", "entries"} - {t for t in tables if t.startswith("sqlite_")}
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(entries)")}
        known = [kind for kind in known_shapes().values() if _columns(kind) == columns]
        if foreign or ("entries" in tables and not known):
            raise ValueError(self._foreign(tables))
        held = self._held_geometry() if "meta" in tables else None
        if held is None or held == self.shape.name:
            if "entries" in tables and columns != _columns(self.shape):
                raise ValueError(self._foreign(tables))
            return
        raise ValueError(self._other_geometry(held))

    def _held_geometry(self) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE name = 'geometry'").fetchone()
        return None if row is None else str(row[0])

    def _foreign(self, tables: set[str]) -> str:
        return (
            f"{self.path} is an SQLite database of another application "
            f"(tables: {', '.join(sorted(tables))}); it was left untouched. "
            "Choose another file for the certificate memory"
        )

    def _other_geometry(self, held: str) -> str:
        """The refusal of a memory file whose regions are ``held`` (e.g. ``"l1-ball"``)."""
        ours = self.shape
        norm, _, kind = held.partition("-")
        if kind == ours.kind:
            return (
                f"{self.path} holds {norm} {ours.plural}, not {ours.norm} {ours.plural}; "
                f"open it with norm={norm!r} or use another file"
            )
        other = known_shapes().get(kind)
        if other is None:
            return (
                f"{self.path} holds regions of geometry {held!r}, which this version of "
                "rsutils does not know; use another file"
            )
        return (
            f"{self.path} holds a certificate memory of {norm} {other.plural}, not "
            f"{ours.plural}; open it with {other.opened_by}(path, norm={norm!r}) "
            "or use another file"
        )

    # -- reading and writing -------------------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """``BEGIN IMMEDIATE`` … ``COMMIT`` (``ROLLBACK`` on error): one writer at a time."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def rows_since(self, last_id: int) -> list[tuple]:
        """``(id, prediction, radius, center, extra)`` of every entry after ``last_id``.

        ``extra`` is the per-region BLOB, or ``None`` for shapes without one.
        """
        extra = self.shape.extra_column or "NULL"
        return self._db.execute(
            f"SELECT id, prediction, radius, center, {extra} FROM entries WHERE id > ? ORDER BY id",
            (last_id,),
        ).fetchall()

    def by_key(self, key: str) -> tuple[tuple, bytes] | None:
        """The stored answer of ``key`` (in ``MemoryAnswer``'s field order) and its input."""
        row = self._db.execute(
            f"SELECT {_ANSWER_COLUMNS}, center FROM entries WHERE key = ?", (key,)
        ).fetchone()
        return None if row is None else (tuple(row[:-1]), row[-1])

    def insert(
        self,
        key: str | None,
        answer: tuple[int, float, int, float, str],
        center: np.ndarray,
        extra: np.ndarray,
    ) -> int:
        """Store one answer ``(prediction, radius, mc_prediction, mc_radius, action)``."""
        columns = "key, prediction, radius, mc_prediction, mc_radius, action, center"
        values: tuple = (key, *answer, center.tobytes())
        if self.shape.extra_column:
            columns += f", {self.shape.extra_column}"
            values += (extra.tobytes(),)
        marks = ", ".join("?" * len(values))
        cursor = self._db.execute(f"INSERT INTO entries ({columns}) VALUES ({marks})", values)
        return int(cursor.lastrowid or 0)

    def count(self) -> int:
        (count,) = self._db.execute("SELECT COUNT(*) FROM entries").fetchone()
        return int(count)

    def entries(self) -> pd.DataFrame:
        """Every stored answer (regions and abstentions), without the inputs."""
        return pd.read_sql_query(
            "SELECT id, key, prediction, radius, mc_prediction, mc_radius, action "
            "FROM entries ORDER BY id",
            self._db,
        )

    def close(self) -> None:
        self._db.close()


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
