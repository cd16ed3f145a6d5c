"""The power of a replicated comparison: which effects a design of k models × N images detects.

The book compares a method with its control on k independently trained replicate models
and the same N test images (:func:`~rsutils.analysis.differences.replicated_difference`).
A per-image difference is modelled as the crossed design

    d[m, i] = δ + a_m + b_i + e_mi,

with independent parts of variances σ²_models (retraining), σ²_images (which images were
drawn) and σ²_residual (their interaction, Monte Carlo noise of the certificates
included), so that the mean over the table has variance

    Var(d̄) = σ²_models / k + σ²_images / N + σ²_residual / (kN)        (1)

(:meth:`VarianceComponents.variance_of_mean`). Equation (1) says where a design's power
is: images divide σ²_images, only models divide σ²_models, so adding images cannot beat
the floor σ²_models / k, and where σ²_models is small images are the cheap way to power.

Three questions, each answered by one function:

- :meth:`VarianceComponents.from_differences`: the components measured on a table of
  differences (the method of moments on its mean squares, truncated at 0);
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
  with this one.

Both assume normal parts; a certified-accuracy difference takes the values −1, 0 and 1,
so they are planning figures, not guarantees.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import nct
from scipy.stats import t as student

from rsutils.analysis.differences import crossed_interval
from rsutils.core.streams import derived_seed

__all__ = [
    "VarianceComponents",
    "images_for_power",
    "power_approx",
    "power_simulated",
    "simulated_differences",
]


@dataclass(frozen=True)
class VarianceComponents:
    """The variances of the three parts of a difference (model, image, residual).

    Guarantee: every component is finite and ≥ 0 (a negative one is refused).
    """

    models: float
    images: float
    residual: float

    def __post_init__(self) -> None:
        for name in ("models", "images", "residual"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0):
                raise ValueError(f"the {name} variance must be a finite number ≥ 0, got {value}")

    @classmethod
    def from_differences(cls, differences: np.ndarray) -> VarianceComponents:
        """The components of a table of differences (``models × images``) by the method of
        moments: E[MSA] = σ²_e + N σ²_a, E[MSB] = σ²_e + k σ²_b, E[MSE] = σ²_e, each
        estimate truncated at 0. With one model the model and residual parts cannot be
        told apart from the images': all the variance is given to the images."""
        d = np.asarray(differences, dtype=float)
        if d.ndim != 2 or d.shape[1] < 2:
            raise ValueError(
                f"differences must be a models × images table with ≥ 2 images, got {d.shape}"
            )
        k, n = d.shape
        if k == 1:
            return cls(models=0.0, images=float(d[0].var(ddof=1)), residual=0.0)
        mean, per_model, per_image = d.mean(), d.mean(axis=1), d.mean(axis=0)
        msa = n * ((per_model - mean) ** 2).sum() / (k - 1)
        msb = k * ((per_image - mean) ** 2).sum() / (n - 1)
        residual = d - per_model[:, None] - per_image[None, :] + mean
        mse = (residual**2).sum() / ((k - 1) * (n - 1))
        return cls(models=max((msa - mse) / n, 0.0), images=max((msb - mse) / k, 0.0), residual=mse)

    def variance_of_mean(self, models: int, images: int) -> float:
        """Equation (1) of the module: the variance of the mean over ``models`` × ``images``."""
        _check_design(models, images)
        k, n = models, images
        return self.models / k + self.images / n + self.residual / (k * n)

    def degrees_of_freedom(self, models: int, images: int) -> float:
        """Satterthwaite's degrees of freedom of the variance estimate of (1) through the
        mean squares (MSA on k − 1, MSB on N − 1, MSE on (k − 1)(N − 1)); N − 1 with one
        model."""
        _check_design(models, images)
        k, n = models, images
        if k == 1:
            return float(n - 1)
        e = self.residual
        msa, msb = e + n * self.models, e + k * self.images  # expected mean squares
        terms = ((msa, k - 1), (msb, n - 1), (-e, (k - 1) * (n - 1)))
        total = sum(value for value, _ in terms)
        if total <= 0:
            return float(k - 1)
        return total**2 / sum(value**2 / df for value, df in terms)


def _check_design(models: int, images: int) -> None:
    if models < 1 or images < 2:
        raise ValueError(f"a design needs ≥ 1 model and ≥ 2 images, got {models} × {images}")


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
    freedom (:meth:`VarianceComponents.degrees_of_freedom`). At ``effect`` 0 it is the
    level ``alpha / tests`` itself."""
    level = _check_test(alpha, tests)
    variance = components.variance_of_mean(models, images)
    if variance == 0:
        return 1.0 if effect != 0 else level
    df = components.degrees_of_freedom(models, images)
    critical = student.ppf(1 - level / 2, df)
    shift = effect / math.sqrt(variance)
    return float(nct.sf(critical, df, shift) + nct.cdf(-critical, df, shift))


def simulated_differences(
    effect: float, components: VarianceComponents, shape: tuple[int, int, int], *, seed: int = 0
) -> np.ndarray:
    """``draws × models × images`` (``shape``) tables of differences drawn from the
    module's model: ``effect`` plus a normal part per model (shared by its images), per
    image (shared by the models) and per cell, of the variances of ``components``.
    Deterministic for a given ``seed`` (its ``"power"`` stream of
    :data:`~rsutils.core.streams.STREAMS`)."""
    draws, models, images = shape
    _check_design(models, images)
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
    rejects = (found.low > 0) | (found.high < 0)
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
    most: int = 100_000,
) -> int | None:
    """The fewest images at which :func:`power_approx` reaches ``power`` with ``models``
    models, or ``None`` when ``most`` images do not (the models' part σ²_models / k is a
    floor that no number of images lowers)."""
    if not 0 < power < 1:
        raise ValueError(f"power must lie in (0, 1), got {power}")

    def enough(n: int) -> bool:
        found = power_approx(effect, components, models=models, images=n, alpha=alpha, tests=tests)
        return found >= power

    if not enough(most):
        return None
    low, high = 2, most
    while low < high:  # power rises with the images: the first n that has enough
        middle = (low + high) // 2
        low, high = (low, middle) if enough(middle) else (middle + 1, high)
    return low
