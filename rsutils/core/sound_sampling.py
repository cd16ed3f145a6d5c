"""Gaussian smoothing that stays sound in floating-point arithmetic.

Voráček and Hein (2023, "Sound randomized smoothing in floating-point arithmetic")
show that the plain sampler, ``fl(x + ε)`` with ``ε`` a float32 normal, is not a
smoothing of any function of ``x + ε``: the rounding of the sum leaks the low bits of
``x``, so a base classifier can recognise the exact clean input and CERTIFY then
certifies a radius that is false (:mod:`rsutils.checks.float_attack` builds one).
Their remedy, which :class:`SoundGaussian` follows, has two ideas from the paper:

- inputs are quantised (pixels ``a/L`` with integer ``a`` in ``[0, L]``, ``L = 255``),
  and the noise is the Gaussian **rounded to the same grid**, ``n = round(L·ε)``, drawn
  exactly from fair coins through an integer table of its distribution function. Then
  ``a + n`` is an integer, added exactly, and the model sees ``(a + n)/L``, a fixed
  function of ``a + n``: ``x + ε`` rounded to the grid. The smoothed classifier is
  exactly the Gaussian smoothing of ``h(y) = f(clip(round(L·y))/L)``, a function of
  ``y`` alone, so Cohen et al.'s certificate holds for it unchanged;
- the noise's tails are cut at ``±N`` and the **model input** is clipped to
  ``[L − N, N]/L``; as ``0 ≤ a ≤ L`` this clip is the same whether or not the noise
  was cut first, so the cut costs nothing (the paper clips to ``[−k, k + 1]``).

Ours (not the paper's; its code uses a 60-bit table and treats the table's rounding
its own way): the table's rounding error is **bounded and charged to the certificate**.
The uniform integers come from ``random_(0, 2^62)``, exactly uniform when the
generator's 64-bit words are (``2^62`` divides ``2^64``). The table has ``2N`` thresholds
``T_j = round(2^62·Φ((j + ½)/(Lσ)))`` computed with 40-digit arithmetic (mpmath), so
each is within ``2^-63 + 10^-35`` of the exact value, and the realised distribution is
within total variation ``τ = 2N·(2^-63 + 10^-35)`` of the rounded Gaussian per
coordinate, ``d·τ`` per draw of ``d`` numbers. With probability ``1 − α``,
``p_A ≥ p̲_A − d·τ`` for the exact rounded Gaussian, and the radius is
``σ·Φ⁻¹(p̲_A − d·τ)``: never larger than the plain formula's (``d·τ`` is about
``1e-13`` for an image of 784 pixels). Also ours: the integer sum is carried in
float32 (integers below ``2^24`` add exactly), the table is read through a bucket
index so that sampling costs a few passes over the batch.

Guarantee: for an input on the grid, ``Smooth(..., sampler="sound")``'s certificate
holds for the smoothed classifier of the quantised model ``h`` against every
perturbation of the stated ℓ2 norm (on or off the grid), assuming only that the
generator's bits are fair coins. Inputs off the grid, outside ``[0, 1]`` or in a dtype
that cannot hold the integers exactly are refused with a ValueError.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import ClassVar

import numpy as np
import torch

from rsutils.core.noise import Gaussian, NoiseFamily

__all__ = [
    "DEFAULT_SAMPLER",
    "SAMPLERS",
    "SoundGaussian",
    "describe_sampler",
    "rounded_gaussian_pmf",
    "with_sampler",
]

#: The samplers of :class:`~rsutils.core.smooth.Smooth`: ``"plain"`` (``x + ε`` in the
#: input's dtype) and ``"sound"`` (:class:`SoundGaussian`), with one line on each.
SAMPLERS = {
    "plain": "plain: x + ε added in floating point (not sound against low-bit readers)",
    "sound": "sound: Gaussian rounded to the 1/255 grid, added exactly (Voráček & Hein)",
}
#: The sampler of :class:`~rsutils.core.smooth.Smooth` unless told otherwise.
DEFAULT_SAMPLER = "plain"

_BITS = 62  # the uniform integers are in [0, 2^62): random_ draws them exactly
_BUCKET_BITS = 20  # the bucket index reads the top 20 bits
_CDF_ERROR = 1e-35  # a bound on mpmath's error at 40 digits (far below 2^-63)
_TAIL_SIGMAS = 8  # noise cut (and the model input clipped) beyond about 8 sigma


@lru_cache(maxsize=16)
def _thresholds(sigma: float, levels: int) -> tuple[int, np.ndarray]:
    """``(N, T)``: the cut ``N`` and the ``2N`` integer thresholds (int64, increasing)."""
    import mpmath  # declared by the package (torch needs it too, through sympy)

    cut = levels + math.ceil(_TAIL_SIGMAS * sigma * levels)
    scale = 2**_BITS
    with mpmath.workdps(40):
        s = mpmath.mpf(sigma) * levels
        edges = [
            int(mpmath.nint(scale * mpmath.ncdf((mpmath.mpf(j) + 0.5) / s)))
            for j in range(-cut, cut)
        ]
    return cut, np.asarray(edges, dtype=np.int64)


def rounded_gaussian_pmf(sigma: float, levels: int = 255) -> tuple[np.ndarray, np.ndarray]:
    """The sampled distribution of ``n``: values ``-N..N`` and their probabilities.

    Exactly the table's (float64 of the integer differences over ``2^62``); the end
    values carry the cut tails.
    """
    cut, edges = _thresholds(float(sigma), int(levels))
    counts = np.diff(np.concatenate([[0], edges, [2**_BITS]]).astype(object))
    return np.arange(-cut, cut + 1), np.asarray([c / 2**_BITS for c in counts], dtype=float)


@lru_cache(maxsize=16)
def _buckets(sigma: float, levels: int) -> np.ndarray:
    """For each bucket of ``2^(62 − 20)`` uniform values, the number of thresholds at or
    below all of them, or -1 where a threshold falls inside the bucket (int32)."""
    _, edges = _thresholds(sigma, levels)
    starts = np.arange(2**_BUCKET_BITS, dtype=np.int64) << (_BITS - _BUCKET_BITS)
    ends = starts + ((1 << (_BITS - _BUCKET_BITS)) - 1)
    first = np.searchsorted(edges, starts, side="right")
    last = np.searchsorted(edges, ends, side="right")
    return np.where(first == last, first, -1).astype(np.int32)


class SoundGaussian(Gaussian):
    """Gaussian noise rounded to the input grid, drawn exactly, added exactly.

    See the module's docstring for the construction and its guarantee. ``sigma`` is in
    input units as for :class:`~rsutils.core.noise.Gaussian`; ``levels`` is ``L``, the
    grid ``{0, 1/L, ..., 1}`` of the inputs (255 for 8-bit images). :meth:`sample_`
    gives the rounded noise ``n/L`` (as floats); :meth:`perturb_` adds it to an input
    prepared by :meth:`prepare_input` with integer arithmetic; :meth:`radius` charges
    the table's total variation ``dim·tv_per_coordinate`` to ``pA_lower``.
    """

    #: Random bits per coordinate; the uniform integers are below ``2^random_bits``.
    random_bits: ClassVar[int] = _BITS

    def __init__(self, sigma: float, levels: int = 255) -> None:
        super().__init__(sigma)
        if isinstance(levels, bool) or not isinstance(levels, int) or levels < 1:
            raise ValueError(
                f"levels must be a positive integer (255 for 8-bit images), got {levels!r}"
            )
        self.levels = levels
        self._cache: dict[tuple[torch.device, torch.dtype], tuple[torch.Tensor, torch.Tensor]] = {}
        self.cut = levels + math.ceil(_TAIL_SIGMAS * self.scale * levels)
        if self.cut + levels >= 2**22:
            raise ValueError(
                f"sigma={self.scale:g} with levels={levels} needs integers up to "
                f"{self.cut + levels}, beyond float32's exact 2^22: lower sigma or levels"
            )

    @property
    def tv_per_coordinate(self) -> float:
        """A bound on the total variation between one sampled coordinate and the exact
        rounded Gaussian: ``2N·(2^-63 + 1e-35)``."""
        return 2 * self.cut * (2.0 ** -(_BITS + 1) + _CDF_ERROR)

    def _tables(
        self, device: torch.device, dtype: torch.dtype
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Per bucket, the draw ``fl(n/L)`` it decides (``inf`` where it decides none), and
        the thresholds (int64), on ``device``; made once per device and dtype."""
        key = (device, dtype)
        if key not in self._cache:
            _, edges = _thresholds(self.scale, self.levels)
            counts = torch.from_numpy(_buckets(self.scale, self.levels)).to(device)
            values = (counts - self.cut).to(dtype).div_(self.levels)
            values[counts < 0] = float("inf")
            self._cache[key] = (values, torch.from_numpy(edges).to(device))
        return self._cache[key]

    def sample_(self, out: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        """Draws ``fl(n/L)``: a uniform integer below ``2^62``, the draw its bucket decides,
        or for the few (about 1 in 2,000) in a bucket with a threshold inside, the count
        of thresholds at or below it by binary search of the table."""
        if out.numel() == 0:
            return out
        values, edges = self._tables(generator.device, out.dtype)
        u = torch.empty(out.shape, dtype=torch.int64, device=generator.device)
        flat_u = u.random_(0, 2**_BITS, generator=generator).view(-1)
        target = out if out.is_contiguous() else torch.empty_like(out)
        flat = target.view(-1)
        torch.index_select(values, 0, flat_u >> (_BITS - _BUCKET_BITS), out=flat)
        unsure = torch.isinf(flat).nonzero().squeeze(1)
        if unsure.numel():
            found = torch.searchsorted(edges, flat_u.index_select(0, unsure), right=True)
            flat.index_copy_(0, unsure, (found - self.cut).to(out.dtype).div_(self.levels))
        return target if target is out else out.copy_(target)

    def prepare_input(self, x: torch.Tensor) -> torch.Tensor:
        """``a = L·x`` as integers in ``x``'s dtype; a ValueError unless ``x`` is exactly
        on the grid (``x == fl(a/L)``), within ``[0, 1]`` and float32 or float64."""
        if x.dtype not in (torch.float32, torch.float64):
            raise ValueError(
                f"the sound sampler needs float32 or float64 inputs, got {x.dtype}: pass x.float()"
            )
        a = torch.round(x * self.levels)
        if bool(((a < 0) | (a > self.levels)).any()) or not torch.equal(a / self.levels, x):
            raise ValueError(
                f"the sound sampler needs inputs on the grid {{0, 1/{self.levels}, ..., 1}}; "
                f"quantise first: x = torch.round(x * {self.levels}) / {self.levels}"
            )
        return a

    def perturb_(self, noise: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """The model's inputs ``clip(a + n, L − N, N)/L`` from draws ``noise = fl(n/L)``
        and ``x = a`` from :meth:`prepare_input`: ``round(L·fl(n/L)) = n`` exactly, the
        integer sum is exact, and the division is one correctly rounded step."""
        low, high = self.levels - self.cut, self.cut
        noise.mul_(self.levels).round_().add_(x).clamp_(low, high)
        return noise.div_(self.levels)

    def charged_pA(self, pA_lower: float, dim: int) -> float:
        """``pA_lower − dim·τ``: the table's total variation over ``dim`` coordinates
        (what :meth:`radius` charges too)."""
        return pA_lower - dim * self.tv_per_coordinate

    def radius(
        self,
        pA_lower: float | np.ndarray,
        pB_upper: float | np.ndarray | None = None,
        *,
        norm: str | None = None,
        dim: int | None = None,
    ) -> np.ndarray:
        """The Gaussian radius at ``pA_lower − dim·τ`` (and ``pB_upper + dim·τ``), 0 where
        that falls to 1/2 or below; ``dim``, the input's size, is required."""
        if dim is None:
            raise ValueError("the sound sampler's radius needs dim, the input's number of values")
        slack = dim * self.tv_per_coordinate
        pA = np.asarray(pA_lower, dtype=float) - slack
        pB = None if pB_upper is None else np.asarray(pB_upper, dtype=float) + slack
        safe = np.clip(pA, 0.5, None)
        radius = super().radius(safe, pB, norm=norm, dim=dim)
        return np.where(pA > 0.5, np.maximum(radius, 0.0), 0.0)

    def __repr__(self) -> str:
        return f"SoundGaussian(sigma={self.scale:g}, levels={self.levels})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SoundGaussian) and (other.scale, other.levels) == (
            self.scale,
            self.levels,
        )

    def __hash__(self) -> int:
        return hash(("SoundGaussian", self.scale, self.levels))


def describe_sampler(sampler: str) -> str:
    """One line on ``sampler`` (a key of :data:`SAMPLERS`), for tables and logs."""
    if sampler not in SAMPLERS:
        raise ValueError(f"unknown sampler {sampler!r}; choose one of {list(SAMPLERS)}")
    return SAMPLERS[sampler]


def with_sampler(noise: NoiseFamily, sampler: str) -> NoiseFamily:
    """``noise`` as ``sampler`` draws it: unchanged for ``"plain"``, the
    :class:`SoundGaussian` of the same sigma for ``"sound"`` (Gaussian noise only)."""
    if sampler not in SAMPLERS:
        raise ValueError(f"unknown sampler {sampler!r}; choose one of {list(SAMPLERS)}")
    if sampler == "plain" or isinstance(noise, SoundGaussian):
        return noise
    if type(noise) is not Gaussian:
        raise ValueError(
            f"the sound sampler exists for Gaussian noise only, got {noise!r}: "
            'pass rsutils.Gaussian(sigma) or sampler="plain"'
        )
    return SoundGaussian(noise.sigma)
