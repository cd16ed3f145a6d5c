"""UCAN's noise parameter generators (NPGs, §IV): where ``mu`` and ``sigma`` come from.

Every generator is an ``nn.Module`` whose ``forward(x)`` maps a batch of inputs
``(B, *shape)`` to ``(mu, sigma)``, two tensors of the same shape: the anisotropic
noise at input ``x_b`` is ``mu_b + sigma_b ⊙ λ·eps`` (``λ`` the base family's scale,
so ``sigma`` is a multiplier of the standard deviation, as in UCAN's code; the paper
calls it "variance"). The three kinds differ in what ``mu`` and ``sigma`` depend on:

- :class:`FixedNoise` — nothing: a fixed pattern (pattern-wise, Eq. 12, with
  :func:`~rsutils.anisotropic.patterns.spatial_pattern`) or ``sigma ≡ 1`` (isotropic);
  no trainable parameters.
- :class:`DatasetWiseGenerator` — the dataset only: two MLPs on a constant input
  (§IV-B), trained with the classifier, so one ``(mu, sigma)`` serves every input.
- :class:`CertificationWiseGenerator` — the input itself (§IV-C): two small
  dense-block CNNs in cascade, ``mu = G_mu(x)`` then ``sigma = G_sigma(x + mu)``.

Outputs are bounded as UCAN designs them, with an amplified ``tanh``: ``sigma`` lies
in ``[floor, floor + gamma)`` (``gamma·|tanh|`` as in UCAN's code, plus a small
``floor`` so that Theorem 2's scale is invertible, as UCAN §IV advises) and ``mu`` in
``(−mu_bound, mu_bound)``. The last layers start at zero weights, so a fresh generator
outputs ``mu = 0`` and ``sigma = initial_sigma`` everywhere: training starts from the
isotropic noise of the base classifier, and the gradients reach those weights from the
first step.

UCAN's ``sigma`` head ``floor + gamma·|tanh(raw)|`` folds both signs of the sigma
network's output ``raw`` onto the same scale, so a large ``|raw|`` of either sign gives
the upper bound, where the head's slope vanishes. ``head`` (:data:`SIGMA_HEADS`) selects
a monotone head instead, to tell that fold apart from what the loss wants:
``"sigmoid"`` (``floor + gamma·sigmoid(raw)``, a large negative ``raw`` gives the
floor) or ``"log"`` (``sigma = exp(raw)``, unbounded, its log moving one for one with
``raw``; ``gamma`` and ``floor`` do not apply). :func:`head_slope` is each head's slope.

A learned generator may also keep a **budget** (:func:`apply_budget`): its ``sigma``
rescaled per input so that the geometric mean (the ALM's factor) or the minimum (the
radius' factor) equals ``budget_value`` exactly. Then training can change the shape
of the noise, never its amount; the budget is a setting of the generator, so
certification and the audit use the same ``sigma`` as training.
"""

from __future__ import annotations

import math
import os

import torch
from torch import nn

from rsutils.models.checkpoints import load_checkpoint
from rsutils.models.dataset_fit import error_line

__all__ = [
    "BUDGETS",
    "GENERATOR_KINDS",
    "SIGMA_HEADS",
    "CertificationWiseGenerator",
    "DatasetWiseGenerator",
    "DenseBlockNet",
    "FixedNoise",
    "NoiseGenerator",
    "WithoutOffset",
    "apply_budget",
    "build_generator",
    "head_slope",
    "load_generator",
    "parameter_summary",
    "sigma_bound",
    "sigma_from_raw",
]


class NoiseGenerator(nn.Module):
    """Base class: ``forward(x) -> (mu, sigma)``, each of ``x``'s shape.

    ``kind`` names the generator and ``settings()`` returns the keyword arguments that
    rebuild it with :func:`build_generator`, so a checkpoint stores both with the
    weights. ``depends_on_input`` is true when ``mu`` and ``sigma`` change with ``x``:
    then a certificate holds for the noise at the certified input only (UCAN Theorem 7),
    and the deployed classifier, which recomputes them at a perturbed input, is not
    covered by it.
    """

    kind: str = ""
    depends_on_input: bool = False

    def settings(self) -> dict[str, object]:
        raise NotImplementedError

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(mu, sigma)`` for the batch ``x``, each of ``x``\'s shape."""
        raise NotImplementedError


