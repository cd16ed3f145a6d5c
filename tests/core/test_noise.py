"""Noise families: moments with CLT tolerances, determinism, validation."""

import math

import numpy as np
import pytest
import torch
from scipy import stats

from rsutils.core.noise import (
    ExponentialLinf,
    Gaussian,
    Laplace,
    PowerLawLinf,
    UniformCube,
    make_noise,
)

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


def sup_norms(noise, d: int, draws: int = 100_000) -> np.ndarray:
    z = noise.sample((draws, d), torch.Generator().manual_seed(0), dtype=torch.float64)
    return z.abs().amax(dim=1).numpy()


def test_exponential_linf_radial_part_is_gamma_d() -> None:
    """Density ∝ exp(-‖z‖∞/λ): the cube of radius ρ has surface ∝ ρ^(d-1), so ‖z‖∞ ~ Gamma(d, λ)."""
    assert (
        stats.kstest(sup_norms(ExponentialLinf(0.5), 6), stats.gamma(6, scale=0.5).cdf).pvalue
        > 1e-4
    )


def test_exponential_linf_in_one_dimension_is_laplace() -> None:
    z = ExponentialLinf(0.3).sample((N,), torch.Generator().manual_seed(1), dtype=torch.float64)
    assert stats.kstest(z.numpy(), stats.laplace(scale=0.3).cdf).pvalue > 1e-4


def test_power_law_radial_part_is_beta_prime() -> None:
    """Density ∝ (1 + ‖z‖∞/λ)^(-a): ‖z‖∞/λ ~ BetaPrime(d, a - d)."""
    rho = sup_norms(PowerLawLinf(0.5, a=9.5), 6) / 0.5
    assert stats.kstest(rho, stats.betaprime(6, 3.5).cdf).pvalue > 1e-4


def test_cube_mixtures_are_symmetric_and_deterministic() -> None:
    for noise in (ExponentialLinf(1.0), PowerLawLinf(1.0, a=10.0)):
        z = noise.sample((100_000, 4), torch.Generator().manual_seed(2), dtype=torch.float64)
        assert (z.mean(0).abs() < 4 * z.std(0) / np.sqrt(len(z))).all()
        again = noise.sample((100_000, 4), torch.Generator().manual_seed(2), dtype=torch.float64)
        assert torch.equal(z, again)


def test_power_law_needs_its_exponent_above_the_dimension() -> None:
    with pytest.raises(ValueError, match=r"pass a=\.\.\."):
        make_noise("power_law", 1.0)
    with pytest.raises(ValueError, match=r"a > d.*pass e.g. a=6"):
        PowerLawLinf(1.0, a=3.0).sample((5, 4), torch.Generator())
    with pytest.raises(ValueError, match=r"no parameters"):
        make_noise("gaussian", 1.0, a=3.0)


@pytest.mark.parametrize(
    "noise",
    [Gaussian(0.7), Laplace(0.7), UniformCube(0.7), ExponentialLinf(0.7), PowerLawLinf(0.7, a=9)],
    ids=lambda n: type(n).__name__,
)
def test_log_density_matches_the_stated_density(noise) -> None:
    z = np.array([[0.1, -0.2, 0.3], [0.5, 0.0, -0.6]])
    closed = {
        Gaussian: lambda v: -np.sum(v**2) / (2 * 0.49),
        Laplace: lambda v: -np.sum(np.abs(v)) / 0.7,
        UniformCube: lambda v: 0.0 if np.max(np.abs(v)) <= 0.7 else -np.inf,
        ExponentialLinf: lambda v: -np.max(np.abs(v)) / 0.7,
        PowerLawLinf: lambda v: -9 * np.log1p(np.max(np.abs(v)) / 0.7),
    }[type(noise)]
    np.testing.assert_allclose(noise.log_density(z), [closed(row) for row in z])


def test_sigma_not_positive() -> None:
    with pytest.raises(ValueError, match=r"sigma must be a positive finite number"):
        Gaussian(sigma=0)
