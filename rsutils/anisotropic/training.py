"""Training a classifier with a noise parameter generator (UCAN §IV, Eq. 13).

Each step draws the anisotropic noise of the generator at the batch, classifies the
noisy batch and minimises UCAN's loss, read with the sign that makes it a loss (the
printed Eq. 13 adds ``Σ y_k log ŷ_k``, the negative cross-entropy):

    ``L = CE(f(x + mu + sigma ⊙ λ·eps), y) − w·V(sigma)``

where the variance term ``V`` is ``min(sigma)`` (towards the radius ``min(sigma)·R``)
or ``mean(sigma)`` (towards the ALM), over the whole batch tensor as in UCAN's code,
and the cross-entropy is averaged over ``draws`` noise draws per step. Classifier and
generator are trained jointly (Adam, each with its own learning rate); a fixed
pattern or isotropic noise trains the classifier alone. Every method starts from the
same isotropic base classifier and takes the same number of steps, so differences come
from the noise, not from the training budget.
"""

from __future__ import annotations

import copy
import math
from dataclasses import asdict, dataclass

import torch
from torch import nn

from rsutils.anisotropic.generators import (
    CertificationWiseGenerator,
    DatasetWiseGenerator,
    FixedNoise,
    NoiseGenerator,
)
from rsutils.anisotropic.patterns import spatial_pattern
from rsutils.core.settings import check_count
from rsutils.core.streams import derived_seed, stream_generator
from rsutils.progress import ProgressBar
from rsutils.training.data import Dataset
from rsutils.training.train import (
    TRAINING_THREADS,
    TrainConfig,
    describe_training,
    intra_op_threads,
)

__all__ = ["NPG_METHODS", "NPGConfig", "describe_npg", "make_generator", "npg_loss", "train_npg"]

#: The methods, by their noise (the isotropic control and UCAN's three generators).
NPG_METHODS = ("isotropic", "pattern", "dataset", "certification")
VARIANCE_TERMS = ("min", "mean")


@dataclass(frozen=True)
class NPGConfig:
    """Everything that determines a trained (classifier, generator) pair; the cache key.

    ``base`` is the isotropic base classifier every method starts from; its ``scale``
    is the ``λ`` that ``sigma`` multiplies. ``isotropic_sigma`` is the constant
    ``sigma`` of the isotropic method (1: the base's own noise; 2: twice as much, the
    control for a generator whose ``sigma`` ends at 2 everywhere). ``pattern_norm``,
    ``kappa``, ``iota`` shape the pattern-wise ``sigma`` (Eq. 12, rescaled to mean 1).
    ``gamma`` bounds a generator's ``sigma`` (default 2 for dataset-wise, 1 for
    certification-wise, as in UCAN); ``mu_bound`` bounds its ``mu`` (default ``λ``, as
    UCAN's code scales the certification-wise ``mu``). Training takes ``steps`` Adam
    steps of ``batch_size`` images with ``draws`` noise draws each, at ``lr`` for the
    classifier and ``generator_lr`` for the generator (UCAN's paper: Adam 1e-2).
    """

    base: TrainConfig
    method: str = "isotropic"
    isotropic_sigma: float = 1.0
    pattern_norm: str = "l2"
    kappa: float = 1.0
    iota: float = 1.0
    variance_term: str = "min"
    variance_weight: float = 1.0
    gamma: float | None = None
    mu_bound: float | None = None
    width: int = 8
    steps: int = 80
    batch_size: int = 128
    draws: int = 1
    lr: float = 1e-3
    generator_lr: float = 1e-2
    train_subset: int | None = 10_000
    seed: int = 0

    def __post_init__(self) -> None:
        if self.method not in NPG_METHODS:
            raise ValueError(f"method must be one of {NPG_METHODS}, got {self.method!r}")
        if self.variance_term not in VARIANCE_TERMS:
            raise ValueError(f"variance_term must be 'min' or 'mean', got {self.variance_term!r}")
        if self.base.noise != "gaussian":
            raise ValueError(
                f"the base classifier must use Gaussian noise, got {self.base.noise!r}"
            )
        if not (math.isfinite(self.isotropic_sigma) and self.isotropic_sigma > 0):
            raise ValueError(f"isotropic_sigma must be > 0, got {self.isotropic_sigma!r}")
        for name in ("steps", "batch_size", "draws"):
            check_count(name, getattr(self, name))

    @property
    def scale(self) -> float:
        """``λ``: the base classifier's noise level."""
        return self.base.scale

    @property
    def trains_generator(self) -> bool:
        return self.method in ("dataset", "certification")

    def as_dict(self) -> dict[str, object]:
        """The cache key (``isotropic_sigma`` only when it is not 1, so that keys made
        before it existed still hold)."""
        values = {**asdict(self), "base": self.base.as_dict()}
        if self.isotropic_sigma == 1.0:
            values.pop("isotropic_sigma")
        return values


