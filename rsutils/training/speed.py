"""How long a training step takes, to compare training settings on one machine.

Wall-clock time depends on the machine and on what else runs on it: compare the
numbers of one run as ratios (e.g. bf16 against fp32 training), never across machines.
"""

from __future__ import annotations

import statistics
import time

import torch

from rsutils.core.settings import check_count
from rsutils.core.streams import derived_seed, stream_generator
from rsutils.data import Dataset
from rsutils.models.architectures import build_model
from rsutils.training.train import (
    TRAINING_THREADS,
    TrainConfig,
    batch_loss,
    intra_op_threads,
    precision_mode,
    run_sigmas,
)

__all__ = ["training_step_seconds"]


def training_step_seconds(
    config: TrainConfig,
    data: Dataset,
    *,
    steps: int = 20,
    warmup: int = 3,
    threads: int = TRAINING_THREADS,
) -> float:
    """The median seconds of one optimiser step of ``config``'s training on the CPU.

    Each step is what :func:`~rsutils.training.train.train_model` does per batch (a batch
    of ``config.batch_size`` images, the config's loss, precision and memory layout,
    backward pass and Adam step) on a fresh model, after ``warmup`` untimed steps;
    nothing is saved and ``data`` is not changed.
    """
    check_count("steps", steps)
    torch.manual_seed(derived_seed(config.seed, 0, "init"))
    model = build_model(config.arch, config.dataset)
    layout, autocast = precision_mode(config.precision, torch.device("cpu"))
    model = model.to(memory_format=layout).train()
    optimizer = torch.optim.Adam(model.parameters(), lr=config.lr)
    sigmas = run_sigmas(config, len(data))
    step = batch_loss(config, sigmas, stream_generator(config.seed, 0, "augment"))
    order = torch.randperm(len(data), generator=stream_generator(config.seed, 0, "order"))
    seconds = []
    with intra_op_threads(threads):
        for k in range(warmup + steps):
            batch = order[(k * config.batch_size) % len(data) :][: config.batch_size]
            x = data.images[batch].contiguous(memory_format=layout)
            start = time.perf_counter()
            with autocast():
                loss = step(model, x, data.labels[batch], batch, 0)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            seconds.append(time.perf_counter() - start)
    return statistics.median(seconds[warmup:])
