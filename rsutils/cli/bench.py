"""How close the Monte Carlo loop runs to the base model's raw forward throughput.

``raw`` times the model alone on a fixed batch; ``sampling`` times
:func:`rsutils.core.sampling.count_classes` (noise generation, adding it, the forward
pass, argmax and counting) for the same number of inputs. Their ratio is the share of
the time spent in the model: 1.0 means the bookkeeping is free. With ``prefetch`` the
loop that draws the next batch's noise in a worker thread while the model runs
(:class:`~rsutils.core.sampling.PrefixCounter`'s ``prefetch``, off by default) is timed
too, in the same rounds, so the gain of the overlap is a ratio within one run. ``noise`` times the
noise alone (drawing it and making the model's inputs from it): if everything else were free, a
loop that draws it between forward passes would reach :attr:`BenchResult.noise_bound`
(the overlap can pass it: the noise is then drawn while the model runs). The
fastest round of each (``best``) is the least disturbed by other work. With
an ``inference`` mode (:mod:`rsutils.core.inference`) both run the model in that mode;
:func:`benchmark_modes` times every mode in one run, against the fp32 forward, and
with ``samplers=("plain", "sound")`` what the sound sampler
(:mod:`rsutils.core.sound_sampling`) costs in each; :func:`benchmark_variants` times any
list of (mode, sampler) pairs in the same interleaved rounds.

``python -m rsutils bench`` (:func:`add_parser`, :func:`run`) prints that table for a
checkpoint or a random network.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

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
from rsutils.core.sound_sampling import DEFAULT_SAMPLER, SAMPLERS, with_sampler
from rsutils.core.streams import image_generator, stream_generator
from rsutils.models.architectures import ARCHITECTURES, build_model
from rsutils.models.checkpoints import load_checkpoint

__all__ = [
    "BenchResult",
    "BenchSettings",
    "add_parser",
    "benchmark",
    "benchmark_modes",
    "benchmark_variants",
    "run",
]


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
    sampler: str = DEFAULT_SAMPLER  # how the loop made its noisy inputs

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


@dataclass(frozen=True)
class BenchSettings:
    """How a benchmark times: ``num_batches`` batches of ``batch_size`` inputs per timing,
    ``repeats`` interleaved rounds (medians and the fastest round are reported), and with
    ``prefetch`` the loop that overlaps noise and forward timed in each round too."""

    batch_size: int = 1000
    num_batches: int = 10
    repeats: int = 7
    prefetch: bool = False

    @property
    def inputs(self) -> int:
        """The inputs of one timing."""
        return self.batch_size * self.num_batches


def benchmark(
    model: nn.Module,
    input_shape: tuple[int, ...],
    noise: NoiseFamily,
    settings: BenchSettings = BenchSettings(),
    *,
    num_classes: int,
    inference: str = "fp32",
    sampler: str = DEFAULT_SAMPLER,
    x: torch.Tensor | None = None,
) -> BenchResult:
    """Throughputs of the raw model and of the loop, timed alternately ``settings.repeats``
    times.

    Alternating the timings, and taking medians, keeps slow drifts of a shared
    machine (frequency scaling, neighbours) out of the ratio. Both run the model in
    ``inference`` mode, the loop with ``noise`` drawn by ``sampler``
    (:data:`~rsutils.core.sound_sampling.SAMPLERS`). With ``settings.prefetch``, each
    round also times the loop with the overlap of noise and forward. ``x`` is the input
    (default: a random one on the 1/255 grid, which every sampler takes).
    """
    variants = [(inference, sampler)]
    (result,) = benchmark_variants(
        model, input_shape, noise, variants, settings, num_classes=num_classes, x=x
    )
    return result


def benchmark_modes(
    model: nn.Module,
    input_shape: tuple[int, ...],
    noise: NoiseFamily,
    settings: BenchSettings = BenchSettings(),
    *,
    num_classes: int,
    modes: Sequence[str] = INFERENCE_MODES,
    samplers: Sequence[str] = (DEFAULT_SAMPLER,),
    x: torch.Tensor | None = None,
) -> list[BenchResult]:
    """:func:`benchmark_variants` of every mode in ``modes`` (fp32 first, the reference of
    the speed-ups) with every sampler in ``samplers``."""
    ordered = ["fp32", *(check_inference_mode(m) for m in modes if m != "fp32")]
    variants = [(mode, sampler) for mode in ordered for sampler in samplers]
    return benchmark_variants(
        model, input_shape, noise, variants, settings, num_classes=num_classes, x=x
    )


def benchmark_variants(
    model: nn.Module,
    input_shape: tuple[int, ...],
    noise: NoiseFamily,
    variants: Sequence[tuple[str, str]],
    settings: BenchSettings = BenchSettings(),
    *,
    num_classes: int,
    x: torch.Tensor | None = None,
) -> list[BenchResult]:
    """:func:`benchmark`'s figures for each ``(inference mode, sampler)`` of ``variants``,
    all timed in the same interleaved rounds, so that their ratios (a mode's speed-up,
    the sound sampler's cost) are measured under the same conditions."""
    device = model_device(model)
    if x is None:
        pixels = stream_generator(0, 0, "uniform-images")
        x = torch.randint(0, 256, input_shape, generator=pixels) / 255
    x = x.to(device)
    timers = [
        _VariantTimer(model, x, with_sampler(noise, sampler), mode, sampler, num_classes)
        for mode, sampler in variants
    ]
    sizes = (settings.batch_size, settings.num_batches)
    extra = ("prefetch",) if settings.prefetch else ()
    timed = [(timer, kind) for timer in timers for kind in ("raw", "loop", "noise", *extra)]
    for timer, kind in timed:  # warm-up (allocator, kernels, lazy initialisation)
        timer.run(kind, *sizes)
    seconds = np.array(
        [
            [_elapsed(partial(t.run, k, *sizes), device) for t, k in timed]
            for _ in range(settings.repeats)
        ]
    )
    kinds = len(timed) // len(timers)
    rounds = [seconds[:, i * kinds : (i + 1) * kinds] for i in range(len(timers))]
    return [
        _result(timer, times, settings.inputs, settings.batch_size)
        for timer, times in zip(timers, rounds, strict=True)
    ]


class _VariantTimer:
    """The timed runs of one (mode, sampler): the raw forward, the loop, the noise alone
    and the loop with the overlap."""

    def __init__(
        self,
        model: nn.Module,
        x: torch.Tensor,
        noise: NoiseFamily,
        mode: str,
        sampler: str,
        num_classes: int,
    ) -> None:
        self.model, self.x, self.noise = inference_model(model.eval(), mode), x, noise
        self.mode, self.sampler, self.num_classes = mode, sampler, num_classes
        self._batch: torch.Tensor | None = None

    def run(self, kind: str, batch_size: int, num_batches: int) -> None:
        total = batch_size * num_batches
        if kind == "raw":
            batch = self._raw_batch(batch_size)
            with torch.inference_mode():
                for _ in range(num_batches):
                    self.model(batch).argmax(1)
        elif kind == "noise":
            stream = NoiseStream(self.noise, self.x.shape, total, self._generator(), self.x.dtype)
            added = self.noise.prepare_input(self.x)
            buffer = torch.empty((batch_size, *self.x.shape), device=self.x.device)
            with torch.inference_mode():
                for _ in range(num_batches):
                    self.noise.perturb_(stream.fill_(buffer), added)
        else:
            count_classes(
                self.model, self.x, self.noise, total, num_classes=self.num_classes,
                batch_size=batch_size, generator=self._generator(), prefetch=kind == "prefetch",
            ).cpu()  # fmt: skip

    def _generator(self) -> torch.Generator:
        return image_generator(0, 0, "estimate", self.x.device)

    def _raw_batch(self, batch_size: int) -> torch.Tensor:
        if self._batch is None or self._batch.shape[0] != batch_size:
            selection = image_generator(0, 0, "select", self.x.device)
            draws = torch.empty((batch_size, *self.x.shape), device=self.x.device)
            added = self.noise.prepare_input(self.x)
            self._batch = self.noise.perturb_(self.noise.sample_(draws, selection), added)
        return self._batch


def _result(timer: _VariantTimer, seconds: np.ndarray, total: int, batch_size: int) -> BenchResult:
    """One variant's :class:`BenchResult` from its columns of round times (raw, loop,
    noise, and the overlapped loop if timed)."""
    raw_time, sampling_time = np.median(seconds[:, :2], axis=0)
    best_raw, best_sampling, best_noise = seconds[:, :3].min(axis=0)
    best_prefetch = seconds[:, 3].min() if seconds.shape[1] > 3 else float("nan")
    ratios = seconds[:, 0] / seconds[:, 1]
    return BenchResult(
        batch_size,
        total,
        total / raw_time,
        total / sampling_time,
        float(np.median(ratios)),
        (float(ratios.min()), float(ratios.max())),
        timer.mode,
        total / best_raw,
        total / best_sampling,
        total / best_noise,
        total / best_prefetch,
        timer.sampler,
    )


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
        choices=DATASETS,
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
    bench.add_argument(
        "--sampler",
        nargs="+",
        choices=list(SAMPLERS),
        default=[DEFAULT_SAMPLER],
        metavar="SAMPLER",
        help="how the loop makes noisy inputs, of %(choices)s: with both, each mode is "
        "timed with each, in the same rounds (rows MODE+sound: the sound sampler)",
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
    settings = BenchSettings(args.batch, args.batches, args.rounds, args.prefetch)
    results = benchmark_modes(
        model, shape, _bench_noise(args, shape), settings, num_classes=num_classes,
        modes=args.inference, samplers=args.sampler,
    )  # fmt: skip
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
    width = max(19, *(len(_label(result)) + 1 for result in results))
    header = f"{'mode':<{width}}{'raw':>9}{'vs fp32':>8}{'sampling':>10}{'ratio':>6}{'best':>6}"
    prefetch_header = f"{'prefetch':>9}" if args.prefetch else ""
    print(f"{header}{'bound':>6}{prefetch_header}  rounds")
    for result in results:
        low, high = result.ratio_range
        speedup = result.raw_per_second / first.raw_per_second
        overlap = f"{result.best_prefetch_ratio:9.3f}" if args.prefetch else ""
        print(
            f"{_label(result):<{width}}{result.raw_per_second:9,.0f}{speedup:7.2f}x"
            f"{result.sampling_per_second:10,.0f}{result.ratio:6.3f}{result.best_ratio:6.3f}"
            f"{result.noise_bound:6.3f}{overlap}  {low:.2f}-{high:.2f}"
        )


def _label(result: BenchResult) -> str:
    """A row's name: the mode, with ``+sound`` for the sound sampler."""
    return result.inference if result.sampler == "plain" else f"{result.inference}+{result.sampler}"


def _bench_noise(args: argparse.Namespace, shape: tuple[int, ...]) -> NoiseFamily:
    """The command's noise; with ``--anisotropic``, over UCAN's spatial pattern."""
    noise = noise_from_args(args)
    if args.anisotropic:
        sigma = spatial_pattern(shape[1], shape[2])
        noise = Anisotropic(noise, sigma, 0.1 * sigma)
    return noise
