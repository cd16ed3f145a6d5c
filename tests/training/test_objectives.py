"""SmoothAdv and MACER objectives, and data-dependent (DS) training."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy.stats import norm
from torch import nn

from rsutils.ddrs.sigma_ascent import SigmaAscent
from rsutils.ddrs.sigma_store import SigmaStore
from rsutils.ddrs.training import DataDependentSigmas
from rsutils.training.objectives import (
    ObjectiveSettings,
    gaussian_augmentation_loss,
    macer_loss,
    smoothadv_attack,
)
from rsutils.training.train import (
    TrainConfig,
    batch_loss,
    evaluate_accuracy,
    run_sigmas,
    train_model,
)


class ConstantLogits(nn.Module):
    """Ignores its input: the smoothed soft classifier is known exactly."""

    def __init__(self, logits: list[float]) -> None:
        super().__init__()
        self.logits = nn.Parameter(torch.tensor(logits, dtype=torch.float64))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.logits.expand(x.shape[0], -1)


def test_macer_loss_matches_its_formula() -> None:
    model = ConstantLogits([1.0, 0.2, -0.5])
    x = torch.zeros(2, 4, dtype=torch.float64)
    y = torch.tensor([0, 1])
    sigma = torch.tensor([0.5, 1.0], dtype=torch.float64)
    settings = ObjectiveSettings(draws=3, lbd=12.0, gamma=8.0, beta=2.0)
    loss = macer_loss(model, x, y, sigma, torch.Generator().manual_seed(0), settings)
    soft = np.exp([1.0, 0.2, -0.5]) / np.exp([1.0, 0.2, -0.5]).sum()
    sharp = np.exp([2.0, 0.4, -1.0]) / np.exp([2.0, 0.4, -1.0]).sum()
    cross_entropy = -(np.log(soft[0]) + np.log(soft[1])) / 2
    # Only sample 0 is correctly classified; its hinge is gamma − (Φ⁻¹(pA) − Φ⁻¹(pB)).
    xi = norm.ppf(sharp[0]) - norm.ppf(sharp[1])
    robustness = 12.0 * 0.5 / 2 * (8.0 - xi) / 2
    assert float(loss.detach()) == pytest.approx(cross_entropy + robustness, rel=1e-10)


def test_macer_without_lambda_is_the_smoothed_cross_entropy() -> None:
    model = ConstantLogits([0.3, 0.1])
    x, y = torch.zeros(1, 2, dtype=torch.float64), torch.tensor([1])
    sigma = torch.ones(1, dtype=torch.float64)
    loss = macer_loss(model, x, y, sigma, torch.Generator(), ObjectiveSettings(draws=4, lbd=0.0))
    assert float(loss.detach()) == pytest.approx(-np.log(np.exp(0.1) / (np.exp(0.3) + np.exp(0.1))))


def test_smoothadv_attack_stays_in_the_ball_and_raises_the_loss(cnn: nn.Module) -> None:
    generator = torch.Generator().manual_seed(0)
    x = torch.rand(8, 1, 28, 28, generator=generator)
    y = torch.randint(0, 10, (8,), generator=generator)
    noise = 0.25 * torch.randn(8 * 2, 1, 28, 28, generator=generator)
    settings = ObjectiveSettings(draws=2, epsilon=0.5, attack_steps=2)
    delta = smoothadv_attack(cnn, x, y, noise, settings)
    assert float(delta.flatten(1).norm(dim=1).max()) <= 0.5 + 1e-6
    assert all(p.grad is None for p in cnn.parameters())

    def smoothed_loss(inputs: torch.Tensor) -> float:
        logits = cnn(inputs.repeat_interleave(2, dim=0) + noise)
        probabilities = torch.softmax(logits, 1).view(8, 2, -1).mean(1)
        return float(-probabilities.gather(1, y[:, None]).log().sum())

    with torch.no_grad():
        assert smoothed_loss(x + delta) > smoothed_loss(x)
    zero = smoothadv_attack(cnn, x, y, noise, ObjectiveSettings(draws=2, epsilon=0.0))
    assert float(zero.abs().max()) == 0.0


def test_per_sample_sigma_scales_the_noise() -> None:
    # A model that records its inputs: the noise of sample i has std sigma_i.
    seen: list[torch.Tensor] = []

    class Recorder(nn.Module):
        def forward(self, x):
            seen.append(x.detach())
            return torch.zeros(x.shape[0], 2)

    x = torch.zeros(2, 20_000)
    sigma = torch.tensor([0.1, 2.0])
    settings = ObjectiveSettings(draws=2)
    gaussian_augmentation_loss(Recorder(), x, torch.tensor([0, 1]), sigma, None, settings)
    noisy = seen[0].view(2, 2, -1)
    # The sample std of 40,000 normal draws is within 1% of sigma (SE ≈ 0.35%).
    np.testing.assert_allclose(noisy.flatten(1).std(dim=1).numpy(), [0.1, 2.0], rtol=0.01)


def test_ds_step_updates_only_the_samples_drawn(cnn: nn.Module) -> None:
    config = TrainConfig(ds=SigmaAscent(iterations=2, lr=0.05, draws=1), batch_size=4)
    store = SigmaStore(10, initial=0.25)
    sigmas = DataDependentSigmas(config.ds, store)
    step = batch_loss(config, sigmas, torch.Generator().manual_seed(0))
    drawn = torch.tensor([7, 2, 5])
    x, y = torch.rand(3, 1, 28, 28), torch.tensor([0, 1, 2])
    cnn.train()
    loss = step(cnn, x, y, drawn, epoch=0)
    assert loss.requires_grad and cnn.training  # the ascent switched back to training mode
    assert store.updates.tolist() == [int(i in (2, 5, 7)) for i in range(10)]
    untouched = [i for i in range(10) if i not in (2, 5, 7)]
    assert (store.values[untouched] == 0.25).all()
    assert (store.values[drawn] != 0.25).all()


@pytest.mark.slow  # training runs
def test_ds_training_carries_sigma_across_epochs(separable_data) -> None:
    # Two epochs, DS from the second on: every sample is drawn once with DS.
    data = separable_data(256)
    ascent = SigmaAscent(iterations=1, lr=0.05, draws=1)
    config = TrainConfig(epochs=2, batch_size=64, ds=ascent, ds_start_epoch=1, seed=1)
    sigmas = run_sigmas(config, 256)
    model = train_model(config, data, progress=False, sigmas=sigmas)
    store = sigmas.store
    assert store.updates.tolist() == [1] * 256
    assert evaluate_accuracy(model, data, noise_scale=0.25) > 0.95


@pytest.mark.slow  # training runs
@pytest.mark.parametrize("method", ["smoothadv", "macer"])
def test_smoothadv_and_macer_fine_tune_without_losing_accuracy(method: str, separable_data) -> None:
    # As in the book: start from a noise-augmented model and fine-tune at a small
    # learning rate (MACER's radius term, lambda = 12, is too strong from scratch).
    data = separable_data(256)
    base_config = TrainConfig(epochs=1, batch_size=32, seed=2)
    base = train_model(base_config, data, progress=False)
    config = TrainConfig(
        epochs=1,
        batch_size=32,
        lr=5e-4,
        method=method,
        objective=ObjectiveSettings(draws=2),
        init=base_config,
        seed=2,
    )
    model = train_model(config, data, progress=False, start=base)
    assert evaluate_accuracy(model, data, noise_scale=0.25) > 0.9


def test_fine_tuning_starts_from_the_given_model(separable_data) -> None:
    data = separable_data(128)
    base = train_model(TrainConfig(epochs=1, batch_size=32), data, progress=False)
    tuned_config = TrainConfig(epochs=1, batch_size=32, lr=1e-12, init=TrainConfig())
    tuned = train_model(tuned_config, data, progress=False, start=base)
    for a, b in zip(base.state_dict().values(), tuned.state_dict().values(), strict=True):
        torch.testing.assert_close(a.float(), b.float(), rtol=0, atol=1e-6)


def test_cache_keys_of_plain_configs_do_not_change() -> None:
    # Models cached before the DS/SmoothAdv/MACER fields existed keep their keys.
    assert set(TrainConfig().as_dict()) == {
        "arch",
        "dataset",
        "noise",
        "scale",
        "epochs",
        "batch_size",
        "lr",
        "weight_decay",
        "train_subset",
        "seed",
    }
    assert TrainConfig(method="macer").as_dict()["method"] == "macer"
    assert TrainConfig(init=TrainConfig(scale=0.5)).as_dict()["init"]["scale"] == 0.5


def test_bad_training_settings_are_named() -> None:
    with pytest.raises(ValueError, match="method must be one of"):
        TrainConfig(method="trades")
    with pytest.raises(ValueError, match="use Gaussian noise"):
        TrainConfig(method="macer", noise="uniform")
    with pytest.raises(ValueError, match="same arch"):
        TrainConfig(init=TrainConfig(arch="cifar_resnet20", dataset="cifar10"))
