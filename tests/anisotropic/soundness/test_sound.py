"""The radius that holds for the deployed classifier: sigma ≡ c, R/(1 + L), and L = 0
where the noise does not depend on the input."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch
from scipy.stats import norm

from rsutils import Gaussian
from rsutils.anisotropic.generated import GeneratedSmooth, generator_fingerprint
from rsutils.anisotropic.generators import (
    CertificationWiseGenerator,
    DatasetWiseGenerator,
    FixedNoise,
    WithoutOffset,
)
from rsutils.anisotropic.soundness.lipschitz import mu_lipschitz_bound
from rsutils.anisotropic.soundness.sound import (
    ConstantScale,
    deployed_lipschitz,
    deployed_radius,
    sound_log,
)


@pytest.fixture
def generator() -> CertificationWiseGenerator:
    torch.manual_seed(3)
    g = CertificationWiseGenerator(1, gamma=1.0, mu_bound=0.25, width=4, growth=4)
    with torch.no_grad():  # away from the uniform start: mu and sigma vary per pixel
        for p in g.parameters():
            p.add_(0.2 * torch.randn_like(p))
    return g.eval()


def test_constant_scale_keeps_mu_and_sets_sigma_to_c(generator) -> None:
    x = torch.rand(3, 1, 28, 28)
    wrapped = ConstantScale(generator, 0.75).eval()
    with torch.no_grad():
        mu, sigma = wrapped(x)
        inner_mu, inner_sigma = generator(x)
    assert torch.equal(mu, inner_mu) and float(inner_sigma.std()) > 0
    assert torch.equal(sigma, torch.full_like(x, 0.75))
    assert wrapped.depends_on_input and wrapped.kind == "certification-constant-sigma"
    other = generator_fingerprint(ConstantScale(generator, 0.8))
    assert generator_fingerprint(wrapped) != other  # c is in the state
    with pytest.raises(TypeError, match="not saved"):
        wrapped.settings()
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="c must be a finite number > 0"):
            ConstantScale(generator, bad)
    with pytest.raises(TypeError, match="NoiseGenerator"):
        ConstantScale(torch.nn.Identity(), 1.0)


def test_the_deployed_radius_is_c_lambda_phi_inverse_over_one_plus_l(cnn, generator) -> None:
    """Certify with sigma ≡ c: the log's radius is c·λ·Φ⁻¹(p̲A), and the deployed one
    that divided by 1 + L (the closed form, with scipy's Φ⁻¹)."""
    c, lam = 0.75, 0.5
    smooth = GeneratedSmooth(cnn, 10, Gaussian(lam), ConstantScale(generator, c).eval())
    x = torch.rand(1, 28, 28, generator=torch.Generator().manual_seed(0))
    cert = smooth.certify(x, n0=20, n=200, alpha=0.01, seed=1)
    assert cert.prediction >= 0, "the tiny model abstained; pick another input"
    closed = c * lam * norm.ppf(cert.pA_lower)
    assert cert.radius == pytest.approx(closed, rel=1e-9)
    assert cert.region_radius == pytest.approx(lam * norm.ppf(cert.pA_lower), rel=1e-9)
    L = deployed_lipschitz(ConstantScale(generator, c), (28, 28))
    assert L == mu_lipschitz_bound(generator, (28, 28)).value > 0
    log = pd.DataFrame(
        {"radius": [cert.radius], "region_radius": [cert.region_radius], "alm": [cert.alm]}
    )
    sound = sound_log(log, L)
    assert sound["radius"][0] == pytest.approx(closed / (1 + L), rel=1e-12)
    assert sound["region_radius"][0] == pytest.approx(cert.region_radius / (1 + L), rel=1e-12)
    assert sound["alm"][0] == pytest.approx(sound["radius"][0], rel=1e-6)  # isotropic c
    assert float(deployed_radius(cert.radius, L)) == sound["radius"][0]


def test_input_independent_noise_keeps_its_radius(generator) -> None:
    fixed = FixedNoise(torch.rand(1, 28, 28) + 0.5, torch.full((1, 28, 28), 0.2))
    dataset = DatasetWiseGenerator((1, 28, 28), hidden=(4,))
    for g in (fixed, dataset, WithoutOffset(dataset), ConstantScale(fixed, 2.0)):
        assert deployed_lipschitz(g, (28, 28)) == 0.0
    assert deployed_lipschitz(ConstantScale(WithoutOffset(generator), 1.0), (28, 28)) == 0.0
    log = pd.DataFrame({"radius": [0.0, 0.4], "region_radius": [0.0, 0.8], "alm": [0.0, 0.9]})
    assert sound_log(log, 0.0).equals(log)


def test_input_dependent_sigma_has_no_deployed_radius(generator) -> None:
    assert deployed_lipschitz(generator, (28, 28)) is None
    assert deployed_lipschitz(WithoutOffset(generator), (28, 28)) is None
    log = pd.DataFrame({"radius": [0.4]})
    with pytest.raises(ValueError, match="ConstantScale"):
        sound_log(log, deployed_lipschitz(generator, (28, 28)))
    for bad in (-1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="finite number ≥ 0"):
            deployed_radius(0.4, bad)
    with pytest.raises(ValueError, match="no 'radius' column"):
        sound_log(pd.DataFrame({"R": [0.4]}), 1.0)
    with pytest.raises(ValueError, match="sigma_spread"):
        sound_log(log, 1.0, sigma_spread=0.5)


def test_an_anisotropic_sigma_divides_the_region_by_one_plus_kappa_l() -> None:
    log = pd.DataFrame({"radius": [0.2], "region_radius": [0.4], "alm": [0.6]})
    sound = sound_log(log, 3.0, sigma_spread=2.0)
    assert list(sound.iloc[0]) == pytest.approx([0.2 / 4, 0.4 / 7, 0.6 / 7])


def linear_case(L: float, tight: bool, seed: int):
    """``mu(z) = A z`` with ``‖A‖₂ = L``, a linear base classifier ``sign(u·w)``, and a
    point ``x``. The smoothed ``h`` of a linear classifier is ``sign(u·w)`` with exact
    radius ``|u·w|/‖u‖`` at ``w`` (Cohen et al.'s radius at the exact p_A), so the
    certificate at ``x`` is ``R = |u·(x + Ax)|/‖u‖`` and the deployed ``G(z) =
    sign(u·(I + A)z)`` is constant exactly on the ball of radius
    ``|u·(I + A)x| / ‖(I + A)ᵀu‖`` around ``x``. ``tight`` takes ``A = L·uuᵀ/‖u‖²``, the
    case where ``R/(1 + L)`` is that radius."""
    rng = np.random.default_rng(seed)
    d = 6
    u, x = rng.normal(size=d), rng.normal(size=d)
    if tight:
        A = L * np.outer(u, u) / (u @ u)
    else:
        A = rng.normal(size=(d, d))
        A *= L / np.linalg.norm(A, 2)
    R = abs(u @ (x + A @ x)) / np.linalg.norm(u)
    M = np.eye(d) + A
    exact = abs(u @ M @ x) / np.linalg.norm(M.T @ u)
    return u, x, M, R, exact


@pytest.mark.parametrize("seed", range(5))
def test_r_over_one_plus_l_is_sound_for_a_linear_offset(seed) -> None:
    L = 0.5 + seed
    *_, R, exact = linear_case(L, tight=False, seed=seed)
    assert float(deployed_radius(R, L)) <= exact * (1 + 1e-12)


def test_r_over_one_plus_l_is_attained_and_beyond_it_the_class_changes() -> None:
    L = 2.0
    u, x, M, R, exact = linear_case(L, tight=True, seed=0)
    radius = float(deployed_radius(R, L))
    assert radius == pytest.approx(exact, rel=1e-12)
    towards = -np.sign(u @ M @ x) * (M.T @ u) / np.linalg.norm(M.T @ u)  # steepest way
    for factor, same in ((0.99, True), (1.01, False)):
        z = x + factor * radius * towards
        assert bool(np.sign(u @ M @ z) == np.sign(u @ M @ x)) is same
