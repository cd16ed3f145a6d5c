"""The memory-based certifier: its invariant, its three rules, and its persistence."""

from __future__ import annotations

import math
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rsutils import ABSTAIN
from rsutils.ddrs.memory import CertificateMemory, closest_conflict, conflicting_pairs, replay


def test_kept_shrunk_adopted() -> None:
    memory = CertificateMemory()
    first = memory.admit(np.array([0.0, 0.0]), 0, 1.0)
    assert (first.prediction, first.radius, first.action) == (0, 1.0, "kept")
    # Class 1 at distance 3 with radius 2.5 would overlap: shrinks to 3 - 1 = 2.
    shrunk = memory.admit(np.array([3.0, 0.0]), 1, 2.5)
    assert (shrunk.prediction, shrunk.action) == (1, "shrunk")
    assert shrunk.radius == pytest.approx(2.0, abs=1e-12) and shrunk.radius <= 2.0
    # Class 1 at (0.5, 0), inside the class-0 ball: adopts 0 and fits inside it.
    adopted = memory.admit(np.array([0.5, 0.0]), 1, 5.0)
    assert (adopted.prediction, adopted.action) == (0, "adopted")
    assert adopted.radius == pytest.approx(0.5, abs=1e-12) and adopted.radius <= 0.5
    assert (adopted.mc_prediction, adopted.mc_radius) == (1, 5.0)
    # Same class inside an existing region: nothing to change.
    same = memory.admit(np.array([0.2, 0.0]), 0, 0.3)
    assert (same.prediction, same.radius, same.action) == (0, 0.3, "kept")
    assert memory.violations() == []
    assert memory.entries()["action"].tolist() == ["kept", "shrunk", "adopted", "kept"]


def test_abstention_outside_and_inside_regions() -> None:
    memory = CertificateMemory()
    memory.admit(np.array([0.0, 0.0]), 2, 1.0)
    outside = memory.admit(np.array([5.0, 0.0]), ABSTAIN, 0.0)
    assert (outside.prediction, outside.action) == (ABSTAIN, "abstained")
    assert len(memory.radii) == 1 and len(memory) == 2  # stored, but without a region
    inside = memory.admit(np.array([0.1, 0.0]), ABSTAIN, 0.0)
    assert (inside.prediction, inside.radius, inside.action) == (2, 0.0, "adopted")


def test_a_point_answer_is_avoided_by_later_regions() -> None:
    memory = CertificateMemory()
    memory.admit(np.array([1.0, 0.0]), 0, 0.0)  # answered, radius 0: the point itself
    later = memory.admit(np.array([0.0, 0.0]), 1, 3.0)
    assert later.radius <= 1.0 and later.action == "shrunk"
    assert memory.lookup(np.array([1.0, 0.0])) == 0


def test_repeated_key_returns_the_stored_answer() -> None:
    memory = CertificateMemory()
    first = memory.admit(np.array([0.0, 0.0]), 0, 1.0, key="img-7")
    again = memory.admit(np.array([0.0, 0.0]), 1, 0.2, key="img-7")  # e.g. another seed
    assert again.repeated and (again.prediction, again.radius) == (first.prediction, first.radius)
    assert len(memory) == 1
    with pytest.raises(ValueError, match="admitted for another input"):
        memory.admit(np.array([9.0, 9.0]), 1, 0.2, key="img-7")


def test_bad_input_is_named(tmp_path: Path) -> None:
    memory = CertificateMemory(tmp_path / "m.sqlite")
    memory.admit(np.zeros(4), 0, 1.0)
    with pytest.raises(ValueError, match="inputs of 4 elements"):
        memory.admit(np.zeros(5), 0, 1.0)
    with pytest.raises(ValueError, match="NaN"):
        memory.admit(np.array([0, np.nan, 0, 0]), 0, 1.0)
    with pytest.raises(ValueError, match="radius must be finite"):
        memory.admit(np.zeros(4), 0, -1.0)
    with pytest.raises(ValueError, match="abstention"):
        memory.admit(np.zeros(4), ABSTAIN, 1.0)
    memory.close()
    with pytest.raises(ValueError, match=r"unknown norm 'l3'.*\['l1', 'l2', 'linf'\]"):
        CertificateMemory(tmp_path / "m.sqlite", norm="l3")
    with pytest.raises(ValueError, match=r"holds l2 balls, not l1 balls; open it with norm='l2'"):
        CertificateMemory(tmp_path / "m.sqlite", norm="l1")
    (tmp_path / "notes.txt").write_text("not a database, but long enough to look like one" * 40)
    with pytest.raises(ValueError, match="is not a certificate memory"):
        CertificateMemory(tmp_path / "notes.txt")


