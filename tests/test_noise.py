"""Noise families: moments with CLT tolerances, determinism, validation."""

import math

import numpy as np
import pytest
import torch
from scipy import stats

from rsutils.noise import Gaussian, Laplace, UniformCube, make_noise

N = 400_000


def draw(noise, seed: int = 0) -> np.ndarray:
    generator = torch.Generator().manual_seed(seed)
    return noise.sample((N,), generator, dtype=torch.float64).numpy()


@pytest.mark.parametrize(
    ("noise", "law"),
    [
        (Gaussian(0.5), stats.norm(scale=0.5)),
        (Laplace(0.3), stats.laplace(scale=0.3)),
        (UniformCube(0.7), stats.uniform(loc=-0.7, scale=1.4)),
    ],
    ids=["gaussian", "laplace", "uniform"],
)
def test_draws_follow_the_stated_law(noise, law) -> None:
    z = draw(noise)
    assert np.isfinite(z).all()
    # Kolmogorov–Smirnov at N draws: reject only at a tiny level (fixed seed).
    assert stats.kstest(z, law.cdf).pvalue > 1e-4
    # Mean and variance within 4 standard errors of the truth.
    assert abs(z.mean()) < 4 * law.std() / math.sqrt(N)
    var_se = math.sqrt((law.moment(4) - law.var() ** 2) / N)
    assert abs(z.var() - law.var()) < 4 * var_se


def test_uniform_cube_stays_in_the_cube() -> None:
    z = draw(UniformCube(0.7))
    assert z.min() >= -0.7 and z.max() < 0.7


def test_same_generator_state_same_draws() -> None:
    for noise in (Gaussian(1.0), Laplace(1.0), UniformCube(1.0)):
        np.testing.assert_array_equal(draw(noise, 3), draw(noise, 3))


@pytest.mark.parametrize("bad", [0.0, -0.25, float("nan"), float("inf")])
def test_non_positive_scale_is_rejected_with_the_fix(bad: float) -> None:
    with pytest.raises(ValueError, match=r"must be a positive finite number.*e.g. sigma=0.25"):
        Gaussian(bad)
    with pytest.raises(ValueError, match=r"positive finite"):
        make_noise("laplace", bad)


def test_unknown_family_names_the_known_ones() -> None:
    with pytest.raises(ValueError, match=r"gaussian.*laplace.*uniform"):
        make_noise("cauchy", 1.0)
