"""Training a classifier with a noise parameter generator (UCAN §IV, Eq. 13).

Each step draws the anisotropic noise of the generator at the batch, classifies the
noisy batch and minimises UCAN's loss, read with the sign that makes it a loss (the
printed Eq. 13 adds ``Σ y_k log ŷ_k``, the negative cross-entropy):

    ``L = CE(f(x + mu + sigma ⊙ λ·eps), y) − w·V(sigma)``

where the variance term ``V`` is ``min(sigma)`` (towards the radius ``min(sigma)·R``),
``mean(sigma)`` (towards the ALM, as UCAN's code) or ``mean(log sigma)`` (the log of a
geometric mean, the ALM's own factor: the paper's "mean of sigma in log scale"), over
the whole batch tensor as in UCAN's code, and the cross-entropy is averaged over
``draws`` noise draws per step. Classifier and generator are trained jointly (the
classifier with Adam; the generator with Adam, or with SGD stepping once every
``accumulate`` batches on their summed gradients, as UCAN's dataset-wise code); a fixed
pattern or isotropic noise trains the classifier alone. Every method starts from the
same isotropic base classifier and takes the same number of steps, so differences come
from the noise, not from the training budget. A generator may keep a budget
(:func:`~rsutils.anisotropic.generators.apply_budget`): then only the shape of
``sigma`` is learned, not its amount.

:func:`train_npg_with_history` also returns what ``sigma`` was at every step (its
minimum, median and maximum over the batch), so that a chapter can show how training
moved it.
"""

from __future__ import annotations

import copy
import math
from dataclasses import asdict, dataclass

import pandas as pd
import torch
from torch import nn

from rsutils.anisotropic.generators import (
    BUDGETS,
    SIGMA_HEADS,
    CertificationWiseGenerator,
    DatasetWiseGenerator,
    FixedNoise,
    NoiseGenerator,
    sigma_bound,
)
from rsutils.anisotropic.patterns import spatial_pattern
from rsutils.core.settings import check_count
from rsutils.core.streams import derived_seed, seed_label, stream_generator
from rsutils.data import Dataset
from rsutils.progress import ProgressBar
from rsutils.training.train import (
    TRAINING_THREADS,
    TrainConfig,
    describe_training,
    intra_op_threads,
)

__all__ = [
    "GENERATOR_OPTIMISERS",
    "HISTORY_COLUMNS",
    "KERNELS",
    "NPG_METHODS",
    "PATTERN_NORMALISATIONS",
    "SGD_MOMENTUM",
    "SGD_WEIGHT_DECAY",
    "VARIANCE_TERMS",
    "NPGConfig",
    "TrainedNPG",
    "describe_npg",
    "make_generator",
    "npg_loss",
    "sigma_record",
    "train_npg",
    "train_npg_with_history",
]

#: The methods, by their noise (the isotropic control and UCAN's three generators).
NPG_METHODS = ("isotropic", "pattern", "dataset", "certification")
#: How a fixed pattern is rescaled (:func:`~rsutils.anisotropic.patterns.spatial_pattern`):
#: to mean 1, as in UCAN's experiments, or to geometric mean 1, which keeps the volume.
PATTERN_NORMALISATIONS = ("mean", "geometric")
#: The variance terms ``V``, the minimum, the mean and the mean of the log of ``sigma``.
VARIANCE_TERMS = ("min", "mean", "logmean")
#: The generator's optimisers, Adam (UCAN's paper) or SGD with momentum (UCAN's code).
GENERATOR_OPTIMISERS = ("adam", "sgd")
#: The ways a training step can be computed, ``"fused"`` (channels-last tensors and
#: torch's fused Adam) or ``"plain"`` (contiguous tensors, Adam one tensor at a time,
#: as before 7 December 2026). The same arithmetic up to the order of summation, so
#: the weights differ in their last bits and, like any change of summation order, more
#: after many steps; ``"fused"`` took 0.6–0.7 of the time per step on a 2-core CPU.
KERNELS = ("fused", "plain")
#: The momentum of UCAN's code's SGD (``train_dataset_noise.py``).
SGD_MOMENTUM = 0.9
#: The weight decay of UCAN's code's SGD (``train_dataset_noise.py``).
SGD_WEIGHT_DECAY = 1e-4
#: The columns of a training history, per step the loss' parts and ``sigma``'s
#: minimum, median and maximum over the batch, and its share at the generator's bound.
HISTORY_COLUMNS = ("step", "ce", "variance", "sigma_min", "sigma_median", "sigma_max", "at_bound")
#: Fields left out of the cache key at these values, so that keys made before the
#: fields existed still name the same models.
_KEY_DEFAULTS = {
    "isotropic_sigma": 1.0,
    "pattern_normalise": "mean",
    "budget": None,
    "budget_value": 1.0,
    "generator_optimiser": "adam",
    "accumulate": 1,
    "head": "abs-tanh",
    "kernels": "plain",
}


