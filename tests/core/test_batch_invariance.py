"""A base classifier is a function of its input: the same input gets the same logits,
bit for bit, whatever the batch it comes in, in every inference mode.

The model of these tests sits near a tie on many noisy draws: its two logits differ by
a relative 1e-6 (fp32) or about one bfloat16 step (bf16), so that a change in the last
bits of a logit, such as kernels give for batches of other shapes, changes a class.
"""

from __future__ import annotations

import pytest
import torch
from torch import nn

from rsutils import Gaussian, Smooth
from rsutils.core.inference import INFERENCE_MODES, InferenceModel, fixed_rows
from rsutils.models.architectures import build_model

#: The two logits' relative difference: about the rounding of each precision.
TIE = {"fp32": 1e-6, "channels_last": 1e-6, "bf16": 1e-2, "bf16_channels_last": 1e-2}


def near_tie_model(mode: str) -> nn.Module:
    """The small CNN with a two-class head whose rows differ by ``TIE[mode]``."""
    torch.manual_seed(0)
    model = build_model("small_cnn", "fashion-mnist").eval()
    last, head = model[1][9], nn.Linear(128, 2)
    noise = torch.randn(128, generator=torch.Generator().manual_seed(5))
    with torch.no_grad():
        head.weight[0] = last.weight[0]
        head.weight[1] = last.weight[0] + TIE[mode] * last.weight[0].abs().mean() * noise
        head.bias.fill_(float(last.bias[0]))
    model[1][9] = head
    return model.eval()


def noisy_draws(count: int) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(1)
    x = torch.rand(1, 28, 28, generator=generator)
    return x, x + 0.5 * torch.randn(count, 1, 28, 28, generator=generator)


def in_batches(model: nn.Module, draws: torch.Tensor, size: int) -> torch.Tensor:
    with torch.inference_mode():
        return torch.cat([model(draws[i : i + size]) for i in range(0, len(draws), size)])


def flips_when_each_batch_has_its_own_shape(mode: str, draws: torch.Tensor, size: int) -> int:
    """Draws whose class changes between batches of 1,000 and of ``size`` when every
    batch runs at its own shape, as the model's kernels would without fixed rows."""
    model = near_tie_model(mode)
    large = in_batches(InferenceModel(model, mode, rows=1000), draws, 1000)
    small = in_batches(InferenceModel(model, mode, rows=size), draws, size)
    return int((large.argmax(1) != small.argmax(1)).sum())


@pytest.mark.parametrize("mode", INFERENCE_MODES)
def test_the_model_is_near_a_tie_on_many_draws(mode) -> None:
    """Both classes are common and the margin is a few roundings of the logits, so the
    tests below would see a batch dependence of the last bits."""
    _, draws = noisy_draws(1000)
    logits = in_batches(InferenceModel(near_tie_model(mode), mode), draws, 1000)
    share = logits.argmax(1).float().mean().item()
    relative = ((logits[:, 1] - logits[:, 0]).abs() / logits.abs().amax(1)).median().item()
    assert 0.05 < share < 0.95
    assert relative <= 2 * TIE[mode]


@pytest.mark.parametrize("mode", INFERENCE_MODES)
def test_a_row_gets_the_same_logits_in_batches_of_1_7_and_1000(mode) -> None:
    model = InferenceModel(near_tie_model(mode), mode)
    _, draws = noisy_draws(1000)
    large = in_batches(model, draws, 1000)
    assert torch.equal(in_batches(model, draws[:70], 7), large[:70])
    assert torch.equal(in_batches(model, draws[:20], 1), large[:20])


@pytest.mark.parametrize("mode", INFERENCE_MODES)
def test_a_row_gets_the_same_logits_at_any_position_with_any_batch_mates(mode) -> None:
    model = InferenceModel(near_tie_model(mode), mode)
    _, draws = noisy_draws(1000)
    reference = in_batches(model, draws, 1000)
    generator = torch.Generator().manual_seed(2)
    for size in (7, 1000, 333):
        order = torch.randperm(1000, generator=generator)
        shuffled = in_batches(model, draws[order], size)
        assert torch.equal(shuffled, reference[order])
    others = torch.rand(6, 1, 28, 28, generator=generator)
    for position in (0, 3, 6):  # one draw among six others, at three positions
        batch = torch.cat([others[:position], draws[:1], others[position:]])
        assert torch.equal(in_batches(model, batch, 7)[position], reference[0])


@pytest.mark.slow  # batch size 1: one forward pass of 100 rows per draw
@pytest.mark.parametrize("mode", INFERENCE_MODES)
def test_certify_is_the_same_for_batch_sizes_1_7_and_1000_near_a_tie(mode) -> None:
    smooth = Smooth(near_tie_model(mode), 2, Gaussian(0.5), inference=mode)
    x, _ = noisy_draws(0)
    certificates = {
        size: smooth.certify(x, 10, 100, 0.01, batch_size=size, seed=4, index=9)
        for size in (1, 7, 1000)
    }
    assert certificates[1] == certificates[7] == certificates[1000]
    counts = [smooth.sample_counts(x, 200, size, seed=4, index=9) for size in (1, 7, 1000)]
    assert (counts[0] == counts[1]).all() and (counts[1] == counts[2]).all()
    assert 0.05 < counts[0][1] / 200 < 0.95


def test_without_fixed_rows_a_batch_dependence_would_change_classes() -> None:
    """The power check: a model whose last bits depend on its batch's size (here made
    so on purpose, as kernels may be) changes classes near a tie when called at the
    batch's own shape, and not through fixed rows."""
    model = BatchSizeDependent(near_tie_model("fp32"))
    _, draws = noisy_draws(1000)
    own_shape = in_batches(InferenceModel(model, "fp32", rows=7), draws[:700], 7)
    large = in_batches(InferenceModel(model, "fp32", rows=1000), draws[:700], 1000)
    assert (own_shape.argmax(1) != large.argmax(1)).sum() > 0
    fixed = InferenceModel(model, "fp32")
    assert torch.equal(in_batches(fixed, draws[:700], 7), in_batches(fixed, draws[:700], 1000))


class BatchSizeDependent(nn.Module):
    """``model`` with its logits moved by a relative 1e-6 that depends on the batch's size."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        logits = self.model(x)
        return logits * (1 + 1e-6 * torch.tensor([[x.shape[0] % 2, 0.0]]))


def test_the_fixed_rows_are_those_of_the_device() -> None:
    assert fixed_rows("cpu") == 100 and fixed_rows(torch.device("cuda", 0)) == 1000
    model = InferenceModel(near_tie_model("fp32"), "fp32", rows=3)
    calls: list[int] = []
    model.inner.register_forward_pre_hook(lambda _, args: calls.append(args[0].shape[0]))
    assert model(torch.rand(8, 1, 28, 28)).shape == (8, 2)
    assert calls == [3, 3, 3]  # two chunks of three and one of two padded to three
