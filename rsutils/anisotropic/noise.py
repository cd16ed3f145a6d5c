"""Anisotropic noise ``x + mu + sigma ⊙ eps`` over any isotropic family (UCAN §III).

UCAN's Theorem 2 (universal transformation): if ``eps`` is an isotropic noise whose
certificate against ``‖·‖_p`` is ``R(pA, pB)``, then the smoothed classifier with noise
``mu + sigma ⊙ eps`` (``sigma > 0`` per dimension) is constant on the region

    ``{x + δ : ‖δ ⊘ sigma‖_p < R(pA', pB')}``

where ``pA'``, ``pB'`` bound the class probabilities under the anisotropic noise.
Proof in one line: ``f(x + δ + mu + sigma ⊙ eps) = f'(z + δ ⊘ sigma + eps)`` for the
classifier ``f'(u) = f(sigma ⊙ u + mu)`` and ``z = x ⊘ sigma``, so the isotropic
certificate of ``f'`` applies to the perturbation ``δ ⊘ sigma``. The offset ``mu`` is
part of ``f'`` and does not enter the region; ``sigma`` only rescales it.

The region is a super-ellipsoid with semi-axes ``sigma_i·R``
(:class:`~rsutils.geometry.superellipsoid.SuperEllipsoid`); the ℓp ball inside it has
radius ``min(sigma)·R`` (Corollary 4), and UCAN's ALM is ``(∏ sigma_i)^(1/d)·R``.
:class:`Anisotropic` is a :class:`~rsutils.core.noise.NoiseFamily`, so
:class:`~rsutils.core.smooth.Smooth` uses it like any other noise: ``radius`` is the
guaranteed ℓp radius ``min(sigma)·R``, and the certificate also carries ``R``
(``region_radius``) and the ALM.
"""

from __future__ import annotations

import hashlib
from typing import ClassVar

import numpy as np
import torch

from rsutils.core.noise import NoiseFamily
from rsutils.geometry.superellipsoid import SuperEllipsoid, geometric_mean

__all__ = ["Anisotropic", "certified_region"]


def _as_float64(name: str, value: torch.Tensor | np.ndarray) -> torch.Tensor:
    try:
        tensor = torch.as_tensor(value).detach().to("cpu", torch.float64)
    except (TypeError, ValueError, RuntimeError):
        raise TypeError(f"{name} must be a tensor or array of numbers, got {value!r}") from None
    if tensor.numel() == 0:
        raise ValueError(f"{name} is empty; pass one value per input dimension")
    if not bool(torch.isfinite(tensor).all()):
        raise ValueError(f"{name} contains NaN or infinite values")
    return tensor.contiguous()


