"""The anisotropic memory: its invariant, its rules, and its persistence (as the ball memory's)."""

from __future__ import annotations

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

from rsutils import ABSTAIN, CertificateMemory
from rsutils.anisotropic.memory import AnisotropicMemory, anisotropic_conflicting_pairs
from rsutils.checks.gauges import lp_gauge

ROUND = np.ones(2)


def test_kept_shrunk_adopted() -> None:
    memory = AnisotropicMemory()
    long = np.array([2.0, 0.5])  # an ellipse reaching x = ±2 and y = ±0.5
    first = memory.admit(np.array([0.0, 0.0]), 0, 1.0, long)
    assert (first.prediction, first.radius, first.action) == (0, 1.0, "kept")
    # A disc of class 1 at (3, 0) with radius 2.5 overlaps: it shrinks to 3 - 2 = 1.
    shrunk = memory.admit(np.array([3.0, 0.0]), 1, 2.5, ROUND)
    assert (shrunk.prediction, shrunk.action) == (1, "shrunk")
    assert shrunk.radius == pytest.approx(1.0, rel=1e-7) and shrunk.radius <= 1.0
    # Class 1 at (1, 0), inside the ellipse: adopts 0 and fits inside it. The triangle
    # inequality gives (1 - 0.5) / max(1/2, 1/0.5) = 0.25.
    adopted = memory.admit(np.array([1.0, 0.0]), 1, 5.0, ROUND)
    assert (adopted.prediction, adopted.action) == (0, "adopted")
    assert adopted.radius == pytest.approx(0.25, rel=1e-12) and adopted.radius <= 0.25
    assert (adopted.mc_prediction, adopted.mc_radius) == (1, 5.0)
    # Same class inside an existing region: nothing to change.
    same = memory.admit(np.array([0.2, 0.0]), 0, 0.3, long)
    assert (same.prediction, same.radius, same.action) == (0, 0.3, "kept")
    # Above the thin ellipse a round region of another class fits where a ball of the
    # ellipse's largest semi-axis would not: y = 1.0 - 0.4 clears 0.5.
    above = memory.admit(np.array([0.0, 1.0]), 2, 0.4, ROUND)
    assert (above.prediction, above.radius, above.action) == (2, 0.4, "kept")
    assert memory.violations() == []
    assert memory.entries()["action"].tolist() == ["kept", "shrunk", "adopted", "kept", "kept"]


def test_boxes_nest_exactly() -> None:
    memory = AnisotropicMemory(norm="linf")
    memory.admit(np.zeros(2), 0, 1.0, np.array([2.0, 0.5]))
    adopted = memory.admit(np.array([1.0, 0.0]), 1, 5.0, ROUND)
    # The box [0, 2] x [-0.5, 0.5] around x = 1 fits with half-width 0.5 in both axes.
    assert (adopted.prediction, adopted.radius, adopted.action) == (0, 0.5, "adopted")


def test_abstention_outside_and_inside_regions() -> None:
    memory = AnisotropicMemory()
    memory.admit(np.array([0.0, 0.0]), 2, 1.0, np.array([0.1, 3.0]))
    outside = memory.admit(np.array([0.5, 0.0]), ABSTAIN, 0.0, ROUND)
    assert (outside.prediction, outside.action) == (ABSTAIN, "abstained")
    assert len(memory.radii) == 1 and len(memory) == 2  # stored, but without a region
    inside = memory.admit(np.array([0.0, 2.0]), ABSTAIN, 0.0, ROUND)
    assert (inside.prediction, inside.radius, inside.action) == (2, 0.0, "adopted")


def test_a_point_answer_is_avoided_by_later_regions() -> None:
    memory = AnisotropicMemory(norm="l1")
    memory.admit(np.array([1.0, 0.0]), 0, 0.0, ROUND)  # answered, radius 0: the point itself
    later = memory.admit(np.array([0.0, 0.0]), 1, 3.0, np.array([10.0, 1.0]))
    assert later.radius <= 0.1 and later.action == "shrunk"  # 1 / 10 along x
    assert later.radius == pytest.approx(0.1, rel=1e-7)
    assert memory.lookup(np.array([1.0, 0.0])) == 0


def test_a_point_on_the_boundary_keeps_its_class() -> None:
    # (2, 0) lies on the boundary of the open ellipse: outside it, so class 1 stands, as
    # an answer of radius 0 (no region around it misses the ellipse).
    memory = AnisotropicMemory()
    memory.admit(np.zeros(2), 0, 1.0, np.array([2.0, 0.5]))
    boundary = memory.admit(np.array([2.0, 0.0]), 1, 1.0, ROUND)
    assert (boundary.prediction, boundary.radius, boundary.action) == (1, 0.0, "shrunk")
    assert memory.lookup(np.array([2.0, 0.0])) == 1 and memory.violations() == []


