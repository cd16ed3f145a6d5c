"""The sound sampler: exact sums, the rounded Gaussian, determinism, the corrected radius."""

from fractions import Fraction

import numpy as np
import pytest
import torch
from scipy import stats
from torch import nn

from rsutils.core.noise import Gaussian, Laplace
from rsutils.core.sampling import NoiseStream
from rsutils.core.smooth import ABSTAIN, Smooth
from rsutils.core.sound_sampling import SoundGaussian, rounded_gaussian_pmf, with_sampler

SIGMA, L = 0.25, 255


def _draws(noise, shape, seed):
    return noise.sample(shape, torch.Generator().manual_seed(seed))


def test_pmf_is_the_rounded_gaussian():
    values, pmf = rounded_gaussian_pmf(SIGMA, L)
    assert pmf.sum() == pytest.approx(1.0, abs=1e-15)
    inner = slice(1, -1)
    edges = np.concatenate([[-np.inf], (values[:-1] + 0.5) / (L * SIGMA), [np.inf]])
    exact = np.diff(stats.norm.cdf(edges))
    assert np.max(np.abs(pmf[inner] - exact[inner])) < 1e-15
    # Sheppard: rounding to a grid of step h adds h²/12 to the variance (error ~e^-(2π²σ²/h²)).
    variance = float(np.sum(values.astype(float) ** 2 * pmf)) / L**2
    assert variance == pytest.approx(SIGMA**2 + 1 / (12 * L**2), rel=1e-12)


def test_draws_follow_the_pmf_within_dkw():
    noise = SoundGaussian(SIGMA)
    draws = np.round(_draws(noise, (200, 1000), seed=3).numpy().ravel() * L).astype(int)
    values, pmf = rounded_gaussian_pmf(SIGMA, L)
    empirical = np.searchsorted(np.sort(draws), values, side="right") / draws.size
    # DKW: sup |F_n - F| <= sqrt(ln(2/δ) / 2n) with probability 1 - δ; δ = 1e-6.
    tolerance = np.sqrt(np.log(2 / 1e-6) / (2 * draws.size))
    assert np.max(np.abs(empirical - np.cumsum(pmf))) < tolerance
    assert abs(draws.mean()) < 5 * SIGMA * L / np.sqrt(draws.size)


def test_draws_are_on_the_grid_and_deterministic():
    noise = SoundGaussian(SIGMA)
    a, b = _draws(noise, (50, 30), seed=1), _draws(noise, (50, 30), seed=1)
    assert torch.equal(a, b)
    assert not torch.equal(a, _draws(noise, (50, 30), seed=2))
    integers = a * L
    assert torch.equal(integers.round(), torch.round(integers))
    assert float((integers - integers.round()).abs().max()) < 1e-3


def test_stream_does_not_depend_on_how_it_is_cut():
    noise, shape = SoundGaussian(SIGMA), torch.Size([3, 4])
    whole = NoiseStream(noise, shape, 70, torch.Generator().manual_seed(5), torch.float32)
    cut = NoiseStream(noise, shape, 70, torch.Generator().manual_seed(5), torch.float32)
    once = whole.fill_(torch.empty(70, *shape))
    parts = torch.cat([cut.fill_(torch.empty(k, *shape)) for k in (7, 40, 23)])
    assert torch.equal(once, parts)


def test_sum_is_exact_and_a_function_of_the_integer_sum():
    noise = SoundGaussian(SIGMA)
    a = torch.arange(0, L + 1, dtype=torch.float32) / L
    prepared = noise.prepare_input(a)
    assert torch.equal(prepared, torch.arange(0, L + 1, dtype=torch.float32))
    draws = _draws(noise, (400, L + 1), seed=7)
    n = torch.round(draws * L).long()
    inputs = noise.perturb_(draws.clone(), prepared)
    m = (n + torch.arange(0, L + 1)).clamp(L - noise.cut, noise.cut)
    # Each model input is the float32 nearest to m/L, checked in exact rationals.
    for value in torch.unique(m).tolist():
        got = {float(v) for v in inputs[m == value].unique()}
        assert len(got) == 1
        (y,) = got
        error = abs(Fraction(y) - Fraction(value, L))
        neighbour = abs(
            Fraction(float(np.nextafter(np.float32(y), np.float32(np.inf)))) - Fraction(y)
        )
        assert error <= neighbour / 2


def test_clip_makes_the_tail_cut_exact():
    noise = SoundGaussian(SIGMA)
    cut = noise.cut
    for a in (0, 100, L):
        for beyond in (cut + 1, cut + 50):
            for sign in (-1, 1):
                true = min(max(a + sign * beyond, L - cut), cut)
                capped = min(max(a + sign * cut, L - cut), cut)
                assert true == capped


