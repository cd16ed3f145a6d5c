"""Differences between two methods over replicate models and images, and the verdict rule.

A comparison the book concludes from is certified with ``k`` independently trained
models per method (replicates: other seeds for the weights, the data order and the
training noise), each on the same ``N`` test images. The design is crossed, models ×
images, and the difference of a measure (ACR, or certified accuracy at a radius)
varies with both: an interval over the images alone says nothing about a retraining.
:func:`replicated_difference` gives an interval that covers both, and
:func:`replicated_comparisons` tabulates it per pair of methods, each judged by the
book's one verdict rule (:mod:`rsutils.analysis.verdicts`). A
table of comparisons is one family: its verdicts are corrected for multiplicity by
Holm's procedure (:func:`~rsutils.analysis.verdicts.holm_family`), so that a claim
resting on many comparisons is not decided by the one that came out significant by
chance.

The model behind the intervals: the per-(model, image) difference is
``d[m, i] = δ + a[m] + b[i] + e[m, i]``, with independent model effects ``a`` (variance
σ²_models), image effects ``b`` (σ²_images) and interactions ``e`` (σ²_residual). The
mean ``d̄`` estimates δ with variance σ²_models/k + σ²_images/N + σ²_residual/(kN). The
mean squares of the two-way crossed analysis of variance without replication (models
MSA, images MSB, residual MSE) estimate it: E[MSA] = σ²_residual + N σ²_models,
E[MSB] = σ²_residual + k σ²_images, E[MSE] = σ²_residual.

The assumption behind the t quantiles: the model effects ``a`` are normal. With a
handful of replicates nothing can check it; a skewed distribution of retrainings, or
one replicate in several that fails, makes the interval cover less than its level.
That is why every table of comparisons prints each replicate's own difference
(``per model``) beside the interval: a verdict carried by one odd model shows there.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy.optimize import brentq
from scipy.stats import bootstrap
from scipy.stats import t as student

from rsutils.analysis.components import VarianceComponents, check_design, mean_squares
from rsutils.analysis.margins import Margins, Measure, margin_for
from rsutils.analysis.verdicts import Verdict, holm_family, judge
from rsutils.core.streams import derived_seed

__all__ = [
    "METHODS",
    "CrossedInterval",
    "ReplicatedDifference",
    "crossed_interval",
    "interval_from_mean_squares",
    "replicated_comparisons",
    "replicated_difference",
]

#: The intervals :func:`replicated_difference` can compute, the default first.
METHODS = ("banerjee", "satterthwaite", "bootstrap")

_RESAMPLES = 9_999


class CrossedInterval(NamedTuple):
    """The interval of a mean over models × images; arrays over any leading axes."""

    mean: np.ndarray
    low: np.ndarray
    high: np.ndarray
    standard_error: np.ndarray
    df: np.ndarray


class _Parts(NamedTuple):
    """The mean and its variance in independent parts, each with its degrees of freedom."""

    mean: np.ndarray
    variances: tuple[np.ndarray, ...]
    dfs: tuple[np.ndarray, ...]

    def half_width(self, level: float | np.ndarray) -> np.ndarray:
        """Banerjee's half-width: sqrt(Σ t²(level; ν_j) S_j), signed as the quantiles."""
        quantiles = [student.ppf(level, df) for df in self.dfs]
        total = sum(q**2 * s for q, s in zip(quantiles, self.variances, strict=True))
        return np.sign(quantiles[0]) * np.sqrt(total)

    def spread(self) -> tuple[np.ndarray, np.ndarray]:
        """The standard error and Satterthwaite's degrees of freedom for the summed parts."""
        variance = sum(self.variances)
        with np.errstate(divide="ignore", invalid="ignore"):
            pieces = zip(self.variances, self.dfs, strict=True)
            df = variance**2 / sum(s**2 / df for s, df in pieces)
        return np.sqrt(variance), np.where(variance > 0, df, self.dfs[0])


