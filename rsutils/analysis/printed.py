"""What a Gaussian certificate printed to three significant digits says about its draws.

Cohen et al.'s ``certify.py`` writes each radius with ``{:.3}``: three significant
digits, so a printed ``r`` stands for any value within half a unit of its third digit
(:func:`half_printed_unit`). At a known number of draws ``n`` and level ``alpha`` the
certificate is ``sigma·Φ⁻¹(CP(k, n, alpha))``, with ``CP`` the one-sided Clopper–Pearson
lower bound on ``k`` draws in the top class out of ``n``, which rises with ``k``. So a
printed radius pins ``k`` to a range (:func:`count_range`), usually of a few counts,
and where that range is empty no count gives that printed radius at that ``n`` and
``alpha``: the certificate was computed with other settings.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy.stats import binom, norm

__all__ = ["count_range", "first_count", "fits_some_count", "half_printed_unit"]


def half_printed_unit(values: ArrayLike) -> np.ndarray:
    """Half a unit of the third significant digit of each value (0 for 0 or less): a
    value printed with ``{:.3}`` as ``r`` stands for ``r ± this``."""
    values = np.asarray(values, dtype=float)
    positive = values > 0
    exponent = np.floor(np.log10(np.where(positive, values, 1.0))) - 2
    return np.where(positive, 0.5 * 10**exponent, 0.0)


def first_count(radius: ArrayLike, sigma: float, n: ArrayLike, alpha: float) -> np.ndarray:
    """Per radius, the smallest count ``k`` (of ``n`` draws) whose certificate
    ``sigma·Φ⁻¹(CP(k, n, alpha))`` reaches it; ``n + 1`` where no count does (the
    radius lies above the ceiling ``sigma·Φ⁻¹(alpha^(1/n))``). ``n`` may be an array
    that broadcasts with ``radius`` (several numbers of draws at once).

    Exact, with no search: the Clopper–Pearson bound ``CP(k)`` is the ``p`` at which
    ``P(X ≥ k) = alpha`` for ``X ~ Binomial(n, p)``, and that chance rises with ``p``,
    so ``CP(k) ≥ p_r = Φ(radius/sigma)`` exactly when ``P(X ≥ k | p_r) ≤ alpha``: the
    smallest such ``k`` is one more than the binomial's upper ``alpha`` quantile at
    ``p_r`` (``scipy.stats.binom.isf``). A test checks it against a bisection on the
    bound itself."""
    n = np.asarray(n, dtype=np.int64)
    _check(sigma, int(n.min()) if n.size else 0, alpha)
    radius = np.atleast_1d(np.asarray(radius, dtype=float))
    target = norm.cdf(np.maximum(radius, 0.0) / sigma)
    target, n = np.broadcast_arrays(target, n)
    quantile = binom.isf(alpha, n, target)
    return np.minimum(quantile + 1, n + 1).astype(np.int64)


def count_range(
    printed: ArrayLike, sigma: float, n: int, alpha: float
) -> tuple[np.ndarray, np.ndarray]:
    """Per printed radius, the least and greatest count ``k`` whose certificate at
    ``n`` draws and level ``alpha`` prints as it (lies within
    :func:`half_printed_unit` of it). Where ``greatest < least`` no count prints as
    that radius: at these ``n`` and ``alpha`` CERTIFY cannot have written it."""
    printed = np.atleast_1d(np.asarray(printed, dtype=float))
    half = half_printed_unit(printed)
    least = first_count(printed - half, sigma, n, alpha)
    greatest = first_count(printed + half, sigma, n, alpha) - 1
    return least, greatest


def fits_some_count(printed: ArrayLike, sigma: float, draws: ArrayLike, alpha: float) -> np.ndarray:
    """Whether some count of ``draws[j]`` draws gives, at level ``alpha``, a certificate
    that prints as ``printed[i]``: a boolean array of shape ``(len(draws),
    len(printed))``. :func:`count_range` for many numbers of draws at once, to ask
    which ``n`` a whole log of printed radii fits."""
    printed = np.atleast_1d(np.asarray(printed, dtype=float))[None, :]
    draws = np.atleast_1d(np.asarray(draws, dtype=np.int64))[:, None]
    half = half_printed_unit(printed)
    least = first_count(printed - half, sigma, draws, alpha)
    greatest = first_count(printed + half, sigma, draws, alpha) - 1
    return greatest >= least


def _check(sigma: float, n: int, alpha: float) -> None:
    if not (sigma > 0 and n >= 1 and 0 < alpha < 1):
        raise ValueError(
            f"need sigma > 0, n >= 1 draws and 0 < alpha < 1 (got sigma={sigma}, n={n}, "
            f"alpha={alpha}); pass the settings the certificates were computed with"
        )
