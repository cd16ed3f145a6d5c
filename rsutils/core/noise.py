"""Noise families for randomized smoothing.

One abstraction serves training (data augmentation), prediction and certification:
a family knows how to fill a tensor in place with i.i.d. draws from a seeded
``torch.Generator`` on any device, and which certified radius it supports for each
threat norm (through :mod:`rsutils.core.radius`).

The scale parameter of every family is called ``scale`` (``sigma`` for the Gaussian,
``lambda`` in the papers for the others), so code that tunes or learns the noise
level can treat all families alike.

Gaussian, Laplace and the uniform cube have independent coordinates. The
exponential-ℓ∞ and power-law-ℓ∞ families (Yang et al., 2020) do not: their density
depends on ``‖z‖∞`` only. Both are mixtures of uniform cubes, ``z = r·u`` with ``u``
uniform on ``[-1, 1]^d`` and a random half-width ``r`` (``r ~ Gamma(d + 1, λ)`` for
the exponential, ``r/λ ~ BetaPrime(d + 1, a − d)`` for the power law; both follow from
writing the density as ``∫ 1[‖z‖∞ ≤ r]/(2r)^d w(r) dr``), so for them the first
dimension of a sampled tensor indexes draws and the rest is one draw of dimension
``d``. The anisotropic wrapper ``x + mu + sigma ⊙ eps`` over any of these families is
:class:`rsutils.anisotropic.noise.Anisotropic`.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from typing import ClassVar

import numpy as np
import torch

from rsutils.core import radius as _radius

__all__ = [
    "FAMILIES",
    "ExponentialLinf",
    "Gaussian",
    "Laplace",
    "NoiseFamily",
    "PowerLawLinf",
    "UniformCube",
    "make_noise",
]


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
    #: The density up to normalisation, in LaTeX, with the scale written ``\lambda``.
    density_latex: ClassVar[str]
    #: Whether a certificate of this noise is a region ``‖δ ⊘ sigma‖_p < region_radius``
    #: rather than a ball (true of :class:`~rsutils.anisotropic.noise.Anisotropic` only),
    #: so that its logs also carry ``region_radius`` and ``alm``.
    anisotropic: ClassVar[bool] = False

    def __init__(self, scale: float) -> None:
        self.scale = _check_scale("scale", scale)

    @property
    def params(self) -> dict[str, float]:
        """Family parameters besides the scale that the radius needs (e.g. ``a``)."""
        return {}

    def log_density(self, z: np.ndarray) -> np.ndarray:
        """Log-density at each row of ``z`` (shape ``(..., d)``), up to an additive constant.

        ``-inf`` outside the support. Used by worst-case checks of the certificates
        (:mod:`rsutils.checks.worst_case`), where the constant cancels. Families of your own
        need it only for those checks.
        """
        raise NotImplementedError(
            f"{type(self).__name__} does not define log_density; add it to run worst-case "
            "checks of its certificates"
        )

    @abstractmethod
    def sample_(self, out: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        """Fill ``out`` in place with draws and return it.

        Draws are i.i.d. along the first dimension of ``out``; the product families
        (Gaussian, Laplace, uniform cube) are i.i.d. in every coordinate, the cube
        mixtures are not.

        ``generator`` must live on ``out``'s device. Calling this twice with the
        same generator state and the same ``out`` shape gives identical values.
        """

    def prepare_input(self, x: torch.Tensor) -> torch.Tensor:
        """What :meth:`perturb_` adds the draws to: ``x`` itself, except for samplers that
        compute on a grid (:class:`~rsutils.core.sound_sampling.SoundGaussian`)."""
        return x

    def charged_pA(self, pA_lower: float, dim: int) -> float:
        """The lower bound on ``p_A`` a certificate may use for an input of ``dim``
        numbers: ``pA_lower`` itself, less what a sampler charges for drawing from a
        distribution other than this family's
        (:class:`~rsutils.core.sound_sampling.SoundGaussian`'s table error)."""
        return pA_lower

    def perturb_(self, noise: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """The base model's inputs from draws ``noise`` (overwritten) and
        ``x = prepare_input(input)``: ``noise + x`` in their dtype, rounded as floats
        round (the plain sampler; not sound in floating point, see
        :mod:`rsutils.core.sound_sampling`)."""
        return noise.add_(x)

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
        """Certified radius for this noise at ``pA_lower`` (see :mod:`rsutils.core.radius`).

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
            **self.params,
        )

    def region_radius(
        self,
        pA_lower: float | np.ndarray,
        pB_upper: float | np.ndarray | None = None,
        *,
        norm: str | None = None,
        dim: int | None = None,
    ) -> np.ndarray:
        """The R of the certified region ``‖δ ⊘ sigma‖_p < R``; for isotropic noise, the radius."""
        return self.radius(pA_lower, pB_upper, norm=norm, dim=dim)

    def alm(
        self,
        pA_lower: float | np.ndarray,
        pB_upper: float | np.ndarray | None = None,
        *,
        norm: str | None = None,
        dim: int | None = None,
    ) -> np.ndarray:
        """UCAN's ALM of the certified region; for isotropic noise it equals the radius."""
        return self.radius(pA_lower, pB_upper, norm=norm, dim=dim)

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

    density_latex = r"e^{-\|z\|_2^2/(2\lambda^2)}"

    def sample_(self, out: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        return out.normal_(0.0, self.scale, generator=generator)

    def log_density(self, z: np.ndarray) -> np.ndarray:
        return -0.5 * np.sum(np.square(z), axis=-1) / self.scale**2


class Laplace(NoiseFamily):
    """I.i.d. Laplace noise with density ∝ exp(-‖z‖₁ / scale) (Teng et al., 2020)."""

    family = "laplace"
    default_norm = "l1"
    density_latex = r"e^{-\|z\|_1/\lambda}"

    def log_density(self, z: np.ndarray) -> np.ndarray:
        return -np.sum(np.abs(z), axis=-1) / self.scale

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

    density_latex = r"\mathbb{1}[\|z\|_\infty \le \lambda]"

    def sample_(self, out: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        return out.uniform_(-self.scale, self.scale, generator=generator)

    def log_density(self, z: np.ndarray) -> np.ndarray:
        inside = np.max(np.abs(z), axis=-1) <= self.scale
        return np.where(inside, 0.0, -np.inf)


def _mixing_rng(generator: torch.Generator) -> np.random.Generator:
    """A NumPy generator seeded from ``generator`` (for one scalar per draw)."""
    seed = torch.randint(0, 2**62, (1,), generator=generator, device=generator.device)
    return np.random.default_rng(int(seed.item()))


class _CubeMixture(NoiseFamily):
    """Density ``∝ φ(‖z‖∞/λ)``, sampled as ``r·u``: ``u`` uniform on the cube, ``r`` random."""

    @abstractmethod
    def _half_widths(self, rng: np.random.Generator, draws: int, dim: int) -> np.ndarray:
        """``draws`` half-widths ``r`` of the uniform cubes (float64)."""

    def sample_(self, out: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        if out.dim() == 0 or out.shape[0] == 0:
            return out
        draws, dim = out.shape[0], out[0].numel()
        widths = self._half_widths(_mixing_rng(generator), draws, dim)
        widths_t = torch.from_numpy(widths).to(device=out.device, dtype=out.dtype)
        out.uniform_(-1.0, 1.0, generator=generator)
        return out.mul_(widths_t.reshape(draws, *([1] * (out.dim() - 1))))


class ExponentialLinf(_CubeMixture):
    """Density ∝ exp(-‖z‖∞ / scale) (Yang et al., 2020); ``r ~ Gamma(d + 1, scale)``."""

    family = "exp_linf"
    default_norm = "l1"
    density_latex = r"e^{-\|z\|_\infty/\lambda}"

    def _half_widths(self, rng: np.random.Generator, draws: int, dim: int) -> np.ndarray:
        return rng.gamma(dim + 1.0, self.scale, size=draws)

    def log_density(self, z: np.ndarray) -> np.ndarray:
        return -np.max(np.abs(z), axis=-1) / self.scale


class PowerLawLinf(_CubeMixture):
    """Density ∝ (1 + ‖z‖∞/scale)^(-a) (Yang et al., 2020), normalisable when ``a > d``.

    ``r/scale ~ BetaPrime(d + 1, a − d)``, drawn as a ratio of two Gamma variables.
    """

    family = "power_law"
    default_norm = "l1"
    density_latex = r"(1+\|z\|_\infty/\lambda)^{-a}"

    def __init__(self, scale: float, a: float) -> None:
        super().__init__(scale)
        self.a = _check_scale("a", a)

    @property
    def params(self) -> dict[str, float]:
        return {"a": self.a}

    def _half_widths(self, rng: np.random.Generator, draws: int, dim: int) -> np.ndarray:
        if self.a <= dim:
            raise ValueError(
                f"the power law needs a > d to be a distribution; a={self.a:g} but each draw "
                f"has d={dim} numbers: pass e.g. a={dim + 2}"
            )
        return self.scale * rng.gamma(dim + 1.0, size=draws) / rng.gamma(self.a - dim, size=draws)

    def log_density(self, z: np.ndarray) -> np.ndarray:
        return -self.a * np.log1p(np.max(np.abs(z), axis=-1) / self.scale)

    def __repr__(self) -> str:
        return f"PowerLawLinf(scale={self.scale:g}, a={self.a:g})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PowerLawLinf) and (other.scale, other.a) == (self.scale, self.a)

    def __hash__(self) -> int:
        return hash(("PowerLawLinf", self.scale, self.a))


#: Family name (as used by the radius registry and the CLI) → class.
FAMILIES: dict[str, type[NoiseFamily]] = {
    "gaussian": Gaussian,
    "laplace": Laplace,
    "uniform": UniformCube,
    "exp_linf": ExponentialLinf,
    "power_law": PowerLawLinf,
}


def make_noise(family: str, scale: float, **params: float) -> NoiseFamily:
    """The noise family called ``family`` with scale parameter ``scale``.

    ``params`` are the family's other parameters (``a`` for ``"power_law"``).
    """
    try:
        cls = FAMILIES[family]
    except KeyError:
        raise ValueError(
            f"unknown noise family {family!r}; choose one of {sorted(FAMILIES)}"
        ) from None
    if cls is PowerLawLinf:
        if "a" not in params:
            raise ValueError("the power_law family needs its exponent: pass a=... (a > d)")
        return PowerLawLinf(scale, params.pop("a"))
    if params:
        raise ValueError(f"the {family} family takes no parameters besides scale, got {params}")
    return cls(scale)
