"""How fast can the certification-wise offset ``mu(x)`` move? Bounds on its Lipschitz constant.

The deployed certification-wise classifier recomputes ``mu`` at the input it receives.
With ``sigma`` constant, its certificate at ``x`` carries over to a smaller ℓ2 ball when
``mu`` is L-Lipschitz (:mod:`rsutils.anisotropic.soundness.sound`), so L is what we need here,
from above (to certify) and from below (to see how loose the bound is).

**Upper bound** (:func:`mu_lipschitz_bound`, :func:`dense_block_lipschitz`). The map
``x ↦ mu(x) = mu_bound·tanh(G_mu(x))`` of a
:class:`~rsutils.anisotropic.generators.CertificationWiseGenerator` is built from
zero-padded stride-1 convolutions, LeakyReLU and tanh (both 1-Lipschitz), and dense
concatenations. Its ℓ2 Lipschitz constant, for inputs of a given ``H × W``, is bounded by:

- each convolution's operator norm, bounded by that of the *circular* convolution with
  the same kernel on a torus of ``(H + k − 1) × (W + k − 1)`` pixels
  (:func:`conv_operator_norm`): embedding the input into the torus with zeros is an
  isometry, the zero-padded convolution is that circular convolution followed by a crop
  to the output pixels (no wrapped-around pixel reaches them, since the torus is at least
  ``k − 1`` pixels wider than the input), and a crop never increases the norm. The 2-D
  DFT block-diagonalises the circular convolution, so its norm is exactly the largest
  singular value of the ``c_out × c_in`` matrix of kernel Fourier coefficients over the
  torus' frequencies (Sedghi, Gupta and Long, "The singular values of convolutional
  layers", ICLR 2019; :func:`circular_conv_norm`);
- the dense block, by tracking a bound ``a_j`` on the Lipschitz constant of each feature
  map ``h_j`` (``h_0 = first(x)``, ``h_{k+1} = act(conv_k([h_0, …, h_k]))``). Writing
  ``W_{k,j}`` for the block of ``conv_k``'s kernel that reads ``h_j``, both

  ``a_{k+1} ≤ ‖conv_k‖·sqrt(Σ_{j≤k} a_j²)`` (the concatenation moves by at most
  ``sqrt(Σ a_j²)·‖δ‖``, its features being stacked) and
  ``a_{k+1} ≤ Σ_{j≤k} ‖W_{k,j}‖·a_j`` (triangle inequality over the blocks)

  hold, and the bound keeps the smaller. The fusion convolution is bounded the same way,
  then multiplied by ``‖out‖`` and by ``mu_bound``. The *plain* bound uses the first
  inequality only, which is the layer product ``M_{k+1} = M_k·sqrt(1 + ‖conv_k‖²)`` for
  the whole concatenation; both are reported.

Rounding: weights are read in float64 and every norm is computed in float64. The
backward-stable FFT and SVD err by at most a few hundred units of roundoff (~1e-14)
relative to the kernel's norm at these sizes; each layer norm is multiplied by
``1 + MARGIN`` with ``MARGIN = 1e-6`` and so is the final product, so that float
error cannot turn the bound into an underestimate. The guarantee is for the map in
exact arithmetic: the float32 evaluation of ``mu`` differs from it by rounding errors
of order 1e-7 per pixel, which no Lipschitz constant describes.

**Lower bound** (:func:`empirical_mu_ratios`): the largest ``‖mu(a + δ) − mu(a)‖₂ /
‖δ‖₂`` found over random pairs and by gradient ascent on the ratio, evaluated in float64;
any such ratio is at most the true constant, so an upper bound below it is wrong.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from rsutils.anisotropic.generators import (
    CertificationWiseGenerator,
    DatasetWiseGenerator,
    DenseBlockNet,
    FixedNoise,
    NoiseGenerator,
    WithoutOffset,
)
from rsutils.core.settings import check_count
from rsutils.core.streams import stream_generator
from rsutils.training.train import intra_op_threads

__all__ = [
    "MARGIN",
    "EmpiricalRatios",
    "LipschitzBound",
    "circular_conv_norm",
    "conv_operator_norm",
    "dense_block_lipschitz",
    "empirical_mu_ratios",
    "mu_lipschitz_bound",
    "mu_map",
]

#: Relative margin applied to every layer norm and to the final bound (float64 rounding).
MARGIN = 1e-6


@dataclass(frozen=True)
class LipschitzBound:
    """An upper bound on an ℓ2 Lipschitz constant, for inputs of ``input_size`` pixels.

    ``value`` is the bound (the smaller of the two dense-block recursions, margin
    included); ``plain`` the plain layer product; ``layers`` the operator-norm bound of
    each convolution (``name → norm``, margin included). Every number is an upper bound.
    """

    value: float
    plain: float
    layers: dict[str, float]
    input_size: tuple[int, int]


def circular_conv_norm(weight: torch.Tensor | np.ndarray, torus: tuple[int, int]) -> float:
    """The operator norm of the circular 2-D convolution with ``weight`` on ``torus``.

    ``weight`` has PyTorch's shape ``(c_out, c_in, k_h, k_w)``; ``torus`` is ``(N_1,
    N_2)`` with ``N_i ≥ k_i``. The 2-D DFT diagonalises the convolution frequency by
    frequency, so the norm is the largest singular value of the ``c_out × c_in`` matrix
    of kernel Fourier coefficients over the ``N_1·N_2`` frequencies (Sedghi et al.,
    2019): exact up to float64 rounding, no margin added. Cross-correlation (PyTorch's
    convention) and convolution have the same singular values.
    """
    w = _as_kernel(weight)
    n1, n2 = (int(n) for n in torus)
    if n1 < w.shape[2] or n2 < w.shape[3]:
        raise ValueError(
            f"the torus {torus} is smaller than the kernel {w.shape[2:]}; pass N_i ≥ k_i"
        )
    coefficients = np.fft.fft2(w, s=(n1, n2), axes=(2, 3))  # (c_out, c_in, N1, N2)
    matrices = np.moveaxis(coefficients, (0, 1), (2, 3))  # (N1, N2, c_out, c_in)
    return float(np.linalg.svd(matrices, compute_uv=False).max(initial=0.0))


def conv_operator_norm(conv: nn.Conv2d, input_size: tuple[int, int]) -> float:
    """An upper bound on the ℓ2 operator norm of ``conv`` (its bias aside) on ``H × W``.

    ``conv`` must be a stride-1, undilated, ungrouped convolution with zero padding of
    at most ``k − 1`` on each side. The bound is the circular norm on a torus of
    ``(H + k_h − 1) × (W + k_w − 1)`` (see the module's docstring for why it bounds the
    zero-padded one), times ``1 + MARGIN``.
    """
    if not isinstance(conv, nn.Conv2d):
        raise TypeError(f"conv must be an nn.Conv2d, got {type(conv).__name__}")
    k_h, k_w = conv.kernel_size
    if conv.stride != (1, 1) or conv.dilation != (1, 1) or conv.groups != 1:
        raise ValueError(
            "only stride-1, undilated, ungrouped convolutions are bounded here; got "
            f"stride {conv.stride}, dilation {conv.dilation}, groups {conv.groups}"
        )
    padding = conv.padding
    if isinstance(padding, str) or conv.padding_mode != "zeros":
        raise ValueError("give the convolution integer zero padding (padding=1, not 'same')")
    if padding[0] > k_h - 1 or padding[1] > k_w - 1:
        raise ValueError(f"padding {padding} exceeds kernel size − 1 ({k_h - 1}, {k_w - 1})")
    h, w = _check_size(input_size)
    return circular_conv_norm(conv.weight, (h + k_h - 1, w + k_w - 1)) * (1 + MARGIN)


def dense_block_lipschitz(net: DenseBlockNet, input_size: tuple[int, int]) -> LipschitzBound:
    """An upper bound on the ℓ2 Lipschitz constant of ``net`` on inputs of ``input_size``.

    The recursion of the module's docstring over the first convolution, the dense
    block, the fusion and the output convolution; LeakyReLU is 1-Lipschitz.
    """
    if not isinstance(net, DenseBlockNet):
        raise TypeError(f"net must be a DenseBlockNet, got {type(net).__name__}")
    size = _check_size(input_size)
    layers = {"first": conv_operator_norm(net.first, size)}
    widths = [net.first.out_channels]  # channels of h_0, h_1, ...
    bounds, plain = [layers["first"]], layers["first"]
    for k, conv in enumerate([*net.dense, net.fuse]):
        name = f"dense{k}" if k < len(net.dense) else "fuse"
        layers[name] = conv_operator_norm(conv, size)
        joint = layers[name] * math.hypot(*bounds)
        split = sum(
            circular_conv_norm(block, _torus(conv, size)) * (1 + MARGIN) * a
            for block, a in zip(_blocks(conv.weight, widths), bounds, strict=True)
        )
        if name == "fuse":
            fused, plain = min(joint, split), plain * layers[name]
        else:
            bounds.append(min(joint, split))
            widths.append(conv.out_channels)
            plain *= math.sqrt(1.0 + layers[name] ** 2)
    layers["out"] = conv_operator_norm(net.out, size)
    plain *= layers["out"] * (1 + MARGIN)
    # Both recursions bound the same constant; the refined one is never above the plain
    # one in exact arithmetic, and the minimum keeps it so after rounding too.
    return LipschitzBound(min(fused * layers["out"] * (1 + MARGIN), plain), plain, layers, size)


def mu_lipschitz_bound(generator: NoiseGenerator, input_size: tuple[int, int]) -> LipschitzBound:
    """An upper bound on the ℓ2 Lipschitz constant of ``x ↦ mu(x)`` of ``generator``.

    ``mu_bound·L(G_mu)`` for a certification-wise generator (tanh is 1-Lipschitz), and
    the same for :class:`~rsutils.anisotropic.soundness.sound.ConstantScale` around one. Zero for
    generators whose ``mu`` does not depend on the input
    (:class:`~rsutils.anisotropic.generators.FixedNoise`,
    :class:`~rsutils.anisotropic.generators.DatasetWiseGenerator`) and for ``mu ≡ 0``
    (:class:`~rsutils.anisotropic.generators.WithoutOffset`).
    """
    size = _check_size(input_size)
    inner, zero_mu = _unwrap(generator)
    if zero_mu or isinstance(inner, FixedNoise | DatasetWiseGenerator):
        return LipschitzBound(0.0, 0.0, {}, size)
    if not isinstance(inner, CertificationWiseGenerator):
        raise TypeError(
            f"no Lipschitz bound is known for {type(generator).__name__}; pass a "
            "certification-wise, dataset-wise or fixed generator"
        )
    net = dense_block_lipschitz(inner.mu_net, size)
    scale = inner.mu_bound * (1 + MARGIN)
    return LipschitzBound(net.value * scale, net.plain * scale, net.layers, size)


def mu_map(generator: NoiseGenerator) -> Callable[[torch.Tensor], torch.Tensor]:
    """``x ↦ mu(x)`` of ``generator`` (the certification-wise ``mu`` without computing
    ``sigma``, which it does not need)."""
    inner, zero_mu = _unwrap(generator)
    if zero_mu:
        return lambda x: torch.zeros_like(x)
    if isinstance(inner, CertificationWiseGenerator):
        return lambda x: inner.mu_bound * torch.tanh(inner.mu_net(x))
    return lambda x: generator(x)[0]


@dataclass(frozen=True)
class EmpiricalRatios:
    """The largest ``‖mu(a + δ) − mu(a)‖₂ / ‖δ‖₂`` found, each a lower bound on L:
    over random pairs (``random``), by gradient ascent (``adversarial``), and the
    larger of the two (``best``)."""

    random: float
    adversarial: float

    @property
    def best(self) -> float:
        return max(self.random, self.adversarial)


def empirical_mu_ratios(
    generator: NoiseGenerator,
    images: torch.Tensor,
    *,
    seed: int = 0,
    directions: int = 4,
    norms: tuple[float, ...] = (1e-2, 1e-1, 1.0),
    steps: int = 50,
    lr: float = 1e-2,
) -> EmpiricalRatios:
    """Lower bounds on the Lipschitz constant of ``mu``, around each image of ``images``.

    Random pairs: ``a = x`` and ``δ`` of each ℓ2 norm in ``norms`` in ``directions``
    uniformly random directions. Adversarial: ``steps`` Adam steps (learning rate ``lr``)
    on the sum of the ratios over both the base points ``a`` (started at the images) and
    ``δ`` (started in random directions of norm ``norms[0]``). The search runs in float32
    on a copy of the generator; the best pair of each image, for each search, is then
    evaluated again in float64, and the largest of those float64 ratios is returned, so
    that float32 rounding cannot inflate it. The draws come from the stream
    ``lipschitz`` of ``seed``. ``images`` is a batch ``(B, C, H, W)``; the generator is
    not changed. The search runs with one intra-op thread: on these small convolutions
    its backward passes took 20 times longer with two threads than with one (same
    ratios), on the two cores the book is built on.
    """
    check_count("directions", directions)
    check_count("steps", steps)
    if not norms or min(norms) <= 0:
        raise ValueError(f"norms must hold positive ℓ2 norms, got {norms!r}")
    if images.dim() != 4:
        raise ValueError(f"images must be a batch (B, C, H, W), got shape {tuple(images.shape)}")
    with intra_op_threads(1):
        return _search(generator, images, seed, directions, norms, steps, lr)


def _search(
    generator: NoiseGenerator,
    images: torch.Tensor,
    seed: int,
    directions: int,
    norms: tuple[float, ...],
    steps: int,
    lr: float,
) -> EmpiricalRatios:
    """:func:`empirical_mu_ratios`' search, on the current thread count."""
    fast, exact = (_frozen_copy(generator, dtype) for dtype in (torch.float32, torch.float64))
    mu = mu_map(fast)
    x = images.detach().to("cpu", torch.float32)
    rng = stream_generator(seed, 0, "lipschitz")
    with torch.no_grad():
        base, kept = mu(x), _Best(x)
        for norm in norms:
            for _ in range(directions):
                delta = _random_delta(x, norm, rng)
                kept.update(x, delta, _ratios(mu, base, x, delta))
    random = kept.verify(mu_map(exact))
    a = x.clone().requires_grad_(True)
    delta = _random_delta(x, norms[0], rng).requires_grad_(True)
    optimiser, kept = torch.optim.Adam([a, delta], lr=lr), _Best(x)
    for _ in range(steps + 1):
        ratios = _ratios(mu, mu(a), a, delta)
        kept.update(a.detach(), delta.detach(), ratios.detach())
        optimiser.zero_grad()
        (-ratios.sum()).backward()
        optimiser.step()
    return EmpiricalRatios(random=random, adversarial=kept.verify(mu_map(exact)))


