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
    """``"auto"`` means CUDA when available, else CPU; other names must exist here.

    An unknown name, or an accelerator this machine does not have, is a
    ``ValueError`` that lists what is available.
    """
    if isinstance(name, torch.device):
        return name
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        device = torch.device(name)
    except (RuntimeError, TypeError):
        raise ValueError(
            f"unknown device {name!r}; use auto, cpu, cuda, cuda:N or mps ({_available()})"
        ) from None
    _check_available(device)
    return device


def _available() -> str:
    found = ["cpu"]
    if torch.cuda.is_available():
        found.append(f"cuda:0..{torch.cuda.device_count() - 1}")
    if torch.backends.mps.is_available():
        found.append("mps")
    return "available here: " + ", ".join(found)


def _check_available(device: torch.device) -> None:
    if device.type == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if (device.index or 0) >= count:
            raise ValueError(
                f"device {str(device)!r} is not available: torch sees {count} CUDA GPU(s) "
                f"({_available()}); use --device cpu or auto"
            )
    elif device.type == "mps" and not torch.backends.mps.is_available():
        raise ValueError(f"device 'mps' is not available ({_available()}); use cpu or auto")
    elif device.type == "meta":
        raise ValueError("the meta device holds no data; use cpu, cuda or auto")


def model_device(model: nn.Module) -> torch.device:
    """The device of the model's first parameter or buffer (CPU if it has none)."""
    first = next(chain(model.parameters(), model.buffers()), None)
    return torch.device("cpu") if first is None else first.device


def model_dtype(model: nn.Module) -> torch.dtype:
    """The dtype of the model's first floating-point parameter (float32 if none)."""
    tensors = chain(model.parameters(), model.buffers())
    return next((t.dtype for t in tensors if t.is_floating_point()), torch.float32)
