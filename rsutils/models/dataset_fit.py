"""Whether a base classifier fits a dataset: its normalisation, and one forward pass.

rsutils feeds images in [0, 1] (:mod:`rsutils.data`); a model trained on normalised
inputs gets a :class:`~rsutils.models.architectures.Normalize` layer in front, with a
dataset's statistics or the user's (:func:`normalization_stats`).
:func:`check_model_fits` runs the model once on zeros of the dataset's input shape and
says, in one line, what does not fit (the input shape, the class count, a batch), so
that a command refuses such a model before any noisy draw and before writing anything.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch
from torch import nn

from rsutils.core.devices import model_device
from rsutils.core.inference import InferenceModel
from rsutils.models.architectures import DATASET_STATS

__all__ = [
    "check_model_fits",
    "check_stats_channels",
    "checked_stats",
    "error_line",
    "normalization_stats",
]


def normalization_stats(
    name: str | None = None,
    mean: Sequence[float] | None = None,
    std: Sequence[float] | None = None,
) -> tuple[tuple[float, ...], tuple[float, ...]] | None:
    """``(mean, std)`` of a dataset's ``name`` (``imagenet``, ``cifar10``…) or given per
    channel, or ``None`` (``name`` None or ``"none"``): no normalisation layer."""
    if name not in (None, "none") and (mean is not None or std is not None):
        raise ValueError("--normalize and --mean/--std exclude each other; drop one")
    if name not in (None, "none"):
        if name not in DATASET_STATS:
            raise ValueError(f"unknown --normalize {name!r}; choose one of {sorted(DATASET_STATS)}")
        return DATASET_STATS[name]
    if (mean is None) != (std is None):
        raise ValueError("--mean and --std go together; pass both (one value per channel)")
    if mean is None or std is None:
        return None
    return checked_stats(mean, std)


def checked_stats(
    mean: Sequence[float], std: Sequence[float]
) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """``(mean, std)`` as tuples of floats, of one length, finite, with ``std`` > 0."""
    mean, std = tuple(float(m) for m in mean), tuple(float(s) for s in std)
    if not mean or len(mean) != len(std):
        raise ValueError(
            f"--mean has {len(mean)} values and --std {len(std)}; give one per channel"
        )
    if not all(map(math.isfinite, mean)) or not all(math.isfinite(s) and s > 0 for s in std):
        raise ValueError("--mean must be finite and --std finite and > 0")
    return mean, std


def check_stats_channels(
    stats: tuple[Sequence[float], Sequence[float]] | None, channels: int, given: str
) -> None:
    """Refuse normalisation statistics with one value per channel for another number of
    channels than the images' (one value serves every channel); ``given`` names where
    they came from (``--mean/--std``, ``--normalize imagenet``) for the message."""
    if stats is None or len(stats[0]) in (1, channels):
        return
    count, values = len(stats[0]), "one value" if channels == 1 else f"one value or {channels}"
    if given.startswith("--mean"):
        fix = f"give {values} to each"
    else:
        fix = f"pass --mean and --std with {values} each instead, or drop {given.split()[0]}"
    verb = "give" if given.startswith("--mean") else "gives"
    raise ValueError(f"{given} {verb} {count} channels, the images have {channels}; {fix}")


def check_model_fits(model: nn.Module, input_shape: Sequence[int], num_classes: int) -> None:
    """Refuse, in one line, a model that does not classify the dataset's inputs.

    One forward pass on zeros of ``(1, *input_shape)`` in eval mode without gradients
    (an :class:`~rsutils.core.inference.InferenceModel` is checked by its inner model)
    must give ``(1, num_classes)``, and a batch of two must go through too. The model's
    mode is left as it was.
    """
    inner = model.inner if isinstance(model, InferenceModel) else model
    shape = "×".join(str(size) for size in input_shape)
    was_training = inner.training
    inner.eval()
    try:
        with torch.no_grad():
            output = _forward(inner, (1, *input_shape), shape)
            _check_output(output, num_classes)
            _forward(inner, (2, *input_shape), shape, batch=True)
    finally:
        if was_training:
            inner.train()


def _forward(model: nn.Module, shape: tuple[int, ...], text: str, batch: bool = False) -> Any:
    zeros = torch.zeros(shape, device=model_device(model))
    try:
        return model(zeros)
    except Exception as error:  # a model may raise anything on an input it does not take
        if batch:
            raise ValueError(
                f"the model takes one input but not a batch of two ({error_line(error)}); "
                "export it with a dynamic batch dimension"
            ) from None
        raise ValueError(
            f"the model does not take inputs of shape {text} (the dataset's): {error_line(error)}"
        ) from None


def _check_output(output: Any, num_classes: int) -> None:
    if not isinstance(output, torch.Tensor):
        raise ValueError(
            f"the model returns a {type(output).__name__}, not a tensor of logits of shape "
            f"(1, {num_classes})"
        )
    if output.dim() == 2 and output.shape[0] == 1 and output.shape[1] != num_classes:
        raise ValueError(
            f"the model has {output.shape[1]} outputs, the dataset has {num_classes} classes"
        )
    if tuple(output.shape) != (1, num_classes):
        raise ValueError(
            f"the model returns shape {tuple(output.shape)} for one input, not (1, {num_classes})"
        )


def error_line(error: BaseException) -> str:
    """The line of an error's message that says what went wrong, at most 200 characters
    (for TorchScript's, the last: its first only says that the interpreter failed)."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    if not lines:
        return type(error).__name__
    line = lines[-1] if "TorchScript interpreter" in lines[0] else lines[0]
    return line[:200]