#: The heads that turn the sigma network's output ``raw`` into ``sigma``: UCAN's
#: ``floor + gamma·|tanh(raw)|`` (the default), the monotone ``floor + gamma·sigmoid(raw)``,
#: and ``exp(raw)`` (unbounded; a budget then acts on ``raw``, the log of ``sigma``).
SIGMA_HEADS = ("abs-tanh", "sigmoid", "log")


def _check_head(head: str) -> None:
    if head not in SIGMA_HEADS:
        raise ValueError(f"head must be one of {SIGMA_HEADS}, got {head!r}")


def sigma_from_raw(
    raw: torch.Tensor,
    head: str,
    gamma: float,
    floor: float,
    budget: str | None = None,
    value: float = 1.0,
) -> torch.Tensor:
    """``sigma`` from the sigma network's output ``raw`` through ``head``, with the budget.

    ``"abs-tanh"``: ``floor + gamma·|tanh(raw)|``, in ``[floor, floor + gamma)``;
    ``"sigmoid"``: ``floor + gamma·sigmoid(raw)``, in ``(floor, floor + gamma)``; both
    then rescaled by :func:`apply_budget`. ``"log"``: ``exp(raw)``, and a budget applied
    to ``raw`` itself, ``value·exp(raw − mean(raw))`` for ``"gmean"`` (the geometric mean
    is ``value`` exactly in exact arithmetic, and the ratios of the scales are those of
    ``exp(raw)``) or ``value·exp(raw − min(raw))`` for ``"min"``, per input (dimension 0).
    """
    _check_head(head)
    if head == "abs-tanh":
        return apply_budget(floor + gamma * torch.tanh(raw).abs(), budget, value)
    if head == "sigmoid":
        return apply_budget(floor + gamma * torch.sigmoid(raw), budget, value)
    if budget is None:
        return raw.exp()
    _check_budget(budget, value)
    flat = raw.flatten(1)
    level = flat.mean(dim=1) if budget == "gmean" else flat.min(dim=1).values
    shifted = raw - level.reshape(-1, *([1] * (raw.dim() - 1)))
    return value * shifted.exp()


def head_slope(raw: torch.Tensor, head: str) -> torch.Tensor:
    """How fast ``head`` moves ``sigma`` with ``raw``, relative to its range: the
    derivative of ``|tanh(raw)|`` or of ``sigmoid(raw)`` (``sigma = floor + gamma·that``),
    and of ``log sigma = raw`` (1 everywhere) for ``"log"``. Where it is near 0 a gradient
    step on ``raw`` barely moves ``sigma``: the bounded heads' saturated region."""
    _check_head(head)
    if head == "abs-tanh":
        return 1 - torch.tanh(raw) ** 2
    if head == "sigmoid":
        s = torch.sigmoid(raw)
        return s * (1 - s)
    return torch.ones_like(raw)


def sigma_bound(generator: nn.Module) -> float | None:
    """The largest ``sigma`` a generator's head can give before a budget, ``floor +
    gamma``; ``None`` for a generator without one (a fixed noise, or the ``"log"``
    head)."""
    gamma, floor = getattr(generator, "gamma", None), getattr(generator, "floor", None)
    if gamma is None or floor is None or getattr(generator, "head", "abs-tanh") == "log":
        return None
    return float(gamma) + float(floor)


#: What a budget can fix, the geometric mean of ``sigma`` (the ALM's factor) or its minimum
#: (the radius' factor).
BUDGETS = ("gmean", "min")


