"""What a model file is, told from its content without running any of it.

:func:`source_kind` tells the five sources of :func:`~rsutils.models.sources.load_model`
apart: the ``torchvision:`` prefix, a ``torch.export`` or TorchScript archive, a
checkpoint (tensors and plain containers, which the weights-only loader reads), or a
pickle that names code (a module saved whole), whose globals are read off its opcodes
(:func:`pickle_globals`) and never run. A file that is no model rsutils reads (text, a
zip archive cut short, another framework's format, a bare state dict or tensor) is a
one-line ``ValueError`` naming what to pass instead.
"""

from __future__ import annotations

import io
import os
import pickle
import pickletools
import zipfile
from pathlib import Path

import torch

from rsutils.models.checkpoints import refuse_unreadable

__all__ = [
    "KINDS",
    "PLAIN_GLOBALS",
    "SOURCES_HINT",
    "TORCHVISION_PREFIX",
    "pickle_globals",
    "source_kind",
]

TORCHVISION_PREFIX = "torchvision:"
#: The kinds of source :func:`source_kind` tells apart.
KINDS = ("checkpoint", "torchvision", "pickle", "export", "torchscript")

#: Globals of plain tensors and containers, left out when naming a pickle's code.
PLAIN_GLOBALS = (
    "torch._utils.",
    "collections.",
    "torch.FloatStorage",
    "torch.storage.",
    "__builtin__.",
    "builtins.",
)
SOURCES_HINT = (
    "pass a checkpoint of rsutils or Cohen et al., a torch.export .pt2 or TorchScript file, "
    "a module saved with torch.save(model) (with --trust-pickle), or torchvision:NAME --weights"
)
_FOREIGN_FORMATS = {
    ".onnx": "an ONNX",
    ".safetensors": "a safetensors",
    ".h5": "a Keras",
    ".keras": "a Keras",
    ".pb": "a TensorFlow",
    ".tflite": "a TensorFlow Lite",
    ".npy": "a NumPy",
}


def source_kind(source: str | os.PathLike[str]) -> str:
    """One of :data:`KINDS`, from the ``torchvision:`` prefix or the file's content.

    Reads the file's tensors without running any of its code. A missing file is a
    ``FileNotFoundError``; a file that is no model rsutils reads is a one-line
    ``ValueError`` naming what to pass instead: text, a zip archive cut short
    (:func:`~rsutils.models.checkpoints.refuse_unreadable`), another framework's format
    (a damaged checkpoint keeps :func:`~rsutils.models.checkpoints.load_checkpoint`'s
    message).
    """
    text = os.fspath(source)
    if text.startswith(TORCHVISION_PREFIX):
        return "torchvision"
    if not os.path.exists(text):
        raise FileNotFoundError(f"no checkpoint at {text!r}")
    if os.path.isdir(text):
        return "checkpoint"  # load_checkpoint names it as a directory
    refuse_unreadable(text)  # text, or a zip archive cut short: damage before options
    if zipfile.is_zipfile(text):
        kind = _archive_kind(text)
        if kind is not None:
            return kind
    else:
        _refuse_foreign_format(text)
    return _pickle_kind(text)


def _archive_kind(path: str) -> str | None:
    """``export`` or ``torchscript`` for their zip archives, ``None`` for torch.save's."""
    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
    except (zipfile.BadZipFile, OSError):
        return None  # torch.load names the damage
    base = {name.rsplit("/", 1)[-1] for name in names}
    if base & {"archive_format", "serialized_exported_program.json"}:
        return "export"
    if any("/code/" in name for name in names) and "constants.pkl" in base:
        return "torchscript"
    if "data.pkl" in base:
        return None
    raise ValueError(f"{path!r} is a zip archive but no PyTorch model file; {SOURCES_HINT}")


def _refuse_foreign_format(path: str) -> None:
    what = _FOREIGN_FORMATS.get(Path(path).suffix.lower())
    if what is not None:
        raise ValueError(
            f"{path!r} looks like {what} file, which rsutils does not read; save the model "
            "from PyTorch with torch.export.save or torch.jit.save, or its state dict for "
            "torchvision:NAME --weights"
        )


def _pickle_kind(path: str) -> str:
    """``pickle`` for pickled objects that name code, else ``checkpoint``."""
    try:
        value = torch.load(
            path, map_location="cpu", weights_only=True, mmap=zipfile.is_zipfile(path)
        )
    except pickle.UnpicklingError:
        # A well-formed pickle that the weights-only loader refused names code; any
        # other failure is damage, which load_checkpoint explains.
        return "pickle" if pickle_globals(path) is not None else "checkpoint"
    except Exception:  # torch.load raises many types for a damaged file: load_checkpoint's
        return "checkpoint"
    _refuse_bare_values(path, value)
    return "checkpoint"


def _refuse_bare_values(path: str, value: object) -> None:
    """A state dict without its architecture, or a lone tensor, named as such."""
    if isinstance(value, dict) and "arch" in value and "state_dict" in value:
        return
    if (
        isinstance(value, dict)
        and value
        and all(isinstance(v, torch.Tensor) for v in value.values())
    ):
        raise ValueError(
            f"{path!r} holds a state dict without its architecture; pass torchvision:NAME "
            f"--weights {path} for a torchvision model's, or save {{'arch', 'state_dict'}}"
        )
    if not isinstance(value, dict):
        raise ValueError(f"{path!r} holds a {type(value).__name__}, not a model; {SOURCES_HINT}")


def pickle_globals(path: str) -> list[str] | None:
    """The classes and functions a torch.save file's pickle names (read, not run), or
    ``None`` when the file holds no well-formed pickle."""
    try:
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as archive:
                name = next(n for n in archive.namelist() if n.endswith("/data.pkl"))
                return _globals_of(archive.read(name), streams=1)
        with open(path, "rb") as handle:  # the legacy format: four pickles, then storages
            return _globals_of(handle.read(), streams=4)
    except (ValueError, EOFError, StopIteration, KeyError, OSError, zipfile.BadZipFile):
        return None


def _globals_of(data: bytes, streams: int) -> list[str]:
    """The globals named by ``streams`` consecutive pickles in ``data``."""
    handle, found, strings = io.BytesIO(data), [], []
    for _ in range(streams):
        for opcode, arg, _position in pickletools.genops(handle):
            if opcode.name == "GLOBAL":
                found.append(str(arg).replace(" ", "."))
            elif opcode.name == "STACK_GLOBAL" and len(strings) >= 2:
                found.append(".".join(strings[-2:]))
            elif isinstance(arg, str):
                strings.append(arg)
    return list(dict.fromkeys(found))
