"""The audit's input checks, shared by its search, its verification and its runs.

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
    "check_class",
    "check_generator",
    "check_non_negative",
    "check_num_classes",
    "check_radius",
    "check_region_scale",
    "check_shrink",
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


def check_shrink(shrink: float) -> None:
    """Refuse a ``shrink`` outside ``(0, 1)``: the search must stay strictly inside."""
    try:
        value = float(shrink)
    except (TypeError, ValueError):
        raise ValueError(f"shrink must be a number in (0, 1), e.g. 0.99, got {shrink!r}") from None
    if not 0.0 < value < 1.0:
        raise ValueError(f"shrink must lie in (0, 1) to stay strictly inside, got {shrink!r}")


def check_region_scale(value: object, shrink: float) -> tuple[float, float] | None:
    """``None``, or ``(inner, outer)`` as floats with ``0 ≤ inner < shrink·outer``.

    The multiples of a certificate's ``R`` between which a positive control searches
    (see :class:`~rsutils.anisotropic.soundness.audit.settings.AuditSettings`): the shell must
    hold points (``inner`` below the outermost radius searched, ``shrink·outer·R``).
    """
    if value is None:
        return None
    message = (
        "region_scale must be None (the certified region) or (inner, outer) multiples "
        "of R with 0 <= inner < shrink*outer, e.g. (1.5, 2.0) for the shell outside the "
        f"certificate; got {value!r}"
    )
    if isinstance(value, str | bytes):
        raise ValueError(message)
    try:
        inner, outer = (float(v) for v in value)  # type: ignore[attr-defined]
    except (TypeError, ValueError):
        raise ValueError(message) from None
    if not (np.isfinite(inner) and np.isfinite(outer) and 0.0 <= inner < float(shrink) * outer):
        raise ValueError(message)
    return inner, outer


def check_non_negative(name: str, value: int) -> None:
    """Refuse anything but a non-negative integer (``True`` and ``2.0`` included)."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {value!r}")


def check_num_classes(num_classes: int) -> None:
    """Refuse anything but an integer number of classes ``>= 2``."""
    if isinstance(num_classes, bool) or not isinstance(num_classes, int | np.integer):
        raise ValueError(f"num_classes must be an integer >= 2, got {num_classes!r}")
    if num_classes < 2:
        raise ValueError(f"num_classes must be an integer >= 2, got {num_classes!r}")


def check_class(c: int, num_classes: int) -> None:
    """Refuse a certified class ``c`` that is not a label in ``[0, num_classes)``."""
    if isinstance(c, bool) or not isinstance(c, int | np.integer) or not 0 <= c < num_classes:
        raise ValueError(f"c must be a class label in [0, {num_classes}), got {c!r}")


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
