"""The noise parameters an audit reads: ``params(z) -> (mu, sigma)``, checked, and frozen.

The noise-parameter function maps a batch ``z`` of shape ``(B, *shape)`` to two tensors
of that shape and must be differentiable in ``z`` for the attack (an ``nn.Module`` or
any callable). :func:`frozen` fixes them at one input: UCAN Theorem 7's classifier
``g_x``, the audit's control.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

__all__ = ["FrozenParams", "NoiseParams", "frozen", "noise_params"]

#: ``params(z) -> (mu, sigma)`` for a batch ``z`` of shape ``(B, *shape)``.
NoiseParams = Callable[[torch.Tensor], tuple[torch.Tensor, torch.Tensor]]


def noise_params(params: NoiseParams, z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``params(z)``, checked: two tensors shaped like the batch ``z``, finite, sigma > 0.

    Any failure is a ``ValueError`` (``TypeError`` if ``params`` does not return a
    pair of tensors): sigma ≤ 0 would make the region and the noise meaningless.
    """
    out = params(z)
    if not (isinstance(out, tuple | list) and len(out) == 2):
        raise TypeError(f"params(z) must return a pair (mu, sigma), got {type(out).__name__}")
    mu, sigma = out
    for name, tensor in (("mu", mu), ("sigma", sigma)):
        if not isinstance(tensor, torch.Tensor):
            raise TypeError(f"params(z) returned {name} of type {type(tensor).__name__}")
        if tensor.shape != z.shape:
            raise ValueError(
                f"params(z) returned {name} of shape {tuple(tensor.shape)} for a batch z of "
                f"shape {tuple(z.shape)}; mu and sigma must have the shape of z"
            )
        if not bool(torch.isfinite(tensor.detach()).all()):
            raise ValueError(f"params(z) returned non-finite values in {name}")
    if not bool((sigma.detach() > 0).all()):
        raise ValueError("params(z) returned sigma <= 0; the scale must be positive everywhere")
    return mu, sigma


@dataclass(frozen=True, eq=False)
class FrozenParams:
    """``z -> (mu, sigma)`` fixed at one input's values (UCAN Theorem 7's classifier g_x)."""

    mu: torch.Tensor
    sigma: torch.Tensor

    def __call__(self, z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        if z.shape[1:] != self.mu.shape:
            raise ValueError(
                f"frozen parameters have the shape {tuple(self.mu.shape)} of one input, "
                f"got a batch of shape {tuple(z.shape)}"
            )
        mu = self.mu.to(z.device, z.dtype).expand_as(z)
        return mu, self.sigma.to(z.device, z.dtype).expand_as(z)


def frozen(params: NoiseParams, x: torch.Tensor) -> FrozenParams:
    """The parameters ``mu(x)``, ``sigma(x)`` of one input ``x``, returned whatever ``z``.

    Guarantee (UCAN Theorem 7): if CERTIFY at ``x`` is right, the smoothed classifier with
    these frozen parameters keeps class ``c`` on the whole certified region; it is the
    audit's control. ``x`` is one input (no batch dimension); nothing is differentiated
    through the frozen values.
    """
    with torch.no_grad():
        mu, sigma = noise_params(params, x.unsqueeze(0))
    return FrozenParams(mu[0].detach().clone(), sigma[0].detach().clone())
