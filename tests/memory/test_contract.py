"""The certificate memory's contract, for every shape: the invariant, the file, the keys.

Each test runs for ℓ1, ℓ2 and ℓ∞ balls (:class:`CertificateMemory`) and ℓ1, ℓ2 and ℓ∞
super-ellipsoids (:class:`AnisotropicMemory`): the engine is one, so its guarantees
must hold whatever the shape. Shape-specific geometry is in ``test_balls.py`` and
``test_superellipsoids.py``.
"""

from __future__ import annotations

import math
import os
import re
import signal
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rsutils import ABSTAIN, AnisotropicMemory, CertificateMemory, MemoryInconsistencyError
from rsutils.checks.gauges import lp_gauge
from rsutils.memory import RegionMemory, copy_memory, storage
from rsutils.memory.shapes import Regions, known_shapes

# -- the shapes and their independent oracles --------------------------------------------


def _is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def _stored(memory: RegionMemory) -> Regions:
    """The stored regions, from public properties only."""
    shapes = getattr(memory, "shapes", np.empty((len(memory.radii), 0), dtype=np.float32))
    return Regions(memory.centers, shapes, memory.classes, memory.radii)


def _ball_oracle(memory: RegionMemory) -> None:
    """Balls: the invariant re-derived in pure Python (tolerance 1e-9 for float rounding)."""
    distance = {
        "l1": lambda a, b: sum(abs(u - v) for u, v in zip(a, b, strict=True)),
        "l2": math.dist,
        "linf": lambda a, b: max(abs(u - v) for u, v in zip(a, b, strict=True)),
    }[memory.norm]
    regions = list(zip(memory.centers.tolist(), memory.classes, memory.radii, strict=True))
    for i, (x_i, c_i, r_i) in enumerate(regions):
        for x_j, c_j, r_j in regions[i + 1 :]:
            if c_i == c_j:
                continue
            gap = distance(x_i, x_j)
            assert gap > 0, "two different answers at the same input"
            assert r_i + r_j <= gap * (1 + 1e-9), "regions of different classes intersect"


def _ellipsoid_gauge(delta, a, b) -> float:
    """``min_z max(‖z⊘a‖₂, ‖(z − delta)⊘b‖₂)``: the point of the tangency curve where
    both gauges agree, by bisection (the p = 2 counterpart of ``lp_gauge``)."""
    wa, wb = 1 / a**2, 1 / b**2
    low, high = -80.0, 80.0
    for _ in range(200):
        theta = 1 / (1 + np.exp(-(low + high) / 2))
        z = (1 - theta) * wb * delta / (theta * wa + (1 - theta) * wb)
        ga, gb = np.sum(z**2 * wa), np.sum((z - delta) ** 2 * wb)
        low, high = ((low + high) / 2, high) if ga > gb else (low, (low + high) / 2)
    return float(np.sqrt(max(ga, gb)))


def _superellipsoid_oracle(memory: RegionMemory) -> None:
    """Super-ellipsoids: each pair of different classes has no common point."""
    assert isinstance(memory, AnisotropicMemory)
    p = memory.p
    rows = list(zip(memory.centers, memory.shapes, memory.classes, memory.radii, strict=True))
    for i, (x_i, s_i, c_i, r_i) in enumerate(rows):
        for x_j, s_j, c_j, r_j in rows[i + 1 :]:
            if c_i == c_j:
                continue
            delta = x_j.astype(float) - x_i
            assert np.any(delta != 0), "two different answers at the same input"
            if r_i == 0 or r_j == 0:  # a point against a region: it is not inside
                point, centre, shape, scale = (
                    (x_i, x_j, s_j, r_j) if r_i == 0 else (x_j, x_i, s_i, r_i)
                )
                gauge = np.linalg.norm((point.astype(float) - centre) / shape, ord=p)
                assert gauge >= scale * (1 - 1e-12), "a stored input inside another class"
                continue
            a, b = r_i * s_i.astype(float), r_j * s_j.astype(float)
            gauge = _ellipsoid_gauge(delta, a, b) if p == 2 else lp_gauge(delta, a, b, p)
            assert gauge >= 1 - 1e-9, "regions of different classes intersect"