# -- the invariant, property-based ---------------------------------------------------------

coordinate = st.floats(-4, 4, allow_nan=False, width=32)
certificates = st.lists(
    st.tuples(
        st.lists(coordinate, min_size=3, max_size=3),
        st.integers(ABSTAIN, 2),
        st.floats(0, 5, allow_nan=False),
    ),
    min_size=1,
    max_size=25,
)


def _independent_check(memory: CertificateMemory, distance) -> None:
    """The invariant, re-derived in pure Python (tolerance 1e-9 for float rounding)."""
    regions = list(zip(memory.centers.tolist(), memory.classes, memory.radii, strict=True))
    for i, (x_i, c_i, r_i) in enumerate(regions):
        for x_j, c_j, r_j in regions[i + 1 :]:
            if c_i == c_j:
                continue
            gap = distance(x_i, x_j)
            assert gap > 0, "two different answers at the same input"
            assert r_i + r_j <= gap * (1 + 1e-9), "regions of different classes intersect"


@settings(max_examples=200, deadline=None)
@given(certificates)
def test_no_two_regions_of_different_classes_intersect(sequence) -> None:
    memory = CertificateMemory()
    _admit_and_check(memory, sequence)
    _independent_check(memory, math.dist)


@pytest.mark.parametrize(
    ("norm", "distance"),
    [
        ("l1", lambda a, b: sum(abs(u - v) for u, v in zip(a, b, strict=True))),
        ("linf", lambda a, b: max(abs(u - v) for u, v in zip(a, b, strict=True))),
    ],
)
@settings(max_examples=60, deadline=None)
@given(sequence=certificates)
def test_the_invariant_holds_for_l1_and_linf_balls(norm, distance, sequence) -> None:
    memory = CertificateMemory(norm=norm)
    _admit_and_check(memory, sequence)
    _independent_check(memory, distance)


def _admit_and_check(memory: CertificateMemory, sequence) -> None:
    for point, prediction, radius in sequence:
        radius = 0.0 if prediction == ABSTAIN else radius
        answer = memory.admit(np.array(point), prediction, radius)
        assert answer.radius <= answer.mc_radius  # the memory never enlarges a region
        if answer.prediction != ABSTAIN:
            # The input lies in its own region and in no region of another class.
            assert memory.lookup(np.array(point)) == answer.prediction
    assert memory.violations() == []
    geometry = memory.geometry
    for center, label, radius in zip(memory.centers, memory.classes, memory.radii, strict=True):
        # Every stored input is in its own region, and later regions did not take it.
        assert geometry.contains(geometry.distances(center[None], center), radius).all()
        assert memory.lookup(center) == label


@settings(max_examples=100, deadline=None)
@given(certificates)
def test_without_conflicts_the_memory_changes_nothing(sequence) -> None:
    # Put the certificates far apart (100 units per step, radii at most 5): the memory
    # must return exactly the Monte Carlo answers.
    memory = CertificateMemory()
    for step, (point, prediction, radius) in enumerate(sequence):
        radius = 0.0 if prediction == ABSTAIN else radius
        answer = memory.admit(np.array(point) + 100.0 * step, prediction, radius)
        assert (answer.prediction, answer.radius) == (prediction, radius)


# -- persistence -----------------------------------------------------------------------------

WRITER = textwrap.dedent(
    """
    import sys
    import numpy as np
    from rsutils.ddrs.memory import CertificateMemory, closest_conflict, conflicting_pairs, replay

    memory = CertificateMemory(sys.argv[1])
    rng = np.random.default_rng(int(sys.argv[2]))
    for i in range(int(sys.argv[3])):
        answer = memory.admit(
            rng.uniform(-3, 3, 8), int(rng.integers(0, 3)), float(rng.uniform(0, 2)),
            key=f"s{sys.argv[2]}-q{i}",
        )
        print(answer.entry, flush=True)
    """
)


def _run_writer(path: Path, seed: int, count: int) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path), str(seed), str(count)],
        stdout=subprocess.PIPE,
        text=True,
    )


@pytest.mark.slow  # other processes
def test_another_process_reads_the_same_memory(tmp_path: Path) -> None:
    path = tmp_path / "memory.sqlite"
    with _run_writer(path, seed=1, count=40) as writer:
        assert writer.wait(timeout=120) == 0
    # The same admissions replayed in this process give the same answers and inputs.
    replay = CertificateMemory()
    rng = np.random.default_rng(1)
    for _ in range(40):
        replay.admit(rng.uniform(-3, 3, 8), int(rng.integers(0, 3)), float(rng.uniform(0, 2)))
    with CertificateMemory(path) as reader:
        stored = reader.entries()
        assert len(stored) == 40 and stored["key"].tolist() == [f"s1-q{i}" for i in range(40)]
        columns = ["prediction", "radius", "mc_prediction", "mc_radius", "action"]
        pd_equal = stored[columns].reset_index(drop=True).equals(replay.entries()[columns])
        assert pd_equal
        np.testing.assert_array_equal(reader.centers, replay.centers)
        assert reader.violations() == []
    assert set(replay.entries()["action"]) > {"kept"}  # the sequence exercised the rules


