"""Norm balls for the memory: one norm vocabulary, exact predicates in floating point."""

import numpy as np
import pytest

from rsutils.geometry.balls import NormBall, norm_ball
from rsutils.geometry.norms import NORM_ORDERS, norm_order


def test_balls_are_named_by_the_norms_of_the_certificates() -> None:
    for norm in NORM_ORDERS:
        ball = norm_ball(norm)
        assert isinstance(ball, NormBall) and ball.norm == norm and ball.name == f"{norm}-ball"
        assert ball.order == norm_order(norm)
    with pytest.raises(ValueError, match=r"unknown norm 'cube'.*\['l1', 'l2', 'linf'\]"):
        norm_ball("cube")
    with pytest.raises(ValueError, match=r"unknown norm 'l3'"):
        norm_order("l3")


@pytest.mark.parametrize("norm", sorted(NORM_ORDERS))
def test_distances_are_the_norm_of_the_difference(norm) -> None:
    rng = np.random.default_rng(0)
    centers, x = rng.normal(size=(5, 4)), rng.normal(size=4)
    expected = np.linalg.norm(centers - x, ord=norm_order(norm), axis=1)
    np.testing.assert_allclose(norm_ball(norm).distances(centers, x), expected, rtol=1e-12)


def test_shrunk_regions_satisfy_their_predicates_bit_for_bit() -> None:
    ball = norm_ball("l2")
    dist, scales = np.array([0.3, 1.0 / 3.0, 2.0]), np.array([0.1, 0.2, 0.5])
    scale, possible = ball.shrink_to_avoid(dist, scales, 10.0)
    assert possible and ball.separated(dist, scales, scale).all()
    assert scale == pytest.approx(min(dist - scales), abs=1e-15)
    inside, possible = ball.shrink_to_fit(np.array([0.1]), np.array([0.4]), 10.0)
    assert possible and ball.nested(np.array([0.1]), np.array([0.4]), inside).all()
    assert not ball.shrink_to_avoid(np.array([0.05]), np.array([0.1]), 1.0)[1]  # centre inside
