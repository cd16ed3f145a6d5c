"""The verification test: Clopper–Pearson verdicts, their error rates, and G's counts."""

import math

import numpy as np
import pytest
import torch
from scipy.stats import beta, binom
from scipy.stats import norm as normal
from torch import nn

from rsutils.anisotropic.noise import Anisotropic
from rsutils.anisotropic.soundness.audit import DeployedClassifier, classify_counts, verify_point
from rsutils.checks.shifting import ShiftingParams, shifting_classifier
from rsutils.core.noise import Gaussian
from rsutils.core.smooth import Smooth
from rsutils.core.streams import image_generator


def test_the_clopper_pearson_bound_is_scipys_beta_quantile() -> None:
    alpha = 0.001
    agrees = classify_counts([300, 700], 1, alpha)
    assert agrees.top_lower == pytest.approx(beta.ppf(alpha, 700, 301), rel=1e-12)
    assert agrees.verdict == "agrees" and agrees.level == alpha
    # two classes: the only other class is tested at alpha
    other = classify_counts([700, 300], 1, alpha)
    assert other.top_lower == pytest.approx(beta.ppf(alpha, 700, 301), rel=1e-12)
    assert other.verdict == "contradiction"
    # more classes: the selected other class is tested at alpha / 2
    three = classify_counts([700, 300, 0], 1, alpha)
    assert three.level == alpha / 2
    assert three.top_lower == pytest.approx(beta.ppf(alpha / 2, 700, 301), rel=1e-12)
    # a single vote is never a verdict
    assert classify_counts([1, 0], 1, alpha).verdict == "ambiguous"
    assert classify_counts([0, 1], 1, alpha).verdict == "ambiguous"


@pytest.mark.parametrize("classes", [2, 3, 4])
def test_no_contradiction_without_a_lower_bound_above_one_half(classes) -> None:
    n, alpha = 12, 0.05
    for counts in np.ndindex(*[n + 1] * (classes - 1)):
        if sum(counts) > n:
            continue
        full = np.array([*counts, n - sum(counts)])
        for c in range(classes):
            result = classify_counts(full, c, alpha)
            bounds = [beta.ppf(result.level, k, n - k + 1) if k else 0.0 for k in full]
            others = [b for k, b in enumerate(bounds) if k != c]
            assert (result.verdict == "contradiction") == (max(others) > 0.5)
            assert (result.verdict == "agrees") == (beta.ppf(alpha, full[c], n - full[c] + 1) > 0.5)


@pytest.mark.parametrize("n", [100, 1000, 10_000])
def test_a_false_contradiction_is_rarer_than_alpha_at_the_worst_probabilities(n) -> None:
    """Exact: two classes other than c at probability 1/2 each (the worst case of the
    union over classes) claim a contradiction with probability ≤ alpha."""
    alpha = 0.01
    counts = np.arange(n // 2 + 1, n + 1)
    threshold = int(counts[beta.ppf(alpha / 2, counts, n - counts + 1) > 0.5][0])
    assert classify_counts([threshold, n - threshold, 0], 2, alpha).verdict == "contradiction"
    assert classify_counts([threshold - 1, n - threshold + 1, 0], 2, alpha).verdict == "ambiguous"
    false_claim = 2 * binom.sf(threshold - 1, n, 0.5)
    assert false_claim <= alpha


class HalfPlane(nn.Module):
    """f(z) = 1[z₁ > 0] on inputs of shape (2,)."""

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return torch.stack([-z[:, 0], z[:, 0]], dim=1)


class Constant(nn.Module):
    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return torch.tensor([0.0, 1.0]).expand(z.shape[0], 2)


def unit(z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.zeros_like(z), torch.ones_like(z)


def test_a_fifty_fifty_classifier_is_never_a_contradiction() -> None:
    z = torch.zeros(2)
    for seed in range(20):
        for c in (0, 1):
            generator = torch.Generator().manual_seed(seed)
            result = verify_point(
                DeployedClassifier(HalfPlane().eval(), unit, 1.0, 2), z, c, n=1000, alpha=0.001,
                generator=generator,
            )  # fmt: skip
            assert result.verdict == "ambiguous"
            assert result.top_lower <= 0.5


def test_a_constant_classifier_always_agrees() -> None:
    for seed in range(5):
        generator = torch.Generator().manual_seed(seed)
        result = verify_point(
            DeployedClassifier(Constant().eval(), unit, 1.0, 2), torch.zeros(2), 1, n=100,
            alpha=0.001, generator=generator,
        )  # fmt: skip
        assert result.verdict == "agrees" and result.counts == (0, 100)
        assert result.top_lower == pytest.approx(0.001 ** (1 / 100))


def test_the_deployed_counts_are_smooths_counts_with_the_parameters_of_z() -> None:
    model, params = shifting_classifier(), ShiftingParams()
    z = torch.tensor([0.5, 0.3], dtype=torch.float64)
    mu, sigma = params(z.unsqueeze(0))
    smooth = Smooth(model, 2, Anisotropic(Gaussian(0.5), sigma[0], mu[0]), input_range=None)
    expected = smooth.sample_counts(z, 5000, seed=7)
    for batch_size in (1000, 333):
        generator = image_generator(7, 0, "estimate", torch.device("cpu"))
        counts = DeployedClassifier(model, params, 0.5, 2).counts(
            z, 5000, generator=generator, batch_size=batch_size
        )
        assert np.array_equal(counts, expected)
    exact = normal.cdf((0.5 - 0.3) / 0.5)
    assert abs(expected[1] / 5000 - exact) < 4 * math.sqrt(exact * (1 - exact) / 5000)
