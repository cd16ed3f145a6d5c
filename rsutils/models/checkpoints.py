"""Checkpoints: saving a model in rsutils' format and reading ours or Cohen et al.'s.

Checkpoints are read in two formats: ours (``{"format": "rsutils", "arch",
"dataset", "state_dict", "meta"}``) and Cohen et al.'s (``{"arch", "state_dict",
...}``, where ``module.`` prefixes left by ``DataParallel`` are removed).
"""

from __future__ import annotations

import codecs
import io
import os
import re
import zipfile
from pathlib import Path
from typing import Any

import torch
from torch import nn

from rsutils.cache import atomic_write_bytes
from rsutils.models.architectures import DEFAULT_DATASET, build_model

__all__ = [
    "load_checkpoint",
    "read_checkpoint",
    "refuse_unreadable",
    "save_checkpoint",
    "strip_data_parallel",
    "text_start",
]


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
    """``torch.load`` (weights only), with a file that is no PyTorch file named as such:
    text (a URL or a path saved by mistake, :func:`text_start`), a zip archive cut short,
    or any other file that ``torch.load`` cannot read (whatever it raises for it)."""
    name = os.fspath(path)
    if os.path.isdir(path):
        raise ValueError(f"{name!r} is a directory, not a checkpoint file")
    refuse_unreadable(path)
    try:
        return torch.load(path, map_location=map_location, weights_only=True)
    except Exception as error:  # torch.load raises many types for a foreign or damaged file
        raise ValueError(
            f"{name!r} is not a readable PyTorch checkpoint ({_reason(error)}); it may be "
            "truncated or damaged: copy or train it again"
        ) from None


def refuse_unreadable(path: str | os.PathLike[str]) -> None:
    """Refuse, in one line, a file that cannot be a PyTorch file whatever its options:
    text (:func:`text_start`) or a zip archive cut short (torch.save, torch.export.save
    and torch.jit.save all write zip archives)."""
    name = os.fspath(path)
    text = text_start(path)
    if text is not None:
        hint = "download the file it names, and " if re.match(r"[a-z]+://", text) else ""
        raise ValueError(
            f"{name!r} is not a PyTorch checkpoint (it is text: {text[:60]!r}); {hint}pass "
            "the file that torch.save, torch.export.save or torch.jit.save wrote"
        )
    with open(path, "rb") as handle:
        zipped = handle.read(4) == b"PK\x03\x04"
    if zipped and not zipfile.is_zipfile(path):
        raise ValueError(
            f"{name!r} is a zip archive cut short or damaged (torch.save, torch.export.save "
            "and torch.jit.save write zip archives): copy it again or save it again"
        )


def text_start(path: str | os.PathLike[str], size: int = 512) -> str | None:
    """The first line of the file at ``path`` if its first ``size`` bytes are text
    (UTF-8 without control characters other than tab and line breaks), else ``None``.
    A PyTorch file never is: a zip archive starts ``PK\\x03\\x04`` and a legacy
    pickle with the byte 0x80."""
    with open(path, "rb") as handle:
        start = handle.read(size)
    if not start:
        return None
    try:  # incremental: the sample may end inside a character
        text = codecs.getincrementaldecoder("utf-8")().decode(start, final=len(start) < size)
    except UnicodeDecodeError:
        return None
    if any(not ch.isprintable() and ch not in "\t\n\r\f" for ch in text):
        return None
    return text.strip().split("\n", 1)[0].strip() or text[:60]


def _reason(error: BaseException) -> str:
    """The first line of an error's message, at most 160 characters, else its type."""
    message = str(error).strip()
    return message.splitlines()[0][:160] if message else type(error).__name__


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
    arch, state = checkpoint["arch"], checkpoint["state_dict"]
    tensors = isinstance(state, dict) and all(
        isinstance(key, str) and isinstance(value, torch.Tensor) for key, value in state.items()
    )
    if not isinstance(arch, str) or not tensors:
        raise ValueError(
            f"{os.fspath(path)!r} is not a checkpoint rsutils can read: its 'arch' must name "
            "an architecture and its 'state_dict' map parameter names to tensors"
        )
    dataset = checkpoint.get("dataset") or dataset or DEFAULT_DATASET.get(arch)
    if dataset is None:
        raise ValueError(f"checkpoint arch {arch!r} does not say its dataset; pass dataset=...")
    model = build_model(arch, dataset)
    state = strip_data_parallel(state)
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
