"""A smoothed classifier never answers on garbage: each class of bad input is an error.

Every case runs through CERTIFY, PREDICT and the data-dependent path (sigma ascent
then CERTIFY), so that no entry point lets it through.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
from torch import nn

from rsutils import DataDependentSmooth, Gaussian, SigmaAscent, Smooth
from rsutils.core.validation import DEFAULT_INPUT_RANGE, check_input_range

IMAGE = torch.rand(1, 28, 28, generator=torch.Generator().manual_seed(0))


def _certify(model: nn.Module, x: torch.Tensor, **kwargs) -> object:
    return Smooth(model, 10, Gaussian(0.25), **kwargs).certify(x, 10, 50, 0.01, seed=0)


def _predict(model: nn.Module, x: torch.Tensor, **kwargs) -> object:
    return Smooth(model, 10, Gaussian(0.25), **kwargs).predict(x, 50, 0.01, seed=0)


def _data_dependent(model: nn.Module, x: torch.Tensor, **kwargs) -> object:
    ascent = SigmaAscent(sigma0=0.25, iterations=2, draws=2)
    smooth = DataDependentSmooth(model, 10, ascent, **kwargs)
    return smooth.certify(x, 10, 50, 0.01, seed=0)


ENTRY_POINTS = [_certify, _predict, _data_dependent]
Run = Callable[..., object]


@pytest.mark.parametrize("run", ENTRY_POINTS)
@pytest.mark.parametrize(
    ("x", "error", "message"),
    [
        ((IMAGE * 255).to(torch.uint8), TypeError, r"torch.uint8.*x.float\(\) / 255"),
        ((IMAGE * 255).long(), TypeError, r"torch.int64.*floats in \[0, 1\]"),
        (IMAGE > 0.5, TypeError, r"torch.bool"),
        (IMAGE * 255, ValueError, r"values in \[.*, 25\d.*\], outside input_range=\(0, 1\)"),
        ((IMAGE - 0.2860) / 0.3530, ValueError, r"values in \[-0.8.*outside input_range"),
        (torch.full_like(IMAGE, 1.0 + 1e-6), ValueError, r"outside input_range"),
    ],
    ids=["uint8", "int64", "bool", "float-0-255", "normalised", "just-above-1"],
)
def test_inputs_outside_the_pixel_range_are_refused(
    cnn: nn.Module, run: Run, x: torch.Tensor, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        run(cnn, x)


@pytest.mark.parametrize("run", ENTRY_POINTS)
@pytest.mark.parametrize(
    ("x", "input_range"),
    [(IMAGE * 255, (0.0, 255.0)), ((IMAGE - 0.5) / 0.5, (-1.0, 1.0)), (IMAGE * 10 - 20, None)],
    ids=["0-255", "minus-one-to-one", "any"],
)
def test_a_declared_input_range_is_accepted(
    cnn: nn.Module, run: Run, x: torch.Tensor, input_range: tuple[float, float] | None
) -> None:
    run(cnn, x, input_range=input_range)


def test_the_edges_of_the_default_range_are_inside_it(cnn: nn.Module) -> None:
    low, high = DEFAULT_INPUT_RANGE
    edges = torch.where(IMAGE > 0.5, high, low)
    _certify(cnn, edges)


@pytest.mark.parametrize(
    "input_range", [(1.0, 0.0), (0.0, 0.0), (0.0, float("inf")), (0.0,), "ab", 1.0]
)
def test_a_bad_input_range_is_named(input_range: object) -> None:
    with pytest.raises(ValueError, match="input_range must be"):
        check_input_range(input_range)  # type: ignore[arg-type]


def _inner_dropout(cnn: nn.Module) -> nn.Module:
    model = nn.Sequential(cnn, nn.Dropout(0.5)).eval()
    model[1].train()
    return model


def _inner_batch_norm(cnn: nn.Module) -> nn.Module:
    model = nn.Sequential(nn.BatchNorm2d(1), cnn).eval()
    model[0].train()
    return model


@pytest.mark.parametrize("run", ENTRY_POINTS)
@pytest.mark.parametrize(
    ("build", "name"),
    [
        (lambda cnn: cnn.train(), "the base model"),
        (_inner_dropout, "submodule '1'"),
        (_inner_batch_norm, "submodule '0'"),
    ],
    ids=["whole-model", "inner-dropout", "inner-batch-norm"],
)
def test_a_module_in_training_mode_is_refused(
    cnn: nn.Module, run: Run, build: Callable[[nn.Module], nn.Module], name: str
) -> None:
    with pytest.raises(ValueError, match=rf"{name}.* is in training mode.*model.eval\(\)"):
        run(build(cnn), IMAGE)


class _NonFiniteAfter(nn.Module):
    """Wraps a model; from the ``after``-th forward call on, its logits hold ``value``."""

    def __init__(self, model: nn.Module, value: float, after: int) -> None:
        super().__init__()
        self.model, self.value, self.after, self.calls = model, value, after, 0
        self.eval()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.calls += 1
        logits = self.model(x)
        if self.calls > self.after:
            logits = logits.clone()
            logits[0, 0] = self.value  # one bad logit in a batch is enough
        return logits


def _nan_weights(cnn: nn.Module) -> nn.Module:
    with torch.no_grad():
        next(cnn.parameters()).fill_(float("nan"))
    return cnn


@pytest.mark.parametrize("run", ENTRY_POINTS)
@pytest.mark.parametrize(
    "build",
    [
        _nan_weights,
        lambda cnn: _NonFiniteAfter(cnn, float("inf"), after=0),
        lambda cnn: _NonFiniteAfter(cnn, float("nan"), after=0),
    ],
    ids=["nan-weights", "inf-logit", "nan-logit"],
)
def test_non_finite_model_outputs_stop_the_run(
    cnn: nn.Module, run: Run, build: Callable[[nn.Module], nn.Module]
) -> None:
    with pytest.raises(ValueError, match=r"NaN or infinite"):
        run(build(cnn), IMAGE)


def test_a_non_finite_output_in_a_late_batch_is_caught(cnn: nn.Module) -> None:
    model = _NonFiniteAfter(cnn, float("nan"), after=3)
    smooth = Smooth(model, 10, Gaussian(0.25))
    with pytest.raises(ValueError, match=r"NaN or infinite outputs"):
        smooth.certify(IMAGE, 10, 100, 0.01, batch_size=10, seed=0)
    assert model.calls == 11  # one selection batch, ten estimation batches


@pytest.mark.parametrize("run", ENTRY_POINTS)
def test_a_model_on_the_meta_device_is_refused(run: Run) -> None:
    with torch.device("meta"):
        model = nn.Sequential(nn.Flatten(), nn.Linear(784, 10)).eval()
    with pytest.raises(ValueError, match=r"meta device.*to_empty"):
        run(model, IMAGE)