@dataclass(frozen=True)
class NPGConfig:
    """Everything that determines a trained (classifier, generator) pair; the cache key.

    ``base`` is the isotropic base classifier every method starts from; its ``scale``
    is the ``λ`` that ``sigma`` multiplies. ``isotropic_sigma`` is the constant
    ``sigma`` of the isotropic method (1: the base's own noise; 2: twice as much, the
    control for a generator whose ``sigma`` ends at 2 everywhere). ``pattern_norm``,
    ``kappa``, ``iota`` shape the pattern-wise ``sigma`` (Eq. 12), rescaled as
    ``pattern_normalise`` says: to mean 1 (``"mean"``, UCAN's experiments) or to
    geometric mean 1 (``"geometric"``: the ALM's factor of ``sigma ≡ 1``, so that an ALM
    comparison with isotropic noise of the same ``λ`` is not tilted by the rescaling).
    ``gamma`` bounds a generator's ``sigma`` (default 2 for dataset-wise, 1 for
    certification-wise, as in UCAN); ``mu_bound`` bounds its ``mu`` (default ``λ``, as
    UCAN's code scales the certification-wise ``mu``). Training takes ``steps`` Adam
    steps of ``batch_size`` images with ``draws`` noise draws each, at ``lr`` for the
    classifier and ``generator_lr`` for the generator (UCAN's paper: Adam 1e-2).

    ``budget`` (``"gmean"`` or ``"min"``) keeps the generator's geometric mean or
    minimum of ``sigma`` at ``budget_value`` for every input
    (:func:`~rsutils.anisotropic.generators.apply_budget`), so that only its shape is
    learned. ``generator_optimiser="sgd"`` trains the generator as UCAN's code does:
    SGD with momentum :data:`SGD_MOMENTUM` and weight decay :data:`SGD_WEIGHT_DECAY`,
    at ``generator_lr``; with ``accumulate = k`` the generator steps once every ``k``
    batches, on the sum of their gradients (UCAN's dataset-wise code: ``k = 20``), and
    the gradients of a last incomplete group are dropped. The classifier takes an Adam
    step at every batch. ``head`` is the generator's head on ``sigma``
    (:data:`~rsutils.anisotropic.generators.SIGMA_HEADS`): UCAN's ``|tanh|``, or a
    monotone ``"sigmoid"`` or ``"log"`` (a budget then fixes the mean of ``log sigma``).
    ``kernels`` says how each step is computed (:data:`KERNELS`); the cache key holds it
    unless it is ``"plain"``, the way every model trained before the field existed.
    """

    base: TrainConfig
    method: str = "isotropic"
    isotropic_sigma: float = 1.0
    pattern_norm: str = "l2"
    pattern_normalise: str = "mean"
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
    budget: str | None = None
    budget_value: float = 1.0
    generator_optimiser: str = "adam"
    accumulate: int = 1
    head: str = "abs-tanh"
    kernels: str = "fused"

    def __post_init__(self) -> None:
        if self.method not in NPG_METHODS:
            raise ValueError(f"method must be one of {NPG_METHODS}, got {self.method!r}")
        if self.variance_term not in VARIANCE_TERMS:
            raise ValueError(
                f"variance_term must be one of {VARIANCE_TERMS}, got {self.variance_term!r}"
            )
        if self.generator_optimiser not in GENERATOR_OPTIMISERS:
            raise ValueError(
                f"generator_optimiser must be 'adam' or 'sgd', got {self.generator_optimiser!r}"
            )
        if self.budget is not None and self.budget not in BUDGETS:
            raise ValueError(f"budget must be None, 'gmean' or 'min', got {self.budget!r}")
        if self.budget is not None and not self.trains_generator:
            raise ValueError(
                "a budget keeps a learned sigma's amount: use it with method 'dataset' or "
                f"'certification', not {self.method!r} (or set budget=None)"
            )
        if self.pattern_normalise not in PATTERN_NORMALISATIONS:
            raise ValueError(
                f"pattern_normalise must be one of {PATTERN_NORMALISATIONS}, got "
                f"{self.pattern_normalise!r}"
            )
        if self.pattern_normalise != "mean" and self.method != "pattern":
            raise ValueError(
                "pattern_normalise rescales a fixed pattern: use it with method 'pattern', "
                f"not {self.method!r} (or keep pattern_normalise='mean')"
            )
        if self.kernels not in KERNELS:
            raise ValueError(f"kernels must be one of {KERNELS}, got {self.kernels!r}")
        if self.head not in SIGMA_HEADS:
            raise ValueError(f"head must be one of {SIGMA_HEADS}, got {self.head!r}")
        if self.head != "abs-tanh" and not self.trains_generator:
            raise ValueError(
                "a head shapes a learned sigma: use it with method 'dataset' or "
                f"'certification', not {self.method!r} (or keep head='abs-tanh')"
            )
        if not (math.isfinite(self.budget_value) and self.budget_value > 0):
            raise ValueError(f"budget_value must be > 0, got {self.budget_value!r}")
        if self.base.noise != "gaussian":
            raise ValueError(
                f"the base classifier must use Gaussian noise, got {self.base.noise!r}"
            )
        if not (math.isfinite(self.isotropic_sigma) and self.isotropic_sigma > 0):
            raise ValueError(f"isotropic_sigma must be > 0, got {self.isotropic_sigma!r}")
        for name in ("steps", "batch_size", "draws", "accumulate"):
            check_count(name, getattr(self, name))

    @property
    def scale(self) -> float:
        """``λ``: the base classifier's noise level."""
        return self.base.scale

    @property
    def trains_generator(self) -> bool:
        return self.method in ("dataset", "certification")

    def as_dict(self) -> dict[str, object]:
        """The cache key: every field, but those added later (``isotropic_sigma``, the
        budget, the generator's optimiser, ``accumulate``, the head and the kernels) only
        when they differ from the values every run had before they existed, so that keys
        made before still name the same models."""
        values = {**asdict(self), "base": self.base.as_dict()}
        for name, default in _KEY_DEFAULTS.items():
            if values[name] == default:
                values.pop(name)
        return values


