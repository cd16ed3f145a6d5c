"""The certified region's shape, and random search points near its boundary.

The region of a certificate ``(x, c, R)`` is ``{x + δ : ‖δ ⊘ a‖₂ < R}`` with axes
``a = sigma(x)`` (the ellipsoid of UCAN Theorem 7), or ``a = min(sigma(x))`` for the
ℓ2 ball inside it (the certificate's ``radius``).
"""

from __future__ import annotations

import torch

from rsutils.anisotropic.soundness.audit.checks import (
    check_generator,
    check_radius,
    check_sigma,
)
from rsutils.anisotropic.soundness.audit.settings import check_shrink
from rsutils.core.settings import check_count

__all__ = ["boundary_points", "region_axes"]


def region_axes(sigma: torch.Tensor, ball: bool) -> torch.Tensor:
    """The region's axes ``a`` for a batch ``(B, *shape)`` of scales ``sigma(x)``.

    ``sigma`` itself (the ellipsoid), or with ``ball`` each input's smallest scale,
    broadcast to its shape (the ℓ2 ball inside the ellipsoid).
    """
    if not ball:
        return sigma
    smallest = sigma.flatten(1).amin(dim=1).reshape(-1, *[1] * (sigma.dim() - 1))
    return smallest.expand_as(sigma)


def boundary_points(
    sigma_x: torch.Tensor,
    R: float,
    count: int,
    generator: torch.Generator,
    *,
    shrink: float = 0.99,
    ball: bool = False,
) -> torch.Tensor:
    """``count`` random perturbations δ on ``shrink`` times the boundary of the region.

    With ``u ~ N(0, I)``, ``δ = shrink·R·sigma_x ⊙ u/‖u‖₂`` (the ellipsoid
    ``‖δ ⊘ sigma_x‖₂ < R``), or ``δ = shrink·min(sigma_x)·R·u/‖u‖₂`` with ``ball`` (the
    ℓ2 ball inside it, the certificate's ``radius``). ``sigma_x`` is the scale of one
    input. The result has shape ``(count, *sigma_x.shape)``, on ``sigma_x``'s device
    and in its dtype, and ``generator`` must live on that device.

    Guarantee: every δ lies at ``‖δ ⊘ sigma_x‖₂ = shrink·R`` (ball: ``‖δ‖₂ =
    shrink·min(sigma_x)·R``), up to rounding, so strictly inside the open region.
    """
    check_count("count", count)
    check_radius(R, positive=True)
    check_shrink(shrink)
    axes = region_axes(check_sigma(sigma_x, "sigma_x").unsqueeze(0), ball)[0]
    check_generator(generator, sigma_x.device)
    u = torch.randn(
        (count, *sigma_x.shape), generator=generator, device=sigma_x.device, dtype=sigma_x.dtype
    )
    norms = u.flatten(1).norm(dim=1).clamp_min(torch.finfo(u.dtype).tiny)
    u = u / norms.reshape(-1, *[1] * sigma_x.dim())
    return (shrink * float(R)) * axes * u
