"""Cached building blocks of the book's experiments.

A trained model is stored under the cache folder by the hash of its
:class:`~rsutils.train.TrainConfig`; a certification or prediction log by the hash of
its model and certification settings. Asking again returns the stored artefact, and a
log interrupted half-way is completed rather than restarted (see
:mod:`rsutils.runner`). So a second ``make book`` does not retrain or recertify, and
any notebook can be re-run alone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import torch
from torch import nn

from rsutils.anisotropic import Anisotropic
from rsutils.cache import cached_path, config_key
from rsutils.data import Dataset, load_dataset
from rsutils.memory import CertificateMemory, copy_memory
from rsutils.models import load_checkpoint, save_checkpoint
from rsutils.noise import NoiseFamily, make_noise
from rsutils.probes import points_inside
from rsutils.runner import certify_dataset, certify_dataset_ds, predict_dataset
from rsutils.sigma_ascent import SigmaAscent
from rsutils.sigma_store import SigmaStore
from rsutils.smooth import ABSTAIN, Smooth
from rsutils.train import TrainConfig, train_model

__all__ = [
    "anisotropic_certification_log",
    "certification_log",
    "ds_certification_log",
    "ds_probe_log",
    "pick_device",
    "prediction_log",
    "trained_model",
    "training_sigmas",
]


def pick_device(name: str = "auto") -> torch.device:
    """``"auto"`` means CUDA when available, else CPU; other names pass through."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


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
        store = SigmaStore(size, config.scale)
        model = train_model(
            config, data, device=target, progress=progress, start=start, sigma_store=store
        )
        meta: dict[str, object] = {"train_config": config.as_dict()}
        if config.ds is not None:
            meta["sigma_store"] = store.values
        save_checkpoint(model, path, arch=config.arch, dataset=config.dataset, meta=meta)
    model, _ = load_checkpoint(path, map_location=target)
    return model


def training_sigmas(config: TrainConfig, *, device: str = "auto") -> torch.Tensor:
    """The per-sample sigmas at the end of data-dependent training with ``config``."""
    if config.ds is None:
        raise ValueError("this configuration trains with a fixed sigma (config.ds is None)")
    trained_model(config, device=device, progress=False)
    _, info = load_checkpoint(cached_path("models", config.as_dict(), ".pt"))
    return info["meta"]["sigma_store"]


def _cached_log(
    kind: str,
    config: TrainConfig,
    data: Dataset,
    indices: list[int],
    noise: NoiseFamily,
    noise_settings: dict[str, Any],
    *,
    norm: str | None = None,
    folder: str | None = None,
    **run: Any,
) -> pd.DataFrame:
    """Run ``kind`` ("certify" or "predict") into the cached log of these settings.

    ``noise_settings`` identify the noise in the cache key; the log goes to the cache
    folder ``folder`` (default ``kind``).
    """
    batch_size, device, progress = run.pop("batch_size"), run.pop("device"), run.pop("progress")
    model = trained_model(config, device=device, progress=progress)
    smooth = Smooth(model, data.num_classes, noise, norm=norm)
    model_key = config_key(config.as_dict())
    settings = {
        "model": model_key,
        "dataset": data.name,
        "split": data.split,
        "indices": indices,
        **noise_settings,
        **run,
    }
    path = cached_path(folder or kind, settings, ".tsv")
    runner = certify_dataset if kind == "certify" else predict_dataset
    return runner(
        smooth,
        data,
        indices,
        path,
        batch_size=batch_size,
        config={"model": model_key},
        progress=progress,
        **run,
    )


def certification_log(
    config: TrainConfig,
    data: Dataset,
    indices: list[int],
    *,
    noise: str = "gaussian",
    scale: float,
    n0: int,
    n: int,
    alpha: float,
    seed: int = 0,
    batch_size: int = 1000,
    device: str = "auto",
    progress: bool = True,
) -> pd.DataFrame:
    """CERTIFY with the model of ``config`` on ``data[indices]``, cached by settings."""
    return _cached_log(
        "certify",
        config,
        data,
        indices,
        make_noise(noise, scale),
        {"noise": noise, "scale": scale},
        n0=n0,
        n=n,
        alpha=alpha,
        seed=seed,
        batch_size=batch_size,
        device=device,
        progress=progress,
    )


def prediction_log(
    config: TrainConfig,
    data: Dataset,
    indices: list[int],
    *,
    noise: str = "gaussian",
    scale: float,
    n: int,
    alpha: float,
    seed: int = 0,
    batch_size: int = 1000,
    device: str = "auto",
    progress: bool = True,
) -> pd.DataFrame:
    """PREDICT with the model of ``config`` on ``data[indices]``, cached by settings."""
    return _cached_log(
        "predict",
        config,
        data,
        indices,
        make_noise(noise, scale),
        {"noise": noise, "scale": scale},
        n=n,
        alpha=alpha,
        seed=seed,
        batch_size=batch_size,
        device=device,
        progress=progress,
    )