def make_generator(config: NPGConfig, shape: tuple[int, ...]) -> NoiseGenerator:
    """The untrained generator of ``config`` for inputs of ``shape`` ``(C, H, W)``."""
    mu_bound = config.scale if config.mu_bound is None else config.mu_bound
    if config.method == "isotropic":
        return FixedNoise(torch.full((1, *shape[1:]), float(config.isotropic_sigma)))
    if config.method == "pattern":
        pattern = spatial_pattern(
            shape[1], shape[2], norm=config.pattern_norm, kappa=config.kappa,
            iota=config.iota, normalise=config.pattern_normalise,
        )  # fmt: skip
        return FixedNoise(pattern.float())
    budget, budget_value, head = config.budget, config.budget_value, config.head
    if config.method == "dataset":
        gamma = 2.0 if config.gamma is None else config.gamma
        return DatasetWiseGenerator(
            shape, gamma=gamma, mu_bound=mu_bound, initial_sigma=gamma / 2,
            budget=budget, budget_value=budget_value, head=head,
        )  # fmt: skip
    gamma = 1.0 if config.gamma is None else config.gamma
    return CertificationWiseGenerator(
        shape[0], gamma=gamma, mu_bound=mu_bound, initial_sigma=gamma / 2,
        width=config.width, growth=config.width, budget=budget, budget_value=budget_value,
        head=head,
    )  # fmt: skip


