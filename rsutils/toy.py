"""Low-dimensional classifiers whose smoothed probabilities are known in closed form.

They let the book and the tests check data-dependent smoothing exactly:

- :class:`ProbitBand`, a soft two-class classifier of a band ``|w·x| < a``, whose
  expected softmax under Gaussian or uniform noise is exact, so the optimal noise
  level of each input (the target of sigma ascent) can be computed with SciPy;
- :class:`Disk`, the hard classifier "inside the disk of radius ``a`` about the
  origin", whose Gaussian-smoothed probabilities follow a non-central χ²
  distribution, so certified radii with an input-dependent sigma are exact.
"""

from __future__ import annotations

import numpy as np
import torch
from scipy import optimize
from scipy.stats import ncx2
from scipy.stats import norm as _std_normal
from torch import nn

__all__ = ["Disk", "ProbitBand"]


def _phi_integral(z: np.ndarray) -> np.ndarray:
    """An antiderivative of Φ: ∫Φ = zΦ(z) + φ(z)."""
    return z * _std_normal.cdf(z) + _std_normal.pdf(z)


class ProbitBand(nn.Module):
    """Class 0 ("in the band") with probability Φ((a − t)/τ) − Φ((−a − t)/τ), t = w·x.

    ``forward`` returns log-probabilities, so its softmax is exactly this soft
    classifier. ``w`` must have unit norm (then t is the signed distance along w).
    """

    def __init__(self, w: torch.Tensor, half_width: float, temperature: float) -> None:
        super().__init__()
        w = torch.as_tensor(w, dtype=torch.float64).flatten()
        if abs(float(w.norm()) - 1.0) > 1e-12:
            raise ValueError("w must have unit norm")
        self.register_buffer("w", w)
        self.a, self.tau = float(half_width), float(temperature)
        self.eval()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Log-probabilities ``(B, 2)`` of class 0 (in the band) and class 1."""
        t = x.reshape(x.shape[0], -1).to(self.w.dtype) @ self.w
        normal = torch.distributions.Normal(0.0, 1.0)
        inside = normal.cdf((self.a - t) / self.tau) - normal.cdf((-self.a - t) / self.tau)
        inside = inside.clamp(1e-300, 1.0)
        return torch.stack([inside.log(), (-inside).log1p()], dim=1).to(x.dtype)

    def expected_inside(self, t: float, scale: float, family: str = "gaussian") -> float:
        """E[class-0 probability] at ``x`` with ``w·x = t`` under the noise at ``scale``."""
        if family == "gaussian":
            s = np.hypot(self.tau, scale)  # w·ε ~ N(0, scale²) since ‖w‖ = 1
            return float(_std_normal.cdf((self.a - t) / s) - _std_normal.cdf((-self.a - t) / s))
        if family == "uniform":  # w·ε is uniform on [-scale, scale] only when w is an axis
            if int((self.w != 0).sum()) != 1:
                raise ValueError("the uniform closed form needs w along one coordinate axis")

            def mean_cdf(edge: float) -> float:
                upper, lower = (edge - t + scale) / self.tau, (edge - t - scale) / self.tau
                return float(self.tau / (2 * scale) * (_phi_integral(upper) - _phi_integral(lower)))

            return mean_cdf(self.a) - mean_cdf(-self.a)
        raise ValueError(f"family must be 'gaussian' or 'uniform', got {family!r}")

    def surrogate(self, t: float, scale: float, family: str = "gaussian") -> float:
        """The exact surrogate radius of DDRS at this scale (two classes: E_B = 1 − E_A)."""
        e_a = self.expected_inside(t, scale, family)
        if family == "gaussian":
            return float(scale * _std_normal.ppf(e_a))
        return float(scale * (2 * e_a - 1))

    def optimal_scale(
        self, t: float, family: str = "gaussian", bounds: tuple[float, float] = (1e-3, 5.0)
    ) -> tuple[float, float]:
        """(scale, surrogate radius) maximising the surrogate, by bounded 1-D search."""
        found = optimize.minimize_scalar(
            lambda s: -self.surrogate(t, s, family),
            bounds=bounds,
            method="bounded",
            options={"xatol": 1e-8},
        )
        return float(found.x), float(-found.fun)


class Disk(nn.Module):
    """Class 1 inside the disk ‖x‖₂ < a about the origin, class 0 outside (any dimension)."""

    def __init__(self, radius: float = 1.0) -> None:
        super().__init__()
        self.a = float(radius)
        self.eval()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """One-hot scores ``(B, 2)``: class 1 inside the disk, class 0 outside."""
        inside = x.reshape(x.shape[0], -1).norm(dim=1) < self.a
        return torch.stack([(~inside).to(x.dtype), inside.to(x.dtype)], dim=1)

    def prob_inside(self, x: np.ndarray, sigma: np.ndarray | float) -> np.ndarray:
        """P(‖x + σε‖ < a) for points ``x`` of shape ``(..., d)``: a non-central χ²."""
        x = np.asarray(x, dtype=np.float64)
        sigma = np.asarray(sigma, dtype=np.float64)
        distance2 = np.square(x).sum(axis=-1)
        return ncx2.cdf(self.a**2 / sigma**2, df=x.shape[-1], nc=distance2 / sigma**2)

    def smoothed(
        self, x: np.ndarray, sigma: np.ndarray | float, p_max: float = 1.0
    ) -> tuple[np.ndarray, np.ndarray]:
        """The smoothed class at ``x`` and Theorem 1's radius σΦ⁻¹(min(pA, p_max)).

        ``pB = 1 − pA``; ``p_max`` stands for what a finite sample can certify (e.g.
        :func:`rsutils.bounds.max_certifiable_pA`), without it the radius is infinite
        wherever pA rounds to 1.
        """
        inside = self.prob_inside(x, sigma)
        label = (inside > 0.5).astype(int)
        p_a = np.minimum(np.maximum(inside, 1 - inside), p_max)
        return label, np.asarray(sigma) * _std_normal.ppf(p_a)

    def best_sigma(
        self, x: np.ndarray, sigmas: np.ndarray, p_max: float = 1.0
    ) -> tuple[np.ndarray, np.ndarray]:
        """For each point, the sigma in ``sigmas`` with the largest radius, and that radius.

        The class is kept fixed at the one predicted with the smallest sigma, as in
        DDRS (a sigma that flips the class does not count).
        """
        x = np.asarray(x, dtype=np.float64)
        sigmas = np.asarray(sigmas, dtype=np.float64)
        labels, radii = self.smoothed(x[..., None, :], sigmas, p_max)
        radii = np.where(labels == labels[..., :1], radii, -np.inf)
        best = radii.argmax(axis=-1)
        return sigmas[best], np.take_along_axis(radii, best[..., None], axis=-1)[..., 0]
