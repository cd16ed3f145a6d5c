"""Linear binary classifiers: the case where everything is known in closed form.

For ``f(x) = 1[w·x + b > 0]`` and Gaussian noise N(0, σ²I), ``w·(x+ε) + b`` is normal
with mean ``w·x + b`` and standard deviation ``σ‖w‖``, so the smoothed classifier agrees
with f, ``P(f(x+ε) = f(x)) = Φ(d/σ)`` with ``d = abs(w·x + b)/‖w‖`` the distance to the
decision boundary, and Theorem 1's radius ``σΦ⁻¹(pA)`` is exactly d (Cohen et al.,
Appendix B).

With anisotropic Gaussian noise ``mu + sigma ⊙ ε`` (ε ~ N(0, I)) the score is normal
with mean ``w·(x + mu) + b`` and standard deviation ``‖sigma ⊙ w‖``, so
``P(f = 1) = Φ((w·(x + mu) + b)/‖sigma ⊙ w‖)``. UCAN's region ``‖δ ⊘ sigma‖₂ < R`` with
``R = Φ⁻¹(pA)`` is then exact: the perturbation that reaches the decision boundary with
the smallest ``‖δ ⊘ sigma‖₂`` has ``δ ⊘ sigma ∝ sigma ⊙ w`` and scaled norm exactly ``R``.
"""

from __future__ import annotations

import torch
from scipy.stats import norm as _std_normal
from torch import nn

__all__ = ["LinearClassifier"]


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
