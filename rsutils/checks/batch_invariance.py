"""Does a draw's class depend on the batch it is computed in?

CERTIFY assumes one base classifier ``f`` whose draws are classified independently
(:mod:`rsutils.core.inference`). Kernels pick their algorithm, hence their order of
summation, by the batch's shape, so the logits of one input can change in the last bits
with the size of its batch, and a draw near a tie can change class.
:func:`batch_sensitivity` measures that on a model of your own: it classifies the same
draws in batches of a reference size and of smaller sizes and counts the draws whose
class differs, with a one-sided Clopper–Pearson upper bound on the rate.

With ``fixed_rows=False`` every batch runs at its own shape (what a loop without fixed
rows does): the flips measure how far the kernels depend on the batch here. With
``fixed_rows=True`` the batches go through an
:class:`~rsutils.core.inference.InferenceModel` at its fixed rows, as the library's
loop runs them: no class may change and every logit must be bitwise the same, which
:attr:`BatchSensitivity.invariant` states (``python -m rsutils device-check`` prints
both for each device).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import nn

from rsutils.core.confidence import clopper_pearson_upper
from rsutils.core.inference import InferenceModel, check_inference_mode

__all__ = ["BatchSensitivity", "batch_sensitivity"]


@dataclass(frozen=True)
class BatchSensitivity:
    """The draws of one batch size compared with the same draws in reference batches.

    ``flips`` of ``draws`` changed class; ``max_logit_change`` is the largest absolute
    change of a logit; ``fixed_rows`` says whether the batches ran at fixed rows.
    """

    mode: str
    batch: int
    reference: int
    draws: int
    flips: int
    max_logit_change: float
    fixed_rows: bool

    def rate_upper(self, alpha: float = 0.05) -> float:
        """A one-sided ``1 - alpha`` Clopper–Pearson upper bound on the rate of flips."""
        return float(clopper_pearson_upper(self.flips, self.draws, alpha))

    @property
    def invariant(self) -> bool:
        """No class changed and every logit was bitwise the same."""
        return self.flips == 0 and self.max_logit_change == 0.0


def batch_sensitivity(
    model: nn.Module,
    draws: torch.Tensor,
    *,
    mode: str = "fp32",
    sizes: Sequence[int] = (1, 7),
    reference: int = 1000,
    fixed_rows: bool = False,
    limit: int = 100,
) -> list[BatchSensitivity]:
    """Compare the classes of ``draws`` in batches of each of ``sizes`` with those in
    batches of ``reference``, the model run in ``mode``.

    ``draws`` are the model's inputs, stacked along the first dimension (for example
    noisy copies of one image). Batch sizes under 7 classify only the first ``limit``
    draws (one forward pass each). With ``fixed_rows`` the batches go through an
    :class:`~rsutils.core.inference.InferenceModel` at its fixed rows; without, each
    batch runs at its own shape.
    """
    check_inference_mode(mode)
    if draws.dim() < 2 or draws.shape[0] == 0:
        raise ValueError("draws must be a non-empty batch: inputs along the first dimension")
    if min(sizes, default=1) < 1 or reference < 1 or limit < 1:
        raise ValueError("sizes, reference and limit must be positive")
    large = _logits(model, mode, draws, reference, fixed_rows)
    results = []
    for size in sizes:
        count = len(draws) if size >= 7 else min(limit, len(draws))
        small = _logits(model, mode, draws[:count], size, fixed_rows)
        flips = int((small.argmax(1) != large[:count].argmax(1)).sum())
        change = float((small - large[:count]).abs().max())
        results.append(BatchSensitivity(mode, size, reference, count, flips, change, fixed_rows))
    return results


def _logits(
    model: nn.Module, mode: str, draws: torch.Tensor, size: int, fixed_rows: bool
) -> torch.Tensor:
    """The model's outputs on ``draws`` in batches of ``size`` (float32)."""
    wrapped = InferenceModel(model, mode, rows=None if fixed_rows else size)
    with torch.inference_mode():
        parts = [wrapped(draws[i : i + size]) for i in range(0, len(draws), size)]
    return torch.cat(parts).float()
