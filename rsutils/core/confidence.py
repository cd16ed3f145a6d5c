"""Confidence bounds and hypothesis tests used by PREDICT and CERTIFY.

Both come from ``scipy.stats``; nothing here is computed by hand.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import rel_entr
from scipy.stats import beta, binomtest, norm

__all__ = [
    "check_alpha",
    "clopper_pearson_lower",
    "clopper_pearson_upper",
    "least_expected_draws",
    "max_certifiable_pA",
    "min_alpha_for_radius",
    "min_samples_for_radius",
    "top_two_pvalue",
]


def clopper_pearson_lower(successes: ArrayLike, trials: ArrayLike, alpha: float) -> np.ndarray:
    """One-sided ``(1 - alpha)`` Clopper–Pearson lower bound on a binomial proportion.

    With probability at least ``1 - alpha`` over the draws, the true proportion is at
    least the returned value. This is the lower end of the exact two-sided interval at
    level ``1 - 2·alpha`` (Cohen et al.'s ``proportion_confint(..., alpha=2*alpha,
    method="beta")``), i.e. the ``alpha`` quantile of ``Beta(k, n - k + 1)``;
    it is 0 when ``k = 0``. Vectorised over ``successes`` and ``trials``.
    """
    check_alpha(alpha)
    k = np.asarray(successes, dtype=float)
    n = np.asarray(trials, dtype=float)
    if np.any(n < 1) or np.any(k < 0) or np.any(k > n):
        raise ValueError(f"need 0 <= successes <= trials and trials >= 1, got {k} of {n}")
    with np.errstate(invalid="ignore"):
        bound = beta.ppf(alpha, k, n - k + 1)
    return np.where(k == 0, 0.0, bound)


def clopper_pearson_upper(successes: ArrayLike, trials: ArrayLike, alpha: float) -> np.ndarray:
    """One-sided ``(1 - alpha)`` Clopper–Pearson upper bound on a binomial proportion.

    The ``1 - alpha`` quantile of ``Beta(k + 1, n - k)``, and 1 when ``k = n``: with
    probability at least ``1 - alpha`` the true proportion is at most this. It is
    :func:`clopper_pearson_lower` of the failures, reflected.
    """
    k = np.asarray(successes, dtype=float)
    n = np.asarray(trials, dtype=float)
    return 1.0 - clopper_pearson_lower(n - k, n, alpha)


def top_two_pvalue(top_count: int, second_count: int) -> float:
    """Two-sided binomial-test p-value of ``top_count`` against ``second_count``.

    PREDICT (Cohen et al., Algorithm 1) returns the top class only when this is at
    most ``alpha``: under the null hypothesis that both classes are equally likely,
    ``top_count ~ Binomial(top_count + second_count, 1/2)``.
    """
    total = int(top_count) + int(second_count)
    if total == 0:
        return 1.0
    return float(binomtest(int(top_count), total, 0.5).pvalue)


def max_certifiable_pA(n: ArrayLike, alpha: float) -> np.ndarray:
    """Largest ``pA_lower`` CERTIFY can return with ``n`` draws: all of them in class A.

    The Clopper–Pearson bound at ``k = n`` has the closed form ``alpha^(1/n)``.
    """
    check_alpha(alpha)
    return clopper_pearson_lower(n, n, alpha)


def min_samples_for_radius(radius_over_sigma: float, alpha: float) -> int:
    """Fewest draws with which Gaussian CERTIFY can certify ``radius_over_sigma``·σ.

    The largest certificate from ``n`` draws is ``σ·Φ⁻¹(alpha^(1/n))``
    (:func:`max_certifiable_pA`), so the radius needs ``alpha^(1/n) ≥ Φ(radius/σ)``,
    i.e. ``n ≥ ln(alpha) / ln Φ(radius/σ)`` (Cohen et al.'s "4σ needs about 10⁵ draws").
    At radius 0 it is the fewest draws that answer a class at all (``pA_lower ≥ 1/2``).
    No level-``alpha`` test does better: with ``n`` draws all in class A, rejecting
    ``pA ≤ Φ(radius/σ)`` needs ``Φ(radius/σ)^n ≤ alpha``.
    """
    check_alpha(alpha)
    if not radius_over_sigma >= 0:
        raise ValueError(f"radius_over_sigma must be >= 0, got {radius_over_sigma!r}")
    return math.ceil(math.log(alpha) / norm.logcdf(radius_over_sigma))


def least_expected_draws(p: ArrayLike, p0: float, alpha: float, power: float = 1.0) -> np.ndarray:
    """Wald's lower bound on the mean draws of any test that certifies ``pA > p0``.

    A sequential test (of any design, looking whenever it likes) that certifies with
    probability at most ``alpha`` when ``pA = p0`` and at least ``power`` when
    ``pA = p`` spends on average at least
    ``[power·ln(power/alpha) + (1 − power)·ln((1 − power)/(1 − alpha))] / KL(p ‖ p0)``
    draws when ``pA = p`` (Wald's inequality: the log-likelihood ratio it must
    accumulate, divided by what one draw brings on average). At ``p = 1`` and
    ``power = 1`` it is ``ln(1/alpha) / ln(1/p0)``, the floor of
    :func:`min_samples_for_radius` before rounding up; for ``p <= p0`` no test
    certifies with ``power > alpha``, and the bound is infinite. Vectorised over ``p``.
    """
    check_alpha(alpha)
    if not 0 < p0 < 1:
        raise ValueError(f"p0 must lie strictly between 0 and 1, got {p0!r}")
    if not alpha < power <= 1:
        raise ValueError(f"power must lie in (alpha, 1], got {power!r}")
    q = np.asarray(p, dtype=float)
    if np.any(~((q >= 0) & (q <= 1))):
        raise ValueError(f"p must be proportions in [0, 1], got {p!r}")
    evidence = power * math.log(power / alpha)
    if power < 1:
        evidence += (1 - power) * math.log((1 - power) / (1 - alpha))
    information = rel_entr(q, p0) + rel_entr(1 - q, 1 - p0)
    with np.errstate(divide="ignore"):
        return np.where(q > p0, evidence / information, np.inf)


def min_alpha_for_radius(radius_over_sigma: float, n: int) -> float:
    """Smallest level ``alpha`` at which ``n`` draws can certify ``radius_over_sigma``·σ.

    The inverse of the ceiling ``σ·Φ⁻¹(alpha^(1/n))``: ``alpha = Φ(radius/σ)^n``. A log
    holding a larger certificate than its stated ``n`` and ``alpha`` allow was run
    with another level (or more draws).
    """
    if n < 1:
        raise ValueError(f"n must be a positive number of draws, got {n!r}")
    return float(np.exp(n * norm.logcdf(radius_over_sigma)))


def check_alpha(alpha: float) -> None:
    if not 0.0 < float(alpha) < 1.0:
        raise ValueError(
            f"alpha must lie strictly between 0 and 1 (the failure probability), "
            f"got {alpha!r}; Cohen et al. use alpha=0.001"
        )
