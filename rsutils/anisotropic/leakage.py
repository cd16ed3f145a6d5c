"""Does the offset ``mu(x)`` carry the label? The mu-swap probe.

UCAN's certification-wise generator adds ``mu(x)`` (up to ``λ`` per pixel) to every
noisy copy of ``x``. Nothing stops it from writing evidence of ``x``'s class into the
input, so that the base classifier reads the offset rather than the image. The probe
classifies ``x_i + mu(x_j) + sigma(x_j) ⊙ λ·eps`` for pairs of inputs of different
classes: the fraction of votes for ``x_j``'s class, against the fraction for
``x_i``'s, says how much of the decision the offset makes.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch
from torch import nn

from rsutils.anisotropic.generators import NoiseGenerator
from rsutils.core.devices import model_device
from rsutils.core.settings import check_count
from rsutils.core.streams import derived_seed, stream_generator

__all__ = ["different_class_pairs", "mu_swap_votes"]


def different_class_pairs(labels: torch.Tensor, count: int, seed: int = 0) -> np.ndarray:
    """``count`` pairs ``(i, j)`` of indices with ``labels[i] != labels[j]`` (seeded)."""
    check_count("count", count)
    labels = np.asarray(labels)
    if len(np.unique(labels)) < 2:
        raise ValueError("the labels hold a single class; the probe needs two")
    rng = np.random.default_rng(derived_seed(seed, 0, "pairs"))
    pairs: list[tuple[int, int]] = []
    while len(pairs) < count:
        i, j = rng.integers(len(labels), size=2)
        if labels[i] != labels[j]:
            pairs.append((int(i), int(j)))
    return np.array(pairs)


@torch.inference_mode()
def mu_swap_votes(
    model: nn.Module,
    generator: NoiseGenerator,
    images: torch.Tensor,
    labels: torch.Tensor,
    pairs: np.ndarray,
    scale: float,
    draws: int,
    seed: int = 0,
) -> pd.DataFrame:
    """Votes of ``model`` on ``x_i + mu(x_j) + sigma(x_j) ⊙ scale·eps`` for each pair.

    One row per pair: ``i``, ``j``, their labels, and the fractions of the ``draws``
    votes that go to ``label_i`` (``own``) and to ``label_j`` (``offset``). With ``mu``
    and ``sigma`` of ``x_i`` itself the same model votes for ``label_i`` as often as the
    smoothed classifier is right; a large ``offset`` fraction means that ``mu`` decides.
    """
    check_count("draws", draws)
    device = model_device(model)
    rows = []
    for number, (i, j) in enumerate(pairs):
        noise = stream_generator(seed, number, "swap", device=device)
        x_i, x_j = images[i : i + 1].to(device), images[j : j + 1].to(device)
        mu, sigma = generator(x_j)
        eps = torch.randn((draws, *x_i.shape[1:]), generator=noise, device=device)
        votes = model(x_i + mu + sigma * (scale * eps)).argmax(1).cpu()
        own, offset = int(labels[i]), int(labels[j])
        rows.append(
            {
                "i": int(i),
                "j": int(j),
                "label_i": own,
                "label_j": offset,
                "own": float((votes == own).float().mean()),
                "offset": float((votes == offset).float().mean()),
            }
        )
    return pd.DataFrame(rows)
