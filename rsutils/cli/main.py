"""Command line: ``python -m rsutils certify|predict|train|bench ...``.

``certify`` and ``predict`` take the positional arguments and options of Cohen et
al.'s ``certify.py``/``predict.py`` (``dataset base_classifier sigma outfile --batch
--skip --max --split --N0 --N --alpha``) and write the same TSV columns, followed by
ours. Both resume a killed run: run the same command again.

``certify --ascent-steps K`` certifies with a data-dependent noise level (DDRS): each
input's sigma comes from K steps of sigma ascent started at ``sigma``, and the answers
go through a certificate memory (``--memory``, by default ``<outfile>.memory.sqlite``)
that keeps them consistent across runs and processes.

``certify --radius-loss L`` gives each input its own number of estimation draws, at
most ``--N``: as many as lose at most about L of radius by the selection draws' estimate
of pA (the log's ``n`` column), certified at the full ``--alpha``. ``certify --decide R
[R ...]`` answers "certified at radius R?" sequentially instead, with looks at 32, 64,
... up to ``--N`` draws whose levels sum to ``--alpha``; its log has ``certified@R``
and ``draws@R`` per radius (``rsutils.logs.sequential_runs``).

``--generator CKPT`` takes mu and sigma from the noise parameter generator saved in a
checkpoint (UCAN): the noise at input x is ``mu(x) + sigma(x) ⊙ eps``, with ``eps`` of the
family and ``sigma`` given on the command line, and the log has ``region_radius`` and
``alm``.

A mistake in a command (a bad value, a damaged checkpoint or map, a device this machine
does not have, an output path that is a folder) is one line on stderr and exit status
2, found before anything is written; ``RSUTILS_TRACEBACK=1`` shows the traceback too.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
from collections.abc import Sequence
from functools import partial
from pathlib import Path

import numpy as np
import torch

from rsutils.anisotropic.generated import GeneratedSmooth
from rsutils.anisotropic.generators import load_generator
from rsutils.anisotropic.noise import Anisotropic
from rsutils.anisotropic.patterns import spatial_pattern
from rsutils.cli.arguments import (
    HelpFormatter,
    non_negative_float,
    non_negative_int,
    positive_float,
    positive_int,
    probability,
)
from rsutils.core.devices import pick_device
from rsutils.core.environment import describe_environment
from rsutils.core.inference import INFERENCE_MODES
from rsutils.core.noise import FAMILIES, NoiseFamily, make_noise
from rsutils.core.sequential import LookSchedule
from rsutils.core.settings import CertifySettings
from rsutils.core.smooth import Smooth
from rsutils.ddrs.data_dependent import DataDependentSmooth
from rsutils.ddrs.sigma_ascent import SigmaAscent
from rsutils.geometry.norms import NORM_ORDERS
from rsutils.logs.distributed import distributed_rank, run_sharded
from rsutils.logs.runner import certify_dataset, certify_dataset_ds, predict_dataset, select_indices
from rsutils.logs.sequential_runs import certify_planned_dataset, decide_dataset
from rsutils.memory.balls import CertificateMemory
from rsutils.training.data import load_dataset
from rsutils.training.models import ARCHITECTURES, build_model, load_checkpoint, save_checkpoint
from rsutils.training.train import TRAINING_THREADS

__all__ = ["main"]

DATASETS = ("fashion-mnist", "mnist", "cifar10")


def _file_digest(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()[:16]


def _common(parser: argparse.ArgumentParser) -> None:
    """The arguments of Cohen et al.'s certify.py and predict.py, and ours."""
    parser.add_argument("dataset", choices=DATASETS, help="the dataset of the checkpoint")
    parser.add_argument("base_classifier", help="checkpoint file (ours, or Cohen et al.'s format)")
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
    parser.add_argument(
        "--noise", choices=sorted(FAMILIES), default="gaussian", help="noise family"
    )
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
    parser.add_argument(
        "--device", default="auto", help="auto (CUDA if present, else CPU), cpu, cuda, cuda:N"
    )
    parser.add_argument(
        "--inference",
        choices=INFERENCE_MODES,
        default="fp32",
        help="the base model's numerical mode; a faster one (bf16_channels_last on CPUs with "
        "AMX or AVX512-BF16, and on GPUs) is a different base classifier, which the "
        "certificates are for; the log records it",
    )
    parser.add_argument(
        "--data-root",
        default=None,
        help="dataset folder (else RSUTILS_DATA, Debian's package, or a download)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def _load_map(path: str, option: str) -> torch.Tensor:
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


def _bench_noise(args: argparse.Namespace, shape: tuple[int, ...]) -> NoiseFamily:
    noise = _noise(args)
    if args.anisotropic:
        sigma = spatial_pattern(shape[1], shape[2])
        noise = Anisotropic(noise, sigma, 0.1 * sigma)
    return noise


def _noise(args: argparse.Namespace) -> NoiseFamily:
    """The noise of the command line: a family, made anisotropic by --sigma-map."""
    if args.noise == "power_law" and args.power_a is None:
        raise ValueError("power_law noise needs its exponent: pass --power-a A (A > input size)")
    params = {} if args.power_a is None else {"a": args.power_a}
    noise = make_noise(args.noise, args.sigma, **params)
    sigma_map, mu_map = getattr(args, "sigma_map", None), getattr(args, "mu_map", None)
    if mu_map and not sigma_map:
        raise ValueError("--mu-map needs --sigma-map (pass a map of ones for offsets only)")
    if sigma_map:
        mu = None if mu_map is None else _load_map(mu_map, "--mu-map")
        noise = Anisotropic(noise, _load_map(sigma_map, "--sigma-map"), mu)
    return noise


def _device(args: argparse.Namespace) -> torch.device:
    """The command's device; under torchrun, a CUDA device means this rank's own GPU."""
    device, where = pick_device(args.device), distributed_rank()
    if where is not None and device.type == "cuda" and device.index is None:
        device = torch.device("cuda", where[2])
    return device


def _setup(args: argparse.Namespace):
    model, info = load_checkpoint(
        args.base_classifier, dataset=args.dataset, map_location=_device(args)
    )
    if info["dataset"] != args.dataset:
        raise ValueError(
            f"{args.base_classifier} was trained on {info['dataset']}, not {args.dataset}; "
            f"pass {info['dataset']} as the dataset argument"
        )
    data = load_dataset(args.dataset, args.split, args.data_root)
    smooth = _smooth(args, model, data.num_classes)
    indices = select_indices(len(data), args.skip, args.max)
    # Rows depend on (checkpoint, settings, idx) only, so a log may be extended with
    # another --skip/--max; the checkpoint's digest guards against mixing models. An
    # anisotropic noise is identified by its content in the "noise" setting.
    config = {"checkpoint": _file_digest(args.base_classifier)}
    _preflight(smooth, data, indices)
    return data, smooth, indices, config


def _smooth(args: argparse.Namespace, model, num_classes: int) -> Smooth | GeneratedSmooth:
    """``Smooth`` with the command line's noise, or with the noise of ``--generator``."""
    norm, noise = getattr(args, "norm", None), _noise(args)
    inference = args.inference
    if getattr(args, "ascent_steps", None) is not None:
        inference = "fp32"  # sigma ascent runs the model as given; _certify_ds certifies in mode
    if args.generator is None:
        return Smooth(model, num_classes, noise, norm=norm, inference=inference)
    if isinstance(noise, Anisotropic):
        raise ValueError("--generator makes mu and sigma itself; drop --sigma-map/--mu-map")
    if getattr(args, "ascent_steps", None) is not None:
        raise ValueError("--generator and --ascent-steps both choose the noise; pick one")
    generator = load_generator(args.generator, map_location=_device(args))
    return GeneratedSmooth(model, num_classes, noise, generator, norm=norm, inference=inference)


def _preflight(smooth: Smooth | GeneratedSmooth, data, indices: list[int]) -> None:
    """Fail before touching the disk: one noisy draw through the model.

    The draw checks what only shows when sampling (the shape of a sigma map, power_law's
    exponent against the input size, the model against the input, the input's range);
    the log checks its own path before writing.
    """
    if indices:
        first = data.images[indices[0]]
        if isinstance(smooth, GeneratedSmooth):
            smooth = smooth.smooth_at(first)
        smooth.sample_counts(first, 1, seed=0, index=indices[0])


def _settings(args: argparse.Namespace) -> CertifySettings:
    """The Monte Carlo settings of a certify or predict command."""
    n0 = getattr(args, "N0", CertifySettings.n0)
    return CertifySettings(n0=n0, n=args.N, alpha=args.alpha, seed=args.seed, batch_size=args.batch)


def _run_log(args: argparse.Namespace) -> None:
    settings = _settings(args)
    data, smooth, indices, config = _setup(args)
    options = {"config": config, "progress": not args.quiet}
    if args.command == "certify" and args.ascent_steps is not None:
        if args.radius_loss is not None or args.decide is not None:
            raise ValueError(
                "sigma ascent certifies with all --N draws; drop --radius-loss/--decide"
            )
        if distributed_rank() is not None:
            raise ValueError(
                "data-dependent certification answers through one certificate memory, in "
                "input order; run it in a single process (without torchrun)"
            )
        _certify_ds(args, data, smooth, indices, settings, options)
        return
    runner = _runner(args, smooth, settings)

    def run(share: list[int], path: Path) -> None:
        runner(smooth, data, share, path, settings, **options)

    run_sharded(run, args.outfile, indices, smooth.device)


def _runner(args: argparse.Namespace, smooth: Smooth | GeneratedSmooth, settings):
    """The dataset runner of a certify or predict command, fewer-draw options included."""
    if args.command == "predict":
        return predict_dataset
    loss, radii = args.radius_loss, args.decide
    if loss is None and radii is None:
        return certify_dataset
    if loss is not None and radii is not None:
        raise ValueError("--radius-loss and --decide answer different questions; pick one")
    if isinstance(smooth, GeneratedSmooth) or isinstance(smooth.noise, Anisotropic):
        raise ValueError("--radius-loss and --decide take isotropic noise; drop the maps")
    if loss is not None:
        return partial(certify_planned_dataset, radius_loss=loss)
    schedule = LookSchedule.geometric(settings.n, settings.alpha)
    return partial(decide_dataset, schedule=schedule, radii=radii)


def _certify_ds(args, data, smooth: Smooth, indices, settings, options) -> None:
    if isinstance(smooth.noise, Anisotropic):
        raise ValueError("--ascent-steps tunes an isotropic sigma; drop --sigma-map")
    ascent = SigmaAscent(
        sigma0=args.sigma,
        iterations=args.ascent_steps,
        lr=args.ascent_lr,
        draws=args.ascent_draws,
        family=args.noise,
        clamp=args.ascent_clamp,
    )
    if smooth.norm != ascent.norm:
        raise ValueError(f"{args.noise} sigma ascent certifies {ascent.norm}; drop --norm")
    memory_path = args.memory or f"{args.outfile}.memory.sqlite"
    new_memory, stored = not os.path.exists(memory_path), 0
    try:
        with CertificateMemory(memory_path, norm=ascent.norm) as memory:
            ds = DataDependentSmooth(
                smooth.model, data.num_classes, ascent, memory, inference=args.inference
            )
            try:
                certify_dataset_ds(ds, data, indices, args.outfile, settings, **options)
            finally:
                stored = len(memory)
    except ValueError:  # refused (e.g. a log of other settings): leave no new memory behind
        if new_memory and stored == 0:
            for suffix in ("", "-wal", "-shm"):
                Path(memory_path + suffix).unlink(missing_ok=True)
        raise


def _train(args: argparse.Namespace) -> None:
    from rsutils.training.objectives import ObjectiveSettings
    from rsutils.training.train import TrainConfig, train_model

    if os.path.isdir(args.outfile):
        raise ValueError(f"{args.outfile} is a directory; pass a file such as model.pt")
    ds = None
    if args.ds_steps is not None:
        ds = SigmaAscent(sigma0=args.noise_sd, iterations=args.ds_steps, draws=args.ds_draws)
    config = TrainConfig(
        arch=args.arch,
        dataset=args.dataset,
        noise=args.noise,
        scale=args.noise_sd,
        epochs=args.epochs,
        batch_size=args.batch,
        lr=args.lr,
        seed=args.seed,
        method=args.method,
        objective=ObjectiveSettings(draws=args.draws, epsilon=args.epsilon),
        ds=ds,
    )
    data = load_dataset(args.dataset, "train", args.data_root)
    device = pick_device(args.device)
    options = {"device": device, "progress": not args.quiet, "threads": args.threads}
    model = train_model(config, data, **options)
    save_checkpoint(
        model,
        args.outfile,
        arch=args.arch,
        dataset=args.dataset,
        meta={
            "train_config": config.as_dict(),
            "environment": {**describe_environment(device), "threads": args.threads},
        },
    )


def _bench(args: argparse.Namespace) -> None:
    from rsutils.cli.bench import benchmark_modes

    device = pick_device(args.device)
    if args.checkpoint:
        model, info = load_checkpoint(args.checkpoint, dataset=args.dataset, map_location=device)
        dataset = info["dataset"]
    else:
        model, dataset = build_model(args.arch, args.dataset).to(device).eval(), args.dataset
    shape = {"imagenet": (3, 224, 224), "cifar10": (3, 32, 32)}.get(dataset, (1, 28, 28))
    num_classes = 1000 if dataset == "imagenet" else 10
    results = benchmark_modes(
        model,
        shape,
        _bench_noise(args, shape),
        modes=args.inference,
        num_classes=num_classes,
        batch_size=args.batch,
        num_batches=args.batches,
    )
    first = results[0]
    print(f"model      {args.checkpoint or args.arch} ({dataset}, input {shape}) on {device}")
    print(f"batch      {first.batch_size}, {first.inputs} inputs per timing, median of 7 rounds")
    print("raw: forward + argmax; sampling: noise + forward + counting (inputs/s);")
    print("best: the ratio of the fastest rounds; bound: the best ratio if drawing the")
    print("noise were the loop's only other cost")
    header = f"{'mode':<20}{'raw':>12}{'vs fp32':>9}{'sampling':>12}{'ratio':>8}{'best':>7}"
    header += f"{'bound':>7}"
    print(f"{header}  rounds")
    for result in results:
        low, high = result.ratio_range
        speedup = result.raw_per_second / first.raw_per_second
        print(
            f"{result.inference:<20}{result.raw_per_second:12,.0f}{speedup:8.2f}x"
            f"{result.sampling_per_second:12,.0f}{result.ratio:8.3f}{result.best_ratio:7.3f}"
            f"{result.noise_bound:7.3f}"
            f"  {low:.3f}-{high:.3f}"
        )


def _device_check(args: argparse.Namespace) -> None:
    from rsutils.cli.device_check import device_check

    device_check()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m rsutils", description=__doc__, formatter_class=HelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True)
    _certify_parser(commands)
    predict = commands.add_parser(
        "predict", help="PREDICT every skip-th input into a TSV log", formatter_class=HelpFormatter
    )
    _common(predict)
    predict.set_defaults(run=_run_log)
    _train_parser(commands)
    _bench_parser(commands)
    check = commands.add_parser(
        "device-check",
        help="throughput and seconds per certificate in every inference mode, CPU and GPUs",
        formatter_class=HelpFormatter,
    )
    check.set_defaults(run=_device_check)
    return parser


def _certify_parser(commands) -> None:
    certify = commands.add_parser(
        "certify", help="CERTIFY every skip-th input into a TSV log", formatter_class=HelpFormatter
    )
    _common(certify)
    certify.add_argument(
        "--N0",
        type=positive_int,
        default=CertifySettings.n0,
        help="Monte Carlo samples that select the class",
    )
    certify.add_argument(
        "--norm",
        choices=sorted(NORM_ORDERS),
        default=None,
        help="threat norm of the radius (default: the noise family's own)",
    )
    certify.add_argument(
        "--radius-loss",
        type=non_negative_float,
        default=None,
        metavar="L",
        help="each input's own number of draws (at most --N), losing about L of radius",
    )
    certify.add_argument(
        "--decide",
        type=non_negative_float,
        nargs="+",
        default=None,
        metavar="R",
        help="sequential decisions 'certified at radius R?' (looks up to --N draws)",
    )
    certify.add_argument(
        "--ascent-steps",
        type=non_negative_int,
        default=None,
        metavar="K",
        help="data-dependent sigma (DDRS): K steps of sigma ascent from sigma, per input",
    )
    certify.add_argument(
        "--ascent-lr",
        type=positive_float,
        default=SigmaAscent.lr,
        help="sigma ascent step size",
    )
    certify.add_argument(
        "--ascent-draws",
        type=positive_int,
        default=SigmaAscent.draws,
        help="noise draws per sigma ascent step (M)",
    )
    certify.add_argument(
        "--ascent-clamp",
        type=probability,
        default=SigmaAscent.clamp,
        help="sigma ascent clamps the expected probabilities to [clamp, 1 - clamp]",
    )
    certify.add_argument(
        "--memory",
        default=None,
        help="certificate memory (SQLite) file of --ascent-steps "
        "(default: <outfile>.memory.sqlite)",
    )
    certify.set_defaults(run=_run_log)


def _train_parser(commands) -> None:
    train = commands.add_parser(
        "train",
        formatter_class=HelpFormatter,
        help="train a base model (noise augmentation, SmoothAdv or MACER; DS optional)",
    )
    train.add_argument("dataset", choices=DATASETS, help="training data")
    train.add_argument("arch", choices=sorted(ARCHITECTURES), help="network")
    train.add_argument("outfile", help="checkpoint file to write")
    train.add_argument(
        "--noise-sd", type=positive_float, required=True, help="noise scale during training"
    )
    train.add_argument("--noise", choices=sorted(FAMILIES), default="gaussian", help="noise family")
    train.add_argument("--epochs", type=positive_int, default=6, help="passes over the data")
    train.add_argument("--batch", type=positive_int, default=128, help="images per step")
    train.add_argument("--lr", type=positive_float, default=2e-3, help="Adam learning rate")
    train.add_argument(
        "--seed", type=non_negative_int, default=0, help="seed of initialisation and noise"
    )
    train.add_argument(
        "--method",
        choices=("gaussian", "smoothadv", "macer"),
        default="gaussian",
        help="training objective",
    )
    train.add_argument(
        "--draws", type=positive_int, default=1, help="noise draws per image (MACER: 64)"
    )
    train.add_argument(
        "--epsilon", type=positive_float, default=0.25, help="SmoothAdv attack radius"
    )
    train.add_argument(
        "--ds-steps",
        type=positive_int,
        default=None,
        metavar="K",
        help="data-dependent sigma per training image, K ascent steps per draw (DDRS Alg. 2)",
    )
    train.add_argument(
        "--ds-draws",
        type=positive_int,
        default=1,
        metavar="M",
        help="noise draws per ascent step",
    )
    train.add_argument(
        "--threads",
        type=positive_int,
        default=TRAINING_THREADS,
        help="torch intra-op threads while training: the weights depend on this count, "
        "not on the machine's cores",
    )
    train.add_argument("--device", default="auto", help="auto, cpu, cuda, cuda:N")
    train.add_argument("--data-root", default=None, help="dataset folder (else RSUTILS_DATA, ...)")
    train.add_argument("--quiet", action="store_true", help="no progress bar")
    train.set_defaults(run=_train)


def _bench_parser(commands) -> None:
    bench = commands.add_parser(
        "bench", help="raw forward vs Monte Carlo loop throughput", formatter_class=HelpFormatter
    )
    bench.add_argument(
        "--checkpoint", default=None, help="a checkpoint (else a random --arch network)"
    )
    bench.add_argument("--arch", choices=sorted(ARCHITECTURES), default="small_cnn", help="network")
    bench.add_argument(
        "--dataset",
        choices=[*DATASETS, "imagenet"],
        default="fashion-mnist",
        help="input shape and classes",
    )
    bench.add_argument(
        "--batch", type=positive_int, default=1000, help="noisy copies per forward pass"
    )
    bench.add_argument("--batches", type=positive_int, default=10, help="batches per timing")
    bench.add_argument("--sigma", type=positive_float, default=0.25, help="noise scale")
    bench.add_argument("--noise", choices=sorted(FAMILIES), default="gaussian", help="noise family")
    bench.add_argument(
        "--power-a", type=positive_float, default=None, help="exponent a of power_law"
    )
    bench.add_argument(
        "--anisotropic",
        action="store_true",
        help="time mu + sigma * eps with UCAN's pattern as sigma (and a small mu)",
    )
    bench.add_argument(
        "--inference",
        nargs="+",
        choices=INFERENCE_MODES,
        default=list(INFERENCE_MODES),
        help="the base model's modes to time (fp32, the reference, is always timed)",
    )
    bench.add_argument("--device", default="auto", help="auto, cpu, cuda, cuda:N")
    bench.set_defaults(run=_bench)


def main(argv: Sequence[str] | None = None) -> int:
    """Run a command; a user's mistake is one line on stderr and exit status 2.

    Set ``RSUTILS_TRACEBACK=1`` to see the traceback of such an error too.
    """
    args = build_parser().parse_args(argv)
    try:
        args.run(args)
    except (ValueError, TypeError, OSError) as error:
        if os.environ.get("RSUTILS_TRACEBACK"):
            raise
        print(f"error: {_describe(error)}", file=sys.stderr)
        return 2
    return 0


def _describe(error: BaseException) -> str:
    """One line for a user: the message, with the file for errors of the operating system."""
    if isinstance(error, OSError) and error.filename is not None:
        return f"{error.filename}: {error.strerror or error}"
    return str(error)


if __name__ == "__main__":
    sys.exit(main())