class _Best:
    """The pair ``(a, δ)`` with the largest float32 ratio found so far, per image."""

    def __init__(self, x: torch.Tensor) -> None:
        self.a, self.delta = x.clone(), torch.zeros_like(x)
        self.ratio = torch.full((x.shape[0],), -1.0)

    def update(self, a: torch.Tensor, delta: torch.Tensor, ratio: torch.Tensor) -> None:
        better = ratio > self.ratio
        self.a[better], self.delta[better] = a[better], delta[better]
        self.ratio = torch.where(better, ratio, self.ratio)

    def verify(self, mu: Callable[[torch.Tensor], torch.Tensor]) -> float:
        """The largest ratio of the kept pairs, evaluated in float64."""
        a, delta = self.a.double(), self.delta.double()
        with torch.no_grad():
            return float(_ratios(mu, mu(a), a, delta).max())


def _frozen_copy(generator: NoiseGenerator, dtype: torch.dtype) -> NoiseGenerator:
    copied = copy.deepcopy(generator).to("cpu", dtype).eval()
    for parameter in copied.parameters():
        parameter.requires_grad_(False)
    return copied


def _ratios(mu, base: torch.Tensor, a: torch.Tensor, delta: torch.Tensor) -> torch.Tensor:
    shift = (mu(a + delta) - base).flatten(1).norm(dim=1)
    return shift / delta.flatten(1).norm(dim=1)