@dataclass(frozen=True)
class Shape:
    """One kind of memory under test, with what the contract needs to drive it."""

    kind: str  # "ball" or "superellipsoid"
    norm: str
    oracle: Callable[[RegionMemory], None]
    radii: st.SearchStrategy[float]  # Monte Carlo radii for the property tests
    examples: int  # hypothesis examples of the invariant
    apart: int  # hypothesis examples of certificates far apart

    def open(self, path: Path | None = None) -> RegionMemory:
        memory_class = CertificateMemory if self.kind == "ball" else AnisotropicMemory
        return memory_class(path, norm=self.norm)

    def admit(self, memory, x, prediction, radius, sigma, key=None):
        if self.kind == "ball":
            return memory.admit(np.asarray(x), prediction, radius, key=key)
        return memory.admit(np.asarray(x), prediction, radius, np.asarray(sigma), key=key)

    @property
    def plural(self) -> str:
        return known_shapes()[self.kind].plural

    @property
    def opened_by(self) -> str:
        return known_shapes()[self.kind].opened_by

    def __str__(self) -> str:
        return f"{self.norm}-{self.kind}"


_BALL_RADII = st.floats(0, 5, allow_nan=False)
_ELLIPSOID_RADII = st.one_of(st.just(0.0), st.floats(1e-6, 3))  # the oracle squares them
SHAPES = [
    Shape("ball", "l2", _ball_oracle, _BALL_RADII, 200, 100),
    Shape("ball", "l1", _ball_oracle, _BALL_RADII, 60, 40),
    Shape("ball", "linf", _ball_oracle, _BALL_RADII, 60, 40),
    Shape("superellipsoid", "l2", _superellipsoid_oracle, _ELLIPSOID_RADII, 150, 40),
    Shape("superellipsoid", "l1", _superellipsoid_oracle, _ELLIPSOID_RADII, 150, 40),
    Shape("superellipsoid", "linf", _superellipsoid_oracle, _ELLIPSOID_RADII, 150, 40),
]
every_shape = pytest.mark.parametrize("shape", SHAPES, ids=str)


def test_the_contract_covers_every_registered_shape() -> None:
    assert {shape.kind for shape in SHAPES} == set(known_shapes())
    assert {shape.norm for shape in SHAPES} == {"l1", "l2", "linf"}


# -- the invariant, property-based ---------------------------------------------------------

_SIGMA = st.lists(st.sampled_from([0.01, 0.1, 0.5, 1.0, 3.0, 100.0]), min_size=3, max_size=3)
# A coarse grid (many exact ties) and float32 coordinates.
_COORDINATE = st.one_of(
    st.integers(-8, 8).map(lambda k: k / 2), st.floats(-4, 4, allow_nan=False, width=32)
)


def _certificates(radii: st.SearchStrategy[float]) -> st.SearchStrategy[list]:
    return st.lists(
        st.tuples(
            st.lists(_COORDINATE, min_size=3, max_size=3), st.integers(ABSTAIN, 2), radii, _SIGMA
        ),
        min_size=1,
        max_size=25,
    )


def _admit_and_check(shape: Shape, memory: RegionMemory, sequence) -> None:
    for point, prediction, radius, sigma in sequence:
        radius = 0.0 if prediction == ABSTAIN else radius
        answer = shape.admit(memory, point, prediction, radius, sigma)
        assert answer.radius <= answer.mc_radius  # the memory never enlarges a region
        if answer.prediction != ABSTAIN:
            # The input lies in its own region and in no region of another class.
            assert memory.lookup(np.array(point)) == answer.prediction
    assert memory.violations() == []
    stored = _stored(memory)
    for i, (center, label) in enumerate(zip(stored.centers, stored.classes, strict=True)):
        alone = Regions(*(column[i : i + 1] for column in stored))
        # Every stored input is in its own region, and later regions did not take it.
        assert memory.region_shape.place(alone, center, stored.extras[i]).inside.all()
        assert memory.lookup(center) == label


@every_shape
def test_no_two_regions_of_different_classes_intersect(shape: Shape) -> None:
    @settings(max_examples=shape.examples, deadline=None)
    @given(_certificates(shape.radii))
    def check(sequence) -> None:
        memory = shape.open()
        _admit_and_check(shape, memory, sequence)
        shape.oracle(memory)

    check()


@every_shape
def test_without_conflicts_the_memory_changes_nothing(shape: Shape) -> None:
    # 2000 units per step; regions reach at most 5 x 100 = 500: the Monte Carlo answers stand.
    @settings(max_examples=shape.apart, deadline=None)
    @given(_certificates(shape.radii))
    def check(sequence) -> None:
        memory = shape.open()
        for step, (point, prediction, radius, sigma) in enumerate(sequence):
            radius = 0.0 if prediction == ABSTAIN else radius
            answer = shape.admit(memory, np.array(point) + 2000.0 * step, prediction, radius, sigma)
            assert (answer.prediction, answer.radius) == (prediction, radius)

    check()


