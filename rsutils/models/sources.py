"""Base classifiers from where users keep them: the model a user has, not only ours.

:func:`load_model` loads a base classifier from one of five sources, told apart by a
prefix or by the file's content (not its name):

- ``torchvision:NAME``: torchvision's classification architecture ``NAME``
  (``torchvision.models.list_models``), built with the dataset's class count, with its
  weights from a state-dict file (plain, ``{"state_dict": ...}`` as Cohen et al. save
  it, or with ``DataParallel``'s ``module.`` prefixes), or torchvision's own weights by
  name (``DEFAULT``, ``IMAGENET1K_V1``…, downloaded into torch's hub cache). Random
  weights need ``untrained=True``: certifying them is a mistake outside tests and demos.
- a checkpoint of rsutils or Cohen et al. (:func:`~rsutils.models.checkpoints.load_checkpoint`,
  its behaviour and messages unchanged);
- a module saved whole with ``torch.save(model, path)``: unpickling it runs code named
  in the file, so it is loaded only with ``trust_pickle=True``;
- a ``torch.export.save`` archive (``.pt2``) or a TorchScript file (``torch.jit.save``),
  whose graphs load without running the file's Python.

rsutils feeds images in [0, 1]; a model trained on normalised inputs gets a
:class:`~rsutils.models.architectures.Normalize` layer in front (``normalize=(mean, std)``,
see :func:`~rsutils.models.dataset_fit.normalization_stats`);
:func:`~rsutils.models.dataset_fit.check_model_fits` then checks the model against the
dataset with one forward pass, before any noisy draw.
"""

from __future__ import annotations

import difflib
import hashlib
import http.client
import io
import os
import pickle
import pickletools
import re
import warnings
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import torch
from torch import nn

from rsutils.core.streams import derived_seed
from rsutils.data import DATASET_CLASSES
from rsutils.models.architectures import Normalize
from rsutils.models.checkpoints import (
    load_checkpoint,
    read_checkpoint,
    refuse_unreadable,
    strip_data_parallel,
)
from rsutils.models.dataset_fit import checked_stats, error_line

__all__ = [
    "KINDS",
    "TORCHVISION_PREFIX",
    "UNTRAINED_SEED",
    "LoadedModel",
    "file_digest",
    "load_model",
    "source_kind",
]

TORCHVISION_PREFIX = "torchvision:"
#: The kinds of source :func:`source_kind` tells apart.
KINDS = ("checkpoint", "torchvision", "pickle", "export", "torchscript")
#: The seed of an untrained torchvision model's initialisation (the same weights each run).
UNTRAINED_SEED = 0

