"""CERTIFY with an input-specific number of draws: what radius do ``n_max`` draws give?

CERTIFY's radius grows with the draws ``n`` only as fast as the Clopper–Pearson bound
tightens, and how fast that is depends on ``pA``: near ``pA = 1/2`` a few hundred draws
lose little, while at ``pA = 1`` the radius is the ceiling ``σ·Φ⁻¹(alpha^(1/n))`` and
keeps growing with ``n``. Following Chen et al.'s input-specific sampling (AAAI 2022),
:func:`certify_planned` lets CERTIFY's ``n0`` selection draws also estimate ``pA``
(``p̂ = count / n0``), and takes the fewest draws ``n(x) <= n_max`` whose expected
radius at ``p̂`` is within ``radius_loss`` of the radius ``n_max`` draws would give
(:func:`planned_draws`). ``n(x)`` estimation draws then certify at the full ``alpha``.

Guarantee: that of CERTIFY (Cohen et al., Proposition 2) at level ``alpha``. The number
``n(x)`` depends on the selection draws only, which are independent of the estimation
draws, so given ``n(x)`` the bound is an ordinary Clopper–Pearson bound from ``n(x)``
independent draws. The radius loss is a plan, not a guarantee: when ``p̂`` misjudges
``pA`` the certificate may lose more, never become invalid.
"""

from __future__ import annotations

import numpy as np
import torch

from rsutils.core.confidence import check_alpha, clopper_pearson_lower
from rsutils.core.settings import check_count
from rsutils.core.smooth import Certificate, Smooth
from rsutils.core.streams import draw_seed

__all__ = ["certify_planned", "check_radius_loss", "expected_radius", "planned_draws"]


def expected_radius(smooth: Smooth, p: float, n: int, alpha: float, dim: int) -> float:
    """CERTIFY's radius if a fraction ``p`` of ``n`` draws fell in class A (0 if it
    would abstain); ``p·n`` need not be a whole number."""
    lower = float(clopper_pearson_lower(p * n, n, alpha))
    if lower < 0.5:
        return 0.0
    return float(smooth.noise.radius(lower, norm=smooth.norm, dim=dim))


def planned_draws(
    smooth: Smooth,
    p_hat: float,
    n_max: int,
    alpha: float,
    radius_loss: float,
    dim: int,
    *,
    min_draws: int = 100,
) -> int:
    """The fewest draws in ``[min_draws, n_max]`` whose :func:`expected_radius` at
    ``p_hat`` is within ``radius_loss`` of that of ``n_max`` draws.

    The expected radius grows with ``n`` at a fixed ``p``, so the answer is found by
    bisection.
    """
    if not 0 <= p_hat <= 1:
        raise ValueError(f"p_hat must be a proportion in [0, 1], got {p_hat!r}")
    check_radius_loss(radius_loss)
    check_count("n_max", n_max)
    check_count("min_draws", min_draws)
    low = min(min_draws, n_max)
    target = expected_radius(smooth, p_hat, n_max, alpha, dim) - radius_loss
    if expected_radius(smooth, p_hat, low, alpha, dim) >= target:
        return low
    high = n_max  # meets the target; low does not
    while high - low > 1:
        middle = (low + high) // 2
        if expected_radius(smooth, p_hat, middle, alpha, dim) >= target:
            high = middle
        else:
            low = middle
    return high


def check_radius_loss(radius_loss: float) -> float:
    """``radius_loss`` as a float if it is a number >= 0, else a ``ValueError``."""
    if isinstance(radius_loss, bool) or not radius_loss >= 0:
        raise ValueError(f"radius_loss must be a number >= 0 (e.g. 0.05), got {radius_loss!r}")
    return float(radius_loss)


def certify_planned(
    smooth: Smooth,
    x: torch.Tensor,
    n0: int,
    n_max: int,
    alpha: float,
    radius_loss: float,
    batch_size: int = 1000,
    seed: int | None = None,
    index: int = 0,
    *,
    min_draws: int = 100,
) -> Certificate:
    """CERTIFY with ``n(x) = planned_draws(...)`` estimation draws (see the module's text).

    The selection draws and the estimation stream are CERTIFY's with ``n = n_max``; the
    estimation uses its first ``n(x)`` draws, and the certificate records ``n = n(x)``.

    Guarantee: if the answer is a class, then with probability at least ``1 - alpha``
    over the noise the smoothed classifier predicts it everywhere within ``radius``.
    """
    check_count("n0", n0)
    check_count("n_max", n_max)
    check_alpha(alpha)
    seed = draw_seed() if seed is None else seed
    selection = smooth.sample_counts(x, n0, batch_size, seed=seed, index=index, phase="select")
    selected = int(np.argmax(selection))
    p_hat = float(selection[selected]) / n0
    n = planned_draws(smooth, p_hat, n_max, alpha, radius_loss, x.numel(), min_draws=min_draws)
    counter = smooth.prefix_counter(x, n_max, batch_size, seed=seed, index=index)
    count = int(counter.advance(n)[selected])
    return smooth.certificate(
        count, n, selected, n0=n0, alpha=alpha, seed=seed, index=index, dim=x.numel()
    )
