"""Faster numerical modes for the base model's forward pass.

The Monte Carlo loop runs at about the base model's raw forward speed, so a certificate
gets faster only if the forward pass does. :func:`inference_model` wraps a model to run
in one of :data:`INFERENCE_MODES`:

- ``"fp32"``: the model as given (the default; nothing is wrapped);
- ``"channels_last"``: float32 with the NHWC memory layout, which oneDNN and cuDNN
  convolve faster; the same arithmetic up to the order of summation;
- ``"bf16"``: ``torch.autocast`` to bfloat16 (AMX/AVX512-BF16 on recent x86 CPUs, tensor
  cores on GPUs), logits returned as float32;
- ``"bf16_channels_last"``: both.

A lower precision defines a different base classifier f, hence a different smoothed
classifier g. The certificate is exact for the classifier that was run: it is valid for
g built on f in that mode, not for the fp32 one, and logs record the mode. For a given
mode, seed and device, certificates are deterministic like those of fp32.
"""

from __future__ import annotations

import copy

import torch
from torch import nn

__all__ = ["INFERENCE_MODES", "InferenceModel", "check_inference_mode", "inference_model"]

#: The modes of the base model's forward pass, from plain float32 to bfloat16 + NHWC.
INFERENCE_MODES = ("fp32", "channels_last", "bf16", "bf16_channels_last")


def check_inference_mode(mode: str) -> str:
    """``mode`` if it is one of :data:`INFERENCE_MODES`, else a ``ValueError`` naming them."""
    if mode not in INFERENCE_MODES:
        raise ValueError(
            f"unknown inference mode {mode!r}; choose one of {', '.join(INFERENCE_MODES)} "
            "('fp32' runs the model as given)"
        )
    return mode


class InferenceModel(nn.Module):
    """A copy of ``model`` whose forward pass runs in ``mode`` (see the module's text).

    The copy is taken once, so the caller's model is left untouched (its memory format
    and weights); later changes to it are not seen here.
    """

    def __init__(self, model: nn.Module, mode: str) -> None:
        super().__init__()
        self.mode = check_inference_mode(mode)
        self.channels_last = mode.endswith("channels_last")
        self.bf16 = mode.startswith("bf16")
        inner = copy.deepcopy(model)
        if self.channels_last:
            inner = inner.to(memory_format=torch.channels_last)
        self.inner = inner
        self.train(model.training)  # the wrapper and the copy in the caller's mode

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """The wrapped model's output on ``x`` in this mode (floating outputs as float32)."""
        if self.channels_last and x.dim() == 4:
            x = x.contiguous(memory_format=torch.channels_last)
        if not self.bf16:
            return self.inner(x)
        with torch.autocast(device_type=x.device.type, dtype=torch.bfloat16):
            output = self.inner(x)
        return output.float() if output.is_floating_point() else output

    def extra_repr(self) -> str:
        return f"mode={self.mode!r}"


def inference_model(model: nn.Module, mode: str = "fp32") -> nn.Module:
    """``model`` itself for ``"fp32"``, otherwise an :class:`InferenceModel` in ``mode``."""
    check_inference_mode(mode)
    return model if mode == "fp32" else InferenceModel(model, mode)
