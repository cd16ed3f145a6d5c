"""Training base classifiers with noise data augmentation (Cohen et al., §3.3).

Each training image is perturbed with a fresh draw of the smoothing noise before the
forward pass, so that the base classifier learns to classify noisy inputs, which is
what the smoothed classifier asks of it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch
from torch import nn
from tqdm.auto import tqdm

from rsutils.data import Dataset
from rsutils.models import build_model
from rsutils.noise import make_noise
from rsutils.sampling import model_device

__all__ = ["TrainConfig", "evaluate_accuracy", "train_model"]


@dataclass(frozen=True)
class TrainConfig:
    """Everything that determines a trained model (it is also the cache key)."""

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

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def train_model(
    config: TrainConfig,
    data: Dataset,
    *,
    device: str | torch.device = "cpu",
    progress: bool = True,
) -> nn.Sequential:
    """Train ``config.arch`` on ``data`` with noise augmentation; returns it in eval mode.

    Adam with a cosine learning-rate schedule; deterministic for a given seed on a
    given machine (initialisation, shuffling and noise all come from seeded
    generators).
    """
    if config.epochs < 1:
        raise ValueError(f"epochs must be >= 1, got {config.epochs}")
    torch.manual_seed(config.seed)
    device = torch.device(device)
    model = build_model(config.arch, config.dataset).to(device)
    noise = make_noise(config.noise, config.scale)
    images, labels = data.images, data.labels
    if config.train_subset is not None:
        images, labels = images[: config.train_subset], labels[: config.train_subset]
    shuffle = torch.Generator().manual_seed(config.seed)
    noise_generator = torch.Generator(device=device).manual_seed(config.seed + 1)
    steps_per_epoch = -(-len(labels) // config.batch_size)
    optimizer = torch.optim.Adam(model.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(
        optimizer, config.epochs * steps_per_epoch
    )
    loss_fn = nn.CrossEntropyLoss()
    model.train()
    bar = tqdm(total=config.epochs * steps_per_epoch, disable=not progress, desc="train")
    for _ in range(config.epochs):
        order = torch.randperm(len(labels), generator=shuffle)
        for start in range(0, len(labels), config.batch_size):
            batch = order[start : start + config.batch_size]
            x = images[batch].to(device)
            x = x + noise.sample_(torch.empty_like(x), noise_generator)
            loss = loss_fn(model(x), labels[batch].to(device))
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            schedule.step()
            bar.update()
            bar.set_postfix(loss=f"{loss.item():.3f}", refresh=False)
    bar.close()
    return model.eval()


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
    generator = torch.Generator(device=device).manual_seed(seed)
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
