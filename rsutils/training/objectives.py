"""Training objectives for smoothed classifiers, each with a per-sample noise level.

- :func:`gaussian_augmentation_loss`: cross-entropy on noisy copies (Cohen et al.);
- :func:`smoothadv_loss`: SmoothAdv (Salman et al., 2019): cross-entropy on noisy
  copies of an adversarial input found by ℓ2 PGD against the smoothed soft
  classifier;
- :func:`macer_loss`: MACER (Zhai et al., 2020): cross-entropy of the smoothed soft
  classifier plus a hinge on its certified radius.

``sigma`` holds one noise level per sample (shape ``(B,)``), so any of them trains
with data-dependent smoothing (DDRS Algorithm 2) as well as with a fixed sigma.
Noise is Gaussian, drawn from the caller's generator.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

__all__ = [
    "OBJECTIVES",
    "ObjectiveSettings",
    "gaussian_augmentation_loss",
    "macer_loss",
    "smoothadv_attack",
    "smoothadv_loss",
]


@dataclass(frozen=True)
class ObjectiveSettings:
    """The knobs of the three objectives (defaults: the papers' CIFAR-10 settings).

    ``draws``: noise draws per sample (MACER uses 64; SmoothAdv 1). SmoothAdv:
    ``epsilon`` (ζ, the ℓ2 attack radius) and ``attack_steps``. MACER: ``lbd`` (λ),
    ``gamma`` (γ, the hinge margin), ``beta`` (the inverse temperature of the soft
    classifier in the radius term).
    """

    draws: int = 1
    epsilon: float = 0.25
    attack_steps: int = 2
    lbd: float = 12.0
    gamma: float = 8.0
    beta: float = 16.0


def _noisy(x: torch.Tensor, sigma: torch.Tensor, draws: int, generator) -> torch.Tensor:
    """``(B·draws, *shape)`` copies ``x_i + sigma_i·ε``, the draws of one input adjacent."""
    view = (x.shape[0], 1, *([1] * (x.dim() - 1)))
    noise = torch.randn(
        (x.shape[0], draws, *x.shape[1:]), generator=generator, device=x.device, dtype=x.dtype
    )
    return (x[:, None] + sigma.view(view).to(x.dtype) * noise).flatten(0, 1)


def gaussian_augmentation_loss(
    model: nn.Module, x, y, sigma, generator, settings: ObjectiveSettings
) -> torch.Tensor:
    """Mean cross-entropy of the base model on ``draws`` noisy copies of each input."""
    logits = model(_noisy(x, sigma, settings.draws, generator))
    return F.cross_entropy(logits, y.repeat_interleave(settings.draws))


def _smoothed_log_probability(logits: torch.Tensor, batch: int, y: torch.Tensor) -> torch.Tensor:
    """log of the softmax averaged over the draws, at the true class: ``(B,)``."""
    log_soft = F.log_softmax(logits, dim=1).view(batch, -1, logits.shape[1])
    averaged = torch.logsumexp(log_soft, dim=1) - math.log(log_soft.shape[1])
    return averaged.gather(1, y[:, None]).squeeze(1)


def smoothadv_attack(
    model: nn.Module, x, y, noise: torch.Tensor, settings: ObjectiveSettings
) -> torch.Tensor:
    """The SmoothAdv perturbation δ (‖δ_i‖₂ ≤ epsilon) of each input.

    ℓ2 PGD on −log E[softmax(f(x + δ + noise))_y], the expectation over the given
    noise draws ``(B·draws, *shape)``: ``attack_steps`` normalised gradient steps of
    length 2·epsilon/steps, each projected on the ball. Runs with the model in eval
    mode; its parameters get no gradient.
    """
    batch, draws = x.shape[0], noise.shape[0] // x.shape[0]
    view = (batch, *([1] * (x.dim() - 1)))
    was_training = model.training
    model.eval()
    delta = torch.zeros_like(x)
    step = 2 * settings.epsilon / settings.attack_steps
    for _ in range(settings.attack_steps):
        delta.requires_grad_(True)
        noisy = (x + delta).repeat_interleave(draws, dim=0) + noise
        loss = -_smoothed_log_probability(model(noisy), batch, y).sum()
        (gradient,) = torch.autograd.grad(loss, delta)
        with torch.no_grad():
            norms = gradient.flatten(1).norm(dim=1).clamp_min(1e-12).view(view)
            delta = delta + step * gradient / norms
            length = delta.flatten(1).norm(dim=1).clamp_min(1e-12)
            delta = delta * (settings.epsilon / length).clamp(max=1).view(view)
    model.train(was_training)
    return delta.detach()


def smoothadv_loss(
    model: nn.Module, x, y, sigma, generator, settings: ObjectiveSettings
) -> torch.Tensor:
    """SmoothAdv: cross-entropy on noisy copies of the adversarial input x + δ, with δ
    from :func:`smoothadv_attack` against the same noise draws."""
    draws = settings.draws
    noise = _noisy(torch.zeros_like(x), sigma, draws, generator)
    delta = smoothadv_attack(model, x, y, noise, settings)
    adversarial = (x + delta).repeat_interleave(draws, dim=0) + noise
    return F.cross_entropy(model(adversarial), y.repeat_interleave(draws))


def macer_loss(
    model: nn.Module, x, y, sigma, generator, settings: ObjectiveSettings
) -> torch.Tensor:
    """MACER: −log E[softmax(f)]_y + λ·σ/2·max(γ − ξ, 0) on correctly classified inputs,

    with ξ = Φ⁻¹(E_A) − Φ⁻¹(E_B) from the softmax at inverse temperature ``beta``
    averaged over the draws (so σ/2·ξ is the soft certified radius), probabilities
    clamped to [1e-4, 1 − 1e-4]. Both terms are averaged over the batch.
    """
    batch, draws = x.shape[0], settings.draws
    logits = model(_noisy(x, sigma, draws, generator))
    classification = -_smoothed_log_probability(logits, batch, y).mean()
    soft = F.softmax(settings.beta * logits, dim=1).view(batch, draws, -1).mean(dim=1)
    correct = soft.argmax(dim=1) == y
    p_a = soft.gather(1, y[:, None]).squeeze(1)
    p_b = soft.scatter(1, y[:, None], -1.0).max(dim=1).values
    xi = torch.special.ndtri(p_a.clamp(1e-4, 1 - 1e-4)) - torch.special.ndtri(
        p_b.clamp(1e-4, 1 - 1e-4)
    )
    hinge = F.relu(settings.gamma - xi) * correct
    robustness = settings.lbd * (sigma.to(hinge.dtype) / 2 * hinge).sum() / batch
    return classification + robustness


#: Objective name (``TrainConfig.method``) → loss function.
OBJECTIVES = {
    "gaussian": gaussian_augmentation_loss,
    "smoothadv": smoothadv_loss,
    "macer": macer_loss,
}
