"""Fixed spatial patterns of the anisotropic scale (UCAN §IV-A, pattern-wise noise).

UCAN's pattern-wise noise gives pixel ``(a, b)`` (coordinates from the image centre) the
scale multiplier ``sigma(a, b) = kappa·‖(a, b)‖_p² + iota`` (their Eq. 12): small noise
at the centre, where the object usually is, more towards the borders. Here ``(a, b)``
are measured in half-widths of the image (``[-1, 1]`` from edge to edge), so ``kappa``
and ``iota`` mean the same at any resolution, and the pattern is then rescaled so that
its mean (as in UCAN's experiments) or its geometric mean is 1; the overall noise
level is the base family's scale ``λ``.
"""

from __future__ import annotations

import torch

from rsutils.geometry.norms import norm_order

__all__ = ["spatial_pattern"]


def spatial_pattern(
    height: int,
    width: int,
    *,
    norm: str = "l2",
    kappa: float = 1.0,
    iota: float = 1.0,
    normalise: str = "mean",
) -> torch.Tensor:
    """``kappa·‖(a, b)‖_p² + iota`` on a ``(1, height, width)`` grid, rescaled.

    ``normalise`` is ``"mean"`` (the pattern averages 1), ``"geometric"`` (its
    geometric mean is 1, so the ALM of a region equals its R) or ``"none"``. The
    leading 1 broadcasts over colour channels.
    """
    if height < 1 or width < 1:
        raise ValueError(f"height and width must be >= 1, got {height}x{width}")
    if not (kappa >= 0 and iota > 0):
        raise ValueError(
            f"need kappa >= 0 and iota > 0 so that every sigma is positive; got "
            f"kappa={kappa}, iota={iota}"
        )
    p = norm_order(norm)

    def axis(n: int) -> torch.Tensor:
        return torch.linspace(-1.0, 1.0, n, dtype=torch.float64) if n > 1 else torch.zeros(1)

    a, b = torch.meshgrid(axis(height), axis(width), indexing="ij")
    distance = torch.linalg.vector_norm(torch.stack([a, b]), ord=p, dim=0)
    sigma = kappa * distance**2 + iota
    if normalise == "mean":
        sigma = sigma / sigma.mean()
    elif normalise == "geometric":
        sigma = sigma / sigma.log().mean().exp()
    elif normalise != "none":
        raise ValueError(f"normalise must be 'mean', 'geometric' or 'none', got {normalise!r}")
    return sigma.unsqueeze(0)
