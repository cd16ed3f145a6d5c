"""Data-dependent training (DDRS, Alfarra et al., 2022, Algorithm 2).

Every training sample keeps its own sigma across epochs, in a
:class:`~rsutils.ddrs.sigma_store.SigmaStore` that starts at the config's scale. From
the start epoch on, each time a sample is drawn in a batch its sigma is refined by
sigma ascent (:func:`~rsutils.ddrs.sigma_ascent.optimize_sigma`, towards the radius of
its true class, the model in eval mode meanwhile) from its stored value, stored back,
and the batch's loss uses it; samples not drawn keep theirs. The trainer
(:func:`~rsutils.training.train.train_model`) runs the same loop for every method and
asks :class:`DataDependentSigmas` for each batch's sigmas.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from rsutils.ddrs.sigma_ascent import SigmaAscent, optimize_sigma
from rsutils.ddrs.sigma_store import SigmaStore

__all__ = ["DataDependentSigmas"]


@dataclass
class DataDependentSigmas:
    """The per-sample sigmas of one data-dependent training run: ``ascent``'s settings,
    the ``store`` it refines, and the epoch (0-based) from which it refines them."""

    ascent: SigmaAscent
    store: SigmaStore
    start_epoch: int = 0

    def __call__(
        self,
        model: nn.Module,
        x: torch.Tensor,
        y: torch.Tensor,
        batch: torch.Tensor,
        epoch: int,
        generator: torch.Generator,
    ) -> torch.Tensor:
        """The batch's sigmas: stored, then (from ``start_epoch`` on) ascended and stored
        back; the model's training mode is restored."""
        sigma = self.store.get(batch).to(x.device)
        if epoch < self.start_epoch:
            return sigma
        model.eval()
        found = optimize_sigma(model, x, self.ascent, generator, classes=y, initial=sigma)
        model.train()
        self.store.set(batch, found.scale)
        return found.scale

    def fits(self, size: int) -> None:
        """A ``ValueError`` unless the store holds one sigma per training sample."""
        if len(self.store) != size:
            raise ValueError(f"the sigma store holds {len(self.store)} samples, the data {size}")
