"""How close the Monte Carlo loop runs to the base model's raw forward throughput.

``raw`` times the model alone on a fixed batch; ``sampling`` times
:func:`rsutils.core.sampling.count_classes` (noise generation, adding it, the forward
pass, argmax and counting) for the same number of inputs. Their ratio is the share of
the time spent in the model: 1.0 means the bookkeeping is free. ``noise`` times the
noise alone (drawing it and adding it to the input), the part no loop can skip: if
everything else were free the loop would reach :attr:`BenchResult.noise_bound`. The
fastest round of each (``best``) is the least disturbed by other work. With
an ``inference`` mode (:mod:`rsutils.core.inference`) both run the model in that mode;
:func:`benchmark_modes` times every mode in one run, against the fp32 forward.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from rsutils.core.devices import model_device
from rsutils.core.inference import INFERENCE_MODES, check_inference_mode, inference_model
from rsutils.core.noise import NoiseFamily
from rsutils.core.sampling import NoiseStream, count_classes, image_generator

__all__ = ["BenchResult", "benchmark", "benchmark_modes"]


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

    @property
    def best_ratio(self) -> float:
        """Loop over raw throughput from the fastest round of each."""
        return self.best_sampling_per_second / self.best_raw_per_second

    @property
    def noise_bound(self) -> float:
        """The ratio a loop whose only cost besides the model is the noise would reach,
        from the fastest rounds: ``1 / (1 + raw / noise)``."""
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
) -> BenchResult:
    """Throughputs of the raw model and of the loop, timed alternately ``repeats`` times.

    Alternating the two timings, and taking medians, keeps slow drifts of a shared
    machine (frequency scaling, neighbours) out of the ratio. Both run the model in
    ``inference`` mode.
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

    def sampling() -> None:
        generator = image_generator(0, 0, "estimate", device)
        count_classes(
            model,
            x,
            noise,
            total,
            num_classes=num_classes,
            batch_size=batch_size,
            generator=generator,
        ).cpu()

    def noise_only() -> None:
        generator = image_generator(0, 0, "estimate", device)
        stream = NoiseStream(noise, x.shape, total, generator, x.dtype)
        buffer = torch.empty((batch_size, *input_shape), device=device)
        for start in range(0, total, batch_size):
            stream.fill_(buffer[: min(batch_size, total - start)]).add_(x)

    timed = (raw, sampling, noise_only)
    for run in timed:  # warm-up (allocator, kernels, lazy initialisation)
        run()
    rounds = np.array([[_elapsed(run, device) for run in timed] for _ in range(repeats)])
    raw_time, sampling_time, _ = np.median(rounds, axis=0)
    best_raw, best_sampling, best_noise = rounds.min(axis=0)
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
    )


def benchmark_modes(
    model: nn.Module,
    input_shape: tuple[int, ...],
    noise: NoiseFamily,
    *,
    modes: Sequence[str] = INFERENCE_MODES,
    **options: int,
) -> list[BenchResult]:
    """:func:`benchmark` in each of ``modes`` (fp32 first, the reference of the speed-ups);
    ``options`` are :func:`benchmark`'s (``num_classes``, ``batch_size``, ...)."""
    ordered = ["fp32", *(check_inference_mode(m) for m in modes if m != "fp32")]
    return [benchmark(model, input_shape, noise, inference=m, **options) for m in ordered]