def apply_budget(sigma: torch.Tensor, budget: str | None, value: float = 1.0) -> torch.Tensor:
    """``sigma`` rescaled per input (dimension 0) to a fixed geometric mean or minimum.

    ``budget="gmean"`` returns ``sigma·value/gmean(sigma)`` and ``budget="min"``
    returns ``sigma·value/min(sigma)``, over the dimensions of one input, so that the
    geometric mean (``exp(mean(log sigma))``) or the minimum of every input's scales is
    ``value`` up to float rounding; the ratios between scales, the noise's shape, are
    unchanged, and gradients flow through the rescaling. ``None`` returns ``sigma``.
    """
    if budget is None:
        return sigma
    _check_budget(budget, value)
    flat = sigma.flatten(1)
    if budget == "gmean":
        level = flat.log().mean(dim=1).exp()
    else:
        level = flat.min(dim=1).values
    return sigma * (value / level).reshape(-1, *([1] * (sigma.dim() - 1)))


def _check_budget(budget: str | None, value: float) -> None:
    if budget is not None and budget not in BUDGETS:
        raise ValueError(f"budget must be None, 'gmean' or 'min', got {budget!r}")
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"budget_value must be a finite number > 0, got {value!r}")


def _check_bounds(gamma: float, floor: float, initial_sigma: float, head: str) -> None:
    _check_head(head)
    if head == "log":
        if not (math.isfinite(initial_sigma) and initial_sigma > 0):
            raise ValueError(f"initial_sigma must be > 0, got {initial_sigma!r}")
        return
    if not (math.isfinite(gamma) and gamma > 0):
        raise ValueError(f"gamma must be a finite number > 0, got {gamma!r}")
    if not (math.isfinite(floor) and floor > 0):
        raise ValueError(f"floor must be > 0 (sigma must stay invertible), got {floor!r}")
    if not floor < initial_sigma < floor + gamma:
        raise ValueError(
            f"initial_sigma must lie in (floor, floor + gamma) = ({floor}, {floor + gamma}); "
            f"got {initial_sigma!r}"
        )


def _head_setting(head: str) -> dict[str, str]:
    """The head among a generator's settings only when it is not UCAN's, so that the
    settings of a generator saved before heads existed stay what they were."""
    return {} if head == "abs-tanh" else {"head": head}


def _start_at(layer: nn.Module, value: float) -> None:
    """Zero weights and a constant bias: the layer outputs ``value`` at the start."""
    nn.init.zeros_(layer.weight)
    nn.init.constant_(layer.bias, value)


def _raw_for(initial_sigma: float, gamma: float, floor: float, head: str) -> float:
    """The ``raw`` at which ``head`` gives ``initial_sigma``."""
    if head == "log":
        return math.log(initial_sigma)
    share = (initial_sigma - floor) / gamma
    if head == "sigmoid":
        return math.log(share / (1 - share))
    return math.atanh(share)


class FixedNoise(NoiseGenerator):
    """``mu`` and ``sigma`` that do not depend on anything (pattern-wise, isotropic).

    ``sigma`` (positive) and ``mu`` (default 0) have the shape of one input or one that
    broadcasts to it, e.g. ``(1, H, W)`` from
    :func:`~rsutils.anisotropic.patterns.spatial_pattern`. They are buffers, saved in
    the state dict, never trained.
    """

    kind = "fixed"

    def __init__(self, sigma: torch.Tensor, mu: torch.Tensor | None = None) -> None:
        super().__init__()
        sigma = torch.as_tensor(sigma, dtype=torch.float32)
        if not bool(torch.isfinite(sigma).all() and (sigma > 0).all()):
            raise ValueError("sigma must be finite and positive everywhere")
        mu = torch.zeros_like(sigma) if mu is None else torch.as_tensor(mu, dtype=torch.float32)
        self.register_buffer("sigma", sigma)
        self.register_buffer("mu", mu)

    def settings(self) -> dict[str, object]:
        return {"shape": list(self.sigma.shape), "mu_shape": list(self.mu.shape)}

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(mu, sigma)`` for the batch ``x``, each of ``x``\'s shape."""
        sigma = self.sigma.to(x.dtype).expand_as(x)
        return self.mu.to(x.dtype).expand_as(x), sigma


