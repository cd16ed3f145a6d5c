"""Noise parameters under which the deployed classifier is known in closed form.

The soundness audit's exact case (:mod:`rsutils.anisotropic.soundness.audit`): 2-D inputs, the
linear classifier ``f(z) = 1[z₁ > 0]`` (:func:`shifting_classifier`) and the noise
parameters ``mu(z) = (−z₂, 0)``, ``sigma(z) = (1, 10 + z₂²/10)``
(:class:`ShiftingParams`), with Gaussian noise of scale ``λ``.

The deployed classifier G recomputes ``mu`` and ``sigma`` at its input ``z``: its base
classifier's score is ``z₁ − z₂ + λε₁``, so ``P(class 1) = Φ((z₁ − z₂)/λ)``
(:func:`deployed_pA`); the offset moves ``z`` across the decision boundary. The
classifier ``g_x`` frozen at ``x`` scores ``z₁ − x₂ + λε₁``: ``P(class 1) = Φ((z₁ −
x₂)/λ)`` (:func:`frozen_pA`). At ``x = (2, 0)`` (:func:`example_input`) with ``λ = 1``,
CERTIFY's region ``‖δ ⊘ sigma(x)‖₂ < R`` reaches far along ``z₂`` (``sigma₂(x) =
10``): g_x keeps class 1 on all of it (UCAN Theorem 7), G is class 0 on much of it.
"""

from __future__ import annotations

import torch
from scipy.stats import norm as _std_normal
from torch import nn

from rsutils.checks.classifiers import LinearClassifier

__all__ = [
    "ShiftingParams",
    "deployed_pA",
    "example_input",
    "frozen_pA",
    "shifting_classifier",
]


class ShiftingParams(nn.Module):
    """``mu(z) = (−z₂, 0)``, ``sigma(z) = (1, 10 + z₂²/10)`` for a batch ``(B, 2)``.

    Differentiable in ``z``, and ``sigma > 0`` everywhere.
    """

    def forward(self, z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(mu(z), sigma(z))``, each of the batch's shape."""
        second = z[:, 1]
        mu = torch.stack([-second, torch.zeros_like(second)], dim=1)
        sigma = torch.stack([torch.ones_like(second), 10.0 + second**2 / 10], dim=1)
        return mu, sigma


def shifting_classifier() -> LinearClassifier:
    """The base classifier ``f(z) = 1[z₁ > 0]`` of the case."""
    return LinearClassifier(torch.tensor([1.0, 0.0]))


def example_input() -> torch.Tensor:
    """``x = (2, 0)`` (float64), where G and g_x part ways inside the certified region."""
    return torch.tensor([2.0, 0.0], dtype=torch.float64)


def deployed_pA(z: torch.Tensor, scale: float) -> float:
    """Exact ``P(f(z + mu(z) + sigma(z) ⊙ λε) = 1) = Φ((z₁ − z₂)/λ)``: G's class-1 probability."""
    return float(_std_normal.cdf((float(z[0]) - float(z[1])) / scale))


def frozen_pA(x: torch.Tensor, z: torch.Tensor, scale: float) -> float:
    """Exact ``P(f(z + mu(x) + sigma(x) ⊙ λε) = 1) = Φ((z₁ − x₂)/λ)``: g_x's, frozen at ``x``."""
    return float(_std_normal.cdf((float(z[0]) - float(x[1])) / scale))