def _banerjee_parts(
    mean: np.ndarray, msa: np.ndarray, msb: np.ndarray, mse: np.ndarray, k: int, n: int
) -> _Parts:
    """Banerjee's two parts of the mean of a k × N table (k ≥ 2) from its mean squares."""
    # d̄ = δ + (ā + ē̄) + b̄: the models' part, whose variance MSA/(kN) estimates on
    # k − 1 degrees of freedom, and the images' part, σ²_images/N ≈ (MSB − MSE)⁺/(kN),
    # on the N − 1 of MSB (Satterthwaite's for the difference falls towards 0 with
    # the part, and its t quantile would then blow a negligible part up).
    images = np.maximum(msb - mse, 0.0) / (k * n)
    # Both estimates 0 (every model the same mean, MSB ≤ MSE) from data that vary
    # would make the interval a point: then the images' own spread, MSB/(kN), the
    # variance of the mean of the per-image means, on the same N − 1.
    degenerate = (images + msa == 0) & (msb > 0)
    images = np.where(degenerate, msb / (k * n), images)
    df_models, df_images = np.full_like(mean, k - 1.0), np.full_like(mean, n - 1.0)
    return _Parts(mean, (msa / (k * n), images), (df_models, df_images))


def interval_from_mean_squares(
    mean: ArrayLike,
    msa: ArrayLike,
    msb: ArrayLike,
    mse: ArrayLike,
    *,
    models: int,
    images: int,
    confidence: float = 0.95,
) -> CrossedInterval:
    """:func:`crossed_interval` (Banerjee's, the default) of a ``models`` × ``images``
    table given only its grand mean and its mean squares (between models, between
    images, residual; arrays over any leading axes), which is all the interval reads.
    With one model ``msb`` is the images' sample variance and ``msa``, ``mse`` are
    ignored. :mod:`rsutils.analysis.power` draws these four statistics directly, so that
    a design's power costs the same at any number of images."""
    check_design(models, images)
    alpha = _alpha(confidence)
    mean, msa, msb, mse = (np.asarray(x, dtype=float) for x in (mean, msa, msb, mse))
    if models == 1:
        parts = _Parts(mean, (msb / images,), (images - 1,))
    else:
        parts = _banerjee_parts(mean, msa, msb, mse, models, images)
    return _interval(parts, alpha)


def _interval(parts: _Parts, alpha: float) -> CrossedInterval:
    """The two-sided (1 − ``alpha``) interval of ``parts``' mean, Banerjee's half-width."""
    half = parts.half_width(1 - alpha / 2)
    standard_error, df = parts.spread()
    return CrossedInterval(parts.mean, parts.mean - half, parts.mean + half, standard_error, df)


def _parts(d: np.ndarray, method: str) -> _Parts:
    """The variance of the mean of ``d`` (…, k, N) as a sum of independent parts."""
    k, n = d.shape[-2:]
    if k == 1:  # the images only: the one-sample t
        return _Parts(d[..., 0, :].mean(-1), (d[..., 0, :].var(-1, ddof=1) / n,), (n - 1,))
    mean, msa, msb, mse = mean_squares(d)
    if method == "banerjee":
        return _banerjee_parts(mean, msa, msb, mse, k, n)
    # satterthwaite: σ²_models and σ²_images by the method of moments, truncated at 0, so
    # that (kN)·Var = max(MSA, MSE) + max(MSB, MSE) − MSE, one term per mean square.
    with_models, with_images = msa > mse, msb > mse
    terms = (
        np.where(with_models, msa, 0.0),
        np.where(with_images, msb, 0.0),
        mse * (1.0 - with_models - with_images),
    )
    dfs = (k - 1, n - 1, (k - 1) * (n - 1))
    total = sum(terms)
    with np.errstate(divide="ignore", invalid="ignore"):
        df = total**2 / sum(term**2 / df for term, df in zip(terms, dfs, strict=True))
    return _Parts(mean, (total / (k * n),), (np.where(total > 0, df, np.inf),))


