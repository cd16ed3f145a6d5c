"""Certified regions of anisotropic smoothing: membership, inscribed ball, volume, ALM."""

import numpy as np
import pytest
from scipy.special import gammaln
from scipy.stats import gmean

from rsutils.geometry.superellipsoid import (
    SuperEllipsoid,
    geometric_mean,
    log_unit_ball_volume,
    monte_carlo_volume,
)

NORMS = ["l1", "l2", "linf"]


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("d", [2, 3, 5])
def test_theorem_6_volume_matches_monte_carlo(norm: str, d: int) -> None:
    sigma = np.linspace(0.4, 1.7, d)
    region = SuperEllipsoid(sigma, 0.9, norm)
    estimate, se = monte_carlo_volume(region, 400_000, seed=d)
    assert abs(estimate - region.volume()) < 4 * se


def test_unit_ball_volumes_are_the_known_ones() -> None:
    for d in (1, 2, 3, 10, 784):
        assert log_unit_ball_volume(d, 2.0) == pytest.approx(
            d / 2 * np.log(np.pi) - gammaln(d / 2 + 1), rel=1e-12
        )
        assert log_unit_ball_volume(d, 1.0) == pytest.approx(d * np.log(2) - gammaln(d + 1))
        assert log_unit_ball_volume(d, np.inf) == pytest.approx(d * np.log(2))


def test_alm_equals_radius_when_isotropic() -> None:
    for norm in NORMS:
        region = SuperEllipsoid(np.ones(784), 0.37, norm)
        assert region.alm() == pytest.approx(0.37, rel=1e-15)
        assert region.inscribed_radius() == region.alm()


def test_alm_at_least_the_inscribed_radius() -> None:
    rng = np.random.default_rng(0)
    for _ in range(100):
        sigma = rng.lognormal(size=50)
        region = SuperEllipsoid(sigma, 1.3)
        assert region.alm() >= region.inscribed_radius()
        assert region.alm() == pytest.approx(gmean(sigma) * 1.3, rel=1e-12)


def test_alm_is_finite_and_exact_for_imagenet_dimension() -> None:
    d = 3 * 224 * 224  # 150,528
    sigma = np.where(np.arange(d) % 2 == 0, 0.1, 10.0)  # geometric mean exactly 1
    assert np.prod(sigma[: d // 2 : 1][sigma[: d // 2] < 1]) == 0.0  # the naive product underflows
    region = SuperEllipsoid(sigma, 0.5, "l2")
    assert region.alm() == pytest.approx(0.5, rel=1e-12)
    # log V = log V_unit(d, 2) + sum(log sigma) + d log R, with sum(log sigma) = 0 here.
    assert region.log_volume() == pytest.approx(log_unit_ball_volume(d, 2.0) + d * np.log(0.5))
    assert np.isfinite(region.log_volume())
    assert region.volume() == 0.0  # the volume itself is below the float range
    assert geometric_mean(np.full(d, 3.0)) == pytest.approx(3.0, rel=1e-12)


@pytest.mark.parametrize("norm", NORMS)
def test_inscribed_ball_is_inside_and_largest(norm: str) -> None:
    rng = np.random.default_rng(1)
    sigma = rng.uniform(0.2, 2.0, size=6)
    region = SuperEllipsoid(sigma, 0.8, norm)
    r = region.inscribed_radius()
    p = {"l1": 1, "l2": 2, "linf": np.inf}[norm]
    u = rng.standard_normal((5000, 6))
    u /= np.linalg.norm(u, ord=p, axis=1, keepdims=True)
    assert region.contains(u * r * (1 - 1e-9)).all()
    e = region.worst_direction()
    assert not region.contains(e * r * (1 + 1e-9))
    assert region.contains(e * r * (1 - 1e-9))


def test_membership_is_the_scaled_norm() -> None:
    region = SuperEllipsoid(np.array([1.0, 4.0]), 1.0, "l2")
    assert region.contains(np.array([[0.0, 3.9], [0.9, 0.0]])).all()
    assert not region.contains(np.array([[1.0, 0.0], [0.0, 4.0], [0.8, 2.5]])).any()


def test_bad_input_is_rejected() -> None:
    with pytest.raises(ValueError, match=r"positive"):
        SuperEllipsoid(np.array([1.0, -1.0]), 1.0)
    with pytest.raises(ValueError, match=r"radius"):
        SuperEllipsoid(np.ones(2), float("nan"))
    with pytest.raises(ValueError, match=r"unknown norm"):
        SuperEllipsoid(np.ones(2), 1.0, "l3")
    with pytest.raises(ValueError, match=r"numbers per row"):
        SuperEllipsoid(np.ones(2), 1.0).contains(np.ones(3))