@pytest.mark.parametrize(
    "x, message",
    [
        (torch.full((3,), 0.5), "on the grid"),
        (torch.full((3,), -1 / 255), "on the grid"),
        (torch.full((3,), 7 / 255, dtype=torch.float16), "float32 or float64"),
    ],
)
def test_inputs_it_cannot_treat_are_refused(x, message):
    with pytest.raises(ValueError, match=message):
        SoundGaussian(SIGMA).prepare_input(x)


def test_bad_settings_are_refused():
    with pytest.raises(ValueError, match="levels"):
        SoundGaussian(SIGMA, levels=0)
    with pytest.raises(ValueError, match="Gaussian noise only"):
        with_sampler(Laplace(0.5), "sound")
    with pytest.raises(ValueError, match="unknown sampler"):
        with_sampler(Gaussian(0.5), "exact")
    with pytest.raises(ValueError, match="needs dim"):
        SoundGaussian(SIGMA).radius(0.9)


def test_radius_is_the_gaussian_one_at_the_corrected_bound():
    noise, dim = SoundGaussian(SIGMA), 784
    slack = dim * noise.tv_per_coordinate
    assert 0 < slack < 1e-12
    for p in (0.6, 0.9, 0.999):
        expected = SIGMA * stats.norm.ppf(p - slack)
        assert float(noise.radius(p, dim=dim)) == pytest.approx(expected, rel=1e-12)
        assert float(noise.radius(p, dim=dim)) <= float(Gaussian(SIGMA).radius(p))
    assert float(noise.radius(0.5 + slack / 2, dim=dim)) == 0.0


class _Constant(nn.Module):
    def forward(self, x):
        return torch.tensor([[0.0, 1.0]]).expand(x.shape[0], 2)


def test_smooth_sound_certifies_with_the_corrected_radius():
    x = torch.full((1, 4, 4), 9 / 255)
    smooth = Smooth(_Constant().eval(), 2, Gaussian(SIGMA), sampler="sound")
    assert smooth.sampler == "sound" and isinstance(smooth.noise, SoundGaussian)
    cert = smooth.certify(x, 10, 200, 0.01, seed=0)
    p = 0.01 ** (1 / 200)  # Clopper–Pearson lower bound at 200/200
    assert cert.pA_lower == pytest.approx(p, rel=1e-12)
    expected = SIGMA * stats.norm.ppf(p - 16 * smooth.noise.tv_per_coordinate)
    assert cert.radius == pytest.approx(expected, rel=1e-12)


def test_a_bound_the_table_error_takes_below_half_abstains():
    """``pA_lower`` just above 1/2 but within the charged table error: no class."""
    smooth = Smooth(_Constant().eval(), 2, Gaussian(SIGMA), sampler="sound")
    count, n, alpha = 600, 1000, 0.01
    pA = float(stats.beta.ppf(alpha, count, n - count + 1))  # Clopper–Pearson lower
    assert pA > 0.5
    dim = int(np.ceil((pA - 0.5) / smooth.noise.tv_per_coordinate)) + 1
    assert smooth.noise.charged_pA(pA, dim) < 0.5
    cert = smooth.certificate(count, n, 1, n0=10, alpha=alpha, seed=0, index=0, dim=dim)
    assert cert.prediction == ABSTAIN and cert.radius == 0.0
    plain = Smooth(_Constant().eval(), 2, Gaussian(SIGMA))
    kept = plain.certificate(count, n, 1, n0=10, alpha=alpha, seed=0, index=0, dim=dim)
    assert kept.prediction == 1  # the plain sampler charges nothing


def test_plain_stays_the_default_and_unchanged():
    noise = Gaussian(SIGMA)
    smooth = Smooth(_Constant().eval(), 2, noise)
    assert smooth.sampler == "plain" and smooth.noise is noise
    x, draws = torch.rand(5), torch.randn(5)
    assert noise.prepare_input(x) is x
    assert torch.equal(noise.perturb_(draws.clone(), x), draws + x)


def test_smooth_sound_refuses_inputs_off_the_grid_and_other_families():
    smooth = Smooth(_Constant().eval(), 2, Gaussian(SIGMA), sampler="sound")
    with pytest.raises(ValueError, match="quantise first"):
        smooth.certify(torch.full((1, 4, 4), 0.5), 10, 20, 0.01, seed=0)
    with pytest.raises(ValueError, match="Gaussian noise only"):
        Smooth(_Constant().eval(), 2, Laplace(0.5), sampler="sound")