def crossed_interval(
    differences: ArrayLike, *, confidence: float = 0.95, method: str = "banerjee"
) -> CrossedInterval:
    """The (``confidence``) interval of the mean of ``differences`` over models × images.

    ``differences`` has shape (…, k, N): k models by N images, any leading axes (many
    data sets at once). With k = 1 the interval is the one-sample Student-t interval
    over the images. Otherwise, with the mean squares of the module's docstring:

    - ``"banerjee"`` (the default) splits the mean into two independent parts, the
      models' part ā + ē̄ (variance estimated by S₁ = MSA/(kN), exactly a scaled
      χ²/(k − 1) under normality) and the images' part b̄ (S₂ = (MSB − MSE)⁺/(kN), on
      the N − 1 degrees of freedom of MSB), and takes each part's own t quantile:
      half-width sqrt(t²_{k−1} S₁ + t²_{N−1} S₂) (Banerjee's construction for linear
      functions of means with separate variance estimates, Sankhyā 22, 1960). It is
      exact when the models' part dominates and conservative otherwise: the tests find
      its coverage at or above the level over a grid of variance components, up to
      about 0.98 when the models do not vary at all (three models cannot tell a small
      model variance from none). With N ≥ k the half-width is at most t_{k−1} times the
      standard error sqrt(S₁ + S₂); ``df`` is Satterthwaite's for S₁ + S₂, for
      information. When both estimates are 0 from differences that vary (every model
      the same mean, MSB ≤ MSE: a few discordant images), S₂ becomes MSB/(kN), the
      images' own spread, rather than a zero-width interval.
    - ``"satterthwaite"``: the variance components by the method of moments, truncated
      at 0, Var = σ²_models/k + σ²_images/N + σ²_residual/(kN) through the mean squares,
      one Student-t quantile at Satterthwaite's degrees of freedom. The textbook choice,
      but liberal with few models: its degrees of freedom are estimated from the same
      two-degree-of-freedom MSA, and they run high exactly when MSA happens to be low
      (coverage 0.92–0.94 at k = 3 when the models' part dominates; tests pin this).

    Guarantee: ``low ≤ mean ≤ high``; the interval is symmetric about the mean.
    """
    d = _differences(differences)
    alpha = _alpha(confidence)
    if method not in METHODS[:2]:
        raise ValueError(f"method must be 'banerjee' or 'satterthwaite', got {method!r}")
    parts = _parts(d, method)
    return _interval(parts, alpha)


def _differences(differences: ArrayLike) -> np.ndarray:
    d = np.asarray(differences, dtype=float)
    if d.ndim < 2 or d.shape[-2] < 1 or d.shape[-1] < 2:
        raise ValueError(
            "differences must have shape (..., models, images) with at least 1 model and 2 "
            f"images, got shape {d.shape}; certify at least two test images"
        )
    if not np.isfinite(d).all():
        raise ValueError("differences hold NaN or infinite values: check the logs' radii")
    return d


def _alpha(confidence: float) -> float:
    if not 0.0 < float(confidence) < 1.0:
        raise ValueError(
            f"confidence must lie strictly between 0 and 1 (e.g. 0.95), got {confidence!r}"
        )
    return 1.0 - float(confidence)


def _level_at(parts: _Parts, gap: float) -> float:
    """The α at which the one-sided bound d̄ + h(1 − α) of ``parts`` is ``gap`` away
    from the mean (h grows as α falls): the one-sided p-value of a null ``gap`` away."""

    def excess(alpha: float) -> float:
        return float(parts.half_width(1 - alpha)) - gap

    tiny = 1e-15
    if excess(tiny) < 0:
        return tiny
    if excess(1 - tiny) > 0:
        return 1.0
    return float(brentq(excess, tiny, 1 - tiny, xtol=1e-14, rtol=1e-12))


def _difference_pvalue(parts: _Parts) -> float:
    """The two-sided p-value of δ = 0 with the interval's own quantiles: below α exactly
    when the (1 − α) interval excludes 0."""
    mean = float(parts.mean)
    if sum(float(v) for v in parts.variances) == 0.0:
        return 1.0 if mean == 0.0 else 0.0
    return min(1.0, 2 * _level_at(parts, abs(mean)))


def _tost_pvalue(parts: _Parts, margin: float) -> float:
    """Two one-sided tests of |δ| ≥ margin with the intervals' own quantiles.

    The p-value of H₀: δ ≥ m is the α at which the one-sided bound d̄ + h(1 − α) meets m
    (and of H₀: δ ≤ −m likewise); the TOST p-value is the larger of the two. So
    p < α exactly when the (1 − 2α) interval lies inside (−m, m).
    """
    mean = float(parts.mean)
    if sum(float(v) for v in parts.variances) == 0.0:
        return 0.0 if abs(mean) < margin else 1.0

    return max(_level_at(parts, margin - mean), _level_at(parts, mean + margin))


