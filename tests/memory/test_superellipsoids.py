"""The memory of super-ellipsoids: its rules on hand-made shapes, sigma, the pairs helper."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rsutils import ABSTAIN, AnisotropicMemory
from rsutils.memory import anisotropic_conflicting_pairs

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
    np.testing.assert_array_equal(memory.shapes, [long, ROUND, ROUND, long, ROUND])


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


def test_a_bad_sigma_is_named_before_anything_is_written(tmp_path: Path) -> None:
    memory = AnisotropicMemory(tmp_path / "m.sqlite")
    memory.admit(np.zeros(4), 0, 1.0, np.ones(4))
    with pytest.raises(ValueError, match="sigma has 3 elements but x has 4"):
        memory.admit(np.zeros(4), 0, 1.0, np.ones(3))
    with pytest.raises(ValueError, match="sigma must hold finite numbers > 0"):
        memory.admit(np.zeros(4), 0, 1.0, np.array([1.0, 0.0, 1.0, 1.0]))
    with pytest.raises(ValueError, match="sigma must hold finite numbers > 0"):
        memory.admit(np.zeros(4), 0, 1.0, np.array([1.0, np.inf, 1.0, 1.0]))
    with pytest.raises(ValueError, match="float32"):
        memory.admit(np.zeros(4), 0, 1.0, np.array([1.0, 1e-50, 1.0, 1.0]))
    with pytest.raises(ValueError, match="need their shape sigma"):
        memory.admit_region(np.zeros(4), 0, 1.0)
    assert len(memory) == 1
    memory.close()


@pytest.mark.parametrize(("norm", "p"), [("l2", 2), ("l1", 1), ("linf", np.inf)])
def test_high_dimensional_regions_with_shapes_four_decades_apart(norm, p) -> None:
    # Fashion-MNIST-sized inputs; each scale is drawn around the scaled distance to an
    # earlier input, so that most regions start out overlapping another.
    rng = np.random.default_rng(3)
    memory = AnisotropicMemory(norm=norm)
    assert memory.p == p
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
