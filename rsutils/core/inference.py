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

**One function, whatever the batch.** CERTIFY assumes a fixed base classifier f whose
draws are classified independently. Kernels need not give that: on a CPU, oneDNN and MKL
pick their algorithm (hence the order of summation) by the batch's shape, so the logits
of one input can change in the last bits with the size of the batch it comes in (fp32 on
an AVX-512 CPU: batches of fewer than 12 rows differ from larger ones by about 1e-7),
and a draw near a tie can change class. An :class:`InferenceModel` therefore calls the
model only on batches of one fixed shape, ``rows`` inputs (:func:`fixed_rows`): a batch
is cut into chunks of ``rows``, the last one padded with copies of its last input, and
the padding's outputs dropped. The function computed is then ``f(x)`` = the row of ``x``
in a forward pass of ``rows`` inputs, which does not depend on the batch size; rows of
one forward pass do not mix (no batch statistics: the model must be in eval mode), so
it does not depend on the batch-mates or on the position either, which the tests check
bit for bit on the machine that runs them. Every mode, fp32 included, runs this way.
"""

from __future__ import annotations

import copy

import torch
from torch import nn

__all__ = [
    "INFERENCE_MODES",
    "InferenceModel",
    "check_inference_mode",
    "device_identity",
    "fixed_rows",
    "float32_equivalent",
    "inference_model",
    "native_bf16",
]

#: The modes of the base model's forward pass, from plain float32 to bfloat16 + NHWC.
INFERENCE_MODES = ("fp32", "channels_last", "bf16", "bf16_channels_last")

#: The rows of every forward pass on a CPU: it divides the book's batch sizes (100 draws
#: to select, 1,000 per batch to estimate), so no draw is padded there, and a CPU is
#: busy with 100 inputs of the book's models (a batch of 1,000 is ten forward passes).
CPU_ROWS = 100
#: The rows of every forward pass on an accelerator, which needs larger batches to be busy.
ACCELERATOR_ROWS = 1000


def fixed_rows(device: torch.device | str) -> int:
    """The rows of every forward pass of an :class:`InferenceModel` on ``device``: part
    of the definition of its base classifier (see the module's text)."""
    return CPU_ROWS if torch.device(device).type == "cpu" else ACCELERATOR_ROWS


def device_identity(device: torch.device | str) -> dict[str, object]:
    """The device as part of a base classifier's identity: its kind (``"cpu"``,
    ``"cuda"``, ``"mps"``…) and the :func:`fixed_rows` of every forward pass there.

    The same model in the same mode computes a different function on another kind of
    device (other kernels, other rows per pass), so a log or a cached run records both,
    and a log resumed on another kind of device is refused
    (:class:`~rsutils.logs.resumable.ResumableLog`) rather than mixing two base
    classifiers' rows. Devices of one kind share the identity: which GPU or CPU model
    ran is recorded beside it (:func:`~rsutils.core.environment.describe_environment`),
    not compared.
    """
    device = torch.device(device)
    return {"device": device.type, "rows": fixed_rows(device)}


def native_bf16(device: torch.device | str) -> bool:
    """Whether ``device`` computes bfloat16 in hardware: a CUDA GPU that supports it, or
    a CPU with AMX-BF16 or AVX-512 BF16 instructions (as torch reads them).

    Elsewhere bfloat16 is emulated, and slower than float32: on a 2-core AVX2-only
    EPYC, ``python -m rsutils bench`` ran the book's small CNN at 2,195 inputs/s in
    ``bf16_channels_last`` against 25,022 in ``channels_last``.
    """
    device = torch.device(device)
    if device.type == "cuda":
        if not torch.cuda.is_available():
            return False
        try:  # a GPU without bf16 units emulates it, which torch counts unless told
            return bool(torch.cuda.is_bf16_supported(including_emulation=False))
        except TypeError:  # a torch without the argument did not count emulation
            return bool(torch.cuda.is_bf16_supported())
    if device.type != "cpu":
        return False
    capabilities = torch.cpu.get_capabilities() if hasattr(torch.cpu, "get_capabilities") else {}
    return bool(capabilities.get("amx_bf16") or capabilities.get("avx512_bf16"))


def float32_equivalent(mode: str) -> str:
    """``mode`` without bfloat16: the float32 mode of the same memory layout
    (``"bf16"`` → ``"fp32"``, ``"bf16_channels_last"`` → ``"channels_last"``)."""
    return {"bf16": "fp32", "bf16_channels_last": "channels_last"}.get(
        check_inference_mode(mode), mode
    )


def check_inference_mode(mode: str) -> str:
    """``mode`` if it is one of :data:`INFERENCE_MODES`, else a ``ValueError`` naming them."""
    if mode not in INFERENCE_MODES:
        raise ValueError(
            f"unknown inference mode {mode!r}; choose one of {', '.join(INFERENCE_MODES)} "
            "('fp32' runs the model as given)"
        )
    return mode


class InferenceModel(nn.Module):
    """``model`` run in ``mode`` on batches of ``rows`` inputs (see the module's text).

    ``rows`` defaults to :func:`fixed_rows` of the input's device. In a mode other than
    fp32 a copy of ``model`` is taken once, so the caller's model is left untouched (its
    memory format and weights) and later changes to it are not seen here; in fp32 the
    model itself is called, as given.
    """

    def __init__(self, model: nn.Module, mode: str, *, rows: int | None = None) -> None:
        super().__init__()
        if rows is not None and (isinstance(rows, bool) or not isinstance(rows, int) or rows < 1):
            raise ValueError(f"rows must be a positive integer or None (the default), got {rows!r}")
        self.mode = check_inference_mode(mode)
        self.rows = rows
        self.channels_last = mode.endswith("channels_last")
        self.bf16 = mode.startswith("bf16")
        inner = model if mode == "fp32" else copy.deepcopy(model)
        if self.channels_last:
            inner = inner.to(memory_format=torch.channels_last)
        self.inner = inner
        self.training = model.training  # the wrapper in the caller's mode, the model as is

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """The wrapped model's output on ``x`` in this mode (floating outputs as float32),
        computed ``rows`` inputs at a time whatever the length of ``x``."""
        if x.dim() == 0:
            raise ValueError("an InferenceModel takes a batch: inputs along the first dimension")
        rows, length = self.rows or fixed_rows(x.device), x.shape[0]
        if length == rows:
            return self._forward(x)
        outputs = [self._forward(_padded(x[i : i + rows], rows)) for i in range(0, length, rows)]
        return torch.cat(outputs)[:length]

    def _forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.channels_last and x.dim() == 4:
            x = x.contiguous(memory_format=torch.channels_last)
        if not self.bf16:
            return self.inner(x)
        with torch.autocast(device_type=x.device.type, dtype=torch.bfloat16):
            output = self.inner(x)
        return output.float() if output.is_floating_point() else output

    def extra_repr(self) -> str:
        return f"mode={self.mode!r}, rows={self.rows or 'fixed_rows(device)'}"


def _padded(chunk: torch.Tensor, rows: int) -> torch.Tensor:
    """``chunk`` with copies of its last input appended up to ``rows`` inputs."""
    missing = rows - chunk.shape[0]
    if missing == 0:
        return chunk
    return torch.cat([chunk, chunk[-1:].expand(missing, *chunk.shape[1:])])


def inference_model(model: nn.Module, mode: str = "fp32") -> nn.Module:
    """An :class:`InferenceModel` running ``model`` in ``mode``; ``model`` itself when it
    is one already and fp32 is asked for (it keeps its own mode)."""
    check_inference_mode(mode)
    if mode == "fp32" and isinstance(model, InferenceModel):
        return model
    return InferenceModel(model, mode)