@dataclass(frozen=True)
class ReplicatedDifference:
    """A difference of a measure, method minus control, over replicate models and images.

    ``low``/``high`` is the ``confidence`` interval, ``equivalence`` the (1 − 2α)
    interval (α = 1 − confidence) that the equivalence test uses, ``margin`` the
    equivalence margin (or None) and ``p_equivalent`` the two one-sided tests' p-value
    (below α exactly when ``equivalence`` lies inside ±margin; None without margin);
    ``p_difference`` is the two-sided p-value of no difference (below α exactly when
    ``(low, high)`` excludes 0).
    ``per_model`` holds each replicate's own difference, ``df`` the degrees of freedom
    behind ``standard_error`` (nan for the bootstrap). ``images_only`` is True when there
    was one replicate: the interval then covers the choice of images only, not a
    retraining. ``components`` are the table's
    :class:`~rsutils.analysis.components.VarianceComponents`, from which
    :mod:`rsutils.analysis.power` computes which effects the design detects (all 0 when
    no spread was seen: the power is then unknown).
    """

    difference: float
    low: float
    high: float
    confidence: float
    equivalence: tuple[float, float]
    margin: float | None
    p_equivalent: float | None
    p_difference: float
    standard_error: float
    df: float
    models: int
    images: int
    per_model: tuple[float, ...]
    method: str
    images_only: bool
    components: VarianceComponents

    @property
    def verdict(self) -> Verdict:
        """:func:`~rsutils.analysis.verdicts.judge` of the intervals, this row alone."""
        equivalence = None if self.margin is None else self.equivalence
        return judge(self.low, self.high, margin=self.margin, equivalence=equivalence)


def replicated_difference(
    pairs: Sequence[tuple[pd.DataFrame, pd.DataFrame]],
    *,
    column: str = "radius",
    radius: float | None = None,
    confidence: float = 0.95,
    margin: float | None = None,
    method: str = "banerjee",
    seed: int = 0,
) -> ReplicatedDifference:
    """How much a method's measure exceeds its control's, over replicate models and images.

    ``pairs`` holds one ``(control_log, method_log)`` pair per independently trained
    replicate; each pair certifies the same images (``idx``), and every replicate the
    same ones. The measure is the ACR by ``column`` (the mean of ``column`` × correct,
    as :func:`~rsutils.analysis.metrics.average_certified_radius`), or with ``radius`` the
    certified accuracy at that radius (correct and ``column`` ≥ radius, as
    :func:`~rsutils.analysis.metrics.certified_accuracy`).

    ``method``: ``"banerjee"`` or ``"satterthwaite"`` (see :func:`crossed_interval`), or
    ``"bootstrap"``, a row–column bootstrap of the models × images table: draw k rows
    (models) with replacement and, independently, N columns (images) with replacement,
    the same columns for every drawn row (the design is crossed), and take the
    percentiles of 9,999 such means (seeded from ``seed``'s ``bootstrap`` stream). The
    moment-based t interval is the default because with
    k = 3 replicates the bootstrap has only 10 distinct draws of models, shrinks the
    models' variance by (k − 1)/k, and uses normal-like percentiles where the t
    quantile on k − 1 = 2 degrees of freedom is 4.30, not 1.96: it covers far below its
    level when the models vary (a test pins this).

    With ``margin`` m, ``p_equivalent`` is the two one-sided tests' p-value on the same
    variance estimate: H₀ δ ≥ m and H₀ δ ≤ −m, each tested with the one-sided bound of
    the interval's own construction, p the larger of the two. It is below α exactly
    when ``equivalence``, the (1 − 2α) interval, lies inside (−m, m), which is what
    :func:`~rsutils.analysis.verdicts.judge` checks (for the bootstrap: the larger
    share of resampled means beyond ±m, which agrees with the percentile interval up to
    ties).

    A certified accuracy on which method and control agree on every image of every
    model gives no spread to estimate a variance from; its interval is then the exact
    bound on the share of images where they could disagree (Clopper–Pearson at 0 of
    N), not the point 0.

    With one replicate the interval is over the images only (``images_only``): the
    one-sample t interval, or for ``"bootstrap"`` the same paired BCa bootstrap as
    :func:`~rsutils.analysis.metrics.acr_difference`.
    """
    alpha = _alpha(confidence)
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if margin is not None and not (math.isfinite(margin) and margin > 0):
        raise ValueError(f"margin must be a positive number (e.g. 0.05 ACR), got {margin!r}")
    d = _paired_scores(pairs, column, radius)
    k, n = d.shape
    per_model = tuple(float(v) for v in d.mean(axis=1))
    if radius is not None and not d.any():
        found = _all_agree(n, alpha, margin)
    elif method == "bootstrap":
        found = _bootstrap(d, alpha, margin, seed)
    else:
        parts = _parts(d, method)
        mean = float(parts.mean)
        half, eq = (float(parts.half_width(1 - a)) for a in (alpha / 2, alpha))
        p = None if margin is None else _tost_pvalue(parts, margin)
        p_difference = _difference_pvalue(parts)
        standard_error, df = (float(v) for v in parts.spread())
        eq_interval = (mean - eq, mean + eq)
        found = (mean, mean - half, mean + half, eq_interval, p, p_difference, standard_error, df)
    mean, low, high, equivalence, p, p_difference, standard_error, df = found
    return ReplicatedDifference(
        mean, low, high, float(confidence), equivalence, margin, p, p_difference,
        standard_error, df, k, n, per_model, method, k == 1,
        VarianceComponents.from_differences(d),
    )  # fmt: skip