def test_repeated_key_returns_the_stored_answer() -> None:
    memory = AnisotropicMemory()
    first = memory.admit(np.array([0.0, 0.0]), 0, 1.0, ROUND, key="img-7")
    again = memory.admit(np.array([0.0, 0.0]), 1, 0.2, ROUND, key="img-7")  # e.g. another seed
    assert again.repeated and (again.prediction, again.radius) == (first.prediction, first.radius)
    assert len(memory) == 1
    with pytest.raises(ValueError, match="admitted for another input"):
        memory.admit(np.array([9.0, 9.0]), 1, 0.2, ROUND, key="img-7")


def test_bad_input_is_named(tmp_path: Path) -> None:
    memory = AnisotropicMemory(tmp_path / "m.sqlite")
    memory.admit(np.zeros(4), 0, 1.0, np.ones(4))
    with pytest.raises(ValueError, match="inputs of 4 elements"):
        memory.admit(np.zeros(5), 0, 1.0, np.ones(5))
    with pytest.raises(ValueError, match="NaN"):
        memory.admit(np.array([0, np.nan, 0, 0]), 0, 1.0, np.ones(4))
    with pytest.raises(ValueError, match="sigma has 3 elements but x has 4"):
        memory.admit(np.zeros(4), 0, 1.0, np.ones(3))
    with pytest.raises(ValueError, match="sigma must hold finite numbers > 0"):
        memory.admit(np.zeros(4), 0, 1.0, np.array([1.0, 0.0, 1.0, 1.0]))
    with pytest.raises(ValueError, match="sigma must hold finite numbers > 0"):
        memory.admit(np.zeros(4), 0, 1.0, np.array([1.0, np.inf, 1.0, 1.0]))
    with pytest.raises(ValueError, match="float32"):
        memory.admit(np.zeros(4), 0, 1.0, np.array([1.0, 1e-50, 1.0, 1.0]))
    with pytest.raises(ValueError, match="radius must be finite"):
        memory.admit(np.zeros(4), 0, -1.0, np.ones(4))
    with pytest.raises(ValueError, match="abstention"):
        memory.admit(np.zeros(4), ABSTAIN, 1.0, np.ones(4))
    memory.close()
    with pytest.raises(ValueError, match=r"unknown norm 'l3'.*\['l1', 'l2', 'linf'\]"):
        AnisotropicMemory(tmp_path / "m.sqlite", norm="l3")
    with pytest.raises(ValueError, match=r"holds l2 super-ellipsoids, not l1 ones; .*norm='l2'"):
        AnisotropicMemory(tmp_path / "m.sqlite", norm="l1")
    (tmp_path / "notes.txt").write_text("not a database, but long enough to look like one" * 40)
    with pytest.raises(ValueError, match="is not a certificate memory"):
        AnisotropicMemory(tmp_path / "notes.txt")


def test_ball_memories_and_foreign_databases_are_refused_untouched(tmp_path: Path) -> None:
    balls = tmp_path / "balls.sqlite"
    CertificateMemory(balls, norm="l1").close()
    before = balls.read_bytes()
    with pytest.raises(
        ValueError, match=r"memory of l1 balls.*CertificateMemory\(path, norm='l1'\)"
    ):
        AnisotropicMemory(balls, norm="l1")
    assert balls.read_bytes() == before
    ours = tmp_path / "ours.sqlite"
    AnisotropicMemory(ours).close()
    with pytest.raises(ValueError, match="another application"):
        CertificateMemory(ours)  # the ball memory does not mistake it for its own
    foreign = tmp_path / "foreign.sqlite"
    with sqlite3.connect(foreign) as db:
        db.execute("CREATE TABLE entries (id INTEGER, name TEXT)")
    before = foreign.read_bytes()
    with pytest.raises(ValueError, match=r"another application.*left untouched"):
        AnisotropicMemory(foreign)
    assert foreign.read_bytes() == before


# -- the invariant, property-based ---------------------------------------------------------

coordinate = st.integers(-8, 8).map(lambda k: k / 2)  # a coarse grid: many exact ties
certificates = st.lists(
    st.tuples(
        st.lists(coordinate, min_size=3, max_size=3),
        st.integers(ABSTAIN, 2),
        st.one_of(st.just(0.0), st.floats(1e-6, 3)),  # the oracle squares them
        st.lists(st.sampled_from([0.01, 0.1, 0.5, 1.0, 3.0, 100.0]), min_size=3, max_size=3),
    ),
    min_size=1,
    max_size=20,
)


