"""Data-dependent smoothing: the noise level that maximises each input's radius.

DDRS {Alfarra et al., 2022, Algorithm 1 "OptimizeSigma"}: with the base model frozen
and the class c_A of each input fixed by smoothing at ``sigma0``, run ``K`` steps of
stochastic gradient ascent on a differentiable surrogate of the certified radius,

    R(σ) = σ/2 · (Φ⁻¹(E_A) − Φ⁻¹(E_B))      (Gaussian noise, ℓ2 certificate)
    R(λ) = λ · (E_A − E_B)                   (uniform noise on [−λ, λ]^d, ℓ1 certificate)

where ``E_c`` is the softmax probability of class c averaged over ``M``
reparameterised draws ``x + σ·ε`` (ε standard normal, or uniform on [−1, 1]^d),
``E_A = E_{c_A}`` and ``E_B`` the largest of the others, both clamped to
``[clamp, 1 − clamp]`` so that Φ⁻¹ stays finite. Every input has its own scale, kept
above ``min_scale``.

The model must return logits (the softmax is applied here); a model that returns
probabilities can be wrapped to return their logarithm. The result is only a choice
of noise level: the certificate itself comes from CERTIFY at that level, and an
input-dependent level needs the memory of :mod:`rsutils.memory` to be sound.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch
from torch import nn

from rsutils.core.validation import check_model
from rsutils.ddrs.sigma_store import SigmaStore

if TYPE_CHECKING:
    from rsutils.ddrs.training import DataDependentSigmas

__all__ = ["SURROGATES", "SigmaAscent", "SigmaResult", "optimize_sigma", "surrogate_radius"]


def _gaussian_l2(scale: torch.Tensor, e_a: torch.Tensor, e_b: torch.Tensor) -> torch.Tensor:
    return scale / 2 * (torch.special.ndtri(e_a) - torch.special.ndtri(e_b))


def _uniform_l1(scale: torch.Tensor, e_a: torch.Tensor, e_b: torch.Tensor) -> torch.Tensor:
    return scale * (e_a - e_b)


#: Noise family → (threat norm, surrogate radius as a function of scale, E_A, E_B).
SURROGATES = {"gaussian": ("l2", _gaussian_l2), "uniform": ("l1", _uniform_l1)}


@dataclass(frozen=True)
class SigmaAscent:
    """The settings of Algorithm 1.

    ``iterations`` is K (0 returns ``sigma0``), ``lr`` the ascent step size, ``draws``
    the number M of noise draws per step, ``family`` the noise (``"gaussian"`` or
    ``"uniform"``), ``clamp`` how far E_A and E_B are kept from 0 and 1, and
    ``min_scale`` the smallest scale allowed.

    The defaults are the settings of data-dependent certification everywhere in
    rsutils (the book and ``python -m rsutils certify --ascent-steps``): step 0.05 and
    the clamp of DDRS's code, 0.02, with M = 8 draws. A clamp of 0.02 caps the
    gradient of a confidently classified input at ``Φ⁻¹(0.98)``; pass a smaller one
    (e.g. ``clamp=1e-4``) to follow the unclamped surrogate more closely.
    """

    sigma0: float = 0.25
    iterations: int = 100
    lr: float = 0.05
    draws: int = 8
    family: str = "gaussian"
    clamp: float = 0.02
    min_scale: float = 1e-3

    def __post_init__(self) -> None:
        if self.family not in SURROGATES:
            raise ValueError(
                f"sigma ascent supports the noise families {sorted(SURROGATES)}, "
                f"got {self.family!r}"
            )
        if not self.sigma0 > 0 or not self.min_scale > 0:
            raise ValueError(
                f"sigma0 and min_scale must be positive, got {self.sigma0!r}, {self.min_scale!r}"
            )
        if isinstance(self.iterations, bool) or self.iterations < 0:
            raise ValueError(f"iterations (K) must be >= 0, got {self.iterations!r}")
        if self.draws < 1:
            raise ValueError(f"draws (M) must be >= 1, got {self.draws!r}")
        if not self.lr > 0:
            raise ValueError(f"lr must be positive, got {self.lr!r}")
        if not 0 < self.clamp < 0.5:
            raise ValueError(f"clamp must be in (0, 0.5), got {self.clamp!r}")

    @property
    def norm(self) -> str:
        """The threat norm of the certificate this surrogate stands for."""
        return SURROGATES[self.family][0]

    def batch_sigmas(self, size: int, initial: float, start_epoch: int) -> DataDependentSigmas:
        """DDRS Algorithm 2's per-sample sigmas for a training run on ``size`` samples
        with these settings (:class:`~rsutils.ddrs.training.DataDependentSigmas`): what
        :func:`~rsutils.training.train.train_model` uses when ``TrainConfig.ds`` is set."""
        from rsutils.ddrs.training import DataDependentSigmas  # built on this module

        return DataDependentSigmas(self, SigmaStore(size, initial), start_epoch)

    def as_dict(self) -> dict[str, object]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


@dataclass(frozen=True)
class SigmaResult:
    """Per-input outcome: the scale found, the fixed class c_A, the surrogate radius at
    every iterate (``history[:, k]`` is R at the k-th scale; the last column is R at the
    returned scale) and the scales themselves (``path[:, k]`` is the k-th scale,
    ``path[:, 0]`` the start and ``path[:, -1]`` the scale returned)."""

    scale: torch.Tensor
    classes: torch.Tensor
    history: torch.Tensor
    path: torch.Tensor


def surrogate_radius(
    probabilities: torch.Tensor, classes: torch.Tensor, scale: torch.Tensor, config: SigmaAscent
) -> torch.Tensor:
    """The surrogate radius of each input from its expected softmax ``(B, C)``."""
    e_a = probabilities.gather(1, classes[:, None]).squeeze(1)
    others = probabilities.scatter(1, classes[:, None], -1.0)
    e_b = others.max(dim=1).values
    e_a = e_a.clamp(config.clamp, 1 - config.clamp)
    e_b = e_b.clamp(config.clamp, 1 - config.clamp)
    return SURROGATES[config.family][1](scale, e_a, e_b)


def _draw(
    config: SigmaAscent, shape: torch.Size, generators: Sequence[torch.Generator], dtype, device
) -> torch.Tensor:
    """Standardised noise ``(B, M, *shape)``, each input's draws from its own generator."""
    out = torch.empty((len(generators), config.draws, *shape), dtype=dtype, device=device)
    for row, generator in zip(out, generators, strict=True):
        if config.family == "gaussian":
            row.normal_(generator=generator)
        else:
            row.uniform_(-1.0, 1.0, generator=generator)
    return out


