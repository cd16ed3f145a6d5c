"""Where a model lives and where its noise is drawn.

Sampling runs on the base model's device and in its floating-point type, so that the
noise never crosses the bus: :func:`model_device` and :func:`model_dtype` read them off
the model, and :func:`pick_device` turns a user's ``"auto"`` into a real device.
"""

from __future__ import annotations

from itertools import chain

import torch
from torch import nn

__all__ = ["model_device", "model_dtype", "pick_device"]


def pick_device(name: str | torch.device = "auto") -> torch.device:
    """``"auto"`` means CUDA when available, else CPU; other names pass through."""
    if isinstance(name, torch.device):
        return name
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


def model_device(model: nn.Module) -> torch.device:
    """The device of the model's first parameter or buffer (CPU if it has none)."""
    first = next(chain(model.parameters(), model.buffers()), None)
    return torch.device("cpu") if first is None else first.device


def model_dtype(model: nn.Module) -> torch.dtype:
    """The dtype of the model's first floating-point parameter (float32 if none)."""
    tensors = chain(model.parameters(), model.buffers())
    return next((t.dtype for t in tensors if t.is_floating_point()), torch.float32)
