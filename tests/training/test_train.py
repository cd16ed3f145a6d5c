"""Noise-augmented training: deterministic, and it learns."""

import torch

from rsutils.training.train import TrainConfig, evaluate_accuracy, train_model

CONFIG = TrainConfig(epochs=1, batch_size=64, scale=0.25, seed=3)


def test_same_seed_same_weights_and_it_learns(separable_data) -> None:
    data = separable_data()
    first = train_model(CONFIG, data, progress=False)
    second = train_model(CONFIG, data, progress=False)
    for a, b in zip(first.state_dict().values(), second.state_dict().values(), strict=True):
        assert torch.equal(a, b)
    assert evaluate_accuracy(first, data, noise_scale=0.25) > 0.95
    assert not first.training
