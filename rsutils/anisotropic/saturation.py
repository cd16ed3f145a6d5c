"""Why a generator's ``sigma`` runs to its bound: the pull of the loss and the head.

Two measurements for chapter 06's question, whether a learned ``sigma`` saturates
because the loss asks for more noise or because of how ``sigma`` is parametrised:

- :func:`ce_sigma_gradient`: which way the cross-entropy alone pushes ``sigma`` at a
  given (classifier, generator), usually at the start of training. It estimates
  ``E[∂CE/∂sigma]`` over training batches and noise draws, with a standard error
  over the draws, both along the overall level of ``sigma`` (the derivative of the
  cross-entropy when every ``sigma_i`` is multiplied by ``t``, at ``t = 1``) and
  pixel by pixel. A negative level derivative means that more noise lowers the
  cross-entropy, so gradient descent raises ``sigma`` with no variance term at all; a
  positive one that the cross-entropy alone lowers it.
- :func:`absorbed_share`: the share of a generator's pre-activations ``raw`` where
  its head's slope (:func:`~rsutils.anisotropic.generators.head_slope`) is below a
  threshold, e.g. ``|raw| > 2.99`` for UCAN's ``|tanh|`` (slope below 0.01): there a
  gradient step on ``raw`` barely moves ``sigma``, and with the ``|tanh|`` head both
  signs of a large ``raw`` give the upper bound, so ``sigma`` that gets there stays.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from rsutils.anisotropic.generators import NoiseGenerator, head_slope
from rsutils.core.settings import check_count
from rsutils.core.streams import stream_generator

__all__ = ["SHAPE_RATIO", "SigmaGradient", "absorbed_share", "ce_sigma_gradient"]

#: A learned ``sigma`` has a shape when its largest scale exceeds its smallest by more
#: than this factor on an input (averaged over the inputs); below, it is one level, and
#: its ALM (a geometric mean of ``sigma``) equals its radius (its smallest ``sigma``)
#: to within that factor, whatever the classifier does.
SHAPE_RATIO = 1.01


@dataclass(frozen=True)
class SigmaGradient:
    """What :func:`ce_sigma_gradient` measured, one entry per draw (a batch and its noise).

    ``level[k]`` is ``d CE / d t`` at ``t = 1`` for ``sigma·t`` on draw ``k``, that is
    ``Σ_i sigma_i ∂CE/∂sigma_i`` with the cross-entropy averaged over the batch as in
    training; ``pixels[k]`` is ``∂CE/∂sigma`` per input dimension, summed over the
    batch's inputs (for a dataset-wise generator, whose one ``sigma`` serves every
    input, the gradient that reaches it).
    """

    level: torch.Tensor
    pixels: torch.Tensor

    @property
    def draws(self) -> int:
        return len(self.level)

    @property
    def mean(self) -> float:
        """The mean level derivative over the draws."""
        return float(self.level.double().mean())

    @property
    def standard_error(self) -> float:
        """The standard error of :attr:`mean` over the draws (NaN for one draw)."""
        if self.draws < 2:
            return math.nan
        return float(self.level.double().std() / math.sqrt(self.draws))

    def pixel_z(self) -> torch.Tensor:
        """Each input dimension's mean gradient over its standard error (over draws)."""
        values = self.pixels.double()
        se = values.std(dim=0) / math.sqrt(self.draws)
        return values.mean(dim=0) / se

    def pixel_shares(self, z: float = 2.0) -> dict[str, float]:
        """The shares of input dimensions whose mean gradient is below ``-z`` standard
        errors (the cross-entropy asks for more noise there), above ``+z`` (less
        noise), and in between."""
        scores = self.pixel_z().flatten()
        up, down = float((scores < -z).double().mean()), float((scores > z).double().mean())
        return {"more noise": up, "less noise": down, "undecided": 1.0 - up - down}


def ce_sigma_gradient(
    model: nn.Module,
    generator: NoiseGenerator,
    images: torch.Tensor,
    labels: torch.Tensor,
    *,
    scale: float,
    draws: int = 100,
    batch_size: int = 128,
    seed: int = 0,
) -> SigmaGradient:
    """``∂CE/∂sigma`` at ``(model, generator)`` over ``draws`` batches and noise draws.

    Each draw takes ``batch_size`` of ``images`` (a seeded random choice without
    replacement within the draw), computes ``(mu, sigma)`` with the generator, one noise
    ``eps`` and the mean cross-entropy of ``model(x + mu + sigma ⊙ scale·eps)``, as a
    training step of :func:`~rsutils.anisotropic.training.npg_loss` with one draw does,
    and its gradient with respect to ``sigma`` only (no weight changes, no gradient
    kept in ``model`` or ``generator``). The draws are independent (stream
    ``gradient`` of ``seed``), so :attr:`SigmaGradient.standard_error` is the
    uncertainty of the mean. It runs on the device of ``model``'s weights (of
    ``images`` for a model without any), where ``generator`` must be too.
    """
    check_count("draws", draws)
    check_count("batch_size", batch_size)
    device = next((p.device for p in model.parameters()), images.device)
    picks = stream_generator(seed, 0, "gradient")
    noise = stream_generator(seed, 0, "gradient", device=device)
    size = min(batch_size, len(labels))
    levels, maps = [], []
    for _ in range(draws):
        batch = torch.randperm(len(labels), generator=picks)[:size]
        x, y = images[batch].to(device), labels[batch].to(device)
        with torch.no_grad():
            mu, sigma = generator(x)
        sigma = sigma.detach().clone().requires_grad_(True)
        eps = torch.randn(x.shape, generator=noise, device=device, dtype=x.dtype)
        with torch.enable_grad():
            loss = nn.functional.cross_entropy(model(x + mu + sigma * (scale * eps)), y)
            (grad,) = torch.autograd.grad(loss, sigma)
        levels.append(float((grad.double() * sigma.detach().double()).sum()))
        maps.append(grad.detach().double().sum(dim=0).cpu())
    return SigmaGradient(torch.tensor(levels, dtype=torch.float64), torch.stack(maps))


@torch.no_grad()
def absorbed_share(
    generator: NoiseGenerator, images: torch.Tensor, *, slope_below: float = 0.01
) -> float:
    """The share of ``generator``'s pre-activations on ``images`` where its head's slope
    (:func:`~rsutils.anisotropic.generators.head_slope`) is below ``slope_below``: for
    UCAN's ``|tanh|`` head and 0.01, ``|raw| > atanh(√0.99) ≈ 2.99``. The ``"log"``
    head's slope is 1 everywhere, so its share is 0."""
    if not 0 < slope_below < 1:
        raise ValueError(f"slope_below must be in (0, 1), got {slope_below!r}")
    raw = generator.raw_sigma(images)  # type: ignore[operator]
    return float((head_slope(raw, generator.head) < slope_below).double().mean())  # type: ignore[arg-type]
