"""Anisotropic smoothing (UCAN Theorem 2, Corollaries 3-4) against closed forms."""

import math

import numpy as np
import pytest
import torch
from scipy import stats

from rsutils.anisotropic.noise import Anisotropic, certified_region
from rsutils.checks.classifiers import LinearClassifier
from rsutils.core.noise import FAMILIES, Gaussian, Laplace, make_noise
from rsutils.core.radius import rules
from rsutils.core.smooth import Smooth

W = torch.tensor([1.0, -2.0, 0.5, 3.0])
SIGMA = torch.tensor([0.3, 1.5, 0.8, 0.6])
MU = torch.tensor([0.2, -0.1, 0.0, 0.05])
X = torch.tensor([0.4, 0.1, -0.3, 0.2])


def noise_for(rule, scale=1.0):
    return make_noise(rule.family, scale, **({"a": 12.0} if rule.params else {}))


@pytest.mark.parametrize("mu", [None, MU], ids=["mu=0", "mu"])
def test_monte_carlo_pA_matches_the_closed_form(mu) -> None:
    model = LinearClassifier(W, b=-0.1)
    smooth = Smooth(model, 2, Anisotropic(Gaussian(1.0), SIGMA, mu), input_range=None)
    n = 200_000
    counts = smooth.sample_counts(X, n, 10_000, seed=1)
    p = model.anisotropic_probability(X, SIGMA, mu)
    assert abs(counts[1] / n - p) < 4 * math.sqrt(p * (1 - p) / n)


def test_mu_moves_pA() -> None:
    model = LinearClassifier(W, b=-0.1)
    assert model.anisotropic_probability(X, SIGMA, MU) != pytest.approx(
        model.anisotropic_probability(X, SIGMA), abs=1e-3
    )


@pytest.mark.parametrize("mu", [None, MU], ids=["mu=0", "mu"])
def test_certified_region_is_sound_and_tight_along_the_worst_direction(mu) -> None:
    """The Monte Carlo region lies inside the exact one, where the smoothed class of the
    linear classifier is constant; the exact one ends exactly where the class flips."""
    model = LinearClassifier(W, b=-0.1)
    noise = Anisotropic(Gaussian(1.0), SIGMA, mu)
    cert = Smooth(model, 2, noise, input_range=None).certify(X, 100, 20_000, 0.001, seed=0)
    assert cert.prediction == int(model.anisotropic_probability(X, SIGMA, mu) > 0.5)
    exact = model.anisotropic_region_radius(X, SIGMA, mu)
    assert cert.region_radius <= exact
    worst = model.anisotropic_worst_perturbation(X, SIGMA, mu)
    scaled = float((worst / SIGMA).norm())
    assert scaled == pytest.approx(exact, rel=1e-9)

    def smoothed_class(delta: torch.Tensor) -> int:
        return int(model.anisotropic_probability(X + delta, SIGMA, mu) > 0.5)

    assert smoothed_class(worst * (1 - 1e-6)) == cert.prediction
    assert smoothed_class(worst * (1 + 1e-6)) != cert.prediction
    # Random perturbations inside the certified region never flip the class.
    rng = np.random.default_rng(0)
    u = rng.standard_normal((2000, 4))
    u *= (rng.uniform(size=(2000, 1)) ** 0.25) / np.linalg.norm(u, axis=1, keepdims=True)
    for row in u:
        delta = torch.as_tensor(row) * SIGMA.double() * cert.region_radius
        assert smoothed_class(delta.float()) == cert.prediction


def test_certificate_reports_inscribed_radius_and_alm() -> None:
    model = LinearClassifier(W, b=-0.1)
    cert = Smooth(model, 2, Anisotropic(Gaussian(0.5), SIGMA), input_range=None).certify(
        X, 100, 5000, 0.001, seed=0
    )
    R = 0.5 * stats.norm.ppf(cert.pA_lower)
    assert cert.region_radius == pytest.approx(R, rel=1e-12)
    assert cert.radius == pytest.approx(float(SIGMA.min()) * R, rel=1e-6)
    assert cert.alm == pytest.approx(stats.gmean(SIGMA.double().numpy()) * R, rel=1e-12)
    assert cert.radius <= cert.alm


@pytest.mark.parametrize("rule", rules(), ids=lambda r: f"{r.family}-{r.norm}")
def test_all_ones_sigma_gives_the_isotropic_radii(rule) -> None:
    base = noise_for(rule, 0.7)
    wrapped = Anisotropic(base, torch.ones(10))
    pA = np.linspace(0.5, 0.999, 50)
    iso = base.radius(pA, norm=rule.norm, dim=10)
    for method in (wrapped.radius, wrapped.region_radius, wrapped.alm):
        np.testing.assert_allclose(method(pA, norm=rule.norm, dim=10), iso, rtol=1e-14)


def test_isotropic_certificates_have_equal_radius_region_and_alm() -> None:
    model = LinearClassifier(W, b=-0.1)
    noise = Gaussian(0.5)
    cert = Smooth(model, 2, noise, input_range=None).certify(X, 100, 5000, 0.001, seed=0)
    assert cert.radius == cert.region_radius == cert.alm
    region = certified_region(noise, cert.region_radius, X.shape)
    assert region.inscribed_radius() == region.alm() == cert.radius
    assert np.all(region.sigma == 1.0) and region.norm == "l2"