def anisotropic_certification_log(
    config: TrainConfig,
    data: Dataset,
    indices: list[int],
    *,
    noise: Anisotropic,
    n0: int,
    n: int,
    alpha: float,
    seed: int = 0,
    norm: str | None = None,
    batch_size: int = 1000,
    device: str = "auto",
    progress: bool = True,
) -> pd.DataFrame:
    """CERTIFY with anisotropic ``noise``, cached by settings (the noise by its content).

    The log has ``radius`` (``min(sigma)·R``), ``region_radius`` (R) and ``alm``.
    """
    return _cached_log(
        "certify",
        config,
        data,
        indices,
        noise,
        {"noise": repr(noise), "norm": norm or noise.default_norm},
        norm=norm,
        folder="certify-anisotropic",
        n0=n0,
        n=n,
        alpha=alpha,
        seed=seed,
        batch_size=batch_size,
        device=device,
        progress=progress,
    )


def ds_certification_log(
    config: TrainConfig,
    data: Dataset,
    indices: list[int],
    *,
    ascent: SigmaAscent,
    n0: int,
    n: int,
    alpha: float,
    seed: int = 0,
    batch_size: int = 1000,
    device: str = "auto",
    progress: bool = True,
) -> pd.DataFrame:
    """Data-dependent certification with the model of ``config``, cached by settings.

    Certificates go through a memory stored next to the log (a SQLite file, whose
    path is in the returned log's ``attrs["memory_path"]``; open it with
    :class:`~rsutils.memory.CertificateMemory` to inspect it).
    """
    model = trained_model(config, device=device, progress=progress)
    model_key = config_key(config.as_dict())
    settings = {
        "model": model_key,
        "dataset": data.name,
        "split": data.split,
        "indices": indices,
        "ascent": ascent.as_dict(),
        "n0": n0,
        "n": n,
        "alpha": alpha,
        "seed": seed,
    }
    path = cached_path("certify-ds", settings, ".tsv")
    memory_path = path.with_suffix(".sqlite")
    with CertificateMemory(memory_path, geometry=f"{ascent.norm}-ball") as memory:
        log = certify_dataset_ds(
            model,
            data.num_classes,
            data,
            indices,
            path,
            ascent=ascent,
            n0=n0,
            n=n,
            alpha=alpha,
            seed=seed,
            memory=memory,
            batch_size=batch_size,
            config={"model": model_key},
            progress=progress,
        )
    log.attrs["memory_path"] = str(memory_path)
    return log


def ds_probe_log(
    config: TrainConfig,
    data: Dataset,
    indices: list[int],
    *,
    ascent: SigmaAscent,
    fraction: float,
    n0: int,
    n: int,
    alpha: float,
    seed: int = 0,
    batch_size: int = 1000,
    device: str = "auto",
    progress: bool = True,
) -> pd.DataFrame:
    """Query the data-dependent classifier inside its own certified regions.

    Takes the certificates of :func:`ds_certification_log` with the same settings;
    for each input certified with a positive radius R, draws a point at distance
    ``fraction``·R in a random direction (:func:`~rsutils.probes.points_inside`) and
    certifies it the same way, through a copy of that run's memory. In the returned
    log, ``label`` is the class certified at the original input (``source_idx``), so
    ``mc_predict != label`` counts the probes where the classifier contradicts a
    certificate and ``correct`` those where the memory's answer agrees with it.
    """
    base = ds_certification_log(
        config,
        data,
        indices,
        ascent=ascent,
        n0=n0,
        n=n,
        alpha=alpha,
        seed=seed,
        batch_size=batch_size,
        device=device,
        progress=progress,
    )
    certified = base[(base["predict"] != ABSTAIN) & (base["radius"] > 0)]
    sources = certified["idx"].to_numpy().copy()
    generator = torch.Generator().manual_seed(seed)
    radii = torch.tensor(certified["radius"].to_list(), dtype=torch.float64)
    probes = points_inside(data.images[sources], radii, fraction, generator)
    labels = torch.tensor(certified["predict"].to_list())
    probe_data = Dataset(data.name, f"{data.split}-probes", probes, labels, data.classes)
    path = Path(base.attrs["memory_path"]).with_suffix(f".probes-{fraction:g}.tsv")
    memory_path = path.with_suffix(".sqlite")
    copy_memory(base.attrs["memory_path"], memory_path)
    model = trained_model(config, device=device, progress=progress)
    with CertificateMemory(memory_path, geometry=f"{ascent.norm}-ball") as memory:
        log = certify_dataset_ds(
            model,
            data.num_classes,
            probe_data,
            range(len(probe_data)),
            path,
            ascent=ascent,
            n0=n0,
            n=n,
            alpha=alpha,
            seed=seed + 1,
            memory=memory,
            batch_size=batch_size,
            key_prefix="probe-",
            config={"model": config_key(config.as_dict()), "fraction": fraction},
            progress=progress,
        )
    return log.assign(source_idx=sources[log["idx"].to_numpy()])