def npg_loss(
    model: nn.Module,
    generator: NoiseGenerator,
    x: torch.Tensor,
    y: torch.Tensor,
    config: NPGConfig,
    noise: torch.Generator,
) -> tuple[torch.Tensor, dict[str, float]]:
    """UCAN's loss on one batch and its parts: cross-entropy, variance term, and the
    batch's ``sigma`` as :func:`sigma_record` gives it."""
    mu, sigma = generator(x)
    cross_entropy = x.new_zeros(())
    for _ in range(config.draws):
        eps = torch.randn(x.shape, generator=noise, device=x.device, dtype=x.dtype)
        noisy = x + mu + sigma * (config.scale * eps)
        cross_entropy = cross_entropy + nn.functional.cross_entropy(model(noisy), y)
    cross_entropy = cross_entropy / config.draws
    if config.variance_term == "min":
        variance = sigma.min()
    elif config.variance_term == "mean":
        variance = sigma.mean()
    else:
        variance = sigma.log().mean()
    loss = cross_entropy
    if config.trains_generator:
        loss = loss - config.variance_weight * variance
    parts = {"ce": cross_entropy.item(), "variance": variance.item()}
    return loss, {**parts, **sigma_record(sigma, generator)}


@torch.no_grad()
def sigma_record(sigma: torch.Tensor, generator: NoiseGenerator) -> dict[str, float]:
    """``sigma``'s minimum, (lower) median and maximum over all its entries (every
    pixel of every input of the batch, pooled), and ``at_bound``: the share of entries
    at or above 0.99 of the generator's bound ``floor + gamma`` (NaN for a generator
    without one). A budget (:func:`~rsutils.anisotropic.generators.apply_budget`)
    rescales ``sigma`` after the bound, so for a budgeted generator ``at_bound`` says
    where the rescaled ``sigma`` lies, not where the bounded one did; the ``"log"`` head
    has no bound (NaN)."""
    flat = sigma.detach().flatten()
    bound = sigma_bound(generator)
    at_bound = math.nan
    if bound is not None:
        at_bound = float((flat >= 0.99 * bound).float().mean())
    return {
        "sigma_min": float(flat.min()),
        "sigma_median": float(flat.median()),
        "sigma_max": float(flat.max()),
        "at_bound": at_bound,
    }


@dataclass(frozen=True)
class TrainedNPG:
    """What :func:`train_npg_with_history` returns: the classifier and generator (in
    eval mode) and ``history``, one row per step with the :data:`HISTORY_COLUMNS`
    (``step`` from 0; the loss' parts and ``sigma`` of the batch that step trained on,
    before its update)."""

    classifier: nn.Module
    generator: NoiseGenerator
    history: pd.DataFrame


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
    run = train_npg_with_history(
        config, data, start, device=device, progress=progress, threads=threads
    )
    return run.classifier, run.generator


def train_npg_with_history(
    config: NPGConfig,
    data: Dataset,
    start: nn.Module,
    *,
    device: str | torch.device = "cpu",
    progress: bool = True,
    threads: int = TRAINING_THREADS,
) -> TrainedNPG:
    """:func:`train_npg`, and the history of ``sigma`` over the steps (the same
    weights: recording reads ``sigma``, it draws no random numbers)."""
    with intra_op_threads(threads):
        return _train(config, data, start, torch.device(device), progress)