def _ellipsoid_gauge(delta, a, b) -> float:
    """The same for p = 2: the point of ``z(θ)`` (tangency curve) where both gauges agree."""
    wa, wb = 1 / a**2, 1 / b**2
    low, high = -80.0, 80.0
    for _ in range(200):
        theta = 1 / (1 + np.exp(-(low + high) / 2))
        z = (1 - theta) * wb * delta / (theta * wa + (1 - theta) * wb)
        ga, gb = np.sum(z**2 * wa), np.sum((z - delta) ** 2 * wb)
        low, high = ((low + high) / 2, high) if ga > gb else (low, (low + high) / 2)
    return float(np.sqrt(max(ga, gb)))


def _independent_check(memory: AnisotropicMemory) -> None:
    """The invariant re-derived: each pair of different classes has no common point."""
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


def _admit_and_check(memory: AnisotropicMemory, sequence) -> None:
    for point, prediction, radius, sigma in sequence:
        radius = 0.0 if prediction == ABSTAIN else radius
        answer = memory.admit(np.array(point), prediction, radius, np.array(sigma))
        assert answer.radius <= answer.mc_radius  # the memory never enlarges a region
        if answer.prediction != ABSTAIN:
            # The input lies in its own region and in no region of another class.
            assert memory.lookup(np.array(point)) == answer.prediction
    assert memory.violations() == []
    for center, label in zip(memory.centers, memory.classes, strict=True):
        assert memory.lookup(center) == label  # later regions did not take it


@pytest.mark.parametrize("norm", ["l2", "l1", "linf"])
@settings(max_examples=150, deadline=None)
@given(sequence=certificates)
def test_no_two_regions_of_different_classes_intersect(norm, sequence) -> None:
    memory = AnisotropicMemory(norm=norm)
    _admit_and_check(memory, sequence)
    _independent_check(memory)


@settings(max_examples=40, deadline=None)
@given(certificates)
def test_without_conflicts_the_memory_changes_nothing(sequence) -> None:
    # 1000 units per step, regions reach at most 3 x 100 = 300: the Monte Carlo answers stand.
    memory = AnisotropicMemory()
    for step, (point, prediction, radius, sigma) in enumerate(sequence):
        radius = 0.0 if prediction == ABSTAIN else radius
        answer = memory.admit(np.array(point) + 1000.0 * step, prediction, radius, np.array(sigma))
        assert (answer.prediction, answer.radius) == (prediction, radius)


@pytest.mark.parametrize(("norm", "p"), [("l2", 2), ("l1", 1), ("linf", np.inf)])
def test_high_dimensional_regions_with_shapes_four_decades_apart(norm, p) -> None:
    # Fashion-MNIST-sized inputs; each scale is drawn around the scaled distance to an
    # earlier input, so that most regions start out overlapping another.
    rng = np.random.default_rng(3)
    memory = AnisotropicMemory(norm=norm)
    inputs: list[np.ndarray] = []
    for _ in range(40):
        x, sigma = rng.uniform(0, 1, 784), 10 ** rng.uniform(-2, 2, 784)
        scale = 1.0
        if inputs:
            earlier = inputs[int(rng.integers(len(inputs)))]
            scale = float(rng.uniform(0.5, 2.0) * np.linalg.norm((x - earlier) / sigma, ord=p))
        memory.admit(x, int(rng.integers(0, 3)), scale, sigma)
        inputs.append(x)
    assert set(memory.entries()["action"]) >= {"kept", "shrunk"}
    assert memory.violations() == []


def test_a_subnormal_scale_is_handled() -> None:
    memory = AnisotropicMemory()
    memory.admit(np.zeros(3), 0, 2.2250738585e-313, np.full(3, 0.01))
    answer = memory.admit(np.array([0.0, 0.0, 0.5]), 1, 1.0, np.array([0.01, 0.01, 0.5]))
    assert 0 < answer.radius < 1.0 and memory.violations() == []


# -- persistence -----------------------------------------------------------------------------