@pytest.mark.slow  # other processes
def test_a_killed_writer_leaves_a_readable_sound_memory(tmp_path: Path) -> None:
    path = tmp_path / "memory.sqlite"
    with _run_writer(path, seed=2, count=100_000) as writer:
        assert writer.stdout is not None
        committed = [writer.stdout.readline() for _ in range(150)]
        with CertificateMemory(path) as reader:  # a concurrent reader sees a sound memory
            assert len(reader) >= 150 and reader.violations() == []
        writer.send_signal(signal.SIGKILL)
        writer.wait(timeout=60)
    last_committed = int(committed[-1])
    with sqlite3.connect(path) as raw:
        assert raw.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    with CertificateMemory(path) as reopened:
        assert len(reopened) >= last_committed
        assert reopened.violations() == []
        # And the memory keeps working after the crash.
        reopened.admit(np.zeros(8), 0, 0.5, key="after-crash")
        assert reopened.violations() == []


@pytest.mark.slow  # other processes
def test_two_writers_interleave_without_breaking_the_invariant(tmp_path: Path) -> None:
    path = tmp_path / "memory.sqlite"
    CertificateMemory(path).close()
    writers = [_run_writer(path, seed=seed, count=60) for seed in (3, 4)]
    assert [w.wait(timeout=180) for w in writers] == [0, 0]
    for writer in writers:
        writer.stdout.close()
    with CertificateMemory(path) as reader:
        assert len(reader) == 120
        assert reader.violations() == []


# -- analysis helpers ------------------------------------------------------------------------


def test_conflicting_pairs_lists_exactly_the_overlaps_of_different_classes() -> None:
    points = np.array([[0.0, 0.0], [1.5, 0.0], [0.0, 3.0], [10.0, 0.0], [1.0, 0.0]])
    classes = np.array([0, 1, 1, 0, ABSTAIN])
    radii = np.array([1.0, 1.0, 2.0, 100.0, 0.0])
    # 0-1 overlap (1 + 1 > 1.5); 0-2 touch only (1 + 2 = 3 is allowed for open balls);
    # 1-3 and 2-3 overlap (radius 100), 0-3 share a class; the abstention is ignored.
    assert conflicting_pairs(points, classes, radii) == [(0, 1), (1, 3), (2, 3)]
    # Closest pair relative to its radii: 1-3 at distance 8.5 with radii 1 + 100.
    assert closest_conflict(points, classes, radii) == pytest.approx(8.5 / 101)
    assert closest_conflict(points[[0, 2]], classes[[0, 2]], radii[[0, 2]]) == 1.0
    assert closest_conflict(points[:1], classes[:1], radii[:1]) == np.inf
    # In l1 the pair 0-1 is 1.5 apart as well, and 0-2 is 3 apart: the same pairs.
    assert conflicting_pairs(points, classes, radii, "l1") == [(0, 1), (1, 3), (2, 3)]
    # In linf the point (1, 1) is 1 from the origin: balls of radius 0.6 meet.
    corner = np.array([[0.0, 0.0], [1.0, 1.0]])
    assert conflicting_pairs(corner, np.array([0, 1]), np.array([0.6, 0.6]), "linf") == [(0, 1)]
    assert conflicting_pairs(corner, np.array([0, 1]), np.array([0.6, 0.6]), "l2") == []


def test_replay_in_any_order_is_sound_and_reports_rows_in_input_order() -> None:
    rng = np.random.default_rng(0)
    points = rng.uniform(-2, 2, (30, 2))
    predictions, radii = rng.integers(0, 3, 30), rng.uniform(0, 1.5, 30)
    forward = replay(points, predictions, radii, np.arange(30))
    backward = replay(points, predictions, radii, np.arange(30)[::-1])
    assert list(forward.index) == list(range(30)) == list(backward.index)
    assert forward.iloc[0].tolist() == [predictions[0], radii[0], "kept"]  # admitted first
    assert backward.iloc[29].tolist() == [predictions[29], radii[29], "kept"]
    for frame in (forward, backward):
        kept = frame["prediction"] != ABSTAIN
        pairs = conflicting_pairs(points[kept], frame["prediction"][kept], frame["radius"][kept])
        assert pairs == []
    assert not forward.equals(backward)  # with this many overlaps, order matters