class DatasetWiseGenerator(NoiseGenerator):
    """UCAN's dataset-wise NPG: two MLPs on a constant input, one ``(mu, sigma)`` for all.

    Each MLP is UCAN's GAN-style generator: five linear layers (``1 → 128 → 256 → 512
    → 1024 → d``), LeakyReLU(0.2) after the first four, no batch normalisation (as in
    UCAN's code), then the amplified ``tanh``. ``mu ∈ (−mu_bound, mu_bound)``,
    ``sigma ∈ [floor, floor + gamma)``; with a ``budget`` that ``sigma`` is then
    rescaled by :func:`apply_budget` (one factor for the one ``sigma`` of all inputs).
    ``head`` replaces UCAN's ``|tanh|`` on ``sigma`` (:func:`sigma_from_raw`).

    Its constructor takes nine parameters: the input shape, then the
    network's hyperparameters as UCAN's code names them (the bounds ``gamma``,
    ``mu_bound``, ``floor``, the initial sigma, the hidden widths), the budget and the
    head, each with its default, and a checkpoint stores them as they are.
    """

    kind = "dataset"

    def __init__(
        self,
        shape: tuple[int, ...],
        *,
        gamma: float = 2.0,
        mu_bound: float = 1.0,
        floor: float = 1e-3,
        initial_sigma: float = 1.0,
        hidden: tuple[int, ...] = (128, 256, 512, 1024),
        budget: str | None = None,
        budget_value: float = 1.0,
        head: str = "abs-tanh",
    ) -> None:
        super().__init__()
        _check_bounds(gamma, floor, initial_sigma, head)
        _check_budget(budget, budget_value)
        self.budget, self.budget_value, self.head = budget, float(budget_value), head
        self.shape = tuple(int(s) for s in shape)
        self.gamma, self.mu_bound, self.floor = float(gamma), float(mu_bound), float(floor)
        self.initial_sigma, self.hidden = float(initial_sigma), tuple(hidden)
        d = math.prod(self.shape)
        self.mu_net, self.sigma_net = self._mlp(d), self._mlp(d)
        _start_at(self.mu_net[-1], 0.0)
        _start_at(self.sigma_net[-1], _raw_for(initial_sigma, gamma, floor, head))
        self.register_buffer("constant", torch.ones(1, 1))

    def _mlp(self, d: int) -> nn.Sequential:
        layers: list[nn.Module] = []
        width = 1
        for size in self.hidden:
            layers += [nn.Linear(width, size), nn.LeakyReLU(0.2)]
            width = size
        return nn.Sequential(*layers, nn.Linear(width, d))

    def settings(self) -> dict[str, object]:
        return {
            "shape": list(self.shape),
            "gamma": self.gamma,
            "mu_bound": self.mu_bound,
            "floor": self.floor,
            "initial_sigma": self.initial_sigma,
            "hidden": list(self.hidden),
            "budget": self.budget,
            "budget_value": self.budget_value,
            **_head_setting(self.head),
        }

    def raw_sigma(self, x: torch.Tensor) -> torch.Tensor:
        """The sigma network's output before the head, of ``x``'s shape (the same for
        every input)."""
        raw = self.sigma_net(self.constant).reshape(self.shape)
        return raw.to(x.dtype).expand_as(x)

    def parameters_once(self) -> tuple[torch.Tensor, torch.Tensor]:
        """``(mu, sigma)`` of shape ``shape``: the same for every input."""
        mu = self.mu_bound * torch.tanh(self.mu_net(self.constant)).reshape(self.shape)
        sigma = sigma_from_raw(
            self.sigma_net(self.constant), self.head, self.gamma, self.floor,
            self.budget, self.budget_value,
        )  # fmt: skip
        return mu, sigma.reshape(self.shape)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(mu, sigma)`` for the batch ``x``, each of ``x``\'s shape."""
        if tuple(x.shape[1:]) != self.shape:
            raise ValueError(f"inputs of shape {tuple(x.shape[1:])}, generator for {self.shape}")
        mu, sigma = self.parameters_once()
        return mu.to(x.dtype).expand_as(x), sigma.to(x.dtype).expand_as(x)