WRITER = textwrap.dedent(
    """
    import sys
    import numpy as np
    from rsutils.anisotropic.memory import AnisotropicMemory

    memory = AnisotropicMemory(sys.argv[1])
    rng = np.random.default_rng(int(sys.argv[2]))
    for i in range(int(sys.argv[3])):
        answer = memory.admit(
            rng.uniform(-3, 3, 8), int(rng.integers(0, 3)), float(rng.uniform(0, 2)),
            10 ** rng.uniform(-1, 1, 8), key=f"s{sys.argv[2]}-q{i}",
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
    replay = AnisotropicMemory()
    rng = np.random.default_rng(1)
    for _ in range(40):
        replay.admit(
            rng.uniform(-3, 3, 8),
            int(rng.integers(0, 3)),
            float(rng.uniform(0, 2)),
            10 ** rng.uniform(-1, 1, 8),
        )
    with AnisotropicMemory(path) as reader:
        stored = reader.entries()
        assert len(stored) == 40 and stored["key"].tolist() == [f"s1-q{i}" for i in range(40)]
        columns = ["prediction", "radius", "mc_prediction", "mc_radius", "action"]
        assert stored[columns].reset_index(drop=True).equals(replay.entries()[columns])
        np.testing.assert_array_equal(reader.centers, replay.centers)
        np.testing.assert_array_equal(reader.shapes, replay.shapes)
        assert reader.violations() == []
    assert set(replay.entries()["action"]) > {"kept"}  # the sequence exercised the rules


@pytest.mark.slow  # other processes
def test_a_killed_writer_leaves_a_readable_sound_memory(tmp_path: Path) -> None:
    path = tmp_path / "memory.sqlite"
    with _run_writer(path, seed=2, count=100_000) as writer:
        assert writer.stdout is not None
        committed = [writer.stdout.readline() for _ in range(150)]
        with AnisotropicMemory(path) as reader:  # a concurrent reader sees a sound memory
            assert len(reader) >= 150 and reader.violations() == []
        writer.send_signal(signal.SIGKILL)
        writer.wait(timeout=60)
    last_committed = int(committed[-1])
    with sqlite3.connect(path) as raw:
        assert raw.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    with AnisotropicMemory(path) as reopened:
        assert len(reopened) >= last_committed
        assert reopened.violations() == []
        reopened.admit(np.zeros(8), 0, 0.5, np.ones(8), key="after-crash")
        assert reopened.violations() == []


@pytest.mark.slow  # other processes
def test_two_writers_interleave_without_breaking_the_invariant(tmp_path: Path) -> None:
    path = tmp_path / "memory.sqlite"
    AnisotropicMemory(path).close()
    writers = [_run_writer(path, seed=seed, count=60) for seed in (3, 4)]
    assert [w.wait(timeout=180) for w in writers] == [0, 0]
    for writer in writers:
        writer.stdout.close()
    with AnisotropicMemory(path) as reader:
        assert len(reader) == 120
        assert reader.violations() == []


# -- analysis helpers ------------------------------------------------------------------------


def test_conflicting_pairs_lists_the_overlaps_of_different_classes() -> None:
    points = np.array([[0.0, 0.0], [3.0, 0.0], [0.0, 1.0], [10.0, 0.0], [1.0, 0.0]])
    shapes = np.array([[2.0, 0.5], [1.0, 1.0], [1.0, 1.0], [1.0, 1.0], [1.0, 1.0]])
    classes = np.array([0, 1, 1, 0, ABSTAIN])
    radii = np.array([1.0, 1.5, 0.5, 8.0, 0.0])
    # 0-1 overlap (2 + 1.5 > 3); 0-2 touch (0.5 + 0.5 = 1): touching counts, conservatively;
    # 1-3 overlap (1.5 + 8 > 7), 2-3 do not (distance sqrt(101) > 8.5); the abstention is skipped.
    assert anisotropic_conflicting_pairs(points, shapes, classes, radii) == [(0, 1), (0, 2), (1, 3)]
    radii[2] = 0.5 * (1 - 1e-7)
    assert anisotropic_conflicting_pairs(points, shapes, classes, radii) == [(0, 1), (1, 3)]
    # In linf the box of 0 spans [-2, 2] x [-0.5, 0.5]; the box of 2 at (0, 1) is apart.
    assert anisotropic_conflicting_pairs(points, shapes, classes, radii, "linf") == [(0, 1), (1, 3)]


@pytest.mark.parametrize("norm", ["l2", "l1", "linf"])
def test_a_region_shrunk_to_almost_nothing_keeps_the_invariant(norm) -> None:
    """Found by hypothesis: a class-1 region next to a class-0 box shrinks to ~1e-16."""
    points = [([0.0, 0.0, 0.0], 0, 0.0, [0.01] * 3)] * 3 + [([0.5, 0.0, 0.0], 1, 0.0, [0.01] * 3)]
    points += [([0.0, 0.0, 0.0], 0, 1.0, [0.5, 0.01, 0.01]), ([0.5, 0.0, 0.0], 1, 1.0, [0.01] * 3)]
    memory = AnisotropicMemory(norm=norm)
    _admit_and_check(memory, points)
    _independent_check(memory)
    assert memory.radii[-1] < 1e-6
