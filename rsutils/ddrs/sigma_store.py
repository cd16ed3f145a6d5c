"""The per-sample noise levels of data-dependent training (DDRS Algorithm 2).

Each training sample keeps its own sigma across epochs: when the sample is drawn in
a batch, sigma ascent starts from its stored value and the result is stored back.
Samples not drawn keep theirs (and their update count).
"""

from __future__ import annotations

import torch

__all__ = ["SigmaStore"]


class SigmaStore:
    """``size`` noise levels, all starting at ``initial``, with per-sample update counts."""

    def __init__(self, size: int, initial: float) -> None:
        if size < 1 or not initial > 0:
            raise ValueError(f"need size >= 1 and initial > 0, got {size!r}, {initial!r}")
        self.values = torch.full((size,), float(initial), dtype=torch.float64)
        self.updates = torch.zeros(size, dtype=torch.long)

    def __len__(self) -> int:
        return len(self.values)

    def get(self, indices: torch.Tensor) -> torch.Tensor:
        """The stored sigma of each sample in ``indices`` (a copy)."""
        return self.values[indices.cpu()].clone()

    def set(self, indices: torch.Tensor, sigma: torch.Tensor) -> None:
        """Store new values for the samples in ``indices`` (which must be distinct)."""
        indices = indices.cpu()
        if len(torch.unique(indices)) != len(indices):
            raise ValueError("indices must be distinct (one sigma per sample per batch)")
        sigma = sigma.detach().cpu().to(torch.float64)
        if sigma.shape != indices.shape or not bool((sigma > 0).all()):
            raise ValueError("sigma must be positive, one value per index")
        self.values[indices] = sigma
        self.updates[indices] += 1
