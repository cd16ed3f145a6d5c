"""The CERTIFY ceiling: the largest certificate ``n`` draws can give, per input.

With ``n`` estimation draws at level ``alpha``, CERTIFY's one-sided Clopper–Pearson
bound can reach at most ``alpha^(1/n)`` (all ``n`` draws in the selected class), so an
isotropic Gaussian certificate of scale ``λ`` never exceeds ``λ·Φ⁻¹(alpha^(1/n))``
(1.23 at ``λ = 0.5``, ``n = 1,000``, ``alpha = 0.001``), and an anisotropic one never
exceeds that times the factor (``min σ`` for the radius, the geometric mean for ALM) of
its own noise. A certificate whose draws all agreed *is* at its ceiling: its value says
how many draws were spent, not how robust the input is. Two methods whose certificates
sit at their ceilings differ by their ceilings (their noise levels and ``n``), not by a
property of the method; these helpers find such certificates in a certification log.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import norm

from rsutils.core.confidence import max_certifiable_pA

__all__ = ["at_ceiling", "ceiling_radii", "ceiling_share"]


def ceiling_radii(log: pd.DataFrame, *, column: str = "radius") -> np.ndarray:
    """Per input, the largest value of ``column`` CERTIFY could have given it.

    ``scale·Φ⁻¹(alpha^(1/n))`` times the input's own factor ``column / region_radius``
    (1 for a log without ``region_radius``, whose radius is the region's); NaN for an
    input without a region (an abstention), whose factor the log does not hold. ``n``,
    ``alpha`` and ``scale`` are the log's own columns.
    """
    top = log["scale"].to_numpy(float) * norm.ppf(
        max_certifiable_pA(log["n"].to_numpy(), float(log["alpha"].iloc[0]))
    )
    value = log[column].to_numpy(float)
    if "region_radius" not in log:
        return np.where(value > 0, top, np.nan)
    region = log["region_radius"].to_numpy(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(region > 0, top * value / region, np.nan)


def at_ceiling(log: pd.DataFrame) -> np.ndarray:
    """Whether each input's certificate is at its ceiling: a certified answer whose
    ``n`` estimation draws all fell in the selected class (``count == n``). A ceiling
    log (:func:`~rsutils.logs.runner.ceiling_dataset`) says so in its ``at_ceiling``,
    which holds ``count == n`` alone: the same, since all ``n`` draws certify whenever
    ``alpha^(1/n) >= 1/2``, that is ``n >= log2(1/alpha)`` (10 at ``alpha = 0.001``)."""
    if "at_ceiling" in log:
        return log["at_ceiling"].to_numpy().astype(bool)
    return (log["predict"].to_numpy() >= 0) & (log["count"].to_numpy() == log["n"].to_numpy())


def ceiling_share(log: pd.DataFrame) -> float:
    """The share of the correct certificates of ``log`` that sit at their ceiling
    (NaN when none is correct)."""
    correct = log["correct"].to_numpy().astype(bool)
    if not correct.any():
        return float("nan")
    return float(at_ceiling(log)[correct].mean())
