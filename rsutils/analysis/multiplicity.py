"""Holm's step-down correction, for a family of tests judged together.

A claim judged by several comparisons (one method against five others, by two measures)
draws several conclusions; each at level α, the chance that at least one of them is
wrong grows with their number. Holm's procedure (Scand. J. Statist. 6, 1979) keeps that
family-wise error rate at α for any dependence between the tests, and rejects at least
what Bonferroni's does.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["holm"]


def holm(pvalues: ArrayLike) -> np.ndarray:
    """Holm-adjusted p-values: reject hypothesis j at family-wise level α exactly when
    its adjusted p-value is below α.

    With the m p-values sorted, p₍₁₎ ≤ … ≤ p₍ₘ₎, the adjusted value of p₍ⱼ₎ is
    max over i ≤ j of min(1, (m − i + 1) p₍ᵢ₎), returned in the input's order. NaN
    entries (tests not made) are left out of the family and stay NaN.
    """
    p = np.asarray(pvalues, dtype=float)
    if p.ndim != 1:
        raise ValueError(f"pvalues must be one-dimensional, got shape {p.shape}")
    made = ~np.isnan(p)
    if ((p[made] < 0) | (p[made] > 1)).any():
        raise ValueError("p-values must lie in [0, 1]")
    adjusted = np.full_like(p, np.nan)
    values = p[made]
    order = np.argsort(values, kind="stable")
    m = len(values)
    scaled = np.minimum(1.0, (m - np.arange(m)) * values[order])
    stepped = np.empty(m)
    stepped[order] = np.maximum.accumulate(scaled)
    adjusted[made] = stepped
    return adjusted
