"""Noise-augmented training: deterministic, and it learns."""

from dataclasses import replace

import pytest
import torch

from rsutils.training.train import TrainConfig, describe_training, evaluate_accuracy, train_model

CONFIG = TrainConfig(epochs=1, batch_size=64, scale=0.25, seed=3)


def test_same_seed_same_weights_and_it_learns(separable_data) -> None:
    data = separable_data()
    first = train_model(CONFIG, data, progress=False)
    second = train_model(CONFIG, data, progress=False)
    for a, b in zip(first.state_dict().values(), second.state_dict().values(), strict=True):
        assert torch.equal(a, b)
    assert evaluate_accuracy(first, data, noise_scale=0.25) > 0.95
    assert not first.training


def _weights(model: torch.nn.Module) -> torch.Tensor:
    return torch.cat([p.detach().flatten() for p in model.parameters()])


def test_weights_depend_on_the_training_threads_not_on_the_callers() -> None:
    """The caller's thread count (a proxy for the machine's cores) does not matter."""
    data = _noisy_fashion_like()
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        under_one = _weights(train_model(CONFIG, data, progress=False, threads=2))
        assert torch.get_num_threads() == 1, "the caller's thread count is restored"
        torch.set_num_threads(2)
        under_two = _weights(train_model(CONFIG, data, progress=False, threads=2))
        one_thread = _weights(train_model(CONFIG, data, progress=False, threads=1))
    finally:
        torch.set_num_threads(before)
    assert torch.equal(under_one, under_two)
    # The count itself matters (CPU reductions are split across threads): otherwise
    # fixing it would be pointless, and this test could not fail.
    assert not torch.equal(one_thread, under_two)


def _noisy_fashion_like():
    """Random 28x28 images: enough arithmetic per step for the threads to split it."""
    from rsutils.data import Dataset

    generator = torch.Generator().manual_seed(0)
    images = torch.rand(512, 1, 28, 28, generator=generator)
    labels = torch.randint(0, 10, (512,), generator=generator)
    return Dataset("fashion-mnist", "train", images, labels, tuple("abcdefghij"))


def test_training_names_its_model_and_epoch_in_the_side_channel(
    separable_data, tmp_path, monkeypatch
) -> None:
    """With the bar off (as in the book), the side channel still says what trains."""
    from rsutils.progress import PROGRESS_FILE

    monkeypatch.setenv(PROGRESS_FILE, str(tmp_path / "progress.log"))
    config = TrainConfig(epochs=2, batch_size=128, scale=0.5, seed=7, train_subset=256)
    train_model(config, separable_data(), progress=False)
    lines = (tmp_path / "progress.log").read_text().splitlines()
    what = "train small_cnn on fashion-mnist, σ=0.5, seed 7, gaussian training"
    assert lines[0] == f"{what}, epoch 1 of 2 | step 0 of 4 | 00:00 elapsed | ? remaining"
    assert lines[-1].startswith(f"{what}, epoch 2 of 2 | step 4 of 4 | ")
    assert lines[-1].endswith(" elapsed | done")


def test_bf16_training_is_deterministic_learns_and_is_another_model(separable_data) -> None:
    """bf16 autocast gives other weights than fp32 from the same seed (so another cache
    key), the same weights for the same seed, fp32 parameters, and a model that learns."""
    data = separable_data()
    config = replace(CONFIG, precision="bf16")
    first, second = (train_model(config, data, progress=False) for _ in range(2))
    assert torch.equal(_weights(first), _weights(second))
    assert all(p.dtype == torch.float32 for p in first.parameters())
    assert not torch.equal(_weights(first), _weights(train_model(CONFIG, data, progress=False)))
    assert evaluate_accuracy(first, data, noise_scale=0.25) > 0.95
    assert config.as_dict()["precision"] == "bf16" and "precision" not in CONFIG.as_dict()
    assert "in bf16" in describe_training(config) and "bf16" not in describe_training(CONFIG)


def test_an_unknown_precision_names_the_choices() -> None:
    with pytest.raises(ValueError, match="precision must be one of fp32, bf16"):
        TrainConfig(precision="fp16")
