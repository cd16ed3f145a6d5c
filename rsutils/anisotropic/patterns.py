"""Fixed spatial patterns of the anisotropic scale (UCAN §IV-A, pattern-wise noise).

UCAN's pattern-wise noise gives pixel ``(a, b)`` (coordinates from the image centre) the
scale multiplier ``sigma(a, b) = kappa·‖(a, b)‖_p² + iota`` (their Eq. 12): small noise
at the centre, where the object usually is, more towards the borders. Here ``(a, b)``
are measured in half-widths of the image (``[-1, 1]`` from edge to edge), so ``kappa``
and ``iota`` mean the same at any resolution, and the pattern is then rescaled so that
its mean (as in UCAN's experiments) or its geometric mean is 1; the overall noise
level is the base family's scale ``λ``.

UCAN's released code computes the coordinates as ``a/(S−1)/2``, which divides by
``2(S−1)`` instead of the half-width ``(S−1)/2``: its coordinates span ``[−1/4, 1/4]``,
with ``kappa = 0.2``, ``iota = 0.8`` and no rescaling. :data:`UCAN_CODE_PATTERN` holds
those settings, so that the pattern the code trained with (almost isotropic: max/min
at most 1.0625) can be drawn beside the one the paper describes.
"""

from __future__ import annotations

import torch

from rsutils.geometry.norms import norm_order

__all__ = ["UCAN_CODE_PATTERN", "spatial_pattern"]

#: The settings of UCAN's released code (coordinates in ``[−1/4, 1/4]``, ``kappa = 0.2``,
#: ``iota = 0.8``, not rescaled); pass as ``spatial_pattern(h, w, norm=…, **UCAN_CODE_PATTERN)``.
UCAN_CODE_PATTERN: dict[str, float | str] = {
    "extent": 0.25,
    "kappa": 0.2,
    "iota": 0.8,
    "normalise": "none",
}


def spatial_pattern(
    height: int,
    width: int,
    *,
    norm: str = "l2",
    kappa: float = 1.0,
    iota: float = 1.0,
    normalise: str = "mean",
    extent: float = 1.0,
) -> torch.Tensor:
    """``kappa·‖(a, b)‖_p² + iota`` on a ``(1, height, width)`` grid, rescaled.

    ``normalise`` is ``"mean"`` (the pattern averages 1), ``"geometric"`` (its
    geometric mean is 1, so the ALM of a region equals its R) or ``"none"``. The
    coordinates run from ``−extent`` to ``extent`` across the image (1: half-widths).
    The leading 1 broadcasts over colour channels.
    """
    if height < 1 or width < 1:
        raise ValueError(f"height and width must be >= 1, got {height}x{width}")
    if not (kappa >= 0 and iota > 0):
        raise ValueError(
            f"need kappa >= 0 and iota > 0 so that every sigma is positive; got "
            f"kappa={kappa}, iota={iota}"
        )
    if not extent > 0:
        raise ValueError(f"extent must be > 0, got {extent!r}")
    p = norm_order(norm)

    def axis(n: int) -> torch.Tensor:
        return torch.linspace(-extent, extent, n, dtype=torch.float64) if n > 1 else torch.zeros(1)

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