def _expected_softmax(
    model: nn.Module, x: torch.Tensor, scale: torch.Tensor, noise: torch.Tensor
) -> torch.Tensor:
    batch, draws = noise.shape[:2]
    view = (batch, 1, *([1] * (x.dim() - 1)))
    noisy = x[:, None] + scale.view(view) * noise
    logits = model(noisy.reshape(batch * draws, *x.shape[1:]))
    return torch.softmax(logits.float(), dim=1).view(batch, draws, -1).mean(dim=1)


def optimize_sigma(
    model: nn.Module,
    x: torch.Tensor,
    config: SigmaAscent,
    generators: torch.Generator | Sequence[torch.Generator],
    *,
    classes: torch.Tensor | None = None,
    initial: torch.Tensor | None = None,
) -> SigmaResult:
    """Algorithm 1 for a batch ``x`` of shape ``(B, *input_shape)``.

    ``generators`` is one generator per input (then each input's scale does not
    depend on the rest of the batch) or one shared by all. ``classes`` fixes c_A;
    by default it is the argmax of the expected softmax at the starting scales, which
    are ``initial`` (one per input, e.g. last epoch's, in DS training) or else
    ``sigma0``. Gradients
    flow to the scales only: the model's parameters are untouched, and the model
    must be in eval mode (batch norm in training mode would mix the inputs).
    """
    check_model(model)
    if isinstance(generators, torch.Generator):
        generators = [generators] * x.shape[0]
    if len(generators) != x.shape[0]:
        raise ValueError(f"got {len(generators)} generators for a batch of {x.shape[0]} inputs")
    dtype = x.dtype
    if initial is None:
        scale = torch.full((x.shape[0],), float(config.sigma0), dtype=dtype, device=x.device)
    else:
        scale = initial.detach().to(device=x.device, dtype=dtype).clamp(min=config.min_scale)
        if scale.shape != (x.shape[0],):
            raise ValueError(f"initial must have shape ({x.shape[0]},), got {tuple(scale.shape)}")
    history, path = [], []
    for step in range(config.iterations + 1):
        path.append(scale.detach().clone())
        scale.requires_grad_(True)
        noise = _draw(config, x.shape[1:], generators, dtype, x.device)
        with torch.enable_grad():
            probabilities = _expected_softmax(model, x, scale, noise)
            if classes is None:
                classes = probabilities.argmax(dim=1).detach()
            radius = surrogate_radius(probabilities, classes, scale, config)
            history.append(radius.detach())
            if step == config.iterations:
                break
            (gradient,) = torch.autograd.grad(radius.sum(), scale)
        with torch.no_grad():
            scale = (scale + config.lr * gradient).clamp_(min=config.min_scale)
    if not bool(torch.isfinite(scale).all()):
        raise ValueError(
            "sigma ascent reached a NaN or infinite noise level: the base model returned "
            "non-finite outputs on noisy inputs; check its weights and forward pass"
        )
    return SigmaResult(
        scale=scale.detach(),
        classes=classes,
        history=torch.stack(history, dim=1).cpu(),
        path=torch.stack(path, dim=1).cpu(),
    )