@every_shape
def test_a_region_shrunk_to_almost_nothing_keeps_the_invariant(shape: Shape) -> None:
    """Found by hypothesis: a class-1 region next to a class-0 box shrinks to ~1e-16."""
    points = [([0.0, 0.0, 0.0], 0, 0.0, [0.01] * 3)] * 3 + [([0.5, 0.0, 0.0], 1, 0.0, [0.01] * 3)]
    points += [([0.0, 0.0, 0.0], 0, 1.0, [0.5, 0.01, 0.01]), ([0.5, 0.0, 0.0], 1, 1.0, [0.01] * 3)]
    memory = shape.open()
    _admit_and_check(shape, memory, points)
    shape.oracle(memory)
    assert memory.radii[-1] < 1e-6


@every_shape
def test_a_corrupted_memory_is_named_not_extended(shape: Shape, tmp_path: Path) -> None:
    path = tmp_path / "m.sqlite"
    with shape.open(path) as memory:
        shape.admit(memory, [0.0, 0.0], 0, 1.0, [1.0, 1.0])
    # Another class's region around the same point, written behind the memory's back.
    with sqlite3.connect(path) as raw:
        raw.execute(
            "INSERT INTO entries SELECT NULL, NULL, 1, radius, 1, radius, 'kept', center"
            + (", shape" if shape.kind != "ball" else "")
            + " FROM entries"
        )
    with shape.open(path) as memory:
        assert memory.violations() == [(1, 2)]
        with pytest.raises(MemoryInconsistencyError, match=r"two different classes.*violations"):
            shape.admit(memory, [0.1, 0.0], 2, 0.5, [1.0, 1.0])
        assert len(memory) == 2  # nothing stored


# -- keys -----------------------------------------------------------------------------------


@every_shape
def test_a_repeated_key_returns_the_stored_answer(shape: Shape) -> None:
    memory = shape.open()
    first = shape.admit(memory, [0.0, 0.0], 0, 1.0, [1.0, 1.0], key="img-7")
    again = shape.admit(memory, [0.0, 0.0], 1, 0.2, [1.0, 1.0], key="img-7")  # another seed
    assert again.repeated and not first.repeated
    assert (again.prediction, again.radius, again.entry) == (first.prediction, 1.0, first.entry)
    assert len(memory) == 1
    with pytest.raises(ValueError, match="admitted for another input"):
        shape.admit(memory, [9.0, 9.0], 1, 0.2, [1.0, 1.0], key="img-7")
    assert len(memory) == 1


@every_shape
def test_a_run_resumed_by_key_gets_the_same_answers(shape: Shape, tmp_path: Path) -> None:
    sequence = _draws(seed=5, count=30)
    path = tmp_path / "m.sqlite"
    with shape.open(path) as memory:  # a run killed after 20 inputs
        before = [_admit(shape, memory, i, *row) for i, row in enumerate(sequence[:20])]
    with shape.open(path) as memory:  # resumed: the first 20 again (other seeds), then on
        resumed = [
            _admit(shape, memory, i, x, c, 0.0, sigma)
            for i, (x, c, _, sigma) in enumerate(sequence[:20])
        ]
        after = [_admit(shape, memory, i, *row) for i, row in enumerate(sequence) if i >= 20]
        assert len(memory) == 30 and memory.violations() == []
    assert all(answer.repeated for answer in resumed)
    assert [_key(a) for a in resumed] == [_key(a) for a in before]
    with shape.open() as uninterrupted:
        straight = [_admit(shape, uninterrupted, i, *row) for i, row in enumerate(sequence)]
    assert [_key(a) for a in before + after] == [_key(a) for a in straight]


def _admit(shape: Shape, memory, i, x, prediction, radius, sigma):
    return shape.admit(memory, x, prediction, radius, sigma, key=f"q{i}")


def _key(answer) -> tuple:
    return (answer.prediction, answer.radius, answer.mc_prediction, answer.action, answer.entry)


# -- bad input and refused files -------------------------------------------------------------