def _random_delta(x: torch.Tensor, norm: float, rng: torch.Generator) -> torch.Tensor:
    delta = torch.randn(x.shape, generator=rng, dtype=torch.float64).to(x.dtype)
    return delta * (norm / delta.flatten(1).norm(dim=1)).view(-1, *([1] * (x.dim() - 1)))


def _unwrap(generator: NoiseGenerator) -> tuple[NoiseGenerator, bool]:
    """The generator inside the wrappers known to keep its ``mu`` or zero it, and whether
    one of them zeroes it (``WithoutOffset``). A wrapper keeps its ``inner`` generator's
    ``mu`` when it says so with a true ``keeps_inner_mu`` (as ``ConstantScale`` does);
    any other is left as is."""
    zero_mu = False
    while isinstance(generator, WithoutOffset) or getattr(generator, "keeps_inner_mu", False):
        zero_mu |= isinstance(generator, WithoutOffset)
        generator = generator.inner  # type: ignore[assignment]
    return generator, zero_mu


def _as_kernel(weight: torch.Tensor | np.ndarray) -> np.ndarray:
    w = (
        weight.detach().to("cpu", torch.float64).numpy()
        if isinstance(weight, torch.Tensor)
        else np.asarray(weight, dtype=np.float64)
    )
    if w.ndim != 4 or min(w.shape) < 1:
        raise ValueError(f"weight must have shape (c_out, c_in, k_h, k_w), got {w.shape}")
    if not np.isfinite(w).all():
        raise ValueError("weight holds NaN or infinite values")
    return w


def _blocks(weight: torch.Tensor, widths: list[int]) -> list[torch.Tensor]:
    """``weight``'s input-channel blocks, one per feature map of ``widths`` channels."""
    return list(torch.split(weight, widths, dim=1))


def _torus(conv: nn.Conv2d, size: tuple[int, int]) -> tuple[int, int]:
    return size[0] + conv.kernel_size[0] - 1, size[1] + conv.kernel_size[1] - 1


def _check_size(input_size: tuple[int, int]) -> tuple[int, int]:
    try:
        h, w = (int(s) for s in input_size)
    except (TypeError, ValueError):
        raise ValueError(f"input_size must be (H, W), e.g. (28, 28), got {input_size!r}") from None
    if h < 1 or w < 1:
        raise ValueError(f"input_size must be positive, got {input_size!r}")
    return h, w
