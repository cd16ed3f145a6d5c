"""Noise-augmented training: deterministic, and it learns."""

import torch

from rsutils.data import Dataset
from rsutils.experiments import trained_model
from rsutils.train import TrainConfig, evaluate_accuracy, train_model


def separable_data(count: int = 512) -> Dataset:
    """Two classes that differ in mean brightness: learnable in one short epoch."""
    generator = torch.Generator().manual_seed(0)
    labels = torch.arange(count) % 2
    images = (
        0.25
        + 0.5 * labels.float().reshape(-1, 1, 1, 1)
        + 0.05 * torch.randn(count, 1, 28, 28, generator=generator)
    )
    return Dataset("fashion-mnist", "train", images.clamp(0, 1), labels, ("dark", "light"))


CONFIG = TrainConfig(epochs=1, batch_size=64, scale=0.25, seed=3)


def test_same_seed_same_weights_and_it_learns() -> None:
    data = separable_data()
    first = train_model(CONFIG, data, progress=False)
    second = train_model(CONFIG, data, progress=False)
    for a, b in zip(first.state_dict().values(), second.state_dict().values(), strict=True):
        assert torch.equal(a, b)
    assert evaluate_accuracy(first, data, noise_scale=0.25) > 0.95
    assert not first.training


def test_trained_models_are_cached_by_configuration(fake_fashion_mnist, monkeypatch) -> None:
    monkeypatch.setenv("RSUTILS_DATA", str(fake_fashion_mnist))
    config = TrainConfig(epochs=1, batch_size=32)
    first = trained_model(config, device="cpu", progress=False)
    monkeypatch.setattr("rsutils.experiments.train_model", None)  # must not train again
    second = trained_model(config, device="cpu", progress=False)
    for a, b in zip(first.state_dict().values(), second.state_dict().values(), strict=True):
        assert torch.equal(a, b)
