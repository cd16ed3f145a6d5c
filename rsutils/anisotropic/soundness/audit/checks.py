"""The audit's input checks, shared by its search, its verification and its runs: the
inputs, scales, radii and generators they take (the checks of its settings are
:class:`~rsutils.anisotropic.soundness.audit.settings.AuditSettings`'s own; those of
integers, classes and class counts are :mod:`rsutils.core.validation`'s).

Each refuses a bad argument with a ``ValueError`` (``TypeError`` for a wrong type) that
names the argument and what it must be, before any draw is made.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from rsutils.core.devices import model_device, model_dtype

__all__ = [
    "as_model_input",
    "check_generator",
    "check_radius",
    "check_sigma",
]


def as_model_input(
    model: nn.Module, x: torch.Tensor, name: str, *, batched: bool = False
) -> torch.Tensor:
    """``x`` detached, on the model's device and in its floating-point type.

    Refuses anything but a finite floating-point tensor with one input (no batch
    dimension), or a batch ``(B, *shape)`` when ``batched``.
    """
    if not isinstance(x, torch.Tensor) or not x.is_floating_point():
        raise TypeError(f"{name} must be a floating-point tensor, got {x!r}")
    if x.dim() < 1 + int(batched):
        what = "a batch (B, *shape)" if batched else "one input (no batch dimension)"
        raise ValueError(f"{name} must be {what}, got shape {tuple(x.shape)}")
    if not bool(torch.isfinite(x).all()):
        raise ValueError(f"{name} contains NaN or infinite values")
    return x.detach().to(model_device(model), model_dtype(model))


def check_sigma(sigma: torch.Tensor, name: str) -> torch.Tensor:
    """``sigma`` itself, once it is a floating-point tensor, finite and positive."""
    if not isinstance(sigma, torch.Tensor) or not sigma.is_floating_point():
        raise TypeError(f"{name} must be a floating-point tensor, got {sigma!r}")
    if not bool(torch.isfinite(sigma).all() and (sigma > 0).all()):
        raise ValueError(f"{name} must be finite and positive in every dimension")
    return sigma


def check_radius(R: float, *, positive: bool) -> float:
    """The region radius ``R`` as a float: finite and non-negative (positive if asked)."""
    try:
        value = float(R)
    except (TypeError, ValueError):
        raise ValueError(f"R must be a number, got {R!r}") from None
    if not np.isfinite(value) or value < 0 or (positive and value == 0):
        need = "positive" if positive else "non-negative"
        raise ValueError(f"R must be finite and {need} (the region radius), got {R!r}")
    return value


def check_generator(generator: torch.Generator, device: torch.device) -> None:
    """Refuse a generator that is not a ``torch.Generator`` on ``device``."""
    if not isinstance(generator, torch.Generator):
        raise TypeError(f"generator must be a torch.Generator, got {generator!r}")
    here, there = generator.device, torch.device(device)
    if here.type != there.type or (here.index or 0) != (there.index or 0):
        raise ValueError(
            f"generator lives on {here} but the draws are made on {there}; "
            f"create it with torch.Generator(device={str(there)!r})"
        )
