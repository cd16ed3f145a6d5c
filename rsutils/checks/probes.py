"""Points inside certified regions, to test certificates against the classifier itself.

A certificate says the classifier answers the same class everywhere in a region. For
a fixed-sigma smoothed classifier that holds with probability 1 − alpha; for a
data-dependent one it need not hold at all without a memory. Querying the classifier
at points drawn inside certified regions measures how often it would contradict them.
"""

from __future__ import annotations

import torch

__all__ = ["points_inside"]


def points_inside(
    centers: torch.Tensor, radii: torch.Tensor, fraction: float, generator: torch.Generator
) -> torch.Tensor:
    """``centers[i] + fraction·radii[i]·u_i`` with ``u_i`` uniform on the unit ℓ2 sphere.

    ``centers`` is ``(N, *shape)``, ``radii`` ``(N,)``; ``fraction`` in [0, 1) keeps the
    points strictly inside the open balls of the certificates.
    """
    if not 0 <= fraction < 1:
        raise ValueError(f"fraction must be in [0, 1), got {fraction!r}")
    if radii.shape != (centers.shape[0],):
        raise ValueError(f"radii must have shape ({centers.shape[0]},), got {tuple(radii.shape)}")
    direction = torch.randn(centers.shape, generator=generator, dtype=torch.float64)
    direction /= direction.flatten(1).norm(dim=1).view(-1, *([1] * (centers.dim() - 1)))
    step = (fraction * radii.to(torch.float64)).view(-1, *([1] * (centers.dim() - 1)))
    return (centers.to(torch.float64) + step * direction).to(centers.dtype)
