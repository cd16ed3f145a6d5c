"""How close the Monte Carlo loop runs to the base model's raw forward throughput.

``raw`` times the model alone on a fixed batch; ``sampling`` times
:func:`rsutils.core.sampling.count_classes` (noise generation, adding it, the forward
pass, argmax and counting) for the same number of inputs. Their ratio is the share of
the time spent in the model: 1.0 means the bookkeeping is free. With ``prefetch`` the
loop that draws the next batch's noise in a worker thread while the model runs
(:class:`~rsutils.core.sampling.PrefixCounter`'s ``prefetch``, off by default) is timed
too, in the same rounds, so the gain of the overlap is a ratio within one run. ``noise`` times the
noise alone (drawing it and adding it to the input): if everything else were free, a
loop that draws it between forward passes would reach :attr:`BenchResult.noise_bound`
(the overlap can pass it: the noise is then drawn while the model runs). The
fastest round of each (``best``) is the least disturbed by other work. With
an ``inference`` mode (:mod:`rsutils.core.inference`) both run the model in that mode;
:func:`benchmark_modes` times every mode in one run, against the fp32 forward.

``python -m rsutils bench`` (:func:`add_parser`, :func:`run`) prints that table for a
checkpoint or a random network.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from rsutils.anisotropic.noise import Anisotropic
from rsutils.anisotropic.patterns import spatial_pattern
from rsutils.cli.arguments import (
    HelpFormatter,
    add_noise_family_argument,
    positive_float,
    positive_int,
)
from rsutils.cli.common import DATASETS, noise_from_args
from rsutils.core.devices import model_device, pick_device
from rsutils.core.inference import INFERENCE_MODES, check_inference_mode, inference_model
from rsutils.core.noise import NoiseFamily
from rsutils.core.sampling import NoiseStream, count_classes
from rsutils.core.streams import image_generator
from rsutils.training.models import ARCHITECTURES, build_model, load_checkpoint

__all__ = ["BenchResult", "add_parser", "benchmark", "benchmark_modes", "run"]


@dataclass(frozen=True)
class BenchResult:
    """Median throughputs (inputs per second) over interleaved rounds."""

    batch_size: int
    inputs: int
    raw_per_second: float
    sampling_per_second: float
    ratio: float  # median over rounds of sampling / raw, each round timing both
    ratio_range: tuple[float, float]  # smallest and largest per-round ratio (machine noise)
    inference: str = "fp32"
    # The fastest round of each timing, the least disturbed by a shared machine's
    # neighbours (as timeit's minimum): raw, sampling, and the noise alone (drawing it
    # and adding it to the input).
    best_raw_per_second: float = float("nan")
    best_sampling_per_second: float = float("nan")
    noise_per_second: float = float("nan")
    # The fastest round of the loop with the overlap (``prefetch=True``; else NaN).
    best_prefetch_per_second: float = float("nan")

    @property
    def best_ratio(self) -> float:
        """Loop over raw throughput from the fastest round of each."""
        return self.best_sampling_per_second / self.best_raw_per_second

    @property
    def best_prefetch_ratio(self) -> float:
        """Like :attr:`best_ratio`, for the loop with the overlap (NaN if untimed)."""
        return self.best_prefetch_per_second / self.best_raw_per_second

    @property
    def noise_bound(self) -> float:
        """The ratio a loop whose only cost besides the model is the noise would reach,
        from the fastest rounds: ``1 / (1 + raw / noise)``, if it drew the noise between
        forward passes (the default loop's ceiling; the overlap can pass it)."""
        return 1.0 / (1.0 + self.best_raw_per_second / self.noise_per_second)


def _elapsed(run: Callable[[], object], device: torch.device) -> float:
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    start = time.perf_counter()
    run()
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return time.perf_counter() - start


def benchmark(
    model: nn.Module,
    input_shape: tuple[int, ...],
    noise: NoiseFamily,
    *,
    num_classes: int,
    batch_size: int = 1000,
    num_batches: int = 10,
    repeats: int = 7,
    inference: str = "fp32",
    prefetch: bool = False,
) -> BenchResult:
    """Throughputs of the raw model and of the loop, timed alternately ``repeats`` times.

    Alternating the two timings, and taking medians, keeps slow drifts of a shared
    machine (frequency scaling, neighbours) out of the ratio. Both run the model in
    ``inference`` mode. With ``prefetch``, each round also times the loop with the
    overlap of noise and forward (``prefetch=True``).
    """
    device = model_device(model)
    model = inference_model(model.eval(), inference)
    x = torch.rand(input_shape, device=device)
    batch = x + noise.sample((batch_size, *input_shape), image_generator(0, 0, "select", device))
    total = batch_size * num_batches

    def raw() -> None:
        with torch.inference_mode():
            for _ in range(num_batches):
                model(batch).argmax(1)

    def sampling(overlap: bool = False) -> None:
        generator = image_generator(0, 0, "estimate", device)
        count_classes(
            model,
            x,
            noise,
            total,
            num_classes=num_classes,
            batch_size=batch_size,
            generator=generator,
            prefetch=overlap,
        ).cpu()

    def sampling_prefetch() -> None:
        sampling(overlap=True)

    def noise_only() -> None:
        generator = image_generator(0, 0, "estimate", device)
        stream = NoiseStream(noise, x.shape, total, generator, x.dtype)
        buffer = torch.empty((batch_size, *input_shape), device=device)
        for start in range(0, total, batch_size):
            stream.fill_(buffer[: min(batch_size, total - start)]).add_(x)

    timed = (raw, sampling, noise_only, *((sampling_prefetch,) if prefetch else ()))
    for run in timed:  # warm-up (allocator, kernels, lazy initialisation)
        run()
    rounds = np.array([[_elapsed(run, device) for run in timed] for _ in range(repeats)])
    raw_time, sampling_time = np.median(rounds[:, :2], axis=0)
    best_raw, best_sampling, best_noise = rounds[:, :3].min(axis=0)
    best_prefetch = rounds[:, 3].min() if prefetch else float("nan")
    ratios = rounds[:, 0] / rounds[:, 1]
    spread = (float(ratios.min()), float(ratios.max()))
    return BenchResult(
        batch_size,
        total,
        total / raw_time,
        total / sampling_time,
        float(np.median(ratios)),
        spread,
        inference,
        total / best_raw,
        total / best_sampling,
        total / best_noise,
        total / best_prefetch,
    )


def benchmark_modes(
    model: nn.Module,
    input_shape: tuple[int, ...],
    noise: NoiseFamily,
    *,
    modes: Sequence[str] = INFERENCE_MODES,
    **options: int | bool,
) -> list[BenchResult]:
    """:func:`benchmark` in each of ``modes`` (fp32 first, the reference of the speed-ups);
    ``options`` are :func:`benchmark`'s (``num_classes``, ``batch_size``, ...)."""
    ordered = ["fp32", *(check_inference_mode(m) for m in modes if m != "fp32")]
    return [benchmark(model, input_shape, noise, inference=m, **options) for m in ordered]


def add_parser(commands: argparse._SubParsersAction) -> None:
    """The ``bench`` subcommand."""
    bench = commands.add_parser(
        "bench", help="raw forward vs Monte Carlo loop throughput", formatter_class=HelpFormatter
    )
    bench.add_argument(
        "--checkpoint", default=None, help="a checkpoint (else a random --arch network)"
    )
    bench.add_argument(
        "--arch",
        choices=sorted(ARCHITECTURES),
        default="small_cnn",
        metavar="ARCH",
        help="network: %(choices)s",
    )
    bench.add_argument(
        "--dataset",
        choices=[*DATASETS, "imagenet"],
        default="fashion-mnist",
        metavar="DATASET",
        help="input shape and classes: %(choices)s",
    )
    bench.add_argument(
        "--batch", type=positive_int, default=1000, help="noisy copies per forward pass"
    )
    bench.add_argument("--batches", type=positive_int, default=10, help="batches per timing")
    bench.add_argument(
        "--rounds",
        type=positive_int,
        default=7,
        help="interleaved rounds per timing (more: a steadier fastest round)",
    )
    bench.add_argument(
        "--prefetch",
        action="store_true",
        help="also time the loop that draws the next batch's noise during the forward pass "
        "(column prefetch: its best ratio)",
    )
    bench.add_argument("--sigma", type=positive_float, default=0.25, help="noise scale")
    add_noise_family_argument(bench)
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
        metavar="MODE",
        help="the base model's modes to time, of %(choices)s "
        "(fp32, the reference, is always timed)",
    )
    bench.add_argument("--device", default="auto", help="auto, cpu, cuda, cuda:N")
    bench.set_defaults(run=run)


