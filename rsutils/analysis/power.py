"""The power of a replicated comparison: which effects a design of k models × N images detects.

The book compares a method with its control on k independently trained replicate models
and the same N test images (:func:`~rsutils.analysis.differences.replicated_difference`).
A per-image difference is modelled as the crossed design

    d[m, i] = δ + a_m + b_i + e_mi,

with independent parts of variances σ²_models (retraining), σ²_images (which images were
drawn) and σ²_residual (their interaction, Monte Carlo noise of the certificates
included), so that the mean over the table has variance

    Var(d̄) = σ²_models / k + σ²_images / N + σ²_residual / (kN)        (1)

(:meth:`~rsutils.analysis.components.VarianceComponents.variance_of_mean`). Equation
(1) says where a design's power is: images divide σ²_images, only models divide
σ²_models, so adding images cannot beat the floor σ²_models / k, and where σ²_models is
small images are the cheap way to power.

Five questions, each answered by one or two functions:

- :meth:`~rsutils.analysis.components.VarianceComponents.from_differences`: the
  components measured on a table of differences (the method of moments on its mean
  squares, truncated at 0);
- :func:`power_approx`: the chance that the two-sided test at level α/``tests`` (the
  strictest level Holm's correction asks of one comparison in a family of ``tests``)
  finds an effect δ, from (1) and a noncentral Student t at Satterthwaite's degrees of
  freedom; closed form, for planning (:func:`images_for_power`);
- :func:`power_simulated`: the same chance for the book's own test (Banerjee's interval,
  :func:`~rsutils.analysis.differences.crossed_interval`) on simulated normal tables, with
  its Monte Carlo standard error. It is the one to quote beside a verdict: the
  closed form ignores that Banerjee's interval is conservative when the models do not
  vary, and overstates its power most where the residual dominates (0.62 against 0.53
  at 5 × 200 in a test), so a design planned with :func:`images_for_power` is checked
  with this one;
- :func:`comparison_power`: both for every row of a table of comparisons, each at its
  own margin, design and family: what the verdicts beside them could have detected;
- :func:`images_for_simulated_power`: the design that gives the book's own test a
  power, searched with :func:`power_from_mean_squares`, the simulated power drawn
  from a table's grand mean and mean squares instead of the table (the same
  distribution, at a cost that does not grow with the images). Where the closed
  form names a design whose simulated power falls short of the target (the tests
  show one), this search names one that reaches it.

Both assume normal parts; a certified-accuracy difference takes the values −1, 0 and 1,
so they are planning figures, not guarantees.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pandas as pd
from scipy.stats import nct, norm
from scipy.stats import t as student

from rsutils.analysis.components import VarianceComponents, check_design
from rsutils.analysis.differences import (
    CrossedInterval,
    crossed_interval,
    interval_from_mean_squares,
)
from rsutils.core.streams import derived_seed

__all__ = [
    "MOST_IMAGES",
    "NORMAL_DF",
    "comparison_power",
    "images_for_power",
    "images_for_simulated_power",
    "power_approx",
    "power_from_mean_squares",
    "power_simulated",
    "simulated_differences",
]


#: The most images a design search tries (:func:`images_for_power`,
#: :func:`images_for_simulated_power`): a design that needs more is answered ``None``.
MOST_IMAGES = 100_000

#: The degrees of freedom beyond which :func:`power_approx` reads the normal for the t.
NORMAL_DF = 10_000


def _check_test(alpha: float, tests: int) -> float:
    if not 0 < alpha < 1 or tests < 1:
        raise ValueError(f"need 0 < alpha < 1 and tests ≥ 1, got alpha={alpha}, tests={tests}")
    return alpha / tests


def power_approx(
    effect: float,
    components: VarianceComponents,
    *,
    models: int,
    images: int,
    alpha: float = 0.05,
    tests: int = 1,
) -> float:
    """The chance that the two-sided t test at level ``alpha / tests`` rejects δ = 0 when
    the true mean difference is ``effect``: ``P(|T| > t(1 − a/2))`` for T noncentral t with
    noncentrality ``effect / sqrt(Var)`` (equation (1)) on Satterthwaite's degrees of
    freedom (:meth:`~rsutils.analysis.components.VarianceComponents.degrees_of_freedom`).
    At ``effect`` 0 it is the level ``alpha / tests`` itself. Beyond
    :data:`NORMAL_DF` degrees of freedom the t is the normal (scipy's noncentral t
    returns nan there for large noncentralities; the two differ by less than 10⁻³);
    below it, a tail that scipy returns as nan (far from the noncentrality, at any
    degrees of freedom) is read from the normal."""
    level = _check_test(alpha, tests)
    variance = components.variance_of_mean(models, images)
    if variance == 0:
        return 1.0 if effect != 0 else level
    df = components.degrees_of_freedom(models, images)
    shift = effect / math.sqrt(variance)
    if df > NORMAL_DF:
        critical = norm.ppf(1 - level / 2)
        return float(norm.sf(critical - shift) + norm.cdf(-critical - shift))
    critical = student.ppf(1 - level / 2, df)
    upper, lower = nct.sf(critical, df, shift), nct.cdf(-critical, df, shift)
    # scipy's noncentral t returns nan for some far tails (e.g. cdf(-3.3, 50, 20),
    # whose value is below 1e-80); the normal's tail stands in for such a term
    if math.isnan(upper):
        upper = norm.sf(critical - shift)
    if math.isnan(lower):
        lower = norm.cdf(-critical - shift)
    return float(upper + lower)


def simulated_differences(
    effect: float, components: VarianceComponents, shape: tuple[int, int, int], *, seed: int = 0
) -> np.ndarray:
    """``draws × models × images`` (``shape``) tables of differences drawn from the
    module's model: ``effect`` plus a normal part per model (shared by its images), per
    image (shared by the models) and per cell, of the variances of ``components``.
    Deterministic for a given ``seed`` (its ``"power"`` stream of
    :data:`~rsutils.core.streams.STREAMS`)."""
    draws, models, images = shape
    check_design(models, images)
    if draws < 1:
        raise ValueError(f"draws must be ≥ 1, got {draws}")
    rng = np.random.default_rng(derived_seed(seed, 0, "power"))
    return (
        effect
        + math.sqrt(components.models) * rng.standard_normal((draws, models, 1))
        + math.sqrt(components.images) * rng.standard_normal((draws, 1, images))
        + math.sqrt(components.residual) * rng.standard_normal(shape)
    )


def power_simulated(
    effect: float,
    components: VarianceComponents,
    *,
    models: int,
    images: int,
    alpha: float = 0.05,
    tests: int = 1,
    draws: int = 2000,
    seed: int = 0,
) -> tuple[float, float]:
    """The power of the book's own test and its Monte Carlo standard error: the share of
    ``draws`` normal tables of the design (mean ``effect``, the three parts of
    ``components``) whose Banerjee interval at confidence ``1 − alpha / tests``
    (:func:`~rsutils.analysis.differences.crossed_interval`, the interval every verdict
    reads) excludes 0. Deterministic for a given ``seed``."""
    level = _check_test(alpha, tests)
    table = simulated_differences(effect, components, (draws, models, images), seed=seed)
    found = crossed_interval(table, confidence=1 - level)
    rejects = _rejects(found)
    share = float(rejects.mean())
    return share, math.sqrt(share * (1 - share) / draws)


def images_for_power(
    effect: float,
    components: VarianceComponents,
    *,
    models: int,
    power: float = 0.8,
    alpha: float = 0.05,
    tests: int = 1,
    most: int = MOST_IMAGES,
) -> int | None:
    """The fewest images at which :func:`power_approx` reaches ``power`` with ``models``
    models, or ``None`` when ``most`` images do not (the models' part σ²_models / k is a
    floor that no number of images lowers)."""

    def found(n: int) -> float:
        return power_approx(effect, components, models=models, images=n, alpha=alpha, tests=tests)

    return _fewest_images(found, power, most)


def power_from_mean_squares(
    effect: float,
    components: VarianceComponents,
    *,
    models: int,
    images: int,
    alpha: float = 0.05,
    tests: int = 1,
    draws: int = 4000,
    seed: int = 0,
) -> float:
    """:func:`power_simulated`'s chance, drawn without the tables: under the module's
    normal model a k × N table's grand mean and its three mean squares are independent,
    the mean normal about ``effect`` with variance (1), MSA a scaled χ²_(k−1) of mean
    σ²_residual + N σ²_models, MSB a scaled χ²_(N−1) of mean σ²_residual + k σ²_images,
    MSE a scaled χ²_((k−1)(N−1)) of mean σ²_residual, and Banerjee's interval reads
    nothing else (:func:`~rsutils.analysis.differences.interval_from_mean_squares`).
    The same distribution as the tables', at a cost that does not grow with the images,
    for searching over designs (:func:`images_for_simulated_power`)."""
    level = _check_test(alpha, tests)
    check_design(models, images)
    k, n, parts = models, images, components
    rng = np.random.default_rng(derived_seed(seed, 1, "power"))

    def scaled_chi2(mean: float, df: int) -> np.ndarray:
        return mean * rng.chisquare(df, draws) / df if df > 0 else np.zeros(draws)

    spread = math.sqrt(parts.variance_of_mean(k, n))
    mean = effect + spread * rng.standard_normal(draws)
    if k == 1:  # one model: MSB is the images' sample variance
        msb = scaled_chi2(parts.images + parts.residual, n - 1)
        msa = mse = np.zeros(draws)
    else:
        msa = scaled_chi2(parts.residual + n * parts.models, k - 1)
        msb = scaled_chi2(parts.residual + k * parts.images, n - 1)
        mse = scaled_chi2(parts.residual, (k - 1) * (n - 1))
    found = interval_from_mean_squares(
        mean, msa, msb, mse, models=k, images=n, confidence=1 - level
    )
    return float(_rejects(found).mean())


def _rejects(found: CrossedInterval) -> np.ndarray:
    """Where an interval excludes 0: the book's test rejects no difference."""
    return (found.low > 0) | (found.high < 0)