class Anisotropic(NoiseFamily):
    """The noise ``mu + sigma ⊙ eps`` with ``eps`` drawn from the isotropic ``base``.

    ``sigma`` (all entries > 0) and ``mu`` (default 0) have the shape of one input, or
    a shape that broadcasts to it (e.g. ``(1, H, W)`` for every channel). The base's
    own scale ``λ`` multiplies ``sigma``: the noise of dimension ``i`` has scale
    ``λ·sigma_i``, as in UCAN's Table I.
    """

    density_latex: ClassVar[str] = ""
    anisotropic: ClassVar[bool] = True

    def __init__(
        self,
        base: NoiseFamily,
        sigma: torch.Tensor | np.ndarray,
        mu: torch.Tensor | np.ndarray | None = None,
    ) -> None:
        if isinstance(base, Anisotropic):
            raise TypeError(
                "base is already anisotropic; multiply the two sigmas and add the mus instead"
            )
        if not isinstance(base, NoiseFamily):
            raise TypeError(f"base must be a noise family such as Gaussian(0.5), got {base!r}")
        sigma64 = _as_float64("sigma", sigma)
        if bool((sigma64 <= 0).any()):
            raise ValueError(
                "sigma must be positive in every dimension (Theorem 2 needs an invertible "
                "scale); add a small constant, e.g. sigma.clamp(min=1e-3)"
            )
        self.base = base
        self.scale = base.scale
        self.sigma = sigma64
        self.mu = None if mu is None else _as_float64("mu", mu)
        if self.mu is not None:
            try:
                torch.broadcast_shapes(self.sigma.shape, self.mu.shape)
            except RuntimeError:
                raise ValueError(
                    f"mu has shape {tuple(self.mu.shape)}, which does not broadcast with sigma's "
                    f"{tuple(self.sigma.shape)}; give both the shape of one input"
                ) from None
        self._on: dict[tuple[torch.device, torch.dtype], tuple[torch.Tensor, torch.Tensor | None]]
        self._on = {}

    # The registry is the base family's; the region is rescaled by sigma.
    @property
    def family(self) -> str:  # type: ignore[override]
        return self.base.family

    @property
    def default_norm(self) -> str:  # type: ignore[override]
        return self.base.default_norm

    @property
    def params(self) -> dict[str, float]:
        return self.base.params

    def _parameters_on(
        self, device: torch.device, dtype: torch.dtype
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        key = (device, dtype)
        if key not in self._on:
            mu = None if self.mu is None else self.mu.to(device, dtype)
            self._on[key] = (self.sigma.to(device, dtype), mu)
        return self._on[key]

    def _check_shape(self, draw_shape: torch.Size) -> None:
        for name, tensor in (("sigma", self.sigma), ("mu", self.mu)):
            if tensor is None:
                continue
            try:
                shape = torch.broadcast_shapes(tensor.shape, draw_shape)
            except RuntimeError:
                shape = None
            if shape != draw_shape:
                raise ValueError(
                    f"{name} has shape {tuple(tensor.shape)} but the input has shape "
                    f"{tuple(draw_shape)}; give {name} the shape of one input"
                )

    def sample_(self, out: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        """Draws of ``mu + sigma ⊙ eps``; the first dimension of ``out`` indexes draws."""
        self._check_shape(out.shape[1:])
        sigma, mu = self._parameters_on(out.device, out.dtype)
        self.base.sample_(out, generator).mul_(sigma)
        return out if mu is None else out.add_(mu)

    def log_density(self, z: np.ndarray) -> np.ndarray:
        """``log p_eps((z − mu) ⊘ sigma)`` up to a constant; ``z`` holds flat draws ``(..., d)``."""
        sigma = self._flat(self.sigma, z.shape[-1])
        mu = 0.0 if self.mu is None else self._flat(self.mu, z.shape[-1])
        return self.base.log_density((z - mu) / sigma)

    def _flat(self, tensor: torch.Tensor, dim: int) -> np.ndarray:
        flat = tensor.numpy().reshape(-1)
        if flat.size == 1:
            return np.full(dim, flat[0])
        if flat.size != dim:
            raise ValueError(f"draws have {dim} numbers but sigma/mu hold {flat.size}")
        return flat

    def full_sigma(self, shape: tuple[int, ...] | torch.Size) -> np.ndarray:
        """``sigma`` broadcast to an input of ``shape``, flattened (float64)."""
        self._check_shape(torch.Size(shape))
        return self.sigma.expand(torch.Size(shape)).reshape(-1).numpy()

    def region_radius(self, pA_lower, pB_upper=None, *, norm=None, dim=None) -> np.ndarray:
        """R of the region ``‖δ ⊘ sigma‖_p < R``: the base family's radius."""
        return self.base.radius(pA_lower, pB_upper, norm=norm, dim=dim)

    def radius(self, pA_lower, pB_upper=None, *, norm=None, dim=None) -> np.ndarray:
        """The ℓp radius guaranteed in every direction: ``min(sigma)·R`` (Corollary 4)."""
        R = self.region_radius(pA_lower, pB_upper, norm=norm, dim=dim)
        return float(self.sigma.min()) * R

    def alm(self, pA_lower, pB_upper=None, *, norm=None, dim=None) -> np.ndarray:
        """UCAN's ALM ``(∏ sigma_i)^(1/d)·R`` over the ``dim`` input dimensions."""
        R = self.region_radius(pA_lower, pB_upper, norm=norm, dim=dim)
        # Broadcasting repeats every entry of sigma equally often, so the geometric mean
        # over the input's d dimensions is that of sigma itself.
        sigma = self.sigma.reshape(-1).numpy()
        return geometric_mean(sigma) * R

    def region(
        self, region_radius: float, shape: tuple[int, ...], norm: str | None = None
    ) -> SuperEllipsoid:
        """The certified region ``‖δ ⊘ sigma‖_p < R`` around an input of ``shape``."""
        return SuperEllipsoid(self.full_sigma(shape), region_radius, norm or self.default_norm)

    def _fingerprint(self) -> str:
        digest = hashlib.sha256(self.sigma.numpy().tobytes())
        digest.update(repr(tuple(self.sigma.shape)).encode())
        if self.mu is not None:
            digest.update(b"mu" + self.mu.numpy().tobytes() + repr(tuple(self.mu.shape)).encode())
        return digest.hexdigest()[:12]

    def __repr__(self) -> str:
        s = self.sigma
        mu = "0" if self.mu is None else f"<{tuple(self.mu.shape)}>"
        return (
            f"Anisotropic({self.base!r}, sigma=<{tuple(s.shape)} min {float(s.min()):.4g} "
            f"max {float(s.max()):.4g}>, mu={mu}, id={self._fingerprint()})"
        )

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Anisotropic)
            and other.base == self.base
            and other._fingerprint() == self._fingerprint()
        )

    def __hash__(self) -> int:
        return hash(("Anisotropic", self.base, self._fingerprint()))


def certified_region(
    noise: NoiseFamily, region_radius: float, shape: tuple[int, ...], norm: str | None = None
) -> SuperEllipsoid:
    """The region a certificate of ``noise`` covers around an input of ``shape``.

    ``region_radius`` is the certificate's ``region_radius``. For anisotropic noise the
    region is the super-ellipsoid ``‖δ ⊘ sigma‖_p < R``; for isotropic noise it is the
    ℓp ball of radius ``R`` (a super-ellipsoid with every ``sigma_i = 1``).
    """
    if isinstance(noise, Anisotropic):
        return noise.region(region_radius, shape, norm)
    ones = np.ones(int(np.prod(shape)))
    return SuperEllipsoid(ones, region_radius, norm or noise.default_norm)
