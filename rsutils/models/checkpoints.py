"""Checkpoints: saving a model in rsutils' format and reading ours or Cohen et al.'s.

Checkpoints are read in two formats: ours (``{"format": "rsutils", "arch",
"dataset", "state_dict", "meta"}``) and Cohen et al.'s (``{"arch", "state_dict",
...}``, where ``module.`` prefixes left by ``DataParallel`` are removed).
"""

from __future__ import annotations

import io
import os
import pickle
import zipfile
from pathlib import Path
from typing import Any

import torch
from torch import nn

from rsutils.cache import atomic_write_bytes
from rsutils.models.architectures import DEFAULT_DATASET, build_model

__all__ = ["load_checkpoint", "read_checkpoint", "save_checkpoint", "strip_data_parallel"]


def save_checkpoint(
    model: nn.Sequential,
    path: str | os.PathLike[str],
    *,
    arch: str,
    dataset: str,
    meta: dict[str, Any] | None = None,
    generator: nn.Module | None = None,
) -> None:
    """Save ``model`` in our format, atomically (a killed save leaves no torn file).

    ``generator``, a noise parameter generator of :mod:`rsutils.anisotropic.generators`,
    is saved in the same file (its kind, settings and weights); read it back with
    :func:`rsutils.anisotropic.generators.load_generator`.
    """
    checkpoint = {
        "format": "rsutils",
        "arch": arch,
        "dataset": dataset,
        "state_dict": model.state_dict(),
        "meta": meta or {},
    }
    if generator is not None:
        checkpoint["generator"] = {
            "kind": generator.kind,
            "settings": generator.settings(),
            "state_dict": generator.state_dict(),
        }
    buffer = io.BytesIO()
    torch.save(checkpoint, buffer)
    atomic_write_bytes(Path(path), buffer.getvalue())


def strip_data_parallel(state_dict: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """``state_dict`` without the ``module`` parts of its keys that ``DataParallel`` adds."""
    return {
        ".".join(part for part in key.split(".") if part != "module"): value
        for key, value in state_dict.items()
    }


def read_checkpoint(path: str | os.PathLike[str], map_location: str | torch.device) -> Any:
    """``torch.load`` (weights only), with a damaged file named as such."""
    if os.path.isdir(path):
        raise ValueError(f"{os.fspath(path)!r} is a directory, not a checkpoint file")
    try:
        return torch.load(path, map_location=map_location, weights_only=True)
    except (
        RuntimeError,
        EOFError,
        ValueError,
        pickle.UnpicklingError,
        zipfile.BadZipFile,
    ) as error:
        reason = (
            str(error).strip().splitlines()[0][:160] if str(error).strip() else type(error).__name__
        )
        raise ValueError(
            f"{os.fspath(path)!r} is not a readable PyTorch checkpoint ({reason}); it may be "
            "truncated or damaged: copy or train it again"
        ) from None


def load_checkpoint(
    path: str | os.PathLike[str],
    *,
    dataset: str | None = None,
    map_location: str | torch.device = "cpu",
) -> tuple[nn.Sequential, dict[str, Any]]:
    """Load a checkpoint (ours or Cohen et al.'s) into a model in eval mode.

    The file is read with ``torch.load(weights_only=True)``: tensors and plain
    containers only, so a checkpoint from elsewhere cannot run code.
    Returns ``(model, info)`` with ``info`` holding ``arch``, ``dataset``, ``meta`` and
    ``generator`` (the stored noise parameter generator's kind, settings and weights,
    or ``None``).
    ``dataset`` is needed only for Cohen-format checkpoints whose architecture does
    not imply it.
    """
    if not os.path.exists(path):
        raise FileNotFoundError(f"no checkpoint at {os.fspath(path)!r}")
    checkpoint = read_checkpoint(path, map_location)
    if (
        not isinstance(checkpoint, dict)
        or "arch" not in checkpoint
        or "state_dict" not in checkpoint
    ):
        raise ValueError(
            f"{os.fspath(path)!r} is not a checkpoint rsutils can read: expected a dict with "
            "'arch' and 'state_dict' (ours, or Cohen et al.'s format)"
        )
    arch = checkpoint["arch"]
    dataset = checkpoint.get("dataset") or dataset or DEFAULT_DATASET.get(arch)
    if dataset is None:
        raise ValueError(f"checkpoint arch {arch!r} does not say its dataset; pass dataset=...")
    model = build_model(arch, dataset)
    state = strip_data_parallel(checkpoint["state_dict"])
    if not any(key.startswith("1.") for key in state):  # a bare network without Normalize
        state = {f"1.{key}": value for key, value in state.items()}
    try:
        model.load_state_dict(state)
    except RuntimeError as error:
        raise ValueError(
            f"{os.fspath(path)!r}: its weights do not fit a {arch} for {dataset} "
            f"({str(error).splitlines()[0]}); check the checkpoint and the dataset argument"
        ) from None
    model.to(map_location).eval()
    info = {
        "arch": arch,
        "dataset": dataset,
        "meta": checkpoint.get("meta", {}),
        "generator": checkpoint.get("generator"),
    }
    return model, info
