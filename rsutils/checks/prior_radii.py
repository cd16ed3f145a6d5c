"""The ℓ2 guarantees that preceded Theorem 1, for comparison (Cohen et al., Fig. 8).

Both are valid but loose radii for Gaussian smoothing with top-class probability
``pA`` and runner-up ``pB``. Each is a supremum over a free parameter; we take the
maximum over a dense grid, which is itself a valid radius (any grid point is) and
therefore never overstates the guarantee.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import logsumexp
from scipy.stats import norm

__all__ = ["guarantees_compared", "lecuyer_radius", "li_radius"]


def lecuyer_radius(
    pA: ArrayLike, pB: ArrayLike | None = None, *, sigma: float, grid: int = 4000
) -> np.ndarray:
    """Lecuyer et al. (2019), PixelDP with the Gaussian mechanism.

    Noise σ gives (ε, δ)-differential privacy for ℓ2 changes of size
    ``σ·ε / √(2 ln(1.25/δ))`` (ε ≤ 1), and the prediction is robust when
    ``pA > e^{2ε}·pB + (1 + e^ε)·δ``. Taking the largest admissible δ for each ε and
    maximising over ε ∈ (0, 1] gives the radius.
    """
    pA, pB = _probabilities(pA, pB)
    eps = np.linspace(1.0 / grid, 1.0, grid)[:, None]
    delta = (pA - np.exp(2 * eps) * pB) / (1 + np.exp(eps))
    with np.errstate(divide="ignore", invalid="ignore"):
        radius = sigma * eps / np.sqrt(2 * np.log(1.25 / delta))
    radius = np.where(delta > 0, radius, 0.0)
    return radius.max(axis=0)


def li_radius(
    pA: ArrayLike, pB: ArrayLike | None = None, *, sigma: float, grid: int = 4000
) -> np.ndarray:
    """Li et al. (2019), Rényi-divergence guarantee for Gaussian noise.

    Robust when ``α‖δ‖²/(2σ²) ≤ −log(1 − pA − pB + 2·M_{1−α}(pA, pB))`` for some
    α > 1, where ``M_t(a, b) = ((a^t + b^t)/2)^{1/t}`` is the power mean; the power
    mean is computed in log space.
    """
    pA, pB = _probabilities(pA, pB)
    order = np.geomspace(1e-4, 1e4, grid)[:, None] + 1.0
    t = 1.0 - order
    with np.errstate(divide="ignore"):
        logs = np.stack(np.broadcast_arrays(t * np.log(pA), t * np.log(pB)))
    log_mean = (logsumexp(logs, axis=0) - np.log(2)) / t
    inner = 1.0 - pA - pB + 2.0 * np.exp(log_mean)
    with np.errstate(divide="ignore", invalid="ignore"):
        radius = sigma * np.sqrt(-2.0 / order * np.log(inner))
    radius = np.where((inner < 1) & (inner > 0) & (pA > pB), radius, 0.0)
    return radius.max(axis=0)


def guarantees_compared(
    pA_lower: ArrayLike, certified: ArrayLike, *, sigma: float
) -> dict[str, np.ndarray]:
    """Radii that Theorem 1, Li et al. and Lecuyer et al. give at the same ``pA_lower``.

    ``certified`` marks the inputs CERTIFY did not abstain on; the others get 0.
    """
    mask = np.asarray(certified, dtype=bool)
    p = np.clip(np.asarray(pA_lower, dtype=float), 0.5, 1.0)
    radii = {
        "Theorem 1 (Cohen et al.)": sigma * norm.ppf(p),
        "Li et al.": li_radius(p, sigma=sigma),
        "Lecuyer et al.": lecuyer_radius(p, sigma=sigma),
    }
    return {name: np.where(mask, r, 0.0) for name, r in radii.items()}


def _probabilities(pA: ArrayLike, pB: ArrayLike | None) -> tuple[np.ndarray, np.ndarray]:
    pA = np.atleast_1d(np.asarray(pA, dtype=float))
    pB = 1.0 - pA if pB is None else np.atleast_1d(np.asarray(pB, dtype=float))
    if np.any((pA < 0) | (pA > 1) | (pB < 0) | (pB > 1)):
        raise ValueError("pA and pB must be probabilities in [0, 1]")
    return np.broadcast_arrays(pA, pB)
