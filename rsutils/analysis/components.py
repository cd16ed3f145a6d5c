"""The variance components of a difference over replicate models × images.

The book's comparisons are crossed designs: ``k`` independently trained models per
method, each certified on the same ``N`` test images. A per-(model, image) difference
is modelled as ``d[m, i] = δ + a[m] + b[i] + e[m, i]``, with independent model effects
``a`` (variance σ²_models), image effects ``b`` (σ²_images) and interactions ``e``
(σ²_residual, the certificates' Monte Carlo noise included). The mean squares of the
two-way crossed analysis of variance without replication (:func:`mean_squares`) have
E[MSA] = σ²_residual + N σ²_models, E[MSB] = σ²_residual + k σ²_images and
E[MSE] = σ²_residual; :class:`VarianceComponents` estimates the three variances from
them, and :mod:`rsutils.analysis.differences` (the interval) and
:mod:`rsutils.analysis.power` (which effects a design detects) read them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["VarianceComponents", "check_design", "mean_squares"]


def check_design(models: int, images: int) -> None:
    """Refuse a design of fewer than one model or two images, naming both counts."""
    if models < 1 or images < 2:
        raise ValueError(f"a design needs ≥ 1 model and ≥ 2 images, got {models} × {images}")


@dataclass(frozen=True)
class VarianceComponents:
    """The variances of the three parts of a difference d[m, i] = δ + a_m + b_i + e_mi
    over k models × N images: σ²_models (retraining), σ²_images (which images were
    drawn) and σ²_residual (their interaction, the certificates' Monte Carlo noise
    included); :mod:`rsutils.analysis.power` asks which effects a design detects from
    them.

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
        _, msa, msb, mse = (float(v) for v in mean_squares(d))
        return cls(models=max((msa - mse) / n, 0.0), images=max((msb - mse) / k, 0.0), residual=mse)

    def variance_of_mean(self, models: int, images: int) -> float:
        """The variance of the mean over ``models`` × ``images``:
        σ²_models / k + σ²_images / N + σ²_residual / (kN)."""
        check_design(models, images)
        k, n = models, images
        return self.models / k + self.images / n + self.residual / (k * n)

    def degrees_of_freedom(self, models: int, images: int) -> float:
        """Satterthwaite's degrees of freedom of the estimate of :meth:`variance_of_mean`
        through the mean squares (MSA on k − 1, MSB on N − 1, MSE on (k − 1)(N − 1));
        N − 1 with one model."""
        check_design(models, images)
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


def mean_squares(d: np.ndarray) -> tuple[np.ndarray, ...]:
    """The grand mean and the mean squares of ``d`` (…, k, N), k ≥ 2: between models
    (MSA, on k − 1 degrees of freedom), between images (MSB, on N − 1) and residual
    (MSE, on (k − 1)(N − 1)), arrays over the leading axes."""
    k, n = d.shape[-2:]
    mean = d.mean(axis=(-2, -1))
    per_model, per_image = d.mean(axis=-1), d.mean(axis=-2)
    msa = n * ((per_model - mean[..., None]) ** 2).sum(-1) / (k - 1)
    msb = k * ((per_image - mean[..., None]) ** 2).sum(-1) / (n - 1)
    residual = d - per_model[..., :, None] - per_image[..., None, :] + mean[..., None, None]
    mse = (residual**2).sum((-2, -1)) / ((k - 1) * (n - 1))
    return mean, msa, msb, mse