def images_for_simulated_power(
    effect: float,
    components: VarianceComponents,
    *,
    models: int,
    power: float = 0.8,
    alpha: float = 0.05,
    tests: int = 1,
    draws: int = 4000,
    seed: int = 0,
) -> int | None:
    """:func:`images_for_power` for the book's own test: the fewest images at which
    :func:`power_from_mean_squares` reaches ``power``, or ``None`` when
    :data:`MOST_IMAGES` do not. The closed form overstates the power of Banerjee's
    interval where the models do not vary, so it can name a design that falls short.
    Each design is simulated from the same seed; the answer is good to the Monte Carlo
    error of the power there (sqrt(p(1 − p)/draws), 0.006 at 80% and 4,000 draws)."""
    test = {"alpha": alpha, "tests": tests, "draws": draws, "seed": seed}

    def found(n: int) -> float:
        return power_from_mean_squares(effect, components, models=models, images=n, **test)

    return _fewest_images(found, power, MOST_IMAGES)


def _fewest_images(found: Callable[[int], float], power: float, most: int) -> int | None:
    """The fewest images n in [2, ``most``] with ``found(n) ≥ power`` by bisection (the
    power rises with the images), or ``None`` when ``most`` do not reach it."""
    if not 0 < power < 1:
        raise ValueError(f"power must lie in (0, 1), got {power}")
    if found(most) < power:
        return None
    low, high = 2, most
    while low < high:
        middle = (low + high) // 2
        low, high = (low, middle) if found(middle) >= power else (middle + 1, high)
    return low