@every_shape
def test_bad_input_is_named_before_anything_is_written(shape: Shape, tmp_path: Path) -> None:
    path = tmp_path / "m.sqlite"
    memory = shape.open(path)
    shape.admit(memory, np.zeros(4), 0, 1.0, np.ones(4))
    bad = [
        (np.zeros(5), 0, 1.0, np.ones(5), "inputs of 4 elements"),
        (np.array([0, np.nan, 0, 0]), 0, 1.0, np.ones(4), "NaN"),
        (np.array([0, np.inf, 0, 0]), 0, 1.0, np.ones(4), "infinite"),
        (np.zeros(4), 0, -1.0, np.ones(4), "radius must be finite"),
        (np.zeros(4), 0, np.inf, np.ones(4), "radius must be finite"),
        (np.zeros(4), ABSTAIN, 1.0, np.ones(4), "abstention"),
        (np.zeros(4), -2, 1.0, np.ones(4), "class index or ABSTAIN"),
    ]
    for x, prediction, radius, sigma, message in bad:
        with pytest.raises(ValueError, match=message):
            shape.admit(memory, x, prediction, radius, sigma)
    assert len(memory) == 1
    memory.close()
    with pytest.raises(ValueError, match=r"unknown norm 'l3'.*\['l1', 'l2', 'linf'\]"):
        type(memory)(path, norm="l3")
    (tmp_path / "notes.txt").write_text("not a database, but long enough to look like one" * 40)
    with pytest.raises(ValueError, match="is not a certificate memory"):
        shape.open(tmp_path / "notes.txt")
    with pytest.raises(ValueError, match="is a directory"):
        shape.open(tmp_path)


@pytest.mark.parametrize(
    ("shape", "other"),
    [(shape, other) for shape in SHAPES for other in SHAPES if other != shape],
    ids=lambda shape: str(shape),
)
def test_a_file_of_another_geometry_is_refused_untouched(
    shape: Shape, other: Shape, tmp_path: Path
) -> None:
    path = tmp_path / "m.sqlite"
    with other.open(path) as memory:
        other.admit(memory, [0.0, 0.0], 0, 1.0, [1.0, 1.0])
    before = path.read_bytes()
    if other.kind == shape.kind:
        message = (
            rf"holds {other.norm} {shape.plural}, not {shape.norm} {shape.plural}; "
            rf"open it with norm='{other.norm}'"
        )
    else:
        message = (
            rf"holds a certificate memory of {other.norm} {other.plural}, not {shape.plural}; "
            rf"open it with {other.opened_by}\(path, norm='{other.norm}'\)"
        )
    with pytest.raises(ValueError, match=message):
        shape.open(path)
    assert path.read_bytes() == before
    with other.open(path) as memory:  # still the other's, and intact
        assert len(memory) == 1 and memory.violations() == []


@every_shape
@pytest.mark.parametrize(
    "tables",
    [
        ["CREATE TABLE entries (id INTEGER, name TEXT)"],
        ["CREATE TABLE users (name TEXT)", "INSERT INTO users VALUES ('ada')"],
        ["CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)", "CREATE TABLE t (x)"],
    ],
    ids=["entries of another kind", "other tables", "meta and more"],
)
def test_a_foreign_sqlite_file_is_refused_untouched(
    shape: Shape, tables: list[str], tmp_path: Path
) -> None:
    foreign = tmp_path / "foreign.sqlite"
    with sqlite3.connect(foreign) as db:
        for statement in tables:
            db.execute(statement)
    before = foreign.read_bytes()
    with pytest.raises(ValueError, match=r"another application.*left untouched"):
        shape.open(foreign)
    assert foreign.read_bytes() == before


@every_shape
def test_an_unknown_geometry_is_named(shape: Shape, tmp_path: Path) -> None:
    path = tmp_path / "m.sqlite"
    shape.open(path).close()
    with sqlite3.connect(path) as raw:
        raw.execute("UPDATE meta SET value = 'l2-cone' WHERE name = 'geometry'")
    with pytest.raises(ValueError, match="geometry 'l2-cone', which this version"):
        shape.open(path)


