"""Noise families for randomized smoothing.

One abstraction serves training (data augmentation), prediction and certification:
a family knows how to fill a tensor in place with i.i.d. draws from a seeded
``torch.Generator`` on any device, and which certified radius it supports for each
threat norm (through :mod:`rsutils.radius`).

The scale parameter of every family is called ``scale`` (``sigma`` for the Gaussian,
``lambda`` in the papers for the others), so code that tunes or learns the noise
level can treat all families alike.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from typing import ClassVar

import numpy as np
import torch

from rsutils import radius as _radius

__all__ = ["FAMILIES", "Gaussian", "Laplace", "NoiseFamily", "UniformCube", "make_noise"]


def _check_scale(name: str, value: float) -> float:
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a positive number, got {value!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise ValueError(
            f"{name} must be a positive finite number, got {value!r}; "
            f"pass e.g. {name}=0.25 (noise scale in input units, inputs in [0, 1])"
        )
    return value


class NoiseFamily(ABC):
    """An isotropic, zero-mean noise distribution with one scale parameter.

    Subclasses set ``family`` (the key used by the radius registry) and
    ``default_norm`` (the threat norm whose certificate they are known for), and
    implement :meth:`sample_`.
    """

    family: ClassVar[str]
    default_norm: ClassVar[str]

    def __init__(self, scale: float) -> None:
        self.scale = _check_scale("scale", scale)

    @abstractmethod
    def sample_(self, out: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        """Fill ``out`` in place with i.i.d. draws and return it.

        ``generator`` must live on ``out``'s device. Calling this twice with the
        same generator state and the same ``out`` shape gives identical values.
        """

    def sample(
        self,
        shape: tuple[int, ...],
        generator: torch.Generator,
        *,
        dtype: torch.dtype = torch.float32,
    ) -> torch.Tensor:
        """Return a new tensor of draws on the generator's device."""
        out = torch.empty(shape, dtype=dtype, device=generator.device)
        return self.sample_(out, generator)

    def radius(
        self,
        pA_lower: float | np.ndarray,
        pB_upper: float | np.ndarray | None = None,
        *,
        norm: str | None = None,
        dim: int | None = None,
    ) -> np.ndarray:
        """Certified radius for this noise at ``pA_lower`` (see :mod:`rsutils.radius`).

        ``pB_upper`` defaults to ``1 - pA_lower`` (Cohen et al.'s CERTIFY);
        ``norm`` defaults to ``default_norm``; ``dim`` is the input dimension,
        needed only by certificates that depend on it (e.g. Gaussian against ℓ∞).
        """
        return _radius.certified_radius(
            self.family,
            norm or self.default_norm,
            pA_lower,
            pB_upper,
            scale=self.scale,
            dim=dim,
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._scale_name}={self.scale:g})"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.scale == self.scale  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.scale))

    _scale_name: ClassVar[str] = "scale"


class Gaussian(NoiseFamily):
    """Isotropic Gaussian noise N(0, sigma² I) (Cohen et al., 2019)."""

    family = "gaussian"
    default_norm = "l2"
    _scale_name = "sigma"

    def __init__(self, sigma: float) -> None:
        self.scale = _check_scale("sigma", sigma)

    @property
    def sigma(self) -> float:
        return self.scale

    def sample_(self, out: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        return out.normal_(0.0, self.scale, generator=generator)


class Laplace(NoiseFamily):
    """I.i.d. Laplace noise with density ∝ exp(-‖z‖₁ / scale) (Teng et al., 2020)."""

    family = "laplace"
    default_norm = "l1"

    def sample_(self, out: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        # Inverse CDF: u ~ U[-1, 1), |z| = -scale·log(1 - |u|), sign(z) = sign(u).
        # |u| is clamped below 1 so that u = -1 (possible with U[-1, 1)) stays finite.
        u = out.uniform_(-1.0, 1.0, generator=generator)
        sign = torch.sign(u)
        top = 1.0 - torch.finfo(out.dtype).eps
        magnitude = u.abs_().clamp_(max=top).neg_().log1p_().mul_(-self.scale)
        return magnitude.mul_(sign)


class UniformCube(NoiseFamily):
    """Uniform noise on the cube [-scale, scale]^d (Yang et al., 2020)."""

    family = "uniform"
    default_norm = "l1"
    _scale_name = "half_width"

    def __init__(self, half_width: float) -> None:
        self.scale = _check_scale("half_width", half_width)

    def sample_(self, out: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        return out.uniform_(-self.scale, self.scale, generator=generator)


#: Family name (as used by the radius registry and the CLI) → class.
FAMILIES: dict[str, type[NoiseFamily]] = {
    "gaussian": Gaussian,
    "laplace": Laplace,
    "uniform": UniformCube,
}


def make_noise(family: str, scale: float) -> NoiseFamily:
    """The noise family called ``family`` with scale parameter ``scale``."""
    try:
        cls = FAMILIES[family]
    except KeyError:
        raise ValueError(
            f"unknown noise family {family!r}; choose one of {sorted(FAMILIES)}"
        ) from None
    return cls(scale)
