"""Timing a training step: a positive number, and nothing changed."""

import pytest
import torch

from rsutils.training.speed import training_step_seconds
from rsutils.training.train import TrainConfig, precision_mode


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_a_training_step_takes_some_time_and_leaves_the_data_alone(
    separable_data, precision
) -> None:
    data = separable_data()
    before = data.images.clone()
    seconds = training_step_seconds(
        TrainConfig(batch_size=16, precision=precision), data, steps=2, warmup=1
    )
    assert 0 < seconds < 60
    assert torch.equal(data.images, before)


def test_the_precision_sets_layout_and_autocast() -> None:
    layout, autocast = precision_mode("bf16", torch.device("cpu"))
    assert layout == torch.channels_last
    with autocast():
        assert torch.get_autocast_dtype("cpu") == torch.bfloat16 and torch.is_autocast_enabled(
            "cpu"
        )
    layout, autocast = precision_mode("fp32", torch.device("cpu"))
    assert layout == torch.contiguous_format
    with autocast():
        assert not torch.is_autocast_enabled("cpu")


def test_the_step_count_must_be_positive(separable_data) -> None:
    with pytest.raises(ValueError, match="steps"):
        training_step_seconds(TrainConfig(), separable_data(), steps=0)