#: Globals of plain tensors and containers, left out when naming a pickle's code.
_PLAIN_GLOBALS = (
    "torch._utils.",
    "collections.",
    "torch.FloatStorage",
    "torch.storage.",
    "__builtin__.",
    "builtins.",
)
_SOURCES_HINT = (
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


@dataclass(frozen=True)
class LoadedModel:
    """A base classifier in eval mode on its device, with what identifies it.

    ``identity`` is JSON-ready and names the model exactly (a log records it): the file's
    digest (``checkpoint``) for a file, or for torchvision the architecture (``model``)
    and its weights (``weights``: the file's digest, torchvision's weights name, or
    ``untrained (seed 0)``); with a normalisation layer, ``normalize`` holds its mean and
    std. ``info`` is :func:`~rsutils.models.checkpoints.load_checkpoint`'s for a checkpoint
    (its ``dataset`` above all), else ``None``. ``classes`` names the model's outputs in
    order where they are known (a checkpoint of a dataset of
    :data:`~rsutils.data.DATASET_CLASSES`, torchvision's weights by name), else ``None``;
    it is not part of ``identity``.
    """

    model: nn.Module
    kind: str
    identity: dict[str, Any]
    info: dict[str, Any] | None = None
    classes: tuple[str, ...] | None = None


def file_digest(path: str | os.PathLike[str]) -> str:
    """The first 16 hex digits of the SHA-256 of the file at ``path``: what a log records
    of the model file it certified, so that it is never resumed with another."""
    sha = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            sha.update(chunk)
    return sha.hexdigest()[:16]


# --- telling sources apart -----------------------------------------------------------


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
    raise ValueError(f"{path!r} is a zip archive but no PyTorch model file; {_SOURCES_HINT}")


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
        return "pickle" if _pickle_globals(path) is not None else "checkpoint"
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
        raise ValueError(f"{path!r} holds a {type(value).__name__}, not a model; {_SOURCES_HINT}")


def _pickle_globals(path: str) -> list[str] | None:
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


# --- loading each kind ---------------------------------------------------------------


def load_model(
    source: str | os.PathLike[str],
    *,
    dataset: str | None = None,
    num_classes: int | None = None,
    weights: str | None = None,
    untrained: bool = False,
    trust_pickle: bool = False,
    normalize: tuple[Sequence[float], Sequence[float]] | None = None,
    map_location: str | torch.device = "cpu",
) -> LoadedModel:
    """The base classifier ``source`` names, in eval mode on ``map_location``.

    ``source`` is ``torchvision:NAME`` (with ``weights``: a state-dict file or
    torchvision's weights name, or ``untrained=True``; ``num_classes`` sizes its last
    layer for random or file weights, and without it a file's class count is read off
    its output layer), or a file of another kind of
    :data:`KINDS` (see :func:`source_kind`). ``dataset`` is passed on to
    :func:`~rsutils.models.checkpoints.load_checkpoint`. A pickled module loads only with
    ``trust_pickle=True``. ``normalize=(mean, std)`` puts a
    :class:`~rsutils.models.architectures.Normalize` in front (not for checkpoints, which
    carry their own). Every refusal is a one-line ``ValueError`` naming the fix; a file
    is read before the options are judged against it, so a damaged file is named as
    such whatever the options.
    """
    kind = source_kind(source)
    path = os.fspath(source)
    if kind == "torchvision":
        name = path.removeprefix(TORCHVISION_PREFIX)
        model, identity, classes = _torchvision(name, weights, untrained, num_classes)
        loaded = LoadedModel(model, kind, identity, classes=classes)
        return _normalized(loaded, normalize, map_location)
    if kind == "checkpoint":
        model, info = load_checkpoint(path, dataset=dataset, map_location=map_location)
        _refuse_options(path, weights, untrained)
        if normalize is not None:
            raise ValueError(
                f"{path!r} is a checkpoint of rsutils or Cohen et al., which normalises its "
                "inputs itself; drop --normalize/--mean/--std"
            )
        classes = DATASET_CLASSES.get(info["dataset"])
        return LoadedModel(model, kind, {"checkpoint": file_digest(path)}, info, classes)
    model = _LOADERS[kind](path, map_location, trust_pickle)
    _refuse_options(path, weights, untrained)
    loaded = LoadedModel(model, kind, {"checkpoint": file_digest(path)})
    return _normalized(loaded, normalize, map_location)


def _refuse_options(path: str, weights: str | None, untrained: bool) -> None:
    """Refuse the options of torchvision's weights for a file that holds its own."""
    if weights is not None or untrained:
        option = "--weights" if weights is not None else "--untrained"
        raise ValueError(f"{option} goes with torchvision:NAME; {path!r} holds its own weights")


def _normalized(
    loaded: LoadedModel,
    normalize: tuple[Sequence[float], Sequence[float]] | None,
    map_location: str | torch.device,
) -> LoadedModel:
    """``loaded`` behind a normalisation layer if ``normalize`` is given, in eval mode
    on ``map_location``."""
    model, identity = loaded.model, dict(loaded.identity)
    if normalize is not None:
        mean, std = checked_stats(*normalize)
        model = nn.Sequential(Normalize(mean, std), model)
        identity["normalize"] = {"mean": list(mean), "std": list(std)}
    return replace(loaded, model=model.to(map_location).eval(), identity=identity)


def _pickled(path: str, map_location: str | torch.device, trust: bool) -> nn.Module:
    """A module saved with ``torch.save(model)``, unpickled only when ``trust``."""
    if not trust:
        names = [g for g in _pickle_globals(path) or [] if not g.startswith(_PLAIN_GLOBALS)]
        named = f" (it names {', '.join(names[:3])})" if names else ""
        raise ValueError(
            f"{path!r} holds pickled Python objects{named}, and loading them runs code from "
            "the file; pass --trust-pickle (trust_pickle=True) only if you trust its "
            "source, or save the model with torch.export.save or torch.jit.save instead"
        )
    try:
        value = torch.load(path, map_location=map_location, weights_only=False)
    except (AttributeError, ImportError) as error:
        raise ValueError(
            f"{path!r} names a class this process cannot import ({error}); import the module "
            "that defines it first, or save the model with torch.export.save instead"
        ) from None
    except Exception as error:  # unpickling a damaged file raises many types
        raise ValueError(
            f"{path!r} is not a readable torch.save file ({error_line(error)}); it may be "
            "truncated or damaged: copy it again or save it again"
        ) from None
    if not isinstance(value, nn.Module):
        keys = f" (keys: {', '.join(map(str, value))})" if isinstance(value, dict) else ""
        raise ValueError(
            f"{path!r} holds a {type(value).__name__}{keys}, not a torch.nn.Module; save the "
            "module itself with torch.save(model, path)"
        )
    return value


def _exported(path: str, map_location: str | torch.device, trust: bool) -> nn.Module:
    """The module of a ``torch.export.save`` archive, refused if exported in training mode."""
    del trust  # an exported graph runs no Python from the file
    try:
        program = torch.export.load(path)
    except Exception as error:  # deserialisation raises many types for a damaged archive
        raise ValueError(
            f"{path!r} is not a readable torch.export archive ({error_line(error)}); "
            "save it again with torch.export.save"
        ) from None
    module = program.module()
    if _exported_for_training(module):
        raise ValueError(
            f"{path!r} was exported in training mode (batch norm or dropout use the batch); "
            "call model.eval() before torch.export.export and save it again"
        )
    return _ExportedModule(module)


def _exported_for_training(module: nn.Module) -> bool:
    """Whether the graph has batch-norm or dropout operators of training mode."""
    for node in module.graph.nodes:
        name = str(node.target)
        if "_native_batch_norm_legit_functional" in name or name.endswith(
            "_native_batch_norm_legit.default"
        ):
            return True
        where = _TRAINING_FLAG.get(name.split(".")[1] if name.startswith("aten.") else "")
        if where is not None and len(node.args) > where and node.args[where] is True:
            return True
    return False


#: Operators with a ``training`` (or ``train``) flag, and its position among the arguments.
_TRAINING_FLAG = {"batch_norm": 5, "dropout": 2, "native_dropout": 2, "feature_dropout": 2}


class _ExportedModule(nn.Module):
    """An exported program's module, whose mode was fixed when it was exported: ``eval``
    only sets the flags, and ``train`` is refused."""

    def __init__(self, module: nn.Module) -> None:
        super().__init__()
        self.program = module
        self.train(False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """The exported graph's output on ``x``."""
        return self.program(x)

    def train(self, mode: bool = True) -> _ExportedModule:
        """Set the flags of eval mode; an exported graph cannot go back to training."""
        if mode:
            raise ValueError("an exported program cannot be put in training mode")
        for module in self.modules():
            module.training = False
        return self


def _torchscript(path: str, map_location: str | torch.device, trust: bool) -> nn.Module:
    """A TorchScript module (``torch.jit.save``); torch's warning that TorchScript is
    deprecated is not repeated (prefer ``torch.export``, which loads the same way)."""
    del trust  # TorchScript runs its own restricted language, not the file's Python
    try:
        with warnings.catch_warnings():  # torch's deprecation of TorchScript, not the user's
            warnings.filterwarnings("ignore", r"`torch\.jit\.load` is deprecated", FutureWarning)
            return torch.jit.load(path, map_location=map_location)
    except Exception as error:  # a damaged archive raises more than RuntimeError
        raise ValueError(
            f"{path!r} is not a readable TorchScript file ({error_line(error)}); save it "
            "again with torch.jit.save"
        ) from None


_LOADERS = {"pickle": _pickled, "export": _exported, "torchscript": _torchscript}


# --- torchvision ----------------------------------------------------------------------


def _torchvision(
    name: str, weights: str | None, untrained: bool, num_classes: int | None
) -> tuple[nn.Module, dict[str, Any], tuple[str, ...] | None]:
    """torchvision's classifier ``name`` with the weights asked for, its identity, and
    its class names (those of torchvision's weights, else ``None``)."""
    _check_torchvision_name(name)
    if weights is not None and untrained:
        raise ValueError("--weights and --untrained exclude each other; drop one")
    identity: dict[str, Any] = {"model": f"{TORCHVISION_PREFIX}{name}"}
    sized = {} if num_classes is None else {"num_classes": num_classes}
    if weights is None and not untrained:
        raise ValueError(
            f"torchvision:{name} needs its weights: pass --weights FILE (a saved state dict) "
            "or --weights DEFAULT (torchvision's), or --untrained to certify random weights "
            "(for tests and demos only)"
        )
    if weights is None:
        identity["weights"] = f"untrained (seed {UNTRAINED_SEED})"
        return _seeded_build(name, sized), identity, None
    if os.path.exists(weights):
        state = _state_dict_file(weights)
        model = _seeded_build(name, sized)
        if not sized:  # a dataset without a known class count: read it off the weights
            model = _sized_to(model, state, name)
        _load_weights(model, state, weights, name)
        identity["weights"] = file_digest(weights)
        return model, identity, None
    chosen = _torchvision_weights(name, weights)
    identity["weights"] = f"{type(chosen).__name__}.{chosen.name}"
    classes = tuple(chosen.meta.get("categories") or ()) or None
    return _download_build(name, chosen), identity, classes


def _check_torchvision_name(name: str) -> None:
    import torchvision

    known = torchvision.models.list_models(module=torchvision.models)
    if name in known:
        return
    if name in torchvision.models.list_models():
        raise ValueError(f"torchvision:{name} is not an image classifier; pick one of list_models")
    close = difflib.get_close_matches(name, known, n=3)
    hint = f"did you mean {' or '.join(close)}? " if close else ""
    raise ValueError(
        f"torchvision has no classifier {name!r}; {hint}torchvision.models.list_models("
        "module=torchvision.models) lists them"
    )


def _seeded_build(name: str, sized: dict[str, int]) -> nn.Module:
    """The architecture with a seeded initialisation: the same weights every run."""
    import torchvision

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(derived_seed(UNTRAINED_SEED, 0, "init"))
        return torchvision.models.get_model(name, weights=None, **sized)


def _state_dict_file(path: str) -> dict[str, torch.Tensor]:
    """The state dict of a file: plain, ``{"state_dict": ...}``, ``module.``-prefixed, or
    behind a normalisation layer (``1.``) as rsutils and Cohen et al. save them."""
    state = read_checkpoint(path, "cpu")
    if isinstance(state, dict) and isinstance(state.get("state_dict"), dict):
        state = state["state_dict"]
    if not isinstance(state, dict) or not all(isinstance(v, torch.Tensor) for v in state.values()):
        raise ValueError(
            f"--weights {path} holds no state dict; save one with "
            "torch.save(model.state_dict(), path)"
        )
    state = strip_data_parallel(state)
    if state and all(key.startswith("1.") for key in state):
        state = {key.removeprefix("1."): value for key, value in state.items()}
    return state


def _sized_to(model: nn.Module, state: dict[str, torch.Tensor], name: str) -> nn.Module:
    """``model`` rebuilt with the class count of ``state`` when its output layer is the
    one layer whose first dimension differs (else ``model`` as it is)."""
    expected = model.state_dict()
    counts = {
        value.shape[0]
        for key, value in state.items()
        if key in expected
        and value.dim() >= 1
        and value.shape[1:] == expected[key].shape[1:]
        and value.shape[0] != expected[key].shape[0]
    }
    return _seeded_build(name, {"num_classes": counts.pop()}) if len(counts) == 1 else model


def _load_weights(model: nn.Module, state: dict[str, torch.Tensor], path: str, name: str) -> None:
    try:
        model.load_state_dict(state)
    except RuntimeError as error:
        raise ValueError(
            f"--weights {path} does not fit torchvision's {name} ({error_line(error)}); "
            "check the architecture and the dataset's class count"
        ) from None


def _torchvision_weights(name: str, weights: str) -> Any:
    """torchvision's weights enum member that ``weights`` names (``DEFAULT`` included)."""
    import torchvision

    enum = torchvision.models.get_model_weights(name)
    key = weights.removeprefix(f"{enum.__name__}.")
    if re.fullmatch(r"[A-Z][A-Z0-9_]*", key) and key in enum.__members__:
        return enum[key]
    names = ", ".join(["DEFAULT", *(member.name for member in enum)])
    raise ValueError(
        f"--weights {weights}: no such file, and not a weights name of torchvision's {name} "
        f"({names})"
    )


def _download_build(name: str, weights: Any) -> nn.Module:
    """The model with torchvision's weights, from torch's hub cache or downloaded."""
    import torchvision

    try:
        return torchvision.models.get_model(name, weights=weights, progress=False)
    except (OSError, RuntimeError, http.client.HTTPException) as error:
        cache = Path(torch.hub.get_dir()) / "checkpoints" / os.path.basename(weights.url)
        raise ValueError(
            f"could not fetch torchvision's {type(weights).__name__}.{weights.name} "
            f"({error_line(error)}); offline, copy {weights.url} to {cache}, or pass "
            "--weights FILE with a saved state dict"
        ) from None
