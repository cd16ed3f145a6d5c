"""Sigma ascent (DDRS Algorithm 1) against models whose optimal noise level is exact."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy.stats import norm

from rsutils.checks.classifiers import ProbitBand
from rsutils.ddrs.sigma_ascent import SigmaAscent, optimize_sigma, surrogate_radius

OFFSETS = (0.0, 0.3, 0.6)  # signed distance of each input from the band's centre line


@pytest.fixture
def band() -> ProbitBand:
    return ProbitBand(torch.tensor([1.0, 0.0, 0.0]), half_width=1.0, temperature=0.5)


def _inputs() -> torch.Tensor:
    return torch.tensor([[t, 0.5, -0.2] for t in OFFSETS], dtype=torch.float64)


def _generators(count: int, seed: int = 0) -> list[torch.Generator]:
    return [torch.Generator().manual_seed(seed + i) for i in range(count)]


def test_band_closed_form_matches_monte_carlo(band: ProbitBand) -> None:
    # The expected class-0 probability under noise, by 200,000 draws: standard error
    # below 0.0012, so 5 SE = 0.006.
    generator = torch.Generator().manual_seed(1)
    x = torch.tensor([0.3, 0.0, 0.0], dtype=torch.float64)
    for family, draw in (
        ("gaussian", lambda s: torch.randn(200_000, 3, generator=generator, dtype=s.dtype)),
        ("uniform", lambda s: torch.rand(200_000, 3, generator=generator, dtype=s.dtype) * 2 - 1),
    ):
        noisy = x + 0.7 * draw(x)
        mc = float(band(noisy).exp()[:, 0].mean())
        assert mc == pytest.approx(band.expected_inside(0.3, 0.7, family), abs=0.006)


@pytest.mark.slow  # 300 steps of 256 draws
@pytest.mark.parametrize("family", ["gaussian", "uniform"])
def test_ascent_reaches_the_exact_optimum(band: ProbitBand, family: str) -> None:
    # Noisy gradients (256 draws) make the iterates wander around the optimum; the
    # surrogate is flat there, so its exact value at the last iterate is within 1% of
    # the maximum, while sigma0 = 0.1 is far below it (at most 40% of the maximum). The
    # clamp is lowered so that the ascent follows the exact (unclamped) surrogate.
    config = SigmaAscent(sigma0=0.1, iterations=300, lr=0.05, draws=256, family=family, clamp=1e-4)
    result = optimize_sigma(band, _inputs(), config, _generators(3))
    for t, scale in zip(OFFSETS, result.scale.tolist(), strict=True):
        best_scale, best = band.optimal_scale(t, family)
        start = band.surrogate(t, config.sigma0, family)
        reached = band.surrogate(t, scale, family)
        assert start < 0.4 * best
        assert reached >= 0.99 * best
        assert scale == pytest.approx(best_scale, rel=0.1)
    assert (result.classes == 0).all()


def test_history_starts_at_sigma0_and_rises(band: ProbitBand) -> None:
    config = SigmaAscent(sigma0=0.1, iterations=50, lr=0.05, draws=64)
    result = optimize_sigma(band, _inputs(), config, _generators(3))
    assert result.history.shape == (3, 51)
    assert (result.history[:, -1] > result.history[:, 0]).all()


def test_zero_iterations_returns_sigma0_and_its_class(band: ProbitBand) -> None:
    x = torch.tensor([[0.0, 0, 0], [3.0, 0, 0]], dtype=torch.float64)  # inside, far outside
    result = optimize_sigma(band, x, SigmaAscent(sigma0=0.2, iterations=0), _generators(2))
    assert result.scale.tolist() == [0.2, 0.2]
    assert result.classes.tolist() == [0, 1]


def test_initial_scales_are_per_input(band: ProbitBand) -> None:
    initial = torch.tensor([0.2, 0.7], dtype=torch.float64)
    config = SigmaAscent(iterations=0)
    result = optimize_sigma(band, _inputs()[:2], config, _generators(2), initial=initial)
    assert result.scale.tolist() == [0.2, 0.7]
    with pytest.raises(ValueError, match="initial must have shape"):
        optimize_sigma(band, _inputs()[:2], config, _generators(2), initial=initial[:1])


def test_fixed_class_is_kept_even_when_it_is_not_the_top_one(band: ProbitBand) -> None:
    # With c_A forced to class 1 at an input deep inside the band, E_A < E_B and the
    # surrogate is negative; raising sigma raises it, never switching class.
    x = torch.tensor([[0.0, 0, 0]], dtype=torch.float64)
    config = SigmaAscent(sigma0=0.1, iterations=20, lr=0.05, draws=64)
    result = optimize_sigma(band, x, config, _generators(1), classes=torch.tensor([1]))
    assert result.classes.tolist() == [1]
    assert float(result.history[0, 0]) < 0


def test_surrogate_formula_gaussian_and_uniform() -> None:
    probabilities = torch.tensor([[0.7, 0.2, 0.1], [0.05, 0.9, 0.05]], dtype=torch.float64)
    classes = torch.tensor([0, 0])
    scale = torch.tensor([0.5, 2.0], dtype=torch.float64)
    gaussian = surrogate_radius(probabilities, classes, scale, SigmaAscent())
    expected = [0.25 * (norm.ppf(0.7) - norm.ppf(0.2)), 1.0 * (norm.ppf(0.05) - norm.ppf(0.9))]
    np.testing.assert_allclose(gaussian.numpy(), expected, rtol=1e-12)
    uniform = surrogate_radius(probabilities, classes, scale, SigmaAscent(family="uniform"))
    np.testing.assert_allclose(uniform.numpy(), [0.5 * 0.5, 2.0 * (0.05 - 0.9)], rtol=1e-12)
    clamped = surrogate_radius(
        torch.tensor([[1.0, 0.0]], dtype=torch.float64),
        torch.tensor([0]),
        torch.tensor([1.0], dtype=torch.float64),
        SigmaAscent(clamp=1e-3),
    )
    assert float(clamped) == pytest.approx(0.5 * (norm.ppf(0.999) - norm.ppf(0.001)))


def test_each_input_is_independent_of_its_batch(band: ProbitBand) -> None:
    config = SigmaAscent(sigma0=0.1, iterations=30, lr=0.05, draws=8)
    together = optimize_sigma(band, _inputs(), config, _generators(3))
    alone = optimize_sigma(band, _inputs()[1:2], config, _generators(1, seed=1))
    assert float(alone.scale[0]) == float(together.scale[1])


def test_model_parameters_get_no_gradient(cnn: torch.nn.Module) -> None:
    x = torch.rand(2, 1, 28, 28)
    config = SigmaAscent(sigma0=0.25, iterations=3, lr=0.01, draws=2)
    before = [p.detach().clone() for p in cnn.parameters()]
    result = optimize_sigma(cnn, x, config, torch.Generator().manual_seed(0))
    assert all(p.grad is None for p in cnn.parameters())
    assert all(torch.equal(a, b) for a, b in zip(before, cnn.parameters(), strict=True))
    assert (result.scale >= config.min_scale).all() and result.scale.shape == (2,)


def test_scale_stays_above_min_scale(band: ProbitBand) -> None:
    # With c_A forced to the minority class the surrogate is sigma times a negative
    # number, so the ascent drives sigma down, onto the floor.
    x = torch.tensor([[0.0, 0, 0]], dtype=torch.float64)
    config = SigmaAscent(sigma0=0.3, iterations=50, lr=0.5, draws=16, min_scale=0.05)
    result = optimize_sigma(band, x, config, _generators(1), classes=torch.tensor([1]))
    assert float(result.scale[0]) == pytest.approx(0.05)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"family": "laplace"}, "supports the noise families"),
        ({"sigma0": 0.0}, "must be positive"),
        ({"iterations": -1}, "iterations"),
        ({"draws": 0}, "draws"),
        ({"lr": 0.0}, "lr"),
        ({"clamp": 0.5}, "clamp"),
    ],
)
def test_bad_settings_are_named(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        SigmaAscent(**kwargs)


def test_training_mode_and_generator_count_are_errors(cnn: torch.nn.Module) -> None:
    x = torch.rand(2, 1, 28, 28)
    with pytest.raises(ValueError, match="generators for a batch"):
        optimize_sigma(cnn, x, SigmaAscent(iterations=1), _generators(3))
    cnn.train()
    with pytest.raises(ValueError, match="training mode"):
        optimize_sigma(cnn, x, SigmaAscent(iterations=1), _generators(2))
