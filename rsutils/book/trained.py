"""The book's trained models, from the cache or trained now.

A trained model is stored under the cache folder by the hash of its
:class:`~rsutils.training.train.TrainConfig` (a classifier with its noise parameter
generator by the hash of its :class:`~rsutils.anisotropic.training.NPGConfig`). Asking
again returns the stored checkpoint, so a second ``make book`` does not retrain, and any
notebook can be re-run alone. The runs on these models are
:mod:`rsutils.book.experiments`.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import torch
from torch import nn

from rsutils.anisotropic.generators import NoiseGenerator, load_generator
from rsutils.anisotropic.training import HISTORY_COLUMNS, NPGConfig, train_npg_with_history
from rsutils.cache import atomic_write_bytes, cached_path
from rsutils.core.devices import pick_device
from rsutils.core.environment import describe_environment
from rsutils.data import load_dataset
from rsutils.ddrs.training import DataDependentSigmas
from rsutils.models.checkpoints import load_checkpoint, save_checkpoint
from rsutils.training.train import TRAINING_THREADS, TrainConfig, run_sigmas, train_model

__all__ = ["npg_history", "trained_model", "trained_npg", "training_sigmas"]


def trained_model(
    config: TrainConfig, *, device: str = "auto", progress: bool = True
) -> nn.Sequential:
    """The model trained with ``config``, from the cache or trained now (then cached).

    A model fine-tuned from ``config.init`` trains (or loads) that one first. With
    data-dependent training, the final per-sample sigmas are kept in the checkpoint
    (see :func:`training_sigmas`).
    """
    path = cached_path("models", config.as_dict(), ".pt")
    target = pick_device(device)
    if not path.exists():
        start = None if config.init is None else trained_model(config.init, device=device)
        data = load_dataset(config.dataset, "train")
        size = len(data) if config.train_subset is None else min(len(data), config.train_subset)
        sigmas = run_sigmas(config, size)
        model = train_model(
            config, data, device=target, progress=progress, start=start, sigmas=sigmas
        )
        meta: dict[str, object] = {
            "train_config": config.as_dict(),
            "environment": {**describe_environment(target), "threads": TRAINING_THREADS},
        }
        if isinstance(sigmas, DataDependentSigmas):
            meta["sigma_store"] = sigmas.store.values
        save_checkpoint(model, path, arch=config.arch, dataset=config.dataset, meta=meta)
    model, _ = load_checkpoint(path, map_location=target)
    return model


def trained_npg(
    config: NPGConfig, *, device: str = "auto", progress: bool = True
) -> tuple[nn.Sequential, NoiseGenerator]:
    """The classifier and generator trained with ``config`` (cached like the models).

    Both are fine-tuned from ``config.base``'s model (trained first if needed) and
    stored in one checkpoint; the training's history of ``sigma`` goes beside it
    (:func:`npg_history`).
    """
    path = cached_path("models", {"npg": config.as_dict()}, ".pt")
    target = pick_device(device)
    if not path.exists():
        start = trained_model(config.base, device=device, progress=progress)
        data = load_dataset(config.base.dataset, "train")
        run = train_npg_with_history(config, data, start, device=target, progress=progress)
        model, generator = run.classifier, run.generator
        _write_history(config, run.history)
        meta = {
            "npg_config": config.as_dict(),
            "environment": {**describe_environment(target), "threads": TRAINING_THREADS},
        }
        base = config.base
        save_checkpoint(
            model, path, arch=base.arch, dataset=base.dataset, meta=meta, generator=generator
        )
    model, _ = load_checkpoint(path, map_location=target)
    return model, load_generator(path, map_location=target)


def npg_history(config: NPGConfig, *, device: str = "auto", progress: bool = True) -> pd.DataFrame:
    """The history of ``sigma`` over the training steps of ``config`` (cached).

    One row per step with :data:`~rsutils.anisotropic.training.HISTORY_COLUMNS`: the
    minimum, median and maximum of ``sigma`` over the batch the step trained on, and
    the share of it at the generator's bound. It is written when
    :func:`trained_npg` trains; for a model cached before histories were kept, the
    training is run again to record it (the model in the cache is kept: on CPUs of
    one kind, with the same thread count, the rerun computes the same weights).
    """
    path = _history_path(config)
    if not path.exists():
        trained_npg(config, device=device, progress=progress)
    if not path.exists():
        start = trained_model(config.base, device=device, progress=progress)
        data = load_dataset(config.base.dataset, "train")
        target = pick_device(device)
        run = train_npg_with_history(config, data, start, device=target, progress=progress)
        _write_history(config, run.history)
    return pd.read_csv(path, sep="\t")


def _history_path(config: NPGConfig) -> Path:
    return cached_path("npg-history", {"npg": config.as_dict()}, ".tsv")


def _write_history(config: NPGConfig, history: pd.DataFrame) -> None:
    text = history[list(HISTORY_COLUMNS)].to_csv(sep="\t", index=False)
    atomic_write_bytes(_history_path(config), text.encode())


def training_sigmas(config: TrainConfig, *, device: str = "auto") -> torch.Tensor:
    """The per-sample sigmas at the end of data-dependent training with ``config``."""
    if config.ds is None:
        raise ValueError("this configuration trains with a fixed sigma (config.ds is None)")
    trained_model(config, device=device, progress=False)
    _, info = load_checkpoint(cached_path("models", config.as_dict(), ".pt"))
    return info["meta"]["sigma_store"]
