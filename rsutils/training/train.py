"""Training base classifiers for smoothing.

The default is noise data augmentation (Cohen et al., §3.3): each training image is
perturbed with a fresh draw of the smoothing noise before the forward pass, so that
the base classifier learns to classify noisy inputs, which is what the smoothed
classifier asks of it. ``method`` switches to SmoothAdv or MACER
(:mod:`rsutils.training.objectives`, Gaussian noise). The objectives take a sigma per
sample (:class:`BatchSigmas`): the config's scale for every sample, unless ``ds`` holds
the settings of a data-dependent training, which make the run's own per-sample sigmas
(:class:`PerSampleSigma`; DDRS's Algorithm 2 is :mod:`rsutils.ddrs.training`). The loop
here knows no method of choosing sigma.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import asdict, dataclass, field
from typing import Protocol

import torch
from torch import nn

from rsutils.core.devices import model_device
from rsutils.core.noise import make_noise
from rsutils.core.settings import check_count
from rsutils.core.streams import derived_seed, seed_label, stream_generator
from rsutils.data import Dataset
from rsutils.models.architectures import build_model
from rsutils.progress import ProgressBar
from rsutils.training.objectives import OBJECTIVES, ObjectiveSettings

__all__ = [
    "PRECISIONS",
    "TRAINING_THREADS",
    "BatchSigmas",
    "FixedSigma",
    "PerSampleSigma",
    "TrainConfig",
    "batch_loss",
    "describe_training",
    "evaluate_accuracy",
    "intra_op_threads",
    "precision_mode",
    "run_sigmas",
    "train_model",
]

#: Intra-op threads of every training run, so that the weights do not depend on the
#: machine's core count (two: the cores of the machine the book is built on).
TRAINING_THREADS = 2


class BatchSigmas(Protocol):
    """The noise level of each sample of a batch at one training step."""

    def __call__(
        self,
        model: nn.Module,
        x: torch.Tensor,
        y: torch.Tensor,
        batch: torch.Tensor,
        epoch: int,
        generator: torch.Generator,
    ) -> torch.Tensor:
        """One sigma per sample of ``x`` (float64, on ``x``'s device); ``batch`` holds
        their training-set indices, ``y`` their labels, ``epoch`` counts from 0."""
        ...

    def fits(self, size: int) -> None:
        """Raise a ``ValueError`` unless it can serve a training set of ``size`` samples."""
        ...


class PerSampleSigma(Protocol):
    """The settings of a data-dependent training (``TrainConfig.ds``), which make one
    run's per-sample sigmas: DDRS's :class:`~rsutils.ddrs.sigma_ascent.SigmaAscent`
    (:mod:`rsutils.ddrs.training`)."""

    def batch_sigmas(self, size: int, initial: float, start_epoch: int) -> BatchSigmas:
        """The sigmas of a run on ``size`` samples, each starting at ``initial`` and
        chosen by the method from epoch ``start_epoch`` (0-based) on."""
        ...


@dataclass(frozen=True)
class FixedSigma:
    """Every sample at ``scale``: noise augmentation's sigma, the default."""

    scale: float

    def __call__(
        self,
        model: nn.Module,
        x: torch.Tensor,
        y: torch.Tensor,
        batch: torch.Tensor,
        epoch: int,
        generator: torch.Generator,
    ) -> torch.Tensor:
        return torch.full((len(x),), float(self.scale), dtype=torch.float64, device=x.device)

    def fits(self, size: int) -> None:
        """Any training set."""


@dataclass(frozen=True)
class TrainConfig:
    """Everything that determines a trained model (it is also the cache key).

    ``method`` is ``"gaussian"`` (noise augmentation with ``noise`` at ``scale``),
    ``"smoothadv"`` or ``"macer"`` (Gaussian noise, settings in ``objective``);
    ``ds`` enables data-dependent sigma from epoch ``ds_start_epoch`` on (the store
    starts at ``scale``; ``ds.sigma0`` is not used); ``init`` names the model to
    fine-tune from (trained first if needed) instead of a fresh initialisation.
    ``precision`` is ``"fp32"`` or ``"bf16"``: forward and backward passes under
    bfloat16 autocast on channels-last tensors (weights, gradients and optimiser state
    stay fp32), about twice as fast on CPUs with AMX or AVX-512 BF16 and on GPUs.
    """

    arch: str = "small_cnn"
    dataset: str = "fashion-mnist"
    noise: str = "gaussian"
    scale: float = 0.25
    epochs: int = 6
    batch_size: int = 128
    lr: float = 2e-3
    weight_decay: float = 1e-4
    train_subset: int | None = None
    seed: int = 0
    method: str = "gaussian"
    objective: ObjectiveSettings = field(default_factory=ObjectiveSettings)
    ds: PerSampleSigma | None = None
    ds_start_epoch: int = 0
    init: TrainConfig | None = None
    precision: str = "fp32"

    def __post_init__(self) -> None:
        if self.precision not in PRECISIONS:
            raise ValueError(
                f"precision must be one of {', '.join(PRECISIONS)}, got {self.precision!r}"
            )
        if self.method not in OBJECTIVES:
            raise ValueError(f"method must be one of {sorted(OBJECTIVES)}, got {self.method!r}")
        if (self.method != "gaussian" or self.ds is not None) and self.noise != "gaussian":
            raise ValueError(
                f"{self.method} training and data-dependent sigma use Gaussian noise; "
                f"got noise={self.noise!r}"
            )
        if self.init is not None and (self.init.arch, self.init.dataset) != (
            self.arch,
            self.dataset,
        ):
            raise ValueError("init must be a model of the same arch and dataset")

    def as_dict(self) -> dict[str, object]:
        """The cache key. Fields added after the first release are left out while at
        their defaults, so models cached before them keep their keys."""
        values = asdict(self)
        for name in _ADDED_FIELDS:
            if getattr(self, name) == self.__dataclass_fields__[name].default or (
                name == "objective" and self.objective == ObjectiveSettings()
            ):
                values.pop(name)
        if self.init is not None:
            values["init"] = self.init.as_dict()
        return values


_ADDED_FIELDS = ("method", "objective", "ds", "ds_start_epoch", "init", "precision")

#: The numerical precisions a model can be trained in (``TrainConfig.precision``).
PRECISIONS = ("fp32", "bf16")


def train_model(
    config: TrainConfig,
    data: Dataset,
    *,
    device: str | torch.device = "cpu",
    progress: bool = True,
    start: nn.Sequential | None = None,
    sigmas: BatchSigmas | None = None,
    threads: int = TRAINING_THREADS,
) -> nn.Sequential:
    """Train ``config.arch`` on ``data``; returns the model in eval mode.

    Adam with a cosine learning-rate schedule. Initialisation, shuffling and noise
    come from seeded generators, and torch runs on ``threads`` intra-op threads
    (restored afterwards) whatever the machine's core count: CPU reductions are split
    across threads, so the weights depend on the thread count (the difference grows
    with training), not on the number of cores. The same seed and
    thread count give the same weights on CPUs of the same kind. ``start`` is the
    model to fine-tune (``config.init``'s, loaded by the caller); ``sigmas`` the
    per-sample sigmas (default :func:`run_sigmas`), which a caller passes to read
    them after the run (a data-dependent training's final sigmas).
    """
    with intra_op_threads(threads):
        return _train(config, data, torch.device(device), progress, start, sigmas)


def run_sigmas(config: TrainConfig, size: int) -> BatchSigmas:
    """The per-sample sigmas of a run of ``config`` on ``size`` samples: the data-dependent
    training's (``config.ds``) when set, else :class:`FixedSigma` at ``config.scale``."""
    if config.ds is None:
        return FixedSigma(config.scale)
    return config.ds.batch_sigmas(size, config.scale, config.ds_start_epoch)


@contextmanager
def intra_op_threads(threads: int) -> Iterator[None]:
    """Run the block with ``torch.set_num_threads(threads)``, then restore the count."""
    check_count("threads", threads)
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _train(
    config: TrainConfig,
    data: Dataset,
    device: torch.device,
    progress: bool,
    start: nn.Sequential | None,
    sigmas: BatchSigmas | None,
) -> nn.Sequential:
    if config.epochs < 1:
        raise ValueError(f"epochs must be >= 1, got {config.epochs}")
    torch.manual_seed(derived_seed(config.seed, 0, "init"))
    model = build_model(config.arch, config.dataset).to(device)
    if start is not None:
        model.load_state_dict(start.state_dict())
    layout, autocast = precision_mode(config.precision, device)
    model = model.to(memory_format=layout)
    images, labels = data.images, data.labels
    if config.train_subset is not None:
        images, labels = images[: config.train_subset], labels[: config.train_subset]
    sigmas = sigmas if sigmas is not None else run_sigmas(config, len(labels))
    sigmas.fits(len(labels))
    shuffle = stream_generator(config.seed, 0, "order")
    noise_generator = stream_generator(config.seed, 0, "augment", device=device)
    steps_per_epoch = -(-len(labels) // config.batch_size)
    optimizer = torch.optim.Adam(model.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(
        optimizer, config.epochs * steps_per_epoch
    )
    step = batch_loss(config, sigmas, noise_generator)
    model.train()
    epoch_of = f"{describe_training(config)}, epoch {{}} of {config.epochs}".format
    bar = ProgressBar(total=config.epochs * steps_per_epoch, disable=not progress, desc=epoch_of(1))
    for epoch in range(config.epochs):
        bar.set_description(epoch_of(epoch + 1), refresh=False)
        order = torch.randperm(len(labels), generator=shuffle)
        for first in range(0, len(labels), config.batch_size):
            batch = order[first : first + config.batch_size]
            x, y = images[batch].to(device), labels[batch].to(device)
            with autocast():
                loss = step(model, x.contiguous(memory_format=layout), y, batch, epoch)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            schedule.step()
            bar.update()
            bar.set_postfix(loss=f"{loss.item():.3f}", refresh=False)
    bar.close()
    return model.eval()


def precision_mode(
    precision: str, device: torch.device
) -> tuple[torch.memory_format, Callable[[], AbstractContextManager[object]]]:
    """The memory layout and the autocast context (a factory) of a training precision:
    channels-last and bfloat16 autocast for ``"bf16"``, contiguous and nothing for
    ``"fp32"``."""
    if precision == "bf16":
        return torch.channels_last, lambda: torch.autocast(device.type, dtype=torch.bfloat16)
    return torch.contiguous_format, nullcontext


def describe_training(config: TrainConfig) -> str:
    """What a training run is, in a few words: ``train <arch> on <dataset>, σ=<scale>,
    seed <seed>, <method> training`` (``<noise> noise of scale <scale>`` for other noise;
    plus data-dependent sigma and the model it fine-tunes, when set): the name its
    progress bar shows."""
    gaussian = config.noise == "gaussian"
    words = [
        f"train {config.arch} on {config.dataset}",
        f"σ={config.scale:g}" if gaussian else f"{config.noise} noise of scale {config.scale:g}",
        seed_label(config.seed),
        f"{config.method} training",
    ]
    if config.precision != "fp32":
        words.append(f"in {config.precision}")
    if config.ds is not None:
        words.append(f"data-dependent sigma from epoch {config.ds_start_epoch + 1}")
    if config.init is not None:
        init = config.init
        words.append(f"fine-tuning the {init.method} model of {seed_label(init.seed)}")
    return ", ".join(words)


def batch_loss(config: TrainConfig, sigmas: BatchSigmas, generator: torch.Generator):
    """The training loss of ``config`` as a function ``step(model, x, y, batch, epoch)``.

    ``batch`` holds the training-set indices of ``x``. Plain noise augmentation draws
    ``config.noise`` at ``config.scale``; the other objectives, and data-dependent
    training, take each sample's sigma from ``sigmas`` (which may change the model's
    mode while it chooses, and must restore it). Noise is drawn from ``generator``.
    """
    if config.method == "gaussian" and config.ds is None:
        noise = make_noise(config.noise, config.scale)
        loss_fn = nn.CrossEntropyLoss()

        def augmented(model, x, y, batch, epoch):
            return loss_fn(model(x + noise.sample_(torch.empty_like(x), generator)), y)

        return augmented
    objective = OBJECTIVES[config.method]

    def step(model, x, y, batch, epoch):
        sigma = sigmas(model, x, y, batch, epoch, generator)
        return objective(model, x, y, sigma, generator, config.objective)

    return step


def evaluate_accuracy(
    model: nn.Module,
    data: Dataset,
    *,
    noise_scale: float = 0.0,
    noise: str = "gaussian",
    batch_size: int = 1000,
    seed: int = 0,
) -> float:
    """Top-1 accuracy of the base model on ``data``, under one noise draw per image."""
    device = model_device(model)
    generator = stream_generator(seed, 0, "evaluate", device=device)
    sampler = make_noise(noise, noise_scale) if noise_scale > 0 else None
    correct = 0
    with torch.inference_mode():
        for start in range(0, len(data), batch_size):
            x = data.images[start : start + batch_size].to(device)
            if sampler is not None:
                x = x + sampler.sample_(torch.empty_like(x), generator)
            prediction = model(x).argmax(1).cpu()
            correct += int((prediction == data.labels[start : start + batch_size]).sum())
    return correct / len(data)
