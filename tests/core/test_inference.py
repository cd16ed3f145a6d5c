"""Faster numerical modes of the base model: a different classifier, run deterministically."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from rsutils import Gaussian, Smooth
from rsutils.core.inference import (
    INFERENCE_MODES,
    InferenceModel,
    float32_equivalent,
    inference_model,
    native_bf16,
)

FAST = [m for m in INFERENCE_MODES if m != "fp32"]


def brightness_model() -> nn.Module:
    """Class 1 when the mean pixel exceeds 0.5: a conv whose margin is the mean's offset."""
    conv = nn.Conv2d(1, 2, kernel_size=3, padding=1, bias=True)
    with torch.no_grad():
        conv.weight.zero_()
        conv.weight[:, 0, 1, 1] = torch.tensor([-1.0, 1.0])
        conv.bias.copy_(torch.tensor([0.5, -0.5]))
    return nn.Sequential(conv, nn.AdaptiveAvgPool2d(1), nn.Flatten()).eval()


def test_fp32_calls_the_model_itself_and_a_bad_mode_names_the_choices(cnn) -> None:
    wrapped = inference_model(cnn, "fp32")
    assert isinstance(wrapped, InferenceModel) and wrapped.inner is cnn
    assert inference_model(wrapped, "fp32") is wrapped  # not wrapped twice
    with pytest.raises(ValueError, match="bf16_channels_last"):
        inference_model(cnn, "fp16")
    with pytest.raises(ValueError, match="unknown inference mode"):
        Smooth(cnn, 10, Gaussian(0.25), inference="int8")
    with pytest.raises(ValueError, match="rows must be a positive integer"):
        InferenceModel(cnn, "bf16", rows=0)


@pytest.mark.parametrize("mode", FAST)
def test_a_mode_leaves_the_callers_model_untouched(cnn, mode) -> None:
    before = {k: v.clone() for k, v in cnn.state_dict().items()}
    wrapped = inference_model(cnn, mode)
    assert isinstance(wrapped, InferenceModel) and not wrapped.training
    assert all(torch.equal(before[k], v) for k, v in cnn.state_dict().items())
    assert all(p.is_contiguous() for p in cnn.parameters())
    output = wrapped(torch.rand(3, 1, 28, 28))
    assert output.shape == (3, 10) and output.dtype == torch.float32


@pytest.mark.parametrize("mode", FAST)
def test_certificates_are_deterministic_for_a_seed_and_a_mode(cnn, mode) -> None:
    smooth = Smooth(cnn, 10, Gaussian(0.25), inference=mode)
    x = torch.rand(1, 28, 28, generator=torch.Generator().manual_seed(1))
    first = smooth.certify(x, 50, 1000, 0.001, batch_size=400, seed=3, index=7)
    again = smooth.certify(x, 50, 1000, 0.001, batch_size=400, seed=3, index=7)
    assert first == again


def test_channels_last_changes_only_the_order_of_summation() -> None:
    """Counts agree with fp32 except for draws within rounding of the decision boundary."""
    model, x = brightness_model(), torch.full((1, 28, 28), 0.505)
    counts = {
        mode: Smooth(model, 2, Gaussian(0.25), inference=mode).sample_counts(x, 2000, 500, seed=0)
        for mode in ("fp32", "channels_last")
    }
    assert 0.5 < counts["fp32"][1] / 2000 < 0.9  # a real split, not all one class
    assert np.abs(counts["fp32"] - counts["channels_last"]).max() <= 2


@pytest.mark.parametrize("mode", ["bf16", "bf16_channels_last"])
def test_bf16_runs_the_model_at_lower_precision(mode) -> None:
    """bfloat16 keeps 8 significant bits: logits move by about 2^-8 of their size, so
    the classifier differs from fp32, here by a few draws near the boundary."""
    model, x = brightness_model(), torch.full((1, 28, 28), 0.505)
    batch = x.unsqueeze(0) + 0.25 * torch.randn(
        64, 1, 28, 28, generator=torch.Generator().manual_seed(0)
    )
    exact = model(batch)
    fast = inference_model(model, mode)(batch)
    assert fast.dtype == torch.float32
    error = (fast - exact).abs().max().item()
    assert 0 < error <= 2**-7 * exact.abs().max().item() + 1e-3


@pytest.mark.parametrize(
    ("flags", "native"),
    [
        ({"avx2": True}, False),
        ({"avx2": True, "avx512_bf16": True}, True),
        ({"amx_bf16": True, "avx512_bf16": False}, True),
        ({}, False),
    ],
)
def test_native_bf16_reads_the_cpus_bfloat16_instructions(monkeypatch, flags, native) -> None:
    """AMX-BF16 or AVX-512 BF16 compute bfloat16 in hardware; AVX2 alone emulates it."""
    monkeypatch.setattr(torch.cpu, "get_capabilities", lambda: flags)
    assert native_bf16("cpu") is native
    assert native_bf16(torch.device("cpu")) is native


def test_native_bf16_without_capabilities_is_false(monkeypatch) -> None:
    """A torch that cannot say what the CPU has (no ``get_capabilities``) gets float32."""
    monkeypatch.delattr(torch.cpu, "get_capabilities")
    assert native_bf16("cpu") is False
    assert native_bf16("meta") is False


def test_float32_equivalent_keeps_the_layout_and_drops_bf16() -> None:
    assert [float32_equivalent(m) for m in INFERENCE_MODES] == [
        "fp32",
        "channels_last",
        "fp32",
        "channels_last",
    ]
    with pytest.raises(ValueError, match="choose one of"):
        float32_equivalent("fp16")


def test_native_bf16_on_a_gpu_does_not_count_emulation(monkeypatch) -> None:
    """A GPU without bf16 units (before Ampere) emulates it; only hardware counts."""
    asked = []

    def supported(including_emulation: bool = True) -> bool:
        asked.append(including_emulation)
        return including_emulation  # this GPU only emulates

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", supported)
    assert native_bf16("cuda") is False and asked == [False]
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert native_bf16("cuda:0") is False