def run(args: argparse.Namespace) -> None:
    """Time the command's model in each ``--inference`` mode and print the table."""
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
        repeats=args.rounds,
        prefetch=args.prefetch,
    )
    first = results[0]
    rounds = f"median of {args.rounds} rounds"
    print(f"model      {args.checkpoint or args.arch} ({dataset}, input {shape}) on {device}")
    print(f"batch      {first.batch_size}, {first.inputs} inputs per timing, {rounds}")
    print("raw: forward + argmax; sampling: noise + forward + counting (inputs/s);")
    print("best: the ratio of the fastest rounds; bound: the best ratio if drawing the")
    print("noise between forward passes were the loop's only other cost")
    if args.prefetch:
        print("prefetch: the best ratio of the loop that draws the noise during the forward")
    # 75 columns (84 with prefetch): the table fits a narrow terminal and the book's column
    header = f"{'mode':<19}{'raw':>9}{'vs fp32':>8}{'sampling':>10}{'ratio':>6}{'best':>6}"
    prefetch_header = f"{'prefetch':>9}" if args.prefetch else ""
    print(f"{header}{'bound':>6}{prefetch_header}  rounds")
    for result in results:
        low, high = result.ratio_range
        speedup = result.raw_per_second / first.raw_per_second
        overlap = f"{result.best_prefetch_ratio:9.3f}" if args.prefetch else ""
        print(
            f"{result.inference:<19}{result.raw_per_second:9,.0f}{speedup:7.2f}x"
            f"{result.sampling_per_second:10,.0f}{result.ratio:6.3f}{result.best_ratio:6.3f}"
            f"{result.noise_bound:6.3f}{overlap}  {low:.2f}-{high:.2f}"
        )


def _bench_noise(args: argparse.Namespace, shape: tuple[int, ...]) -> NoiseFamily:
    """The command's noise; with ``--anisotropic``, over UCAN's spatial pattern."""
    noise = noise_from_args(args)
    if args.anisotropic:
        sigma = spatial_pattern(shape[1], shape[2])
        noise = Anisotropic(noise, sigma, 0.1 * sigma)
    return noise
