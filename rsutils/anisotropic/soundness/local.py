"""Local certificates for the deployed classifier of an offset with constant σ.

With ``sigma ≡ c`` the deployed classifier is ``G(z) = h(T(z))``, ``T(z) = z + mu(z)``
and ``h`` the isotropic smoothed classifier certified at ``T(x)`` with radius ``R``
(:class:`~rsutils.anisotropic.soundness.sound.ConstantScale`). ``G`` keeps its class at
every ``x'`` with ``‖T(x') − T(x)‖₂ < R``, and

    ``‖T(x') − T(x)‖₂ ≤ ‖x' − x‖₂ + ‖mu(x') − mu(x)‖₂ ≤ r + D(r)``  on ``‖x' − x‖₂ ≤ r``,

with ``D(r)`` the largest move of the offset over the ball. A global Lipschitz constant
``L`` gives ``D(r) ≤ L·r`` and the radius ``R/(1 + L)``
(:func:`~rsutils.anisotropic.soundness.sound.deployed_radius`). Bounding ``D(r)`` on
each input's own ball can give more, where the offset moves slowly near that input
(e.g. where ``tanh`` saturates):

- :func:`offset_move_bound` bounds ``D(r)`` from above by interval bound propagation
  through the offset network (Gowal et al. 2018, "On the effectiveness of interval
  bound propagation"): the first convolution exactly over the ℓ2 ball (a unit's move
  is at most ``r`` times its kernel's ℓ2 norm), every later layer by intervals
  (convolutions in centre–radius form, LeakyReLU and ``tanh`` monotone), in float64;
- :func:`local_radius` is then the largest ``r`` (bisection, kept on the side where it
  holds) with ``r + D(r) < R``: a radius sound for the deployed classifier, image by
  image, in exact arithmetic, as the global bound is;
- :func:`local_sound_log` certifies a log with the larger of the two sound radii,
  ``R/(1 + L)`` and the local one, image by image;
- :func:`local_ceiling` bounds every certificate of this route from above: a search
  for the largest move of the offset on the ball (projected gradient ascent) finds
  ``D_found(r) ≤ D(r)``, so no bound on ``D``, however tight, certifies an ``r`` with
  ``r + D_found(r) ≥ R``. Where the ceiling stays small, the route cannot be tightened.
"""

from __future__ import annotations

import copy

import numpy as np
import pandas as pd
import torch
from scipy.stats import norm
from torch import nn

from rsutils.anisotropic.generators import (
    CertificationWiseGenerator,
    DenseBlockNet,
    NoiseGenerator,
)
from rsutils.anisotropic.soundness.lipschitz import mu_map
from rsutils.anisotropic.soundness.sound import ConstantScale, sound_log
from rsutils.core.confidence import max_certifiable_pA
from rsutils.core.settings import check_count
from rsutils.core.streams import stream_generator

__all__ = [
    "BISECTION_STEPS",
    "CEILING",
    "local_ceiling",
    "local_radius",
    "local_sound_log",
    "offset_move_bound",
    "offset_move_found",
]

#: The column of :func:`local_sound_log` with each image's largest attainable radius.
CEILING = "attainable_radius"

#: Bisection steps of :func:`local_radius` and :func:`local_ceiling`: the radius is found
#: to ``R / 2**BISECTION_STEPS``.
BISECTION_STEPS = 10