@every_shape
@pytest.mark.parametrize("what", ["file", "folder"])
def test_a_read_only_file_or_folder_is_named(
    shape: Shape, what: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Simulated (as root every file is writable); the next test uses real permissions."""
    folder = tmp_path / "ro"
    path = folder / "m.sqlite"
    if what == "file":
        shape.open(path).close()
    else:
        folder.mkdir()
    read_only = path if what == "file" else folder
    monkeypatch.setattr(storage.os, "access", lambda where, mode: Path(where) != read_only)
    before = path.read_bytes() if what == "file" else None
    message = re.escape(f"{read_only} is read-only, and the certificate memory")
    with pytest.raises(ValueError, match=message):
        shape.open(path)
    assert (path.read_bytes() if path.exists() else None) == before


@pytest.mark.skipif(sys.platform == "win32" or _is_root(), reason="root may write anywhere")
@every_shape
@pytest.mark.parametrize("what", ["file", "folder"])
def test_a_really_read_only_file_or_folder_is_named(
    shape: Shape, what: str, tmp_path: Path
) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    path = folder / "m.sqlite"
    shape.open(path).close()
    (path if what == "file" else folder).chmod(0o400 if what == "file" else 0o500)
    try:
        with pytest.raises(ValueError, match="read-only"):
            shape.open(path)
    finally:
        folder.chmod(0o700)
        path.chmod(0o600)


# -- the file ----------------------------------------------------------------------------------

#: The tables as the first memories (rsutils 0.1, before the engine was shared) created them.
FIRST_SCHEMA = """
CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE entries (
    id INTEGER PRIMARY KEY,
    key TEXT UNIQUE,
    prediction INTEGER NOT NULL,
    radius REAL NOT NULL,
    mc_prediction INTEGER NOT NULL,
    mc_radius REAL NOT NULL,
    action TEXT NOT NULL,
    center BLOB NOT NULL{extra}
);
"""


@every_shape
def test_the_file_format_is_that_of_the_first_memories(shape: Shape, tmp_path: Path) -> None:
    extra = ",\n    shape BLOB NOT NULL" if shape.kind != "ball" else ""
    old = tmp_path / "old.sqlite"
    with sqlite3.connect(old) as raw:  # a file written by the first memories, by hand
        raw.executescript(FIRST_SCHEMA.format(extra=extra))
        raw.execute("INSERT INTO meta VALUES ('geometry', ?)", (str(shape),))
        row = (1, "a", 0, 1.0, 0, 1.0, "kept", np.zeros(2, dtype=np.float32).tobytes())
        row += (np.ones(2, dtype=np.float32).tobytes(),) if extra else ()
        raw.execute(f"INSERT INTO entries VALUES ({', '.join('?' * len(row))})", row)
    with shape.open(old) as memory:
        assert memory.lookup(np.array([0.5, 0.0])) == 0
        answer = shape.admit(memory, [0.5, 0.0], 1, 2.0, [1.0, 1.0], key="b")
        assert (answer.prediction, answer.action) == (0, "adopted")
    new = tmp_path / "new.sqlite"
    shape.open(new).close()
    with sqlite3.connect(new) as raw, sqlite3.connect(old) as first:
        query = "SELECT type, name, tbl_name FROM sqlite_master ORDER BY name"
        assert raw.execute(query).fetchall() == first.execute(query).fetchall()
        columns = "SELECT name, type, \"notnull\", pk FROM pragma_table_info('entries')"
        assert raw.execute(columns).fetchall() == first.execute(columns).fetchall()
        assert raw.execute("SELECT * FROM meta").fetchall() == [("geometry", str(shape))]


@every_shape
def test_a_reopened_memory_holds_what_was_committed(shape: Shape, tmp_path: Path) -> None:
    path = tmp_path / "m.sqlite"
    sequence = _draws(seed=6, count=25)
    with shape.open(path) as memory:
        for i, row in enumerate(sequence):
            _admit(shape, memory, i, *row)
        stored = (memory.entries(), _stored(memory))
    copy = tmp_path / "copy.sqlite"
    copy_memory(path, copy)
    copy_memory(tmp_path / "elsewhere.sqlite", copy)  # an existing copy is kept
    for reopened in (path, copy):
        with shape.open(reopened) as memory:
            assert memory.entries().equals(stored[0])
            for column, again in zip(stored[1], _stored(memory), strict=True):
                np.testing.assert_array_equal(column, again)
            assert memory.violations() == []


# -- other processes ---------------------------------------------------------------------------

DRAWS = textwrap.dedent(
    """
    import numpy as np

    def draws(seed, count):
        rng = np.random.default_rng(seed)
        rows = []
        for _ in range(count):
            x, c = rng.uniform(-1, 1, 4), int(rng.integers(0, 3))
            rows.append((x, c, float(rng.uniform(0, 2)), 10 ** rng.uniform(-1, 1, 4)))
        return rows
    """
)
_namespace: dict = {}
exec(DRAWS, _namespace)
_draws = _namespace["draws"]

WRITER = DRAWS + textwrap.dedent(
    """
    import sys
    from rsutils import AnisotropicMemory, CertificateMemory

    seed, count, *shapes = sys.argv[1:]
    memories = []
    for shape in shapes:  # kind:norm:path
        kind, norm, path = shape.split(":", 2)
        opened = CertificateMemory if kind == "ball" else AnisotropicMemory
        memories.append((kind, opened(path, norm=norm)))
    for i, (x, c, r, sigma) in enumerate(draws(int(seed), int(count))):
        key = f"s{seed}-q{i}"
        for which, (kind, memory) in enumerate(memories):
            if kind == "ball":
                answer = memory.admit(x, c, r, key=key)
            else:
                answer = memory.admit(x, c, r, sigma, key=key)
            print(which, answer.entry, flush=True)
    """
)


def _run_writer(paths: dict[Shape, Path], seed: int, count: int) -> subprocess.Popen:
    """One process admitting the same draws to every memory of ``paths``, a draw to each
    memory in turn; it prints ``shape-index entry`` after each admission. One process
    serves every shape: the property is the memory's across processes, and a process
    costs seconds of imports."""
    shapes = [f"{shape.kind}:{shape.norm}:{path}" for shape, path in paths.items()]
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, str(seed), str(count), *shapes],
        stdout=subprocess.PIPE,
        text=True,
    )


def _memory_files(tmp_path: Path) -> dict[Shape, Path]:
    return {shape: tmp_path / f"{shape}.sqlite" for shape in SHAPES}


@pytest.mark.slow  # another process
def test_another_process_reads_the_same_memory(tmp_path: Path) -> None:
    paths = _memory_files(tmp_path)
    with _run_writer(paths, seed=1, count=40) as writer:
        assert writer.wait(timeout=180) == 0
    for shape, path in paths.items():
        # The same admissions replayed in this process give the same answers and inputs.
        replay = shape.open()
        for x, c, r, sigma in _draws(1, 40):
            shape.admit(replay, x, c, r, sigma)
        with shape.open(path) as reader:
            stored = reader.entries()
            assert len(stored) == 40 and stored["key"].tolist() == [f"s1-q{i}" for i in range(40)]
            columns = ["prediction", "radius", "mc_prediction", "mc_radius", "action"]
            assert stored[columns].reset_index(drop=True).equals(replay.entries()[columns])
            for column, again in zip(_stored(reader), _stored(replay), strict=True):
                np.testing.assert_array_equal(column, again)
            assert reader.violations() == [], shape
        assert set(replay.entries()["action"]) > {"kept"}, shape  # the draws exercised the rules


@pytest.mark.slow  # another process, killed
def test_a_killed_writer_leaves_a_readable_sound_memory(tmp_path: Path) -> None:
    paths = _memory_files(tmp_path)
    shapes = list(paths)
    committed: dict[Shape, int] = {}
    with _run_writer(paths, seed=2, count=100_000) as writer:
        assert writer.stdout is not None
        for _ in range(150 * len(shapes)):
            which, entry = writer.stdout.readline().split()
            committed[shapes[int(which)]] = int(entry)
        for shape, path in paths.items():  # a concurrent reader sees a sound memory
            with shape.open(path) as reader:
                assert len(reader) >= 150 and reader.violations() == [], shape
        writer.send_signal(signal.SIGKILL)
        writer.wait(timeout=60)
    for shape, path in paths.items():
        with sqlite3.connect(path) as raw:
            assert raw.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        with shape.open(path) as reopened:
            assert len(reopened) >= committed[shape]
            assert reopened.violations() == [], shape
            # And the memory keeps working after the crash.
            shape.admit(reopened, np.full(4, 5.0), 0, 0.5, np.ones(4), key="after-crash")
            assert reopened.violations() == [], shape


@pytest.mark.slow  # other processes
def test_two_writers_interleave_without_breaking_the_invariant(tmp_path: Path) -> None:
    paths = _memory_files(tmp_path)
    for shape, path in paths.items():
        shape.open(path).close()
    writers = [_run_writer(paths, seed=seed, count=60) for seed in (3, 4)]
    assert [w.wait(timeout=300) for w in writers] == [0, 0]
    for writer in writers:
        assert writer.stdout is not None
        writer.stdout.close()
    for shape, path in paths.items():
        with shape.open(path) as reader:
            assert len(reader) == 120, shape
            assert reader.violations() == [], shape
            shape.oracle(reader)
