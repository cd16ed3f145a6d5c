"""Device handling: sampling follows the model."""

import torch
from torch import nn

from rsutils.core.devices import model_device, model_dtype, pick_device


def test_auto_is_cuda_only_when_there_is_one() -> None:
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert pick_device("auto").type == expected
    assert pick_device("cpu") == torch.device("cpu")
    assert pick_device(torch.device("cpu")) == torch.device("cpu")


def test_device_and_dtype_are_read_off_the_model() -> None:
    model = nn.Linear(3, 2).double()
    assert model_device(model) == torch.device("cpu") and model_dtype(model) == torch.float64
    assert (
        model_device(nn.ReLU()) == torch.device("cpu") and model_dtype(nn.ReLU()) == torch.float32
    )