def comparison_power(
    table: pd.DataFrame,
    *,
    effects: pd.Series | float | None = None,
    alpha: float = 0.05,
    power: float = 0.8,
    draws: int = 2000,
    seed: int = 0,
) -> pd.DataFrame:
    """The power of each comparison of ``table`` (rows of
    :func:`~rsutils.analysis.differences.replicated_comparisons`, with their
    ``components``, ``models``, ``images`` and ``tests``) against an effect of each
    row's ``margin`` (or ``effects``): :func:`power_simulated` of the row's own design
    at Holm's strictest level ``alpha / tests``, so the chance that this design finds a
    difference of the smallest size that matters, in this family. Columns ``effect``,
    ``power``, ``power se`` (Monte Carlo) and ``images for power`` (:func:`images_for_power`
    at ``power`` with the row's models; ``None`` where no number of images suffices).
    A row whose components are all 0 (no spread seen: every image agreed) has power
    ``nan``: its variance, and so its power, is unknown.
    """
    missing = {"components", "models", "images", "tests", "margin"} - set(table.columns)
    if missing:
        raise ValueError(
            f"the table lacks {sorted(missing)}: pass rows of replicated_comparisons "
            "judged with a margin"
        )
    wanted = table["margin"] if effects is None else effects
    wanted = pd.Series(wanted, index=table.index, dtype=float)
    rows = [
        _row_power(row, effect, alpha=alpha, power=power, draws=draws, seed=seed)
        for (_, row), effect in zip(table.iterrows(), wanted, strict=True)
    ]
    return pd.DataFrame(rows, index=table.index)


def _row_power(
    row: pd.Series, effect: float, *, alpha: float, power: float, draws: int, seed: int
) -> dict[str, object]:
    parts, models, images = row["components"], int(row["models"]), int(row["images"])
    if parts.variance_of_mean(models, images) == 0:
        return {"effect": effect, "power": math.nan, "power se": math.nan, "images for power": None}
    test = {"alpha": alpha, "tests": int(row["tests"])}
    found, se = power_simulated(
        effect, parts, models=models, images=images, draws=draws, seed=seed, **test
    )
    needed = images_for_power(effect, parts, models=models, power=power, **test)
    return {"effect": effect, "power": found, "power se": se, "images for power": needed}