class DenseBlockNet(nn.Module):
    """UCAN's certification-wise network: a first conv, a dense block, two output convs.

    ``conv3×3 c → width``, then four ``conv3×3`` each followed by LeakyReLU(0.2) whose
    inputs are the concatenation of everything before (dense connections, growth
    ``growth``), a fusion conv back to ``width`` and the output conv to ``c``: seven
    convolutions, as in UCAN's code (the paper says "4 convolutional layers").
    """

    def __init__(self, channels: int, width: int, growth: int) -> None:
        super().__init__()
        self.first = nn.Conv2d(channels, width, 3, padding=1)
        self.dense = nn.ModuleList(
            nn.Conv2d(width + k * growth, growth, 3, padding=1) for k in range(4)
        )
        self.fuse = nn.Conv2d(width + 4 * growth, width, 3, padding=1)
        self.out = nn.Conv2d(width, channels, 3, padding=1)
        self.act = nn.LeakyReLU(0.2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """The network's output, of the shape of ``x``."""
        features = [self.first(x)]
        for conv in self.dense:
            features.append(self.act(conv(torch.cat(features, dim=1))))
        return self.out(self.fuse(torch.cat(features, dim=1)))


class CertificationWiseGenerator(NoiseGenerator):
    """UCAN's certification-wise NPG: ``mu = G_mu(x)``, then ``sigma = G_sigma(x + mu)``.

    Both networks are :class:`DenseBlockNet`. ``mu = mu_bound·tanh(G_mu(x))`` (UCAN's
    code uses ``mu_bound = λ``); ``sigma = floor + gamma·|tanh(G_sigma(x + mu))|`` with
    ``gamma = 1`` as in the paper, rescaled per input by :func:`apply_budget` when
    there is a ``budget``. ``mu`` and ``sigma`` depend on the input, so a certificate
    covers the noise at the certified input only (see :class:`NoiseGenerator`).

    Its constructor takes ten parameters: they are the network's
    hyperparameters as UCAN's code names them (channels, the bounds ``gamma``,
    ``mu_bound``, ``floor``, the initial sigma, width and growth, and the budget), each
    with UCAN's default, and the head of ``sigma`` (:func:`sigma_from_raw`; UCAN's by
    default), and a checkpoint stores them as they are.
    """

    kind = "certification"
    depends_on_input = True

    def __init__(
        self,
        channels: int = 1,
        *,
        gamma: float = 1.0,
        mu_bound: float = 0.5,
        floor: float = 1e-3,
        initial_sigma: float = 0.5,
        width: int = 8,
        growth: int = 8,
        budget: str | None = None,
        budget_value: float = 1.0,
        head: str = "abs-tanh",
    ) -> None:
        super().__init__()
        _check_bounds(gamma, floor, initial_sigma, head)
        _check_budget(budget, budget_value)
        self.budget, self.budget_value, self.head = budget, float(budget_value), head
        self.channels, self.width, self.growth = int(channels), int(width), int(growth)
        self.gamma, self.mu_bound, self.floor = float(gamma), float(mu_bound), float(floor)
        self.initial_sigma = float(initial_sigma)
        self.mu_net = DenseBlockNet(self.channels, self.width, self.growth)
        self.sigma_net = DenseBlockNet(self.channels, self.width, self.growth)
        _start_at(self.mu_net.out, 0.0)
        _start_at(self.sigma_net.out, _raw_for(initial_sigma, gamma, floor, head))

    def settings(self) -> dict[str, object]:
        return {
            "channels": self.channels,
            "gamma": self.gamma,
            "mu_bound": self.mu_bound,
            "floor": self.floor,
            "initial_sigma": self.initial_sigma,
            "width": self.width,
            "growth": self.growth,
            "budget": self.budget,
            "budget_value": self.budget_value,
            **_head_setting(self.head),
        }

    def raw_sigma(self, x: torch.Tensor) -> torch.Tensor:
        """The sigma network's output at ``x + mu(x)``, before the head."""
        return self.sigma_net(x + self.mu_bound * torch.tanh(self.mu_net(x)))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(mu, sigma)`` for the batch ``x``, each of ``x``\'s shape."""
        mu = self.mu_bound * torch.tanh(self.mu_net(x))
        sigma = sigma_from_raw(
            self.sigma_net(x + mu), self.head, self.gamma, self.floor,
            self.budget, self.budget_value,
        )  # fmt: skip
        return mu, sigma


class WithoutOffset(NoiseGenerator):
    """``generator``'s ``sigma`` with ``mu ≡ 0``: the ablation that shows what ``mu`` does.

    For the certification-wise generator ``sigma`` is still computed from
    ``x + mu(x)``, so only the offset added to the noisy input is removed.
    """

    def __init__(self, generator: NoiseGenerator) -> None:
        super().__init__()
        self.inner = generator
        self.kind = f"{generator.kind}-without-mu"
        self.depends_on_input = generator.depends_on_input
        self.train(generator.training)

    def settings(self) -> dict[str, object]:
        raise TypeError("an ablation is not saved; save the generator it wraps")

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(mu, sigma)`` for the batch ``x``, each of ``x``\'s shape."""
        mu, sigma = self.inner(x)
        return torch.zeros_like(mu), sigma


@torch.no_grad()
def parameter_summary(generator: NoiseGenerator, images: torch.Tensor) -> dict[str, float]:
    """What ``generator`` gives on ``images``: its ``sigma`` and ``mu``, averaged over them.

    ``min σ`` and ``geometric mean σ`` (per image, then averaged) are the factors that
    turn ``R`` into the radius and the ALM; ``max σ`` is the largest over all images;
    ``mean |μ|`` and ``‖μ‖₂`` measure the offset.
    """
    mu, sigma = generator(images)
    flat_sigma, flat_mu = sigma.flatten(1).double(), mu.flatten(1).double()
    return {
        "min σ": float(flat_sigma.min(dim=1).values.mean()),
        "max σ": float(flat_sigma.max()),
        "geometric mean σ": float(flat_sigma.log().mean(dim=1).exp().mean()),
        "mean |μ|": float(flat_mu.abs().mean()),
        "‖μ‖₂": float(flat_mu.norm(dim=1).mean()),
    }


GENERATOR_KINDS: dict[str, type[NoiseGenerator]] = {
    "fixed": FixedNoise,
    "dataset": DatasetWiseGenerator,
    "certification": CertificationWiseGenerator,
}


def build_generator(kind: str, settings: dict[str, object]) -> NoiseGenerator:
    """A fresh generator of ``kind`` from its ``settings()`` (weights to be loaded)."""
    if kind not in GENERATOR_KINDS:
        raise ValueError(
            f"unknown generator kind {kind!r}; choose one of {sorted(GENERATOR_KINDS)}"
        )
    if kind == "fixed":
        shape, mu_shape = settings["shape"], settings["mu_shape"]
        return FixedNoise(torch.ones(shape), torch.zeros(mu_shape))  # type: ignore[arg-type]
    return GENERATOR_KINDS[kind](**settings)  # type: ignore[arg-type]


def load_generator(
    path: str | os.PathLike[str], *, map_location: str | torch.device = "cpu"
) -> NoiseGenerator:
    """The noise parameter generator saved in the checkpoint at ``path``, in eval mode.

    Saved with ``save_checkpoint(model, path, ..., generator=generator)``; a checkpoint
    without one is an error that says so.
    """
    _, info = load_checkpoint(path, map_location=map_location)
    stored = info["generator"]
    if stored is None:
        raise ValueError(
            f"{os.fspath(path)!r} holds a classifier without a noise parameter generator; "
            "pass the checkpoint saved with its generator (save_checkpoint(..., generator=g))"
        )
    try:
        generator = build_generator(stored["kind"], stored["settings"])
        generator.load_state_dict(stored["state_dict"])
    except (KeyError, TypeError, AttributeError, RuntimeError) as error:  # a damaged entry
        raise ValueError(
            f"{os.fspath(path)!r} holds a noise parameter generator rsutils cannot read "
            f"({type(error).__name__}: {error_line(error)}); save it again with "
            "save_checkpoint(..., generator=g)"
        ) from None
    return generator.to(map_location).eval()
