"""What the ``certify`` and ``predict`` commands share.

Cohen et al.'s arguments and ours (:func:`add_run_arguments`), and loading what they
name: the checkpoint, the dataset, the device, the noise (a family, made anisotropic by
``--sigma-map``, or made by the generator of ``--generator``) and the smoothed
classifier (:func:`load_run`), checked with one noisy draw before anything is written.
:func:`run_log` then runs a dataset runner into the command's log, sharded under
torchrun.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from rsutils.anisotropic.generated import GeneratedSmooth
from rsutils.anisotropic.generators import load_generator
from rsutils.anisotropic.noise import Anisotropic
from rsutils.cli.arguments import (
    add_noise_family_argument,
    dataset_name,
    non_negative_int,
    positive_float,
    positive_int,
    probability,
)
from rsutils.core.devices import pick_device
from rsutils.core.inference import INFERENCE_MODES, device_identity
from rsutils.core.noise import NoiseFamily, make_noise
from rsutils.core.settings import CertifySettings
from rsutils.core.smooth import Smooth
from rsutils.data import Dataset, in_model_order, load_dataset
from rsutils.logs.dataset_run import select_indices
from rsutils.logs.distributed import distributed_rank, run_sharded
from rsutils.logs.resumable import adopt_device
from rsutils.models.architectures import DATASET_STATS, NUM_CLASSES
from rsutils.models.dataset_fit import (
    check_model_fits,
    check_stats_channels,
    normalization_stats,
)
from rsutils.models.sources import load_model

__all__ = [
    "DATASETS",
    "LoadedRun",
    "add_run_arguments",
    "check_noise_sources",
    "device_from_args",
    "load_map",
    "load_run",
    "noise_from_args",
    "preflight",
    "run_log",
    "settings_from_args",
]

#: The datasets known by name, which a checkpoint may be trained on; ``certify`` and
#: ``predict`` also take ``folder:PATH``, a folder of class subfolders of images.
DATASETS = ("fashion-mnist", "mnist", "cifar10", "imagenet")


def add_run_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of Cohen et al.'s certify.py and predict.py, and ours."""
    parser.add_argument(
        "dataset",
        type=dataset_name,
        help=f"the data: {', '.join(DATASETS)} (its folder by --data-root), or folder:PATH, "
        "a folder of class subfolders of images (PATH/train and PATH/test or PATH/val if it "
        "has them, else PATH is the test split)",
    )
    parser.add_argument(
        "base_classifier",
        help="the model: a checkpoint (ours, or Cohen et al.'s format), torchvision:NAME "
        "(with --weights or --untrained), a torch.export .pt2 or TorchScript file, or a "
        "module saved with torch.save(model) (with --trust-pickle)",
    )
    parser.add_argument(
        "--weights",
        default=None,
        metavar="FILE|NAME",
        help="with torchvision:NAME: a state-dict file (plain, {'state_dict': ...} or with "
        "DataParallel's module. prefixes), or torchvision's weights by name (DEFAULT, "
        "IMAGENET1K_V1...), downloaded into torch's hub cache when online",
    )
    parser.add_argument(
        "--untrained",
        action="store_true",
        help="with torchvision:NAME and no --weights: certify its random (seeded) "
        "initialisation, for tests and demos only",
    )
    parser.add_argument(
        "--trust-pickle",
        action="store_true",
        help="load a base_classifier saved with torch.save(model): unpickling it runs code "
        "from the file, so pass this only for a file whose source you trust",
    )
    parser.add_argument(
        "--normalize",
        choices=(*sorted(DATASET_STATS), "none"),
        default=None,
        metavar="DATASET",
        help="for a model trained on normalised inputs (rsutils feeds images in [0, 1]): put "
        "a layer in front that subtracts this dataset's per-channel mean and divides by its "
        "std, one of %(choices)s; none (as without it) adds no layer; checkpoints of rsutils "
        "and Cohen et al. carry their own",
    )
    parser.add_argument(
        "--mean",
        type=float,
        nargs="+",
        default=None,
        help="instead of --normalize: the mean to subtract, one value or one per channel "
        "(with --std)",
    )
    parser.add_argument(
        "--std",
        type=positive_float,
        nargs="+",
        default=None,
        help="with --mean: the standard deviation to divide by, one value or one per channel",
    )
    parser.add_argument(
        "sigma", type=positive_float, help="noise scale (the standard deviation for gaussian)"
    )
    parser.add_argument("outfile", help="TSV log to write; an existing log is resumed")
    parser.add_argument(
        "--batch",
        type=positive_int,
        default=CertifySettings.batch_size,
        help="noisy copies per forward pass (memory, not results, depends on it)",
    )
    parser.add_argument(
        "--skip", type=positive_int, default=1, help="use every skip-th input of the split"
    )
    parser.add_argument(
        "--max",
        "--stop",
        dest="max",
        type=int,
        default=-1,
        help="stop before this index (-1: the whole split); under torchrun write --stop, "
        "since torchrun reads --max as its own --max-restarts",
    )
    parser.add_argument("--split", choices=("train", "test"), default="test", help="data split")
    parser.add_argument(
        "--N",
        type=positive_int,
        default=CertifySettings.n,
        help="Monte Carlo samples that estimate the class probability",
    )
    parser.add_argument(
        "--alpha",
        type=probability,
        default=CertifySettings.alpha,
        help="failure probability of each answer",
    )
    parser.add_argument(
        "--seed",
        type=non_negative_int,
        default=CertifySettings.seed,
        help="noise seed; the draws for input idx depend on (seed, idx) only",
    )
    _add_noise_arguments(parser)
    parser.add_argument(
        "--device", default="auto", help="auto (CUDA if present, else CPU), cpu, cuda, cuda:N"
    )
    parser.add_argument(
        "--inference",
        choices=INFERENCE_MODES,
        default="fp32",
        metavar="MODE",
        help="the base model's numerical mode, one of %(choices)s; a faster one "
        "(bf16_channels_last on CPUs with AMX or AVX512-BF16, and on GPUs) is a "
        "different base classifier, which the certificates are for; the log records it",
    )
    parser.add_argument(
        "--data-root",
        default=None,
        help="dataset folder (else RSUTILS_DATA, Debian's package, or a download)",
    )
    parser.add_argument(
        "--image-size",
        type=positive_int,
        default=None,
        metavar="S",
        help="folder:PATH only: resize each image's short side to S and crop its centre S×S "
        "(without it, the folder's images must share one size)",
    )
    parser.add_argument(
        "--class-order",
        nargs="+",
        default=None,
        metavar="NAME",
        help="folder:PATH only: its class folders in the order of the model's outputs (the "
        "first is class 0), each once; without it, folders named after the model's known "
        "classes (a checkpoint's dataset's, torchvision's weights') follow the model's "
        "order, and others their sorted names",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument(
        "--allow-device-change",
        action="store_true",
        help="resume a log written on another kind of device (CPU, CUDA…), whose rows then "
        "come from two base classifiers (the same model computes a different function "
        "there); without it such a resume is refused",
    )


def _add_noise_arguments(parser: argparse.ArgumentParser) -> None:
    """The noise: a family, per-dimension maps, or a generator."""
    add_noise_family_argument(parser)
    parser.add_argument(
        "--power-a",
        type=positive_float,
        default=None,
        help="exponent a of power_law noise (required for it; a > input size)",
    )
    parser.add_argument(
        "--sigma-map",
        default=None,
        help="anisotropic noise: a .pt or .npy file of per-dimension scale multipliers "
        "(the shape of one input); the noise becomes mu + sigma_map * eps",
    )
    parser.add_argument(
        "--mu-map",
        default=None,
        help="with --sigma-map: a .pt or .npy file of per-dimension offsets mu",
    )
    parser.add_argument(
        "--generator",
        default=None,
        metavar="CKPT",
        help="UCAN noise: the checkpoint (often base_classifier itself) holding a noise "
        "parameter generator; the noise at input x becomes mu(x) + sigma(x) * eps",
    )


def load_map(path: str, option: str) -> torch.Tensor:
    """A tensor saved with torch.save, or a NumPy .npy array, for --sigma-map/--mu-map."""
    if not os.path.isfile(path):
        raise ValueError(f"{option} {path}: no such file")
    try:
        if path.endswith(".npy"):
            value = torch.from_numpy(np.load(path, allow_pickle=False))
        else:
            value = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:  # numpy and torch raise many types for a damaged file
        raise ValueError(
            f"{option} {path} is not a readable .npy array or torch-saved tensor "
            f"({type(error).__name__}); save it with np.save or torch.save(tensor, path)"
        ) from None
    if not isinstance(value, torch.Tensor) or not value.is_floating_point():
        raise ValueError(
            f"{option} {path} must hold one floating-point tensor (torch.save(sigma, path))"
        )
    return value


def check_noise_sources(args: argparse.Namespace) -> None:
    """Refuse two sources of ``mu`` and ``sigma`` at once: maps and a generator."""
    if args.generator is not None and args.sigma_map:
        raise ValueError("--generator makes mu and sigma itself; drop --sigma-map/--mu-map")


def noise_from_args(args: argparse.Namespace) -> NoiseFamily:
    """The noise of the command line: a family, made anisotropic by --sigma-map."""
    if args.noise == "power_law" and args.power_a is None:
        raise ValueError("power_law noise needs its exponent: pass --power-a A (A > input size)")
    params = {} if args.power_a is None else {"a": args.power_a}
    noise = make_noise(args.noise, args.sigma, **params)
    sigma_map, mu_map = getattr(args, "sigma_map", None), getattr(args, "mu_map", None)
    if mu_map and not sigma_map:
        raise ValueError("--mu-map needs --sigma-map (pass a map of ones for offsets only)")
    if sigma_map:
        mu = None if mu_map is None else load_map(mu_map, "--mu-map")
        noise = Anisotropic(noise, load_map(sigma_map, "--sigma-map"), mu)
    return noise


def device_from_args(args: argparse.Namespace) -> torch.device:
    """The command's device; under torchrun, a CUDA device means this rank's own GPU."""
    device, where = pick_device(args.device), distributed_rank()
    if where is not None and device.type == "cuda" and device.index is None:
        device = torch.device("cuda", where[2])
    return device


def settings_from_args(args: argparse.Namespace) -> CertifySettings:
    """The Monte Carlo settings of a certify or predict command."""
    n0 = getattr(args, "N0", CertifySettings.n0)
    return CertifySettings(n0=n0, n=args.N, alpha=args.alpha, seed=args.seed, batch_size=args.batch)


@dataclass(frozen=True)
class LoadedRun:
    """What a certify or predict command runs over: the split, the smoothed
    classifier, the indices of ``--skip``/``--max`` and what the log records of the model."""

    data: Dataset
    smooth: Smooth | GeneratedSmooth
    indices: list[int]
    config: dict[str, Any]


def load_run(args: argparse.Namespace, *, inference: str) -> LoadedRun:
    """Load the checkpoint, the split and the noise, with the base model in ``inference``
    mode; check them with one noisy draw (:func:`preflight`). A folder's labels follow
    the model's classes where their names can be compared
    (:func:`~rsutils.data.in_model_order`)."""
    stats = normalization_stats(args.normalize, args.mean, args.std)
    loaded = load_model(
        args.base_classifier,
        dataset=args.dataset,
        num_classes=NUM_CLASSES.get(args.dataset),
        weights=args.weights,
        untrained=args.untrained,
        trust_pickle=args.trust_pickle,
        normalize=stats,
        map_location=device_from_args(args),
    )
    model, info = loaded.model, loaded.info
    # A folder of images names no training set: preflight checks the model against it.
    named = not args.dataset.startswith("folder:")
    if info is not None and named and info["dataset"] != args.dataset:
        raise ValueError(
            f"{args.base_classifier} was trained on {info['dataset']}, not {args.dataset}; "
            f"pass {info['dataset']} as the dataset argument"
        )
    data = _load_data(args, loaded.classes, stats)
    smooth = _smooth(args, model, data.num_classes, inference)
    indices = select_indices(len(data), args.skip, args.max)
    # Rows depend on (model, settings, idx) only, so a log may be extended with another
    # --skip/--max; the model's identity (a file's digest, or torchvision's name and its
    # weights, and any normalisation) guards against mixing models, and a folder's
    # classes, when not in sorted order, against mixing labels. An anisotropic noise
    # is identified by its content in the "noise" setting.
    config = dict(loaded.identity)
    if not named and list(data.classes) != sorted(data.classes):
        config["class_order"] = list(data.classes)
    preflight(smooth, data, indices)
    return LoadedRun(data, smooth, indices, config)


def _load_data(
    args: argparse.Namespace,
    model_classes: tuple[str, ...] | None,
    stats: tuple[tuple[float, ...], tuple[float, ...]] | None,
) -> Dataset:
    """The command's split, a folder's labels in the order of ``model_classes`` where
    the names can be compared, checked against the normalisation's channels."""
    data = load_dataset(
        args.dataset, args.split, args.data_root,
        image_size=args.image_size, class_order=args.class_order,
    )  # fmt: skip
    if args.dataset.startswith("folder:"):  # a named dataset's labels are its models'
        data = in_model_order(data, model_classes, given=args.class_order is not None)
    given = "--mean/--std" if args.normalize is None else f"--normalize {args.normalize}"
    check_stats_channels(stats, data.images.shape[1], given)
    return data


def _smooth(
    args: argparse.Namespace, model: nn.Module, num_classes: int, inference: str
) -> Smooth | GeneratedSmooth:
    """``Smooth`` with the command line's noise, or with the noise of ``--generator``."""
    norm, noise = getattr(args, "norm", None), noise_from_args(args)
    if args.generator is None:
        return Smooth(model, num_classes, noise, norm=norm, inference=inference)
    generator = load_generator(args.generator, map_location=device_from_args(args))
    return GeneratedSmooth(model, num_classes, noise, generator, norm=norm, inference=inference)


def preflight(smooth: Smooth | GeneratedSmooth, data: Dataset, indices: list[int]) -> None:
    """Fail before touching the disk: one noisy draw through the model.

    The draw checks what only shows when sampling (the shape of a sigma map, power_law's
    exponent against the input size, the model against the input, the input's range);
    the log checks its own path before writing. Before it, one forward pass on zeros
    checks the model against the dataset's input shape and class count
    (:func:`~rsutils.models.dataset_fit.check_model_fits`).
    """
    check_model_fits(smooth.model, tuple(data.images.shape[1:]), data.num_classes)
    if indices:
        first = data.images[indices[0]]
        smooth.sample_counts(first, 1, seed=0, index=indices[0])


def run_log(
    args: argparse.Namespace,
    runner: Callable[..., object],
    loaded: LoadedRun,
    settings: CertifySettings,
) -> None:
    """``runner(smooth, data, indices, outfile, settings, config=..., progress=...)``
    into the command's log, sharded under torchrun
    (:func:`~rsutils.logs.distributed.run_sharded`)."""
    options = {"config": loaded.config, "progress": not args.quiet}

    def run(share: list[int], path: Path) -> None:
        if args.allow_device_change:
            adopt_device(path, device_identity(loaded.smooth.device))
        runner(loaded.smooth, loaded.data, share, path, settings, **options)

    if args.allow_device_change:
        adopt_device(args.outfile, device_identity(loaded.smooth.device))

    run_sharded(run, args.outfile, loaded.indices, loaded.smooth.device)
