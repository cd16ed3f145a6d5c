"""Anytime-valid and randomised lower confidence bounds on a binomial proportion.

Two alternatives to the fixed-``n`` Clopper–Pearson bound of
:mod:`rsutils.core.confidence`, after Voráček (NeurIPS 2024, arXiv 2406.17830), written
from the statistics, not from any code:

- a **confidence sequence** (:func:`cs_lower`, :func:`cs_decide`,
  :func:`cs_first_certification`, :func:`cs_min_draws_all_successes`): a lower bound
  valid *uniformly over time*, so that a procedure may look after every draw and stop
  whenever it likes;
- **randomised Clopper–Pearson** (:func:`randomized_clopper_pearson_lower`,
  :func:`randomized_clopper_pearson_pvalue`): a fixed-``n`` bound of exact level
  ``alpha``, never below Clopper–Pearson's, whose randomisation ``u`` the caller draws
  and the certificate states.

The martingale. For a candidate proportion ``q`` and ``k`` successes in ``t`` draws, the
beta-binomial mixture likelihood ratio is::

    M_t(q) = ∫ θ^k (1 − θ)^(t − k) dBeta(θ; a, b) / (q^k (1 − q)^(t − k))
           = B(a + k, b + t − k) / (B(a, b) · q^k (1 − q)^(t − k)).

If the draws are Bernoulli(``q``), ``M_t(q)``
is a nonnegative martingale with ``M_0 = 1`` (a mixture of likelihood ratios, each a
martingale under ``q``), so Ville's inequality gives ``P(∃ t: M_t(q) ≥ 1/alpha) ≤
alpha``. The default prior is Jeffreys' ``Beta(1/2, 1/2)``: then ``M_t(q)`` is exactly the
wealth of a gambler who starts with 1 and bets on each draw with the
Krichevsky–Trofimov estimate ``(k + 1/2)/(t + 1)`` against odds set by ``q`` (the KT
betting martingale and the Jeffreys mixture are the same process). It is chosen because
its cost over a fixed-``n`` test grows only like ``½·ln t`` in ``ln(1/alpha)`` at all
successes (``B(m + 1/2, 1/2)/π ≈ 1/√(πm)``), against ``ln(m + 1)`` for the uniform
prior, and it has a closed form, so every bound here is the root of one explicit,
monotone function.

The sequence. ``{q : M_t(q) < 1/alpha}`` is an interval around ``k/t`` (``ln M_t`` is
convex in ``q`` and at most 0 at ``q = k/t``). Its lower end ``L_t`` satisfies
``P(∃ t: L_t > p) ≤ alpha`` for the true ``p``: ``L_t > p`` means ``p`` has left the
interval, i.e. ``M_t(p) ≥ 1/alpha``. So a decision "``p > p0``" taken when ``L_t > p0``
at any data-dependent time is wrong with probability at most ``alpha``, however often it
is checked. (The running maximum of ``L_t`` is valid too.)

For a decision at one threshold ``p0`` (is ``p > p0``?), ``one_sided=True`` truncates the
prior to ``[p0, 1]``: a supermartingale under every ``p ≤ p0``, so the same Ville bound
holds, and at ``p = 1`` it certifies with about 1.17× the fixed-``n`` floor
``ln alpha / ln p0`` at every radius, where the two-sided sequence needs 1.3× (``r = 0``)
to 2× (``r = 4σ``) at ``alpha = 0.001``.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike
from scipy.optimize import brentq
from scipy.special import betaln, xlog1py, xlogy
from scipy.stats import beta, binom

from rsutils.core.confidence import check_alpha

__all__ = [
    "JEFFREYS",
    "cs_decide",
    "cs_first_certification",
    "cs_log_martingale",
    "cs_lower",
    "cs_min_draws_all_successes",
    "randomized_clopper_pearson_lower",
    "randomized_clopper_pearson_pvalue",
]

#: Jeffreys' prior ``Beta(1/2, 1/2)``: the Krichevsky–Trofimov betting martingale.
JEFFREYS = (0.5, 0.5)

_BISECTIONS = 200


def cs_log_martingale(
    successes: ArrayLike,
    trials: ArrayLike,
    p0: ArrayLike,
    prior: tuple[float, float] = JEFFREYS,
    one_sided: bool = False,
) -> np.ndarray:
    """``ln M_t(p0)``: the log of the mixture martingale after ``successes`` of ``trials``.

    Under Bernoulli(``p0``) draws ``M_t(p0)`` is a nonnegative martingale of mean 1, so
    it ever reaches ``1/alpha`` with probability at most ``alpha`` (Ville). With
    ``one_sided`` the prior is truncated to ``[p0, 1]``: each likelihood ratio
    ``θ^X (1 − θ)^(1 − X) / (p0^X (1 − p0)^(1 − X))`` with ``θ ≥ p0`` has mean
    ``1 + (p − p0)(θ − p0)/(p0(1 − p0)) ≤ 1`` under any ``p ≤ p0``, so the mixture is a
    nonnegative supermartingale for the whole null ``p ≤ p0`` and Ville's bound still
    holds; it spends no prior mass on ``θ < p0`` and so tests ``p > p0`` with fewer
    draws (it is a test for one ``p0``, not a confidence sequence). ``p0`` must lie in
    ``(0, 1)``; vectorised over all three arrays.
    """
    k, n = _counts(successes, trials, allow_zero_trials=True)
    q = np.asarray(p0, dtype=float)
    if np.any(~(q > 0)) or np.any(~(q < 1)):
        raise ValueError(f"p0 must lie strictly between 0 and 1 (a proportion), got {p0!r}")
    a, b = _prior(prior)
    log_m = betaln(a + k, b + n - k) - betaln(a, b) - xlogy(k, q) - xlog1py(n - k, -q)
    if one_sided:
        log_m = log_m + beta.logsf(q, a + k, b + n - k) - beta.logsf(q, a, b)
    return log_m


def cs_lower(
    successes: ArrayLike,
    trials: ArrayLike,
    alpha: float,
    prior: tuple[float, float] = JEFFREYS,
) -> np.ndarray:
    """Lower end of the ``(1 - alpha)`` confidence sequence after ``successes`` of ``trials``.

    Guarantee: if the draws are i.i.d. Bernoulli(``p``), then with probability at least
    ``1 - alpha`` the bound is at most ``p`` *at every* ``trials`` *at once* (see the
    module's docstring), so it may be read after every draw and acted on at a
    data-dependent time. It is the root in ``(0, k/t]`` of ``M_t(q) = 1/alpha``, 0 at
    ``k = 0``, and ``(alpha · B(a + t, b)/B(a, b))^(1/t)`` at ``k = t``. It increases with
    ``successes`` and ``alpha`` and decreases as failures are added. Vectorised over
    ``successes`` and ``trials`` (``trials = 0`` gives 0).
    """
    check_alpha(alpha)
    k, n = _counts(successes, trials, allow_zero_trials=True)
    a, b = _prior(prior)
    k, n = np.broadcast_arrays(k, n)
    log_mix = betaln(a + k, b + n - k) - betaln(a, b) + math.log(alpha)
    safe_n = np.where(n > 0, n, 1.0)
    all_successes = np.exp(log_mix / safe_n)
    # Bisection on (0, k/t) of g(q) = ln(alpha·mixture) - k ln q - (t - k) ln(1 - q),
    # which decreases there and is > 0 near 0 and <= 0 at k/t.
    lo = np.zeros_like(safe_n)
    hi = np.where(n > 0, k / safe_n, 0.0)
    for _ in range(_BISECTIONS):
        mid = 0.5 * (lo + hi)
        g = log_mix - xlogy(k, mid) - xlog1py(n - k, -mid)
        rejected = g >= 0  # M_t(mid) >= 1/alpha: mid lies below the sequence
        lo = np.where(rejected, mid, lo)
        hi = np.where(rejected, hi, mid)
    bound = np.where(k == n, all_successes, lo)
    return np.where(k == 0, 0.0, bound)


def cs_decide(
    successes: ArrayLike,
    trials: ArrayLike,
    p0: ArrayLike,
    alpha: float,
    prior: tuple[float, float] = JEFFREYS,
    one_sided: bool = False,
) -> np.ndarray:
    """Whether the counts certify ``p > p0`` at level ``alpha``, at any time.

    True exactly when ``k/t > p0`` and ``M_t(p0) ≥ 1/alpha`` (computed directly, with
    no root finding); without ``one_sided`` this is "``p0`` lies below the confidence
    sequence", i.e. ``cs_lower(k, t, alpha) > p0``. Guarantee: if the draws are
    Bernoulli(``p``) with ``p ≤ p0``, the probability that this is *ever* true along one
    sequence of draws is at most ``alpha`` (for ``p < p0``: the sequence is an interval
    around ``k/t``, so ``p0`` below it puts ``p`` below it too; with ``one_sided``: the
    supermartingale of :func:`cs_log_martingale`).
    """
    check_alpha(alpha)
    k, n = _counts(successes, trials, allow_zero_trials=True)
    q = np.asarray(p0, dtype=float)
    log_m = cs_log_martingale(k, n, q, prior, one_sided)
    above = k > q * n
    return above & (log_m >= -math.log(alpha))


def cs_first_certification(
    draws: ArrayLike,
    p0: float,
    alpha: float,
    prior: tuple[float, float] = JEFFREYS,
    one_sided: bool = False,
) -> np.ndarray:
    """The first number of draws at which each row of 0/1 ``draws`` certifies ``p > p0``.

    ``draws`` has shape ``(..., T)`` (1 = success); the answer has shape ``(...)`` and
    is 0 where no prefix certifies. Looking after every draw and stopping at the first
    certification is wrong with probability at most ``alpha`` when ``p ≤ p0``.
    """
    x = np.asarray(draws)
    if x.ndim < 1 or not np.all((x == 0) | (x == 1)):
        raise ValueError("draws must be an array of 0/1 outcomes with draws along the last axis")
    k = np.cumsum(x, axis=-1)
    n = np.arange(1, x.shape[-1] + 1)
    hit = cs_decide(k, n, p0, alpha, prior, one_sided)
    first = np.argmax(hit, axis=-1) + 1
    return np.where(hit.any(axis=-1), first, 0)


def cs_min_draws_all_successes(
    p0: float,
    alpha: float,
    prior: tuple[float, float] = JEFFREYS,
    one_sided: bool = False,
    max_draws: int = 10**9,
) -> int:
    """Fewest draws, all successes, with which :func:`cs_decide` certifies ``p > p0``.

    The least ``m`` with ``m·ln(1/p0) ≥ ln(1/alpha) + ln(B(a, b)/B(a + m, b))`` (plus
    ``ln(P(θ ≥ p0)/P(θ' ≥ p0))`` for the truncated prior, ``θ ~ Beta(a, b)``,
    ``θ' ~ Beta(a + m, b)``); compare the fixed-``n`` Clopper–Pearson floor
    ``ceil(ln alpha / ln p0)`` (:func:`~rsutils.core.confidence.min_samples_for_radius`),
    which the two-sided Jeffreys sequence exceeds by about ``½·ln(πm)/ln(1/p0)`` draws.
    """
    check_alpha(alpha)
    if not 0.0 < p0 < 1.0:
        raise ValueError(f"p0 must lie strictly between 0 and 1 (a proportion), got {p0!r}")
    a, b = _prior(prior)

    def certifies(m: int) -> bool:
        log_m = betaln(a + m, b) - betaln(a, b) - m * math.log(p0)
        if one_sided:
            log_m += beta.logsf(p0, a + m, b) - beta.logsf(p0, a, b)
        return log_m >= -math.log(alpha)

    hi = max(1, math.ceil(math.log(alpha) / math.log(p0)))
    while not certifies(hi):
        hi *= 2
        if hi > max_draws:
            raise ValueError(
                f"p0={p0!r} needs more than max_draws={max_draws} draws; raise max_draws"
            )
    lo = 0  # certifies(0) is False: M_0 = 1 < 1/alpha
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if certifies(mid) else (mid, hi)
    return hi


def randomized_clopper_pearson_pvalue(
    successes: ArrayLike, trials: ArrayLike, p0: ArrayLike, u: ArrayLike
) -> np.ndarray:
    """Randomised p-value of ``p ≤ p0``: ``P_p0(X > k) + u · P_p0(X = k)``.

    With ``u ~ Uniform(0, 1)`` independent of the draws, it is exactly uniform when
    ``p = p0`` (and stochastically larger when ``p < p0``), so rejecting when it is below
    ``alpha`` has level exactly ``alpha``. ``u = 1`` gives the Clopper–Pearson p-value
    ``P_p0(X ≥ k)``.
    """
    k, n = _counts(successes, trials, allow_zero_trials=False)
    q = np.asarray(p0, dtype=float)
    if np.any(~(q >= 0)) or np.any(~(q <= 1)):
        raise ValueError(f"p0 must lie in [0, 1] (a proportion), got {p0!r}")
    v = _uniform(u)
    return binom.sf(k, n, q) + v * binom.pmf(k, n, q)


def randomized_clopper_pearson_lower(
    successes: ArrayLike, trials: ArrayLike, alpha: float, u: ArrayLike
) -> np.ndarray:
    """Randomised ``(1 - alpha)`` Clopper–Pearson lower bound, with ``u`` the caller's.

    The bound is ``inf {q : P_q(X > k) + u · P_q(X = k) ≥ alpha}`` (1 if no ``q ≤ 1``
    qualifies, which happens only when ``k = n`` and ``u ≤ alpha``). Guarantee: for
    ``u ~ Uniform(0, 1)`` drawn independently of the ``n`` draws, ``P(bound > p) =
    alpha`` *exactly* for every ``p`` in ``(0, 1)``, not at most ``alpha`` as for
    Clopper–Pearson. The randomisation is an input so that a certificate can state it
    (and a reader can redo it); drawing ``u`` after seeing the counts, or redrawing it,
    voids the guarantee.

    Convention: ``u = 1`` gives :func:`~rsutils.core.confidence.clopper_pearson_lower`
    exactly, ``u → 0`` its value at ``k + 1`` successes (1 at ``k = n``); in between the
    bound decreases continuously in ``u``, so it is never below Clopper–Pearson's and
    strictly above it for ``u < 1``. At ``k = n`` it is ``(alpha/u)^(1/n)`` for
    ``u > alpha``. Vectorised over ``successes``, ``trials`` and ``u``.
    """
    check_alpha(alpha)
    k, n = _counts(successes, trials, allow_zero_trials=False)
    v = _uniform(u)
    if k.ndim == n.ndim == v.ndim == 0:
        return np.asarray(_randomized_lower_scalar(int(k), int(n), float(alpha), float(v)))
    k, n, v = np.broadcast_arrays(k, n, v)
    with np.errstate(invalid="ignore", divide="ignore"):
        lo = np.where(k == 0, 0.0, beta.ppf(alpha, k, n - k + 1))
        hi = np.where(k == n, 1.0, beta.ppf(alpha, k + 1, n - k))
    lo = np.where(np.isnan(lo), 0.0, lo)
    hi = np.where(np.isnan(hi), 1.0, hi)
    # The p-value increases in q from P_lo(...) <= alpha to P_hi(...) >= alpha (except at
    # k = n, u <= alpha, where it stays below alpha up to q = 1): bisect for the crossing.
    for _ in range(_BISECTIONS // 4):
        mid = 0.5 * (lo + hi)
        below = binom.sf(k, n, mid) + v * binom.pmf(k, n, mid) < alpha
        lo = np.where(below, mid, lo)
        hi = np.where(below, hi, mid)
    closed = np.where(v > alpha, (alpha / np.maximum(v, alpha)) ** (1.0 / n), 1.0)
    bound = np.where(k == n, closed, hi)
    bound = np.where((k == 0) & (v >= alpha), 0.0, bound)
    return bound


def _randomized_lower_scalar(k: int, n: int, alpha: float, v: float) -> float:
    """:func:`randomized_clopper_pearson_lower` for one count, by Brent's method on the
    same monotone p-value between the same brackets (a few scipy calls, not 100)."""
    if k == n:
        return (alpha / v) ** (1.0 / n) if v > alpha else 1.0
    if k == 0 and v >= alpha:
        return 0.0
    lo = 0.0 if k == 0 else float(beta.ppf(alpha, k, n - k + 1))
    hi = float(beta.ppf(alpha, k + 1, n - k))
    lo, hi = (0.0 if math.isnan(lo) else lo), (1.0 if math.isnan(hi) else hi)

    def excess(q: float) -> float:
        return float(binom.sf(k, n, q) + v * binom.pmf(k, n, q)) - alpha

    if lo >= hi or excess(hi) <= 0:
        return hi
    if excess(lo) >= 0:
        return lo
    return float(brentq(excess, lo, hi, xtol=1e-15, rtol=4 * np.finfo(float).eps))


def _counts(
    successes: ArrayLike, trials: ArrayLike, *, allow_zero_trials: bool
) -> tuple[np.ndarray, np.ndarray]:
    k = np.asarray(successes, dtype=float)
    n = np.asarray(trials, dtype=float)
    least = 0 if allow_zero_trials else 1
    if (
        np.any(~np.isfinite(k))
        or np.any(~np.isfinite(n))
        or np.any(k != np.round(k))
        or np.any(n != np.round(n))
        or np.any(n < least)
        or np.any(k < 0)
        or np.any(k > n)
    ):
        raise ValueError(
            f"need whole counts with 0 <= successes <= trials and trials >= {least}, "
            f"got {successes!r} of {trials!r}; pass the number of successes and of draws"
        )
    return k, n


def _prior(prior: tuple[float, float]) -> tuple[float, float]:
    try:
        a, b = (float(value) for value in prior)
    except (TypeError, ValueError):
        raise ValueError(f"prior must be a pair (a, b) of Beta parameters, got {prior!r}") from None
    if not (a > 0 and b > 0 and math.isfinite(a) and math.isfinite(b)):
        raise ValueError(f"prior must be a pair of positive finite Beta parameters, got {prior!r}")
    return a, b


def _uniform(u: ArrayLike) -> np.ndarray:
    v = np.asarray(u, dtype=float)
    if np.any(~(v >= 0)) or np.any(~(v <= 1)):
        raise ValueError(
            f"u must lie in [0, 1]: draw it once from Uniform(0, 1), independently of the "
            f"counts, and state it in the certificate; got {u!r}"
        )
    return v