def test_region_of_a_certificate_is_the_scaled_ball() -> None:
    noise = Anisotropic(Gaussian(1.0), SIGMA)
    region = noise.region(2.0, (4,))
    same = certified_region(noise, 2.0, (4,))
    assert np.array_equal(same.sigma, region.sigma) and same.radius == region.radius
    assert region.inscribed_radius() == pytest.approx(2.0 * float(SIGMA.min()))
    assert region.contains(np.array([0.0, 2.9, 0.0, 0.0]))  # sigma_2 = 1.5: reaches 3.0
    assert not region.contains(np.array([0.61, 0.0, 0.0, 0.0]))  # sigma_1 = 0.3: only 0.6


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_draws_are_mu_plus_sigma_times_the_base_draws(family) -> None:
    base = make_noise(family, 0.5, **({"a": 40.0} if family == "power_law" else {}))
    noise = Anisotropic(base, SIGMA, MU)
    plain = base.sample((7, 4), torch.Generator().manual_seed(3), dtype=torch.float64)
    wrapped = noise.sample((7, 4), torch.Generator().manual_seed(3), dtype=torch.float64)
    torch.testing.assert_close(wrapped, MU.double() + SIGMA.double() * plain)


def test_per_dimension_spread_follows_sigma() -> None:
    noise = Anisotropic(Gaussian(2.0), SIGMA, MU)
    z = noise.sample((200_000, 4), torch.Generator().manual_seed(0), dtype=torch.float64)
    std = 2.0 * SIGMA.double()
    se_mean = std / math.sqrt(len(z))
    assert bool(((z.mean(0) - MU.double()).abs() < 4 * se_mean).all())
    se_std = std / math.sqrt(2 * len(z))
    assert bool(((z.std(0) - std).abs() < 4 * se_std).all())


def test_sigma_broadcasts_over_channels_on_images() -> None:
    sigma = torch.rand(1, 5, 5) + 0.5
    noise = Anisotropic(Gaussian(1.0), sigma)
    z = noise.sample((3, 2, 5, 5), torch.Generator().manual_seed(0))
    assert z.shape == (3, 2, 5, 5)
    assert noise.full_sigma((2, 5, 5)).shape == (50,)


def test_bad_parameters_name_the_fix() -> None:
    with pytest.raises(ValueError, match=r"positive in every dimension.*clamp"):
        Anisotropic(Gaussian(1.0), torch.tensor([1.0, 0.0]))
    with pytest.raises(ValueError, match=r"NaN or infinite"):
        Anisotropic(Gaussian(1.0), torch.tensor([1.0, float("nan")]))
    with pytest.raises(TypeError, match=r"already anisotropic"):
        Anisotropic(Anisotropic(Gaussian(1.0), torch.ones(2)), torch.ones(2))
    with pytest.raises(ValueError, match=r"does not broadcast"):
        Anisotropic(Gaussian(1.0), torch.ones(3), torch.zeros(2))
    noise = Anisotropic(Laplace(1.0), torch.ones(3))
    with pytest.raises(ValueError, match=r"shape of one input"):
        noise.sample((2, 4), torch.Generator())


def test_equal_parameters_compare_equal_and_repr_identifies_them() -> None:
    a = Anisotropic(Gaussian(1.0), SIGMA, MU)
    b = Anisotropic(Gaussian(1.0), SIGMA.clone(), MU.clone())
    c = Anisotropic(Gaussian(1.0), SIGMA * 1.01, MU)
    assert a == b and hash(a) == hash(b) and repr(a) == repr(b)
    assert a != c and repr(a) != repr(c)


def test_dataset_log_records_region_radius_and_alm(cnn, tmp_path) -> None:
    from rsutils import CertifySettings, Dataset, certify_dataset, spatial_pattern
    from rsutils.logs.runner import ANISOTROPIC_COLUMNS

    images = Dataset(
        "fashion-mnist", "test", torch.rand(6, 1, 28, 28), torch.arange(6), tuple("abcdefghij")
    )
    sigma = spatial_pattern(28, 28, kappa=1.0, iota=0.5)
    noise = Anisotropic(Gaussian(0.3), sigma)
    settings = CertifySettings(n0=20, n=200, alpha=0.01, seed=0, batch_size=64)
    smooth = Smooth(cnn, 10, noise)
    log = certify_dataset(smooth, images, range(6), tmp_path / "a.tsv", settings, progress=False)
    assert list(log.columns) == ANISOTROPIC_COLUMNS
    certified = log[log.predict >= 0]
    np.testing.assert_allclose(certified.radius, float(sigma.min()) * certified.region_radius)
    np.testing.assert_allclose(
        certified.alm, stats.gmean(sigma.flatten()) * certified.region_radius
    )
    # Another sigma is another run: resuming into this log is refused.
    other = Anisotropic(Gaussian(0.3), sigma * 1.1)
    with pytest.raises(ValueError, match=r"different settings \(noise\)"):
        certify_dataset(Smooth(cnn, 10, other), images, range(6), tmp_path / "a.tsv", settings)
