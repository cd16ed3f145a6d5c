"""Classifiers whose smoothed probabilities are known in closed form.

They let the tests and the book check certificates exactly, without trusting the
Monte Carlo code they check:

- :class:`LinearClassifier`, ``f(x) = 1[w·x + b > 0]``. Under Gaussian noise
  N(0, σ²I), ``w·(x+ε) + b`` is normal with mean ``w·x + b`` and standard deviation
  ``σ‖w‖``, so the smoothed classifier agrees with f, ``P(f(x+ε) = f(x)) = Φ(d/σ)``
  with ``d = |w·x + b|/‖w‖`` the distance to the decision boundary, and Theorem 1's
  radius ``σΦ⁻¹(pA)`` is exactly d (Cohen et al., Appendix B). With anisotropic
  Gaussian noise ``mu + sigma ⊙ ε`` the score is normal with mean ``w·(x + mu) + b``
  and standard deviation ``‖sigma ⊙ w‖``, so ``P(f = 1) = Φ((w·(x + mu) + b)/‖sigma ⊙
  w‖)``, and UCAN's region ``‖δ ⊘ sigma‖₂ < R`` with ``R = Φ⁻¹(pA)`` is exact: the
  perturbation that reaches the decision boundary with the smallest ``‖δ ⊘ sigma‖₂``
  has ``δ ⊘ sigma ∝ sigma ⊙ w`` and scaled norm exactly ``R``.
- :class:`ProbitBand`, a soft two-class classifier of a band ``|w·x| < a``, whose
  expected softmax under Gaussian or uniform noise is exact, so the optimal noise
  level of each input (the target of sigma ascent) can be computed with SciPy.
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

__all__ = ["Disk", "LinearClassifier", "ProbitBand"]


class LinearClassifier(nn.Module):
    """f(x) = 1[w·x + b > 0] as a two-class logit model (inputs of any shape)."""

    def __init__(self, w: torch.Tensor, b: float = 0.0) -> None:
        super().__init__()
        w = torch.as_tensor(w, dtype=torch.float64).flatten()
        if not bool(torch.isfinite(w).all()) or float(w.norm()) == 0.0:
            raise ValueError("w must be a finite, non-zero weight vector")
        self.register_buffer("w", w)
        self.b = float(b)
        self.eval()  # no train-time behaviour; ready for Smooth as constructed

    def score(self, x: torch.Tensor) -> torch.Tensor:
        """w·x + b for a batch (or one input)."""
        flat = x.reshape(-1, self.w.numel()).to(self.w.dtype)
        return flat @ self.w + self.b

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits ``(-s, s)`` with ``s = w·x + b``: class 1 exactly when s > 0."""
        s = self.score(x)
        return torch.stack([-s, s], dim=1)

    def label(self, x: torch.Tensor) -> int:
        """f(x) for one input."""
        return int(self.score(x).item() > 0)

    def distance(self, x: torch.Tensor) -> float:
        """ℓ2 distance from one input to the decision boundary."""
        return abs(self.score(x).item()) / float(self.w.norm())

    def smoothed_pA(self, x: torch.Tensor, sigma: float) -> float:
        """Exact P(f(x + ε) = f(x)) under ε ~ N(0, σ²I)."""
        return float(_std_normal.cdf(self.distance(x) / sigma))

    def point_at_distance(self, distance: float, side: int = 1) -> torch.Tensor:
        """A float32 point at ℓ2 ``distance`` from the boundary, labelled 1 if ``side`` > 0."""
        unit = self.w / self.w.norm()
        on_boundary = -self.b * unit / self.w.norm()
        return (on_boundary + (1 if side > 0 else -1) * distance * unit).float()

    def anisotropic_probability(
        self, x: torch.Tensor, sigma: torch.Tensor, mu: torch.Tensor | None = None
    ) -> float:
        """Exact ``P(f(x + mu + sigma ⊙ ε) = 1)`` for ε ~ N(0, I)."""
        return float(_std_normal.cdf(self._anisotropic_margin(x, sigma, mu)))

    def anisotropic_region_radius(
        self, x: torch.Tensor, sigma: torch.Tensor, mu: torch.Tensor | None = None
    ) -> float:
        """Exact R of the region ``‖δ ⊘ sigma‖₂ < R`` where the smoothed class is constant.

        Equals ``Φ⁻¹(pA)`` for ``pA`` the probability of the smoothed class.
        """
        return abs(self._anisotropic_margin(x, sigma, mu))

    def anisotropic_worst_perturbation(
        self, x: torch.Tensor, sigma: torch.Tensor, mu: torch.Tensor | None = None
    ) -> torch.Tensor:
        """The δ on the smoothed decision boundary with the smallest ``‖δ ⊘ sigma‖₂``."""
        sw = self._flat(sigma) * self.w
        score = float(self.score(x + (0 if mu is None else mu)).item())
        delta = -score * self._flat(sigma) * sw / float(sw @ sw)
        return delta.reshape(x.shape)

    def _anisotropic_margin(
        self, x: torch.Tensor, sigma: torch.Tensor, mu: torch.Tensor | None
    ) -> float:
        shifted = x if mu is None else x + mu
        return float(self.score(shifted).item()) / float((self._flat(sigma) * self.w).norm())

    def _flat(self, tensor: torch.Tensor) -> torch.Tensor:
        flat = torch.as_tensor(tensor, dtype=torch.float64).reshape(-1)
        return flat.expand(self.w.numel()) if flat.numel() == 1 else flat

    def worst_direction(self, x: torch.Tensor) -> torch.Tensor:
        """Unit vector (shaped like ``x``) pointing straight at the decision boundary."""
        sign = 1.0 if self.score(x).item() > 0 else -1.0
        return (-sign * self.w / self.w.norm()).reshape(x.shape).to(x.dtype)


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
        :func:`rsutils.core.confidence.max_certifiable_pA`), without it the radius is infinite
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
