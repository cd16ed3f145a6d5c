"""The memory of ℓp balls: its rules on hand-made cases, and the analysis helpers."""

from __future__ import annotations

import numpy as np
import pytest

from rsutils import ABSTAIN, CertificateMemory
from rsutils.geometry.balls import NormBall
from rsutils.memory import closest_conflict, conflicting_pairs, replay


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


def test_the_memory_exposes_its_balls() -> None:
    memory = CertificateMemory(norm="l1")
    assert isinstance(memory.geometry, NormBall) and memory.geometry.name == "l1-ball"
    assert memory.norm == "l1" and memory.path is None
    with pytest.raises(ValueError, match=r"balls carry no per-region data.*AnisotropicMemory"):
        memory.admit_region(np.zeros(2), 0, 1.0, np.ones(2))
    assert len(memory) == 0


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
    with pytest.raises(ValueError, match="unknown norm 'l3'"):
        conflicting_pairs(points, classes, radii, "l3")


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