def make_generator(config: NPGConfig, shape: tuple[int, ...]) -> NoiseGenerator:
    """The untrained generator of ``config`` for inputs of ``shape`` ``(C, H, W)``."""
    mu_bound = config.scale if config.mu_bound is None else config.mu_bound
    if config.method == "isotropic":
        return FixedNoise(torch.full((1, *shape[1:]), float(config.isotropic_sigma)))
    if config.method == "pattern":
        pattern = spatial_pattern(
            shape[1], shape[2], norm=config.pattern_norm, kappa=config.kappa, iota=config.iota
        )
        return FixedNoise(pattern.float())
    if config.method == "dataset":
        gamma = 2.0 if config.gamma is None else config.gamma
        return DatasetWiseGenerator(shape, gamma=gamma, mu_bound=mu_bound, initial_sigma=gamma / 2)
    gamma = 1.0 if config.gamma is None else config.gamma
    return CertificationWiseGenerator(
        shape[0],
        gamma=gamma,
        mu_bound=mu_bound,
        initial_sigma=gamma / 2,
        width=config.width,
        growth=config.width,
    )


def npg_loss(
    model: nn.Module,
    generator: NoiseGenerator,
    x: torch.Tensor,
    y: torch.Tensor,
    config: NPGConfig,
    noise: torch.Generator,
) -> tuple[torch.Tensor, dict[str, float]]:
    """UCAN's loss on one batch and its parts (cross-entropy, variance term)."""
    mu, sigma = generator(x)
    cross_entropy = x.new_zeros(())
    for _ in range(config.draws):
        eps = torch.randn(x.shape, generator=noise, device=x.device, dtype=x.dtype)
        noisy = x + mu + sigma * (config.scale * eps)
        cross_entropy = cross_entropy + nn.functional.cross_entropy(model(noisy), y)
    cross_entropy = cross_entropy / config.draws
    variance = sigma.min() if config.variance_term == "min" else sigma.mean()
    loss = cross_entropy
    if config.trains_generator:
        loss = loss - config.variance_weight * variance
    return loss, {"ce": cross_entropy.item(), "variance": variance.item()}


def train_npg(
    config: NPGConfig,
    data: Dataset,
    start: nn.Module,
    *,
    device: str | torch.device = "cpu",
    progress: bool = True,
    threads: int = TRAINING_THREADS,
) -> tuple[nn.Module, NoiseGenerator]:
    """Fine-tune a copy of ``start`` (the base classifier) with ``config``'s noise.

    Returns ``(classifier, generator)``, both in eval mode; ``start`` is not changed.
    Seeded like :func:`~rsutils.training.train.train_model` (same seed and thread count,
    same weights on CPUs of one kind).
    """
    with intra_op_threads(threads):
        return _train(config, data, start, torch.device(device), progress)


def _train(
    config: NPGConfig, data: Dataset, start: nn.Module, device: torch.device, progress: bool
) -> tuple[nn.Module, NoiseGenerator]:
    torch.manual_seed(derived_seed(config.seed, 0, "init"))
    images, labels = data.images[: config.train_subset], data.labels[: config.train_subset]
    model = copy.deepcopy(start).to(device).train()
    generator = make_generator(config, tuple(images.shape[1:])).to(device).train()
    optimisers = [torch.optim.Adam(model.parameters(), lr=config.lr)]
    if config.trains_generator:
        optimisers.append(torch.optim.Adam(generator.parameters(), lr=config.generator_lr))
    order = _batches(len(labels), config)
    noise = stream_generator(config.seed, 0, "augment", device=device)
    bar = ProgressBar(order, disable=not progress, desc=describe_npg(config))
    for batch in bar:
        x, y = images[batch].to(device), labels[batch].to(device)
        loss, parts = npg_loss(model, generator, x, y, config, noise)
        for optimiser in optimisers:
            optimiser.zero_grad(set_to_none=True)
        loss.backward()
        for optimiser in optimisers:
            optimiser.step()
        bar.set_postfix(ce=f"{parts['ce']:.3f}", V=f"{parts['variance']:.3f}", refresh=False)
    return model.eval(), generator.eval()


def describe_npg(config: NPGConfig) -> str:
    """What an NPG training run is: its noise (the setting that tells apart runs of one
    method), seed and steps, and the base classifier it starts from (described by
    :func:`~rsutils.training.train.describe_training`)."""
    noise = {
        "isotropic": f"isotropic noise, σ ≡ {config.isotropic_sigma:g}",
        "pattern": f"pattern noise, {config.pattern_norm}",
        "dataset": f"dataset-wise generator, {config.variance_term} variance term",
        "certification": f"certification-wise generator, {config.variance_term} variance term",
    }[config.method]
    base = describe_training(config.base).removeprefix("train ")
    return f"train {noise}, seed {config.seed}, {config.steps} steps, from the base {base}"


def _batches(length: int, config: NPGConfig) -> list[torch.Tensor]:
    """``steps`` batches from seeded shuffles of the ``length`` training images."""
    shuffle = stream_generator(config.seed, 0, "order")
    batches: list[torch.Tensor] = []
    while len(batches) < config.steps:
        order = torch.randperm(length, generator=shuffle)
        batches += list(order.split(config.batch_size))
    return batches[: config.steps]