def offset_move_bound(generator: NoiseGenerator, x: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
    """An upper bound on ``max ‖mu(x') − mu(x)‖₂`` over ``‖x' − x‖₂ ≤ r``, per image
    (0 for a generator whose ``mu`` does not depend on the input).

    ``x`` is a batch ``(B, C, H, W)``, ``r`` a radius per image ``(B,)``. Interval
    bound propagation through ``generator``'s offset network in float64 (module
    docstring); ``mu = mu_bound·tanh(G_mu(x))`` is monotone in ``G_mu``, so its bounds are
    those of the network's output passed through it.
    """
    x, r = x.to("cpu", torch.float64), r.to("cpu", torch.float64)
    net, bound = _offset_net(generator)
    if net is None:
        return torch.zeros(x.shape[0], dtype=torch.float64)
    with torch.no_grad():
        low, high = _interval_dense_block(net, x, r)
        centre = bound * torch.tanh(net(x))
        low, high = bound * torch.tanh(low), bound * torch.tanh(high)
        move = torch.maximum(high - centre, centre - low).clamp_min(0.0)
    return move.flatten(1).norm(dim=1)


def offset_move_found(
    generator: NoiseGenerator,
    x: torch.Tensor,
    r: torch.Tensor,
    *,
    steps: int = 10,
    seed: int = 0,
) -> torch.Tensor:
    """The largest ``‖mu(x') − mu(x)‖₂`` found over ``‖x' − x‖₂ ≤ r`` by ``steps`` steps
    of projected gradient ascent (normalised ℓ2 steps of ``r/4``, from a random point of
    the sphere drawn from ``seed``'s stream ``offset-move``), evaluated in float64: a
    lower bound on the largest move, per image."""
    check_count("steps", steps)
    mu = mu_map(_frozen(generator))
    x = x.to("cpu", torch.float64)
    radius = r.to("cpu", torch.float64).view(-1, *([1] * (x.dim() - 1)))
    rng = stream_generator(seed, 0, "offset-move")
    delta = _onto_ball(torch.randn(x.shape, generator=rng, dtype=torch.float64), radius, 1.0)
    with torch.no_grad():
        centre = mu(x)
    best = torch.zeros(x.shape[0], dtype=torch.float64)
    for _ in range(steps + 1):
        delta.requires_grad_(True)
        move = (mu(x + delta) - centre).flatten(1).norm(dim=1)
        best = torch.maximum(best, move.detach())
        (grad,) = torch.autograd.grad(move.sum(), delta)
        with torch.no_grad():
            step = grad / grad.flatten(1).norm(dim=1).clamp_min(1e-300).view_as(radius)
            delta = _onto_ball(delta + step * radius / 4, radius, None)
    return best


def local_radius(generator: NoiseGenerator, x: torch.Tensor, radius: torch.Tensor) -> torch.Tensor:
    """The largest ``r`` (to ``R/2**BISECTION_STEPS``, from below) with
    ``r + offset_move_bound(r) < R``: a radius sound for the deployed classifier at
    each image of ``x`` whose isotropic certificate at ``T(x)`` is ``R = radius``
    (0 where ``R`` is 0)."""
    return _bisect(lambda r: r + offset_move_bound(generator, x, r) < _r(radius), radius)


def local_sound_log(
    log: pd.DataFrame, generator: ConstantScale, images: torch.Tensor, lipschitz: float
) -> pd.DataFrame:
    """A copy of ``log`` (certificates of ``generator``, an offset with ``σ ≡ c``, one
    row per image of ``images`` in the log's order) whose every certified radius is the
    larger of ``R/(1 + L)`` (:func:`~rsutils.anisotropic.soundness.sound.sound_log`, with
    ``L = lipschitz``) and :func:`local_radius`; ``region_radius`` and ``alm`` shrink by
    the same factor, as they do for a constant σ. Both radii hold for the deployed
    classifier, so the larger does.

    The column :data:`CEILING` gives each image the largest radius this certificate
    could give it: the same larger of the two at the top of CERTIFY's range,
    ``R_top = c·λ·Φ⁻¹(α^(1/n))`` (``λ`` the log's ``scale``). Both radii grow with
    ``R`` (``D`` grows with ``r``), so no count of draws certifies the image further.
    """
    if not isinstance(generator, ConstantScale):
        raise TypeError("a sound radius needs σ ≡ c: pass ConstantScale(generator, c)")
    if len(images) != len(log):
        raise ValueError(f"one image per row of the log: {len(images)} images, {len(log)} rows")
    out = sound_log(log, lipschitz)
    top = norm.ppf(max_certifiable_pA(int(log["n"].max()), float(log["alpha"].iloc[0])))
    r_top = generator.value * log["scale"].to_numpy(np.float64) * top
    out[CEILING] = _larger(generator, images, r_top, lipschitz) * r_top
    held = (log["radius"] > 0).to_numpy(copy=True)
    if not held.any():
        return out
    radius = log["radius"].to_numpy(np.float64)[held]
    factor = _larger(generator, images[torch.tensor(held)], radius, lipschitz)
    for column in ("radius", "region_radius", "alm"):
        if column in out.columns:
            values = log[column].to_numpy(np.float64).copy()
            values[held] *= factor
            out[column] = values
    return out


def _larger(
    generator: NoiseGenerator, images: torch.Tensor, radius: np.ndarray, lipschitz: float
) -> np.ndarray:
    """The larger of ``1/(1 + L)`` and ``local_radius / R``, per image (``R > 0``).

    The bisection runs only where the local bound beats the global one at
    ``R/(1 + L)`` already (``D`` grows with ``r``, so elsewhere the local radius is
    smaller)."""
    global_factor = 1.0 / (1.0 + lipschitz)
    r = torch.tensor(radius, dtype=torch.float64)
    floor = r * global_factor
    beats = floor + offset_move_bound(generator, images, floor) < r
    factor = np.full(len(radius), global_factor)
    if beats.any():
        near = local_radius(generator, images[beats], r[beats]).numpy()
        factor[beats.numpy()] = np.maximum(near / radius[beats.numpy()], global_factor)
    return factor


def local_ceiling(
    generator: NoiseGenerator,
    x: torch.Tensor,
    radius: torch.Tensor,
    *,
    steps: int = 10,
    seed: int = 0,
) -> torch.Tensor:
    """The smallest ``r`` found (to ``R/2**BISECTION_STEPS``, from above) at which
    ``r + offset_move_found(r) ≥ R``: no certificate through the bound ``r + D(r)`` can
    reach it, however tight the bound on ``D``. ``R`` where no such ``r`` is found."""

    def holds(r: torch.Tensor) -> torch.Tensor:
        found = offset_move_found(generator, x, r, steps=steps, seed=seed)
        return r + found < _r(radius)

    low = _bisect(holds, radius)
    step = _r(radius) / 2**BISECTION_STEPS
    return torch.minimum(low + step, _r(radius))


def _bisect(holds, radius: torch.Tensor) -> torch.Tensor:
    """The largest ``r`` in ``[0, R]`` kept where ``holds(r)`` is true, per image: at
    each step ``r`` moves up to the midpoint where it holds there."""
    top = _r(radius)
    low, high = torch.zeros_like(top), top.clone()
    for _ in range(BISECTION_STEPS):
        middle = (low + high) / 2
        ok = holds(middle) & (top > 0)
        low, high = torch.where(ok, middle, low), torch.where(ok, high, middle)
    return low


def _r(radius: torch.Tensor) -> torch.Tensor:
    return torch.as_tensor(radius, dtype=torch.float64).clamp_min(0.0)


def _interval_dense_block(
    net: DenseBlockNet, x: torch.Tensor, r: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Bounds on ``net``'s output over the ℓ2 balls of radius ``r`` around ``x``."""
    first = net.first
    spread = first.weight.flatten(1).norm(dim=1).view(1, -1, 1, 1) * r.view(-1, 1, 1, 1)
    centre = first(x)
    features = [(centre - spread, centre + spread)]
    for conv in net.dense:
        low, high = _interval_conv(conv, *_stack(features))
        features.append((net.act(low), net.act(high)))
    return _interval_conv(net.out, *_interval_conv(net.fuse, *_stack(features)))


def _interval_conv(
    conv: nn.Conv2d, low: torch.Tensor, high: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    centre, spread = (high + low) / 2, (high - low) / 2
    out = conv(centre)
    width = nn.functional.conv2d(
        spread, conv.weight.abs(), None, conv.stride, conv.padding, conv.dilation, conv.groups
    )
    return out - width, out + width


def _stack(features: list[tuple[torch.Tensor, torch.Tensor]]) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.cat([f[0] for f in features], 1), torch.cat([f[1] for f in features], 1)


def _onto_ball(delta: torch.Tensor, radius: torch.Tensor, to_sphere: float | None) -> torch.Tensor:
    """``delta`` scaled onto the sphere of ``radius`` (``to_sphere``) or projected onto
    the ball (``None``)."""
    norm = delta.flatten(1).norm(dim=1).clamp_min(1e-300).view_as(radius)
    scale = radius / norm if to_sphere else torch.clamp(radius / norm, max=1.0)
    return delta * scale


def _offset_net(generator: NoiseGenerator) -> tuple[DenseBlockNet | None, float]:
    """The offset network and ``mu_bound`` of a certification-wise generator (inside
    the wrappers that keep its ``mu``); ``None`` for a generator whose ``mu`` does not
    depend on the input."""
    inner = generator
    while getattr(inner, "keeps_inner_mu", False):
        inner = inner.inner  # type: ignore[assignment]
    if not inner.depends_on_input:
        return None, 0.0
    if not isinstance(inner, CertificationWiseGenerator):
        raise TypeError(
            "local bounds are for the certification-wise offset network; got "
            f"{type(inner).__name__}"
        )
    return _frozen(inner).mu_net, inner.mu_bound


def _frozen(generator: nn.Module) -> nn.Module:
    copied = copy.deepcopy(generator).to("cpu", torch.float64).eval()
    for parameter in copied.parameters():
        parameter.requires_grad_(False)
    return copied
