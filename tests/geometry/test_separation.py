"""Separation of super-ellipsoids: sound (a "disjoint" has no common point) and exact.

The oracle is independent of the code under test: a linear program for p = 1 and ∞
(minimise the larger of the two gauges), and for p = 2 the Lagrangian dual of the same
problem, ``max_θ min_z θ g_A(z) + (1 − θ) g_B(z)`` for the squared gauges, whose inner
minimum is a closed form; every θ gives a lower bound, and its minimiser an upper one.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rsutils.checks.gauges import lp_gauge
from rsutils.geometry.separation import (
    contains,
    disjoint,
    far_apart,
    largest_nested_scale,
    largest_separated_scale,
    proves_disjoint,
    quick_proofs,
    scaled_distance,
    separating_normal,
)

NORMS = [1.0, 2.0, np.inf]


# -- the oracle ------------------------------------------------------------------------------


def _dual_gauge(delta, a, b) -> tuple[float, float]:
    """Lower and upper bounds on ``min_z max(‖z⊘a‖_2, ‖(z − delta)⊘b‖_2)``.

    ``z(θ)`` minimises ``θ g_A + (1 − θ) g_B`` (squared gauges); the optimum is where
    ``g_A(z(θ)) = g_B(z(θ))``, found by bisection. At any θ the dual value is a lower
    bound and ``max(g_A, g_B)(z(θ))`` an upper one.
    """
    wa, wb = 1 / a**2, 1 / b**2

    def point(logit: float):
        theta = 1 / (1 + np.exp(-logit))
        z = (1 - theta) * wb * delta / (theta * wa + (1 - theta) * wb)
        return theta, np.sum(z**2 * wa), np.sum((z - delta) ** 2 * wb)

    low, high = -80.0, 80.0
    for _ in range(200):  # g_A falls and g_B rises as θ grows
        middle = (low + high) / 2
        _, ga, gb = point(middle)
        low, high = (middle, high) if ga > gb else (low, middle)
    theta, ga, gb = point(low)
    dual = theta * ga + (1 - theta) * gb
    return float(np.sqrt(dual)), float(np.sqrt(max(ga, gb)))


def gauge_bounds(delta, a, b, p) -> tuple[float, float]:
    """Bounds on the smallest ``τ`` at which the closed regions scaled by ``τ`` meet.

    The open regions intersect iff this is < 1; they are disjoint iff it is ≥ 1.
    """
    delta, a, b = (np.asarray(v, dtype=np.float64) for v in (delta, a, b))
    if p == 2:
        return _dual_gauge(delta, a, b)
    value = lp_gauge(delta, a, b, p)
    return value * (1 - 1e-9), value * (1 + 1e-9)


def _random_pair(rng: np.random.Generator, d: int, decades: float):
    delta = rng.normal(size=d)
    a = 10 ** rng.uniform(-decades / 2, decades / 2, d)
    b = 10 ** rng.uniform(-decades / 2, decades / 2, d) * 10 ** rng.uniform(-1, 1)
    return delta, a, b


# -- hand cases ------------------------------------------------------------------------------


def test_two_boxes_touching_along_an_axis() -> None:
    a, b = np.array([1.0, 1.0]), np.array([1.0, 3.0])
    touching = np.array([2.0, 0.5])  # |Δ_0| = a_0 + b_0: the open boxes touch
    assert not disjoint(touching, a, b, np.inf)  # conservative within the rounding margin
    assert disjoint(touching * (1 + 1e-7), a, b, np.inf)
    assert not disjoint(touching * (1 - 1e-7), a, b, np.inf)
    w = separating_normal(touching * (1 + 1e-7), a, b, np.inf)
    np.testing.assert_array_equal(w, [1.0, 0.0])
    assert proves_disjoint(touching * (1 + 1e-7), a, b, np.inf, w)


def test_two_ellipses_whose_semi_axes_add_up_to_the_distance() -> None:
    a, b = np.array([2.0, 0.5]), np.array([1.0, 1.0])  # A reaches x = 2, B reaches x = 3 - 1
    for p in NORMS:
        assert disjoint(np.array([3.0 * (1 + 1e-7), 0.0]), a, b, p)
        assert not disjoint(np.array([3.0 * (1 - 1e-7), 0.0]), a, b, p)
    # Across the short axis of A the sum is 0.5 + 1.
    assert disjoint(np.array([0.0, 1.5 * (1 + 1e-7)]), a, b, 2)
    assert not disjoint(np.array([0.0, 1.5 * (1 - 1e-7)]), a, b, 2)


def test_an_elongated_ellipse_reaching_past_a_round_one() -> None:
    long = np.array([10.0, 0.1])  # reaches x = ±10 but only |y| < 0.1
    # A disc of radius 0.1 at (5, 0.15): it meets the long ellipse (|y| < 0.0866 at x = 5).
    assert not disjoint(np.array([5.0, 0.15]), long, np.array([0.1, 0.1]), 2)
    # The same disc at (5, 0.2) misses it: 0.2 - 0.1 = 0.1 > 0.0866.
    assert disjoint(np.array([5.0, 0.2]), long, np.array([0.1, 0.1]), 2)
    # Its bounding ball (radius 10) would not have decided either.
    assert not far_apart(np.array([[5.0, 0.2]]), np.array([10.0]), 0.1, 2)[0]


def test_points_and_the_open_boundary() -> None:
    a = np.array([1.0, 2.0])
    zero = np.zeros(2)
    assert disjoint(np.array([1e-30, 0.0]), zero, zero, 2)  # two distinct points
    assert not disjoint(zero, zero, zero, 2)  # the same point
    assert not disjoint(np.array([0.5, 0.0]), a, zero, 2)  # a point inside
    assert disjoint(np.array([1.0 + 1e-8, 0.0]), a, zero, 2)
    for p in NORMS:  # a point on the boundary is outside the open region, decided exactly
        assert not contains(np.zeros((1, 2)), a[None], np.ones(1), np.array([1.0, 0.0]), p)[0]
        assert contains(np.zeros((1, 2)), a[None], np.ones(1), np.array([0.999, 0.0]), p)[0]
    # The centre belongs to its region, even at scale 0.
    assert contains(np.zeros((1, 2)), a[None], np.zeros(1), np.zeros(2), 2)[0]


def test_an_unknown_norm_is_named() -> None:
    with pytest.raises(ValueError, match="p = 1, 2 and inf"):
        disjoint(np.ones(2), np.ones(2), np.ones(2), 3)
    with pytest.raises(ValueError, match="unknown norm 'l3'"):
        disjoint(np.ones(2), np.ones(2), np.ones(2), "l3")


# -- against the oracle -----------------------------------------------------------------------


@pytest.mark.parametrize("p", NORMS)
def test_exact_at_the_boundary_for_shapes_four_decades_apart(p) -> None:
    # Scale both regions to just below / just above touching: the answer must flip.
    rng = np.random.default_rng(int(p) if np.isfinite(p) else 9)
    for _ in range(60):
        d = int(rng.integers(2, 4))
        delta, a, b = _random_pair(rng, d, decades=4)
        low, high = gauge_bounds(delta, a, b, p)
        assert high <= low * (1 + 1e-7)
        assert disjoint(delta, a * low * (1 - 1e-6), b * low * (1 - 1e-6), p)
        assert not disjoint(delta, a * high * (1 + 1e-6), b * high * (1 + 1e-6), p)


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(NORMS),
    st.integers(2, 3),
    st.integers(0, 2**32 - 1),
    st.floats(0.2, 5.0),
)
def test_disjoint_agrees_with_the_oracle(p, d, seed, scale) -> None:
    delta, a, b = _random_pair(np.random.default_rng(seed), d, decades=3)
    a, b = a * scale, b * scale
    low, high = gauge_bounds(delta, a, b, p)
    said = disjoint(delta, a, b, p)
    if said:  # sound: no common point
        assert high >= 1 - 1e-9
    if low >= 1 + 1e-6:  # exact: clearly apart means proven apart
        assert said
    assert disjoint(-delta, b, a, p) == said  # symmetric


@pytest.mark.parametrize("p", NORMS)
def test_no_sampled_point_lies_in_two_regions_said_disjoint(p) -> None:
    # A brute-force check with no optimiser: sample each region, test membership directly.
    rng = np.random.default_rng(5)
    for _ in range(40):
        delta, a, b = _random_pair(rng, 2, decades=2)
        if not disjoint(delta, a, b, p):
            continue
        for centre, axes, other_centre, other_axes in ((0, a, delta, b), (delta, b, 0, a)):
            z = centre + axes * rng.uniform(-1, 1, (20_000, 2))
            inside = np.linalg.norm(z / axes - centre / axes, ord=p, axis=1) < 1
            in_other = np.linalg.norm((z - other_centre) / other_axes, ord=p, axis=1) < 1
            assert not (inside & in_other).any()


@pytest.mark.parametrize("p", NORMS)
def test_cheap_filters_only_claim_what_is_true(p) -> None:
    rng = np.random.default_rng(7)
    pairs = [_random_pair(rng, 3, decades=3) for _ in range(80)]
    delta, a, b = (np.array(v) * 2 for v in zip(*pairs, strict=True))
    b = b * 0.3
    proven, normals = quick_proofs(delta, a, b, p)
    apart = far_apart(delta, np.max(a, axis=1), np.max(b, axis=1), p)
    assert proven.any() and (~proven).any()
    for i in np.flatnonzero(proven | apart):
        assert gauge_bounds(delta[i], a[i], b[i], p)[1] >= 1 - 1e-9
    for i in np.flatnonzero(proven):
        assert proves_disjoint(delta[i], a[i], b[i], p, normals[i])


# -- scales ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("p", NORMS)
def test_largest_separated_scale_is_sound_and_tight(p) -> None:
    rng = np.random.default_rng(11)
    for _ in range(40):
        delta, a, shape = _random_pair(rng, 3, decades=4)
        delta = delta * 3
        t, ok = largest_separated_scale(delta, a, shape, p, upper=1e6)
        if not ok:
            assert gauge_bounds(delta, a, np.ones(3) * 1e-12, p)[1] <= 1 + 1e-6  # centre inside
            continue
        assert t > 0
        assert disjoint(delta, a, t * shape, p)
        assert gauge_bounds(delta, a, t * shape, p)[1] >= 1 - 1e-9  # sound
        assert gauge_bounds(delta, a, t * (1 + 1e-6) * shape, p)[0] < 1  # tight
        # The cap is honoured, and a capped scale is proven.
        capped, ok = largest_separated_scale(delta, a, shape, p, upper=t / 2)
        assert ok and capped == t / 2


def test_largest_separated_scale_when_the_centre_is_inside() -> None:
    a = np.array([1.0, 1.0])
    for p in NORMS:
        assert largest_separated_scale(np.array([0.5, 0.0]), a, a, p, 5.0) == (0.0, False)
        # From a stored point the answer is the scaled distance to it.
        t, ok = largest_separated_scale(np.array([3.0, 4.0]), np.zeros(2), np.ones(2), p, 9.0)
        exact = np.linalg.norm([3.0, 4.0], ord=p)
        assert ok and exact * (1 - 1e-8) <= t < exact


@pytest.mark.parametrize("p", NORMS)
def test_largest_nested_scale_fits_inside(p) -> None:
    rng = np.random.default_rng(13)
    stored_shape = 10 ** rng.uniform(-1, 1, 2)
    for _ in range(30):
        new_shape = 10 ** rng.uniform(-1, 1, 2)
        delta = stored_shape * rng.uniform(-0.6, 0.6, 2)
        t = largest_nested_scale(delta, stored_shape, 1.0, new_shape, p)
        assert t >= 0
        if t == 0:
            assert np.linalg.norm(delta / stored_shape, ord=p) >= 0.4
            continue
        # Sample the new region (its boundary included): every point is in the stored one.
        directions = rng.normal(size=(4000, 2))
        directions /= np.linalg.norm(directions, ord=p, axis=1, keepdims=True)
        z = delta + t * new_shape * directions * rng.uniform(0, 1, (4000, 1)) ** 0.5
        assert (np.linalg.norm(z / stored_shape, ord=p, axis=1) <= 1 + 1e-12).all()
        if p != 2:  # exact for l1 and linf: a vertex of a larger region leaves
            vertices = np.array([[1, 0], [-1, 0], [0, 1], [0, -1]], dtype=float)
            if p == np.inf:
                vertices = np.array([[1, 1], [1, -1], [-1, 1], [-1, -1]], dtype=float)
            corners = delta + t * (1 + 1e-6) * new_shape * vertices
            assert (np.linalg.norm(corners / stored_shape, ord=p, axis=1) > 1).any()
    assert largest_nested_scale(np.array([2.0, 0.0]), np.ones(2), 1.0, np.ones(2), p) == 0.0


# -- points ---------------------------------------------------------------------------------------


def _rational_inside(x, centre, shape, scale, p) -> bool:
    terms = [abs(Fraction(float(u)) - Fraction(float(c))) / Fraction(float(s))
             for u, c, s in zip(x, centre, shape, strict=True)]  # fmt: skip
    if p == 1:
        return sum(terms) < Fraction(scale)
    if p == 2:
        return sum(t * t for t in terms) < Fraction(scale) ** 2
    return max(terms) < Fraction(scale)


@pytest.mark.parametrize("p", NORMS)
def test_contains_is_exact_on_the_boundary(p) -> None:
    # Points put on the boundary in float64, then rounded to float32: some land inside,
    # some outside, by less than any float64 test can see.
    rng = np.random.default_rng(17)
    centres = rng.uniform(-1, 1, (200, 3)).astype(np.float32)
    shapes = (10 ** rng.uniform(-2, 2, (200, 3))).astype(np.float32)
    scales = rng.uniform(0.5, 2, 200)
    directions = rng.normal(size=(200, 3))
    directions /= np.linalg.norm(directions, ord=p, axis=1, keepdims=True)
    points = (centres + scales[:, None] * shapes * directions).astype(np.float32)
    answers = []
    for i in range(200):
        got = contains(centres[i : i + 1], shapes[i : i + 1], scales[i : i + 1], points[i], p)[0]
        assert got == _rational_inside(points[i], centres[i], shapes[i], scales[i], p)
        answers.append(got)
    assert 0 < sum(answers) < 200
    dist = scaled_distance(centres, shapes, points[0], p)
    assert dist[0] == pytest.approx(scales[0], rel=1e-6)
