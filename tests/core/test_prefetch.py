"""The loop that draws the next batch's noise during the forward pass (``prefetch``) sees
bitwise the noise, in the order, and gives the counts of the loop that draws it in line."""

import threading

import pytest
import torch
from torch import nn

from rsutils.anisotropic.noise import Anisotropic
from rsutils.core.inference import INFERENCE_MODES, inference_model
from rsutils.core.noise import (
    ExponentialLinf,
    Gaussian,
    Laplace,
    NoiseFamily,
    PowerLawLinf,
    UniformCube,
)
from rsutils.core.sampling import PrefixCounter, count_classes
from rsutils.core.streams import image_generator

DEVICES = ["cpu", *(["cuda"] if torch.cuda.is_available() else [])]
SHAPES = [(1, 28, 28), (3, 8, 8), (5,)]


def _noises(shape: tuple[int, ...]) -> list[NoiseFamily]:
    sigma = torch.linspace(0.1, 0.5, int(torch.tensor(shape).prod())).reshape(shape)
    return [
        Gaussian(0.25),
        Laplace(0.2),
        UniformCube(0.5),
        ExponentialLinf(0.01),
        PowerLawLinf(0.5, a=float(sigma.numel() + 20)),
        Anisotropic(Gaussian(0.25), sigma, 0.1 * sigma),
    ]


class Recorder(nn.Module):
    """A linear classifier of the noise (the input minus ``center``) that keeps a copy of
    every batch it sees."""

    def __init__(self, center: torch.Tensor, num_classes: int = 4) -> None:
        super().__init__()
        generator = torch.Generator().manual_seed(3)
        weights = torch.randn(center.numel(), num_classes, generator=generator)
        self.register_buffer("weights", weights.to(center.device))
        self.register_buffer("center", center.clone())
        self.seen: list[torch.Tensor] = []

    def forward(self, batch: torch.Tensor) -> torch.Tensor:
        self.seen.append(batch.clone())
        return (batch - self.center).flatten(1) @ self.weights


def _run(shape, noise, device, batch_size, total, prefetch, steps=None):
    """The inputs the model saw, the counts after each step and every draw's class."""
    x = torch.rand(shape, generator=torch.Generator().manual_seed(1)).to(device)
    model = Recorder(x)
    generator = image_generator(7, 2, "estimate", torch.device(device))
    counter = PrefixCounter(
        model, x, noise, total, num_classes=4, batch_size=batch_size, generator=generator,
        keep_labels=True, prefetch=prefetch,
    )  # fmt: skip
    counts = [counter.advance(to).cpu() for to in steps or [total]]
    return torch.cat(model.seen).cpu(), counts, counter.labels()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("batch_size", [1, 7, 300])
def test_prefetch_gives_the_serial_loops_noise_and_counts(device, shape, batch_size) -> None:
    total = {1: 20, 7: 150, 300: 1234}[batch_size]  # the last crosses blocks of 1000
    for noise in _noises(shape):
        serial = _run(shape, noise, device, batch_size, total, prefetch=False)
        fetched = _run(shape, noise, device, batch_size, total, prefetch=True)
        assert torch.equal(serial[0], fetched[0]), f"{noise}: other noise"
        assert all(torch.equal(a, b) for a, b in zip(serial[1], fetched[1], strict=True))
        assert (serial[2] == fetched[2]).all()
        assert len(set(serial[2].tolist())) >= 2, "several classes, so that order could show"


@pytest.mark.parametrize("device", DEVICES)
def test_prefetch_keeps_the_prefix_counts_of_a_sequential_procedure(device) -> None:
    steps = [1, 100, 101, 350, 999, 2500]  # single batches, many batches, a partial last one
    for noise in _noises((1, 28, 28)):
        serial = _run((1, 28, 28), noise, device, 128, 2500, prefetch=False, steps=steps)
        fetched = _run((1, 28, 28), noise, device, 128, 2500, prefetch=True, steps=steps)
        assert torch.equal(serial[0], fetched[0])
        assert all(torch.equal(a, b) for a, b in zip(serial[1], fetched[1], strict=True))


def test_prefetch_gives_the_serial_counts_of_a_cnn_in_every_mode(cnn) -> None:
    x = torch.rand(1, 28, 28, generator=torch.Generator().manual_seed(0))
    for mode in INFERENCE_MODES:
        model = inference_model(cnn, mode)
        counts = []
        for b, prefetch in ((1000, False), (250, True), (250, False), (100, True)):
            generator = image_generator(0, 4, "estimate", x.device)
            options = dict(num_classes=10, batch_size=b, generator=generator, prefetch=prefetch)
            counts.append(count_classes(model, x, Gaussian(0.5), 1000, **options))
        assert all(torch.equal(counts[0], c) for c in counts[1:]), mode
        assert (counts[0] > 0).sum() >= 2


class FailingNoise(Gaussian):
    """Gaussian noise whose ``fail_at``-th draw call raises."""

    def __init__(self, fail_at: int) -> None:
        super().__init__(0.25)
        self.calls, self.fail_at = 0, fail_at

    def sample_(self, out: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        self.calls += 1
        if self.calls == self.fail_at:
            raise RuntimeError(f"draw call {self.calls} failed")
        return super().sample_(out, generator)


def _noise_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("rsutils-noise")]


@pytest.mark.parametrize("prefetch", [False, True])
def test_an_error_while_drawing_reaches_the_caller_as_it_is(prefetch) -> None:
    shape = (1, 28, 28)
    for noise, error, message in (
        (FailingNoise(2), RuntimeError, r"^draw call 2 failed$"),  # the second block
        (PowerLawLinf(0.5, a=100.0), ValueError, r"the power law needs a > d .* pass e.g. a=786"),
    ):
        with pytest.raises(error, match=message):
            _run(shape, noise, "cpu", 100, 3000, prefetch=prefetch)
        assert not _noise_threads(), "the worker has finished when the error is raised"


class FailingModel(Recorder):
    def forward(self, batch: torch.Tensor) -> torch.Tensor:
        if len(self.seen) == 2:
            raise RuntimeError("mat1 and mat2 shapes cannot be multiplied")
        return super().forward(batch)


@pytest.mark.parametrize("prefetch", [False, True])
def test_an_error_in_the_model_waits_for_the_worker(prefetch) -> None:
    x = torch.rand(1, 28, 28)
    model = FailingModel(x)
    with pytest.raises(RuntimeError, match=r"the base model failed on a batch of shape"):
        count_classes(
            model, x, Gaussian(0.25), 100, num_classes=4, batch_size=10,
            generator=torch.Generator().manual_seed(0), prefetch=prefetch,
        )  # fmt: skip
    assert not _noise_threads()
    assert len(model.seen) == 2