def _all_agree(images: int, alpha: float, margin: float | None) -> tuple:
    """Certified accuracy on which method and control agree on every image of every
    model: each paired difference 0, so any interval from their spread is the point 0
    (and its equivalence test passes at any margin, a degenerate test). The difference
    is bounded by the share q of images on which the two would disagree, of which none
    of ``images`` was seen: |δ| ≤ q ≤ 1 − (α/2)^(1/N) (Clopper–Pearson at 0 of N,
    the images being the units the models share), the (1 − 2α) interval at
    1 − α^(1/N), and the two one-sided tests' p-value of |δ| ≥ m is the chance of no
    disagreement when q = m, (1 − m)^N: below α exactly when that interval lies
    inside ±m."""
    half, eq = 1.0 - (alpha / 2) ** (1 / images), 1.0 - alpha ** (1 / images)
    p = None if margin is None else float((1.0 - margin) ** images)
    return 0.0, -half, half, (-eq, eq), p, 1.0, math.nan, math.nan


def _bootstrap(d: np.ndarray, alpha: float, margin: float | None, seed: int) -> tuple:
    k, n = d.shape
    rng = np.random.default_rng(derived_seed(seed, 0, "bootstrap"))
    mean = float(d.mean())
    if k == 1:  # the paired bootstrap over the images, as acr_difference
        values = d[0]
        if np.ptp(values) == 0:
            p = None if margin is None else float(abs(mean) >= margin)
            return mean, mean, mean, (mean, mean), p, float(mean == 0.0), 0.0, math.nan
        ends = {}
        for level in (1 - alpha, 1 - 2 * alpha):
            found = bootstrap(
                (values,), np.mean, confidence_level=level, n_resamples=_RESAMPLES,
                method="BCa", rng=np.random.default_rng(derived_seed(seed, 0, "bootstrap")),
            )  # fmt: skip
            ends[level] = tuple(float(e) for e in found.confidence_interval)
        means = found.bootstrap_distribution
    else:
        model_counts = rng.multinomial(k, np.full(k, 1 / k), size=_RESAMPLES)
        means = np.empty(_RESAMPLES)
        chunk = max(1, 2_000_000 // n)
        for start in range(0, _RESAMPLES, chunk):
            stop = min(start + chunk, _RESAMPLES)
            per_image = model_counts[start:stop] @ d  # (draws, N): the drawn models' sums
            images = rng.integers(0, n, size=(stop - start, n))  # the same for those models
            means[start:stop] = np.take_along_axis(per_image, images, 1).sum(1) / (k * n)
        ends = {
            level: tuple(float(e) for e in np.quantile(means, [(1 - level) / 2, (1 + level) / 2]))
            for level in (1 - alpha, 1 - 2 * alpha)
        }
    p = None
    if margin is not None:
        p = float(max(np.mean(means >= margin), np.mean(means <= -margin)))
    low, high = ends[1 - alpha]
    p_difference = min(1.0, 2 * float(min(np.mean(means <= 0), np.mean(means >= 0))))
    spread = float(np.std(means, ddof=1))
    return mean, low, high, ends[1 - 2 * alpha], p, p_difference, spread, math.nan


def _paired_scores(
    pairs: Sequence[tuple[pd.DataFrame, pd.DataFrame]], column: str, radius: float | None
) -> np.ndarray:
    """d[m, i]: method minus control on image i for replicate m, images sorted by idx."""
    pairs = list(pairs)
    if not pairs:
        raise ValueError(
            "pairs is empty: pass one (control_log, method_log) pair per replicate model"
        )
    rows, images = [], None
    for m, pair in enumerate(pairs):
        if len(pair) != 2:
            raise ValueError(f"pairs[{m}] must be a (control_log, method_log) pair of DataFrames")
        control, treated = (_scores(log, column, radius, f"pairs[{m}]") for log in pair)
        if not control.index.equals(treated.index):
            raise ValueError(
                f"pairs[{m}]: the control and method logs certify different images (idx "
                "values); certify the same test images with both, or restrict both logs to "
                "the images they share"
            )
        if images is None:
            images = control.index
        elif not control.index.equals(images):
            raise ValueError(
                f"pairs[{m}] certifies other images than pairs[0]: every replicate must "
                "certify the same test images (the same idx values); restrict the logs to "
                "the images all replicates share"
            )
        rows.append(treated.to_numpy() - control.to_numpy())
    if len(images) < 2:
        raise ValueError("the logs hold fewer than 2 images: certify at least two test images")
    return np.vstack(rows)


def _scores(log: pd.DataFrame, column: str, radius: float | None, where: str) -> pd.Series:
    missing = [c for c in ("idx", "correct", column) if c not in log.columns]
    if missing:
        raise ValueError(f"{where}: a log lacks the columns {missing}; pass certification logs")
    if log["idx"].duplicated().any():
        raise ValueError(f"{where}: a log holds an idx twice; keep one row per test image")
    correct = log["correct"].to_numpy().astype(bool)
    measured = log[column].to_numpy(dtype=float)
    score = measured * correct if radius is None else (correct & (measured >= radius)) * 1.0
    return pd.Series(score, index=log["idx"].to_numpy()).sort_index()


def replicated_comparisons(
    replicates: Sequence[Mapping[str, pd.DataFrame]],
    pairs: Iterable[tuple[str, str]],
    *,
    measures: Mapping[str, Measure] | None = None,
    margin: float | Margins | None = None,
    confidence: float = 0.95,
    method: str = "banerjee",
    seed: int = 0,
    family: bool = True,
) -> pd.DataFrame:
    """:func:`replicated_difference` of each (method, control) pair, per measure.

    ``replicates`` holds one ``{method name: log}`` mapping per replicate. ``measures``
    maps a display name to a log column, for the ACR by that column, or to a
    ``(column, radius)`` pair, for the certified accuracy at that radius (default
    ``{"radius": "radius"}``). ``margin`` is one number for every measure or a
    :class:`~rsutils.analysis.margins.Margins`, whose margin for each measure's kind is
    used. One row per (method, against, measured by), like
    :func:`~rsutils.analysis.metrics.acr_comparisons`: columns ``gain``, ``low``,
    ``high`` (the ``confidence`` interval), ``per model`` (each replicate's own
    difference), ``models``, ``images``, ``p`` (two-sided, of no difference), with a
    margin ``margin`` and ``p equivalent`` (the TOST's), ``components`` (the
    :class:`~rsutils.analysis.components.VarianceComponents` that
    :func:`rsutils.analysis.power.comparison_power` reads), then ``tests`` and ``verdict``.

    With ``family`` (the default) the rows are one family: the verdicts come from
    Holm-adjusted p-values over all the table's tests
    (:func:`~rsutils.analysis.verdicts.holm_family`; ``tests`` is how many), so that
    the family's chance of any wrong verdict is at most 1 − ``confidence``. Without it
    each row is judged alone (``tests`` = 1 or 2).
    """
    measures = measures or {"radius": "radius"}
    replicates = list(replicates)
    rows = {}
    for name, control in pairs:
        for m, logs in enumerate(replicates):
            lacking = [x for x in (name, control) if x not in logs]
            if lacking:
                raise ValueError(f"replicates[{m}] has no log for {lacking}; it has {sorted(logs)}")
        for shown, measure in measures.items():
            column, radius = (measure, None) if isinstance(measure, str) else measure
            found = replicated_difference(
                [(logs[control], logs[name]) for logs in replicates],
                column=column, radius=radius, confidence=confidence,
                margin=margin_for(margin, measure), method=method, seed=seed,
            )  # fmt: skip
            rows[(name, control, shown)] = _row(found)
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.index.names = ["method", "against", "measured by"]
    if margin is None:
        table = table.drop(columns=["margin", "p equivalent"])
    return holm_family(table, confidence=confidence, adjust=family)


def _row(found: ReplicatedDifference) -> dict[str, object]:
    return {
        "gain": found.difference, "low": found.low, "high": found.high,
        "per model": " ".join(f"{v:+.3f}" for v in found.per_model),
        "models": found.models, "images": found.images, "p": found.p_difference,
        "margin": found.margin, "p equivalent": found.p_equivalent,
        "components": found.components,
    }  # fmt: skip
