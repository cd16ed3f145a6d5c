"""What the sound sampler costs against the plain one, timed in one run.

:func:`sampler_cost` times, in interleaved rounds, the noise alone (drawing a batch and
making the model's inputs from it) and the whole Monte Carlo loop
(:func:`~rsutils.core.sampling.count_classes`: noise, forward pass, counting) with the
plain sampler and with :class:`~rsutils.core.sound_sampling.SoundGaussian`, on the
same model, input and sigma. Ratios are of the fastest rounds (the least disturbed by
a shared machine), sound over plain: the factor by which the sound option slows each.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from rsutils.core.noise import Gaussian, NoiseFamily
from rsutils.core.sampling import NoiseStream, count_classes
from rsutils.core.sound_sampling import SoundGaussian
from rsutils.core.streams import image_generator

__all__ = ["SamplerCost", "sampler_cost"]


@dataclass(frozen=True)
class SamplerCost:
    """Fastest-round seconds per batch of the noise and of the loop, for each sampler."""

    batch_size: int
    noise_plain: float
    noise_sound: float
    loop_plain: float
    loop_sound: float

    @property
    def noise_ratio(self) -> float:
        """How many times longer the sound sampler takes to make a batch of inputs."""
        return self.noise_sound / self.noise_plain

    @property
    def loop_ratio(self) -> float:
        """How many times longer the whole loop takes with the sound sampler."""
        return self.loop_sound / self.loop_plain


def _seconds(
    run: Callable[[NoiseFamily], object], noise: NoiseFamily, device: torch.device
) -> float:
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    start = time.perf_counter()
    run(noise)
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return time.perf_counter() - start


def sampler_cost(
    model: nn.Module,
    x: torch.Tensor,
    sigma: float,
    *,
    num_classes: int,
    batch_size: int = 1000,
    num_batches: int = 4,
    repeats: int = 5,
) -> SamplerCost:
    """Time both samplers on ``model`` at ``x`` (on the 1/255 grid, on the model's device).

    Each of ``repeats`` rounds times, for each sampler, ``num_batches`` batches of noise
    alone and then of the whole loop; the result is the fastest round of each, per batch.
    """
    total, device = batch_size * num_batches, x.device
    samplers: dict[str, NoiseFamily] = {"plain": Gaussian(sigma), "sound": SoundGaussian(sigma)}

    def noise_only(noise: NoiseFamily) -> None:
        stream = NoiseStream(
            noise, x.shape, total, image_generator(0, 0, "estimate", device), x.dtype
        )
        added = noise.prepare_input(x)
        buffer = torch.empty((batch_size, *x.shape), dtype=x.dtype, device=device)
        for _ in range(num_batches):
            noise.perturb_(stream.fill_(buffer), added)

    def loop(noise: NoiseFamily) -> None:
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

    timed = [(kind, name) for kind in (noise_only, loop) for name in samplers]
    for kind, name in timed:  # warm-up: the sound sampler's tables, kernels, allocator
        kind(samplers[name])
    rounds = np.array(
        [[_seconds(k, samplers[s], device) for k, s in timed] for _ in range(repeats)]
    )
    best = rounds.min(axis=0) / num_batches
    return SamplerCost(batch_size, *(float(b) for b in best))
