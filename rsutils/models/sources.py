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
import os
import re
import warnings
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
    strip_data_parallel,
)
from rsutils.models.dataset_fit import checked_stats, error_line
from rsutils.models.source_kinds import (
    PLAIN_GLOBALS,
    TORCHVISION_PREFIX,
    pickle_globals,
    source_kind,
)

__all__ = [
    "UNTRAINED_SEED",
    "LoadedModel",
    "file_digest",
    "load_model",
]

#: The seed of an untrained torchvision model's initialisation (the same weights each run).
UNTRAINED_SEED = 0


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
    :data:`~rsutils.models.source_kinds.KINDS` (see
    :func:`~rsutils.models.source_kinds.source_kind`). ``dataset`` is passed on to
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
        names = [g for g in pickle_globals(path) or [] if not g.startswith(PLAIN_GLOBALS)]
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
