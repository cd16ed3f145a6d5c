"""What a smoothed classifier refuses: a model that is not ready, an input out of range,
and the integer arguments every part of rsutils checks the same way (a non-negative
integer, a number of classes, a class label).

A certificate is a statement about one base model in eval mode, evaluated on inputs
in a known range: sigma is measured in the input's units, so pixels in 0..255
certified "as if" they were in [0, 1] get radii 255 times too small for what the
model sees, and a Dropout left in training mode makes the count depend on more than
the seed. These checks run before any draw, so a bad call costs nothing.
"""

from __future__ import annotations

import math
from itertools import chain

import numpy as np
import torch
from torch import nn

from rsutils.core.inference import InferenceModel

__all__ = [
    "DEFAULT_INPUT_RANGE",
    "check_class",
    "check_input",
    "check_input_range",
    "check_model",
    "check_non_negative",
    "check_num_classes",
]

#: The range of a clean input unless a smoothed classifier is told otherwise:
#: images as floats in [0, 1], normalisation inside the model (Cohen et al.'s convention).
DEFAULT_INPUT_RANGE = (0.0, 1.0)


def check_input_range(input_range: tuple[float, float] | None) -> tuple[float, float] | None:
    """``(low, high)`` with ``low < high`` (finite), or ``None`` for "any finite input"."""
    if input_range is None:
        return None
    try:
        low, high = (float(v) for v in input_range)
    except (TypeError, ValueError):
        raise ValueError(
            f"input_range must be a pair (low, high) or None, got {input_range!r}"
        ) from None
    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        raise ValueError(f"input_range must be finite with low < high, got {input_range!r}")
    return low, high


def check_model(model: nn.Module) -> None:
    """Refuse a model with a submodule in training mode or with weights not loaded."""
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    if isinstance(model, InferenceModel):  # name the user's submodules, not the wrapper's
        model = model.inner
    training = next((name for name, m in model.named_modules() if m.training), None)
    if training is not None:
        where = "the base model" if training == "" else f"submodule {training!r} of the base model"
        raise ValueError(
            f"{where} is in training mode (dropout and batch norm would make the noisy "
            "draws depend on more than the seed); call model.eval() before certifying"
        )
    if any(t.is_meta for t in chain(model.parameters(), model.buffers())):
        raise ValueError(
            "the base model's weights are on the meta device (not loaded); materialise them "
            "first, e.g. model.to_empty(device='cpu') and then model.load_state_dict(...)"
        )


def check_input(
    x: torch.Tensor, input_range: tuple[float, float] | None, *, batched: bool = False
) -> None:
    """Refuse a non-tensor, an integer tensor, NaN or infinite values, values out of range.

    ``batched`` says that ``x`` holds several inputs along its first dimension.
    """
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"x must be a torch.Tensor, got {type(x).__name__}")
    if x.dim() <= int(batched):
        what = "a batch of inputs" if batched else "one input (e.g. an image of shape (C, H, W))"
        raise ValueError(f"x must be {what}, got shape {tuple(x.shape)}")
    if not x.is_floating_point():
        raise TypeError(
            f"x has dtype {x.dtype}; pass pixels as floats in [0, 1] (e.g. x.float() / 255), "
            "the units the noise level is measured in"
        )
    if not bool(torch.isfinite(x).all()):
        raise ValueError("x contains NaN or infinite values; clean the input first")
    if input_range is not None:
        _check_range(x, input_range)


def _check_range(x: torch.Tensor, input_range: tuple[float, float]) -> None:
    low, high = input_range
    x_min, x_max = float(x.min()), float(x.max())
    if x_min < low or x_max > high:
        raise ValueError(
            f"x has values in [{x_min:.4g}, {x_max:.4g}], outside input_range=({low:g}, {high:g}) "
            "in whose units the noise level is measured. Pass inputs in that range "
            "(e.g. x / 255, normalisation inside the model), or build the smoothed "
            "classifier with the input_range your inputs live in (None: any finite input)."
        )


def check_non_negative(name: str, value: int, what: str = "a non-negative integer") -> None:
    """Refuse anything but a non-negative integer (``True`` and ``2.0`` included), with
    ``name`` and ``what`` it must be in the message."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 0:
        raise ValueError(f"{name} must be {what}, got {value!r}")


def check_num_classes(num_classes: int) -> None:
    """Refuse anything but an integer number of classes ``>= 2``."""
    if isinstance(num_classes, bool) or not isinstance(num_classes, int | np.integer):
        raise ValueError(f"num_classes must be an integer >= 2, got {num_classes!r}")
    if num_classes < 2:
        raise ValueError(f"num_classes must be an integer >= 2, got {num_classes!r}")


def check_class(c: int, num_classes: int) -> None:
    """Refuse a class ``c`` that is not a label in ``[0, num_classes)``."""
    if isinstance(c, bool) or not isinstance(c, int | np.integer) or not 0 <= c < num_classes:
        raise ValueError(f"c must be a class label in [0, {num_classes}), got {c!r}")