def _adam(config: NPGConfig, module: nn.Module, lr: float) -> torch.optim.Optimizer:
    fused = config.kernels == "fused" or None  # None: torch's own choice, as before
    return torch.optim.Adam(module.parameters(), lr=lr, fused=fused)


def _generator_optimiser(config: NPGConfig, generator: nn.Module) -> torch.optim.Optimizer:
    if config.generator_optimiser == "sgd":
        return torch.optim.SGD(
            generator.parameters(),
            lr=config.generator_lr,
            momentum=SGD_MOMENTUM,
            weight_decay=SGD_WEIGHT_DECAY,
        )
    return _adam(config, generator, config.generator_lr)


def _train(
    config: NPGConfig, data: Dataset, start: nn.Module, device: torch.device, progress: bool
) -> TrainedNPG:
    torch.manual_seed(derived_seed(config.seed, 0, "init"))
    images, labels = data.images[: config.train_subset], data.labels[: config.train_subset]
    layout = torch.channels_last if config.kernels == "fused" else torch.contiguous_format
    model = copy.deepcopy(start).to(device, memory_format=layout).train()
    generator = make_generator(config, tuple(images.shape[1:]))
    generator = generator.to(device, memory_format=layout).train()
    classifier_optimiser = _adam(config, model, config.lr)
    generator_optimiser = None
    if config.trains_generator:
        generator_optimiser = _generator_optimiser(config, generator)
    order = _batches(len(labels), config)
    noise = stream_generator(config.seed, 0, "augment", device=device)
    bar = ProgressBar(order, disable=not progress, desc=describe_npg(config))
    rows = []
    for step, batch in enumerate(bar):
        x, y = images[batch].to(device), labels[batch].to(device)
        x = x.contiguous(memory_format=layout) if x.dim() == 4 else x
        loss, parts = npg_loss(model, generator, x, y, config, noise)
        classifier_optimiser.zero_grad(set_to_none=True)
        loss.backward()
        classifier_optimiser.step()
        # The generator's gradients add up over `accumulate` batches, then one step.
        if generator_optimiser is not None and (step + 1) % config.accumulate == 0:
            generator_optimiser.step()
            generator_optimiser.zero_grad(set_to_none=True)
        rows.append({"step": step, **parts})
        bar.set_postfix(ce=f"{parts['ce']:.3f}", V=f"{parts['variance']:.3f}", refresh=False)
    history = pd.DataFrame(rows, columns=list(HISTORY_COLUMNS))
    plain = torch.contiguous_format  # what a checkpoint loads into, whatever the kernels
    model, generator = model.to(memory_format=plain), generator.to(memory_format=plain)
    return TrainedNPG(model.eval(), generator.eval(), history)


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
    if config.pattern_normalise != "mean":
        noise += f", {config.pattern_normalise} mean 1"
    if config.head != "abs-tanh":
        noise += f", {config.head} head"
    if config.budget is not None:
        noise += f", σ at {config.budget} {config.budget_value:g}"
    if config.generator_optimiser != "adam" or config.accumulate != 1:
        noise += f", {config.generator_optimiser} every {config.accumulate} batches"
    base = describe_training(config.base).removeprefix("train ")
    return f"train {noise}, {seed_label(config.seed)}, {config.steps} steps, from the base {base}"


def _batches(length: int, config: NPGConfig) -> list[torch.Tensor]:
    """``steps`` batches from seeded shuffles of the ``length`` training images."""
    shuffle = stream_generator(config.seed, 0, "order")
    batches: list[torch.Tensor] = []
    while len(batches) < config.steps:
        order = torch.randperm(length, generator=shuffle)
        batches += list(order.split(config.batch_size))
    return batches[: config.steps]
