"""Auditing certification-wise anisotropic certificates against the deployed classifier.

UCAN's certification-wise noise computes, for each input, an offset ``mu(x)`` and a
per-dimension scale ``sigma(x) > 0`` with a generator network, and smooths with
``x + mu(x) + sigma(x) ⊙ λε``, ``ε ~ N(0, I)``. CERTIFY at ``x`` returns a class ``c``
and ``R = λΦ⁻¹(pA_lower)``, and the claimed region is
``E_x = {x + δ : ‖δ ⊘ sigma(x)‖₂ < R}`` (UCAN Theorem 7).

Theorem 7 is correct for the classifier ``g_x`` whose ``mu`` and ``sigma`` are *frozen*
at their values at ``x`` (:func:`frozen`). A deployed system only sees ``z = x + δ`` and
computes ``mu(z)``, ``sigma(z)``: it is

    ``G(z) = argmax_k P(f(z + mu(z) + sigma(z) ⊙ λε) = k)``,

and nothing makes ``G(x + δ) = c`` inside ``E_x``. :func:`audit_certificate` looks for
points of ``E_x`` where ``G`` is, with confidence ``1 − alpha``, another class: random
points near the region's boundary (:func:`boundary_points`) and a projected gradient
ascent through both the base model and the generator (:func:`attack_in_region`).
Every candidate is checked by a fresh Monte Carlo sample and a Clopper–Pearson bound
(:func:`verify_point`); a search only proposes points, it never decides.

Everything here works below :class:`~rsutils.core.smooth.Smooth`: there is no input
range check unless ``input_range`` is passed (inputs need not be pixels; the tests use
2-D inputs). With ``input_range=None`` the audit searches the whole region the
certificate claims, which is what Theorem 7 states; pass ``input_range=(0, 1)`` for
images to search only inputs that a deployed ``Smooth`` (which refuses inputs
outside its range) would classify.

The noise-parameter function ``params(z) -> (mu, sigma)`` maps a batch ``z`` of shape
``(B, *shape)`` to two tensors of that shape and must be differentiable in ``z`` for
the attack (an ``nn.Module`` or any callable). The base ``model`` maps ``(B, *shape)``
to logits ``(B, K)`` and is in eval mode. Everything runs on the model's device and in
its floating-point type.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, fields
from typing import Literal

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
from scipy.stats import binomtest
from torch import nn

from rsutils.anisotropic.noise import Anisotropic
from rsutils.core.confidence import check_alpha, clopper_pearson_lower
from rsutils.core.devices import model_device, model_dtype
from rsutils.core.noise import Gaussian
from rsutils.core.sampling import count_classes
from rsutils.core.settings import check_count
from rsutils.core.validation import check_input_range, check_model

__all__ = [
    "AuditPoint",
    "AuditRecord",
    "AuditSummary",
    "FrozenParams",
    "PointVerdict",
    "attack_in_region",
    "audit_certificate",
    "audit_log",
    "boundary_points",
    "classify_counts",
    "deployed_counts",
    "frozen",
    "noise_params",
    "record_from_dict",
    "record_to_dict",
    "summarize_audits",
    "verify_point",
]

#: ``params(z) -> (mu, sigma)`` for a batch ``z`` of shape ``(B, *shape)``.
NoiseParams = Callable[[torch.Tensor], tuple[torch.Tensor, torch.Tensor]]
Verdict = Literal["contradiction", "agrees", "ambiguous"]

#: The audit's independent noise streams; offset so that they never coincide with
#: CERTIFY's streams of :func:`rsutils.core.sampling.image_generator` for the same seed.
_STREAMS = {"boundary": 1000, "attack": 1001, "verify": 1002}


# --------------------------------------------------------------------------- parameters


def noise_params(params: NoiseParams, z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``params(z)``, checked: two tensors shaped like the batch ``z``, finite, sigma > 0.

    Any failure is a ``ValueError`` (``TypeError`` if ``params`` does not return a
    pair of tensors): sigma ≤ 0 would make the region and the noise meaningless.
    """
    out = params(z)
    if not (isinstance(out, tuple | list) and len(out) == 2):
        raise TypeError(f"params(z) must return a pair (mu, sigma), got {type(out).__name__}")
    mu, sigma = out
    for name, tensor in (("mu", mu), ("sigma", sigma)):
        if not isinstance(tensor, torch.Tensor):
            raise TypeError(f"params(z) returned {name} of type {type(tensor).__name__}")
        if tensor.shape != z.shape:
            raise ValueError(
                f"params(z) returned {name} of shape {tuple(tensor.shape)} for a batch z of "
                f"shape {tuple(z.shape)}; mu and sigma must have the shape of z"
            )
        if not bool(torch.isfinite(tensor.detach()).all()):
            raise ValueError(f"params(z) returned non-finite values in {name}")
    if not bool((sigma.detach() > 0).all()):
        raise ValueError("params(z) returned sigma <= 0; the scale must be positive everywhere")
    return mu, sigma


@dataclass(frozen=True, eq=False)
class FrozenParams:
    """``z -> (mu, sigma)`` fixed at one input's values (UCAN Theorem 7's classifier g_x)."""

    mu: torch.Tensor
    sigma: torch.Tensor

    def __call__(self, z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        if z.shape[1:] != self.mu.shape:
            raise ValueError(
                f"frozen parameters have the shape {tuple(self.mu.shape)} of one input, "
                f"got a batch of shape {tuple(z.shape)}"
            )
        mu = self.mu.to(z.device, z.dtype).expand_as(z)
        return mu, self.sigma.to(z.device, z.dtype).expand_as(z)


def frozen(params: NoiseParams, x: torch.Tensor) -> FrozenParams:
    """The parameters ``mu(x)``, ``sigma(x)`` of one input ``x``, returned whatever ``z``.

    Guarantee (UCAN Theorem 7): if CERTIFY at ``x`` is right, the smoothed classifier with
    these frozen parameters keeps class ``c`` on the whole certified region; it is the
    audit's control. ``x`` is one input (no batch dimension); nothing is differentiated
    through the frozen values.
    """
    with torch.no_grad():
        mu, sigma = noise_params(params, x.unsqueeze(0))
    return FrozenParams(mu[0].detach().clone(), sigma[0].detach().clone())


# ------------------------------------------------------------------------ verification


@dataclass(frozen=True)
class PointVerdict:
    """What the deployed classifier G says at one point, with its confidence.

    ``counts`` are class counts of ``n`` draws; ``top`` the most frequent class;
    ``top_lower`` its one-sided Clopper–Pearson lower bound at level ``level``;
    ``certified`` the class ``c`` the certificate claims. ``verdict``:

    - ``"contradiction"``: ``top ≠ c`` and ``top_lower > 1/2``, so G(z) = top ≠ c;
    - ``"agrees"``: ``top = c`` and ``top_lower > 1/2``, so G(z) = c;
    - ``"ambiguous"``: neither.

    Each of the first two is wrong with probability at most ``alpha`` (see
    :func:`classify_counts`).
    """

    counts: tuple[int, ...]
    certified: int
    top: int
    top_lower: float
    level: float
    alpha: float
    verdict: Verdict

    @property
    def n(self) -> int:
        return sum(self.counts)

    @property
    def pA_hat(self) -> float:
        """The fraction of draws in the certified class."""
        return self.counts[self.certified] / self.n


def classify_counts(counts: Sequence[int] | np.ndarray, c: int, alpha: float) -> PointVerdict:
    """The verdict at one point from its class counts (no sampling).

    Only the most frequent class can have a lower bound above 1/2. If it is ``c``, it
    is bounded at level ``alpha``. If it is another class, it was selected from the
    same counts, so it is bounded at ``alpha / min(2, K − 1)`` (``K`` classes).

    Guarantee: a ``"contradiction"`` is claimed, while no class ``k ≠ c`` has
    probability above 1/2, with probability at most ``alpha``. This holds however
    many classes there are, and whatever G's true probabilities. The claim needs
    ``lower_k > 1/2`` for some ``k ≠ c`` with ``p_k ≤ 1/2``. Each class's chance of
    that is ``f(p_k)``, with ``f(p) = P(Binomial(n, p) ≥ t)`` for a threshold
    ``t > n/2``. ``f`` is convex on ``[0, 1/2]``, so the sum over classes with
    ``Σ p_k ≤ 1`` is largest when two classes sit at exactly 1/2. That sum is at most
    ``2·level ≤ alpha`` (``level = alpha`` when only one class is not ``c``). An
    ``"agrees"`` is wrong with probability at most ``alpha`` (a single fixed class).
    """
    check_alpha(alpha)
    counts = np.asarray(counts)
    if counts.ndim != 1 or counts.size < 2 or not np.issubdtype(counts.dtype, np.integer):
        raise ValueError(f"counts must be integer counts of >= 2 classes, got {counts!r}")
    if bool((counts < 0).any()) or int(counts.sum()) < 1:
        raise ValueError(f"counts must be non-negative with at least one draw, got {counts!r}")
    _check_class(c, counts.size)
    n = int(counts.sum())
    top = int(np.argmax(counts))
    level = alpha if top == c else alpha / min(2, counts.size - 1)
    lower = float(clopper_pearson_lower(int(counts[top]), n, level))
    if lower > 0.5:
        verdict: Verdict = "agrees" if top == c else "contradiction"
    else:
        verdict = "ambiguous"
    return PointVerdict(
        counts=tuple(int(k) for k in counts),
        certified=int(c),
        top=top,
        top_lower=lower,
        level=level,
        alpha=float(alpha),
        verdict=verdict,
    )


def deployed_counts(
    model: nn.Module,
    params: NoiseParams,
    z: torch.Tensor,
    scale: float,
    n: int,
    *,
    generator: torch.Generator,
    batch_size: int = 1000,
    num_classes: int,
) -> np.ndarray:
    """Class counts of ``f(z + mu(z) + sigma(z) ⊙ λε)`` over ``n`` draws (int64 array).

    ``z`` is one input (no batch dimension). ``mu(z)`` and ``sigma(z)`` are computed once,
    under ``torch.inference_mode``. The draws come from ``generator``, which must live on
    the model's device. They are those of
    :class:`~rsutils.core.smooth.Smooth` with
    ``Anisotropic(Gaussian(scale), sigma(z), mu(z))``. So the counts are independent of
    ``batch_size``, and ``n`` draws from ``generator`` estimate G's class probabilities
    at ``z``.
    """
    check_model(model)
    check_count("n", n)
    check_count("batch_size", batch_size)
    _check_num_classes(num_classes)
    base = Gaussian(scale)
    z = _to_model(model, z, "z")
    _check_generator(generator, z.device)
    with torch.inference_mode():
        mu, sigma = noise_params(params, z.unsqueeze(0))
        noise = Anisotropic(base, sigma[0], mu[0])
    counts = count_classes(
        model,
        z,
        noise,
        n,
        num_classes=num_classes,
        batch_size=batch_size,
        generator=generator,
    )
    return counts.cpu().numpy()


def verify_point(
    model: nn.Module,
    params: NoiseParams,
    z: torch.Tensor,
    c: int,
    *,
    scale: float,
    n: int,
    alpha: float,
    generator: torch.Generator,
    batch_size: int = 1000,
    num_classes: int,
) -> PointVerdict:
    """G's class at ``z`` from ``n`` fresh draws (:func:`deployed_counts`), as a verdict.

    Guarantee: with ``generator`` independent of how ``z`` was chosen, a
    ``"contradiction"`` (G(z) ≠ c) or an ``"agrees"`` (G(z) = c) is wrong with
    probability at most ``alpha`` (:func:`classify_counts`). A contradiction needs the
    other class's lower bound above 1/2, never a single noisy vote.
    """
    check_alpha(alpha)
    _check_class(c, num_classes)
    counts = deployed_counts(
        model,
        params,
        z,
        scale,
        n,
        generator=generator,
        batch_size=batch_size,
        num_classes=num_classes,
    )
    return classify_counts(counts, c, alpha)


# ------------------------------------------------------------------------------ search


def boundary_points(
    sigma_x: torch.Tensor,
    R: float,
    count: int,
    generator: torch.Generator,
    *,
    shrink: float = 0.99,
    ball: bool = False,
) -> torch.Tensor:
    """``count`` random perturbations δ on ``shrink`` times the boundary of the region.

    With ``u ~ N(0, I)``, ``δ = shrink·R·sigma_x ⊙ u/‖u‖₂`` (the ellipsoid
    ``‖δ ⊘ sigma_x‖₂ < R``), or ``δ = shrink·min(sigma_x)·R·u/‖u‖₂`` with ``ball`` (the
    ℓ2 ball inside it, the certificate's ``radius``). ``sigma_x`` is the scale of one
    input. The result has shape ``(count, *sigma_x.shape)``, on ``sigma_x``'s device
    and in its dtype, and ``generator`` must live on that device.

    Guarantee: every δ lies at ``‖δ ⊘ sigma_x‖₂ = shrink·R`` (ball: ``‖δ‖₂ =
    shrink·min(sigma_x)·R``), up to rounding, so strictly inside the open region.
    """
    check_count("count", count)
    _check_radius(R, positive=True)
    _check_shrink(shrink)
    axes = _region_axes(_check_sigma(sigma_x, "sigma_x").unsqueeze(0), ball)[0]
    _check_generator(generator, sigma_x.device)
    u = torch.randn(
        (count, *sigma_x.shape), generator=generator, device=sigma_x.device, dtype=sigma_x.dtype
    )
    norms = u.flatten(1).norm(dim=1).clamp_min(torch.finfo(u.dtype).tiny)
    u = u / norms.reshape(-1, *[1] * sigma_x.dim())
    return (shrink * float(R)) * axes * u


def attack_in_region(
    model: nn.Module,
    params: NoiseParams,
    x: torch.Tensor,
    c: int | Sequence[int] | torch.Tensor,
    sigma_x: torch.Tensor,
    R: float | Sequence[float] | torch.Tensor,
    *,
    scale: float,
    steps: int,
    draws: int,
    generator: torch.Generator,
    ball: bool = False,
    shrink: float = 0.99,
    input_range: tuple[float, float] | None = None,
) -> torch.Tensor:
    """A perturbation inside the region that pushes the deployed classifier away from ``c``.

    ``x`` is a batch ``(B, *shape)`` of inputs (``B = 1`` for one image), ``c`` their
    certified classes, ``sigma_x`` their scales ``sigma(x)`` (shape of ``x``), ``R`` their
    region radii. The ascent runs on the noisy cross-entropy

        ``(1/m) Σ_j CE(f(x + δ + mu(x + δ) + sigma(x + δ) ⊙ λε_j), c)``

    with ``m = draws`` fresh reparameterised draws per step. The gradient flows through
    the base model and through ``params``. The perturbation is ``δ = a ⊙ u``, with
    ``a = sigma_x`` (the ellipsoid) or ``a = min(sigma_x)`` (with ``ball``, the ℓ2 ball
    inside it), and ``‖u‖₂ ≤ shrink·R``. The search runs in u-space, where the region is
    a ball. Each of the ``steps`` steps moves ``u`` by ``2.5·R/steps`` along the
    normalised gradient in ``u``. It then projects exactly onto the ball of radius
    ``shrink·R``, intersected with the input box when ``input_range`` is given.

    Box or region: with ``input_range=None`` the attack searches the whole region
    claimed by the certificate (Theorem 7 says nothing about a pixel box). With a
    range, ``x + δ`` also stays in ``[low, high]``. In u-space the box is the box
    ``[(low − x)/a, (high − x)/a]``, which contains 0. The projection onto ball ∩ box is
    then ``clamp(t·v)`` for the largest ``t ∈ [0, 1]`` that lands in the ball (KKT
    conditions of the projection). ``t`` is found by bisection, keeping the feasible
    end. This is exact, unlike alternating projections, and unlike a final clamp,
    which would keep feasibility but is not a projection.

    Guarantee: whatever the gradients, the returned δ (shape of ``x``, on the model's
    device) satisfies ``‖δ ⊘ a‖₂ ≤ shrink·R < R`` up to rounding: it is strictly inside
    the open region. With a range, ``x + δ`` is in the box up to one rounding of the
    sum (:func:`audit_certificate` clamps the sum, which moves it by at most that).
    Nothing is promised about G at ``x + δ``; :func:`verify_point` decides. Noise is
    drawn from ``generator`` (on the model's device), so the result is a function of
    its state.
    """
    check_model(model)
    check_count("steps", steps)
    check_count("draws", draws)
    _check_shrink(shrink)
    Gaussian(scale)  # validates the scale
    box = check_input_range(input_range)
    x = _to_model(model, x, "x", batched=True)
    batch = x.shape[0]
    sigma_x = _check_sigma(sigma_x, "sigma_x").detach().to(x.device, x.dtype)
    if sigma_x.shape != x.shape:
        raise ValueError(
            f"sigma_x has shape {tuple(sigma_x.shape)} but x has shape {tuple(x.shape)}"
        )
    radius = _per_input("R", R, batch, torch.float64)
    for value in radius.tolist():
        _check_radius(value, positive=True)
    labels = _per_input("c", c, batch, None).to(x.device)
    if labels.is_floating_point() or labels.is_complex() or labels.dtype == torch.bool:
        raise ValueError(f"c must hold integer class labels, got {c!r}")
    _check_generator(generator, x.device)
    axes = _region_axes(sigma_x, ball)
    view = (batch, *[1] * (x.dim() - 1))
    limit = (shrink * radius).to(x.device, x.dtype)
    lower = upper = None
    if box is not None:
        if bool((x < box[0]).any() or (x > box[1]).any()):
            raise ValueError(f"x lies outside input_range {box}; the box must contain x")
        lower, upper = (box[0] - x) / axes, (box[1] - x) / axes
    step = (2.5 * radius / steps).to(x.device, x.dtype).reshape(view)
    u = torch.zeros_like(x)
    for _ in range(steps):
        u.requires_grad_(True)
        loss = _noisy_loss(model, params, x + axes * u, labels, float(scale), draws, generator)
        (grad,) = torch.autograd.grad(loss.sum(), u)
        if not bool(torch.isfinite(grad).all()):
            raise ValueError("the attack's gradient is not finite; check the model and params")
        with torch.no_grad():
            norm = grad.flatten(1).norm(dim=1).clamp_min(torch.finfo(x.dtype).tiny)
            u = _project(u + step * grad / norm.reshape(view), limit, lower, upper)
    return (axes * u).detach()


def _noisy_loss(
    model: nn.Module,
    params: NoiseParams,
    z: torch.Tensor,
    labels: torch.Tensor,
    scale: float,
    draws: int,
    generator: torch.Generator,
) -> torch.Tensor:
    """Per-input mean cross-entropy over ``draws`` reparameterised noisy copies."""
    batch, shape = z.shape[0], z.shape[1:]
    mu, sigma = noise_params(params, z)
    eps = torch.randn((batch, draws, *shape), generator=generator, device=z.device, dtype=z.dtype)
    noisy = (z + mu).unsqueeze(1) + sigma.unsqueeze(1) * (scale * eps)
    logits = model(noisy.reshape(batch * draws, *shape))
    if logits.dim() != 2 or logits.shape[0] != batch * draws or not logits.is_floating_point():
        raise ValueError(
            f"the attack needs logits of shape ({batch * draws}, K) from the base model, "
            f"got {tuple(logits.shape)} ({logits.dtype})"
        )
    if bool((labels < 0).any() or (labels >= logits.shape[1]).any()):
        raise ValueError(f"c must be class labels in [0, {logits.shape[1]}), got {labels.tolist()}")
    loss = F.cross_entropy(logits, labels.repeat_interleave(draws), reduction="none")
    return loss.reshape(batch, draws).mean(dim=1)


def _project(
    v: torch.Tensor,
    radius: torch.Tensor,
    lower: torch.Tensor | None,
    upper: torch.Tensor | None,
) -> torch.Tensor:
    """Euclidean projection of each row of ``v`` onto ``{‖u‖ ≤ radius} ∩ [lower, upper]``.

    Without a box this is ``v·min(1, radius/‖v‖)``. With a box containing 0 the
    projection is ``clamp(t·v)`` for the largest ``t ∈ [0, 1]`` with ``‖clamp(t·v)‖ ≤
    radius``. ``‖clamp(t·v)‖`` does not decrease in ``t``, so bisection finds it; the
    feasible end is kept.
    """
    view = (v.shape[0], *[1] * (v.dim() - 1))
    r = radius.reshape(view)
    if lower is None or upper is None:
        norm = v.flatten(1).norm(dim=1).reshape(view)
        return v * torch.clamp(r / norm.clamp_min(torch.finfo(v.dtype).tiny), max=1.0)

    def fits(t: torch.Tensor) -> torch.Tensor:
        u = torch.clamp(t * v, lower, upper)
        return u.flatten(1).norm(dim=1).reshape(view) <= r

    low = torch.zeros(view, dtype=v.dtype, device=v.device)
    high = torch.ones_like(low)
    low = torch.where(fits(high), high, low)  # the box alone is enough: t = 1
    for _ in range(60):
        mid = (low + high) / 2
        ok = fits(mid)
        low, high = torch.where(ok, mid, low), torch.where(ok, high, mid)
    return torch.clamp(low * v, lower, upper)


# ------------------------------------------------------------------------------- audit


@dataclass(frozen=True, eq=False)
class AuditPoint:
    """One candidate ``z = x + δ`` of an audit, its verdict and diagnostics.

    ``search`` is ``"boundary"`` or ``"attack"``. ``region_fraction`` is
    ``‖δ ⊘ a‖₂/R`` (``a`` the region's axes, < 1 inside). ``verdict`` is G's verdict
    at ``z``. ``pA_deployed`` and ``pA_frozen`` are the fractions of draws in class
    ``c`` under G and under the frozen ``g_x``, on the same draws. ``mu_ratio`` is
    ``‖mu(z) − mu(x)‖₂/‖δ‖₂`` (NaN if δ = 0), ``sigma_change`` is
    ``‖sigma(z) − sigma(x)‖_∞``. ``delta`` is the perturbation (a NumPy array).
    """

    search: str
    delta: np.ndarray
    delta_norm: float
    region_fraction: float
    verdict: PointVerdict
    pA_deployed: float
    pA_frozen: float
    mu_ratio: float
    sigma_change: float

    def row(self) -> dict[str, object]:
        """The point's scalars, for a table (the columns of ``POINT_COLUMNS``)."""
        return {
            "search": self.search,
            "delta_norm": self.delta_norm,
            "region_fraction": self.region_fraction,
            "verdict": self.verdict.verdict,
            "top": self.verdict.top,
            "top_lower": self.verdict.top_lower,
            "pA_deployed": self.pA_deployed,
            "pA_frozen": self.pA_frozen,
            "mu_ratio": self.mu_ratio,
            "sigma_change": self.sigma_change,
        }


#: The columns of :meth:`AuditPoint.row`.
POINT_COLUMNS = (
    "search",
    "delta_norm",
    "region_fraction",
    "verdict",
    "top",
    "top_lower",
    "pA_deployed",
    "pA_frozen",
    "mu_ratio",
    "sigma_change",
)


@dataclass(frozen=True, eq=False)
class AuditRecord:
    """The audit of one certificate (class ``certified``, region radius ``R``).

    ``region`` is ``"ellipsoid"`` or ``"ball"``. ``alpha`` is the family-wise level:
    each of the ``len(points)`` points is verified at ``point_alpha = alpha/len(points)``.
    So the record claims a false contradiction with probability at most ``alpha``.
    """

    index: int
    certified: int
    R: float
    region: str
    scale: float
    alpha: float
    point_alpha: float
    n_verify: int
    seed: int
    input_range: tuple[float, float] | None
    points: tuple[AuditPoint, ...]

    @property
    def contradictions(self) -> int:
        return sum(p.verdict.verdict == "contradiction" for p in self.points)

    @property
    def contradicted(self) -> bool:
        """Whether some point of the region is, with confidence, another class under G."""
        return self.contradictions > 0

    def rows(self) -> list[dict[str, object]]:
        """One row per point, with the record's settings."""
        common = {"index": self.index, "region": self.region, "certified": self.certified}
        return [{**common, "R": self.R, **p.row()} for p in self.points]


def audit_certificate(
    model: nn.Module,
    params: NoiseParams,
    x: torch.Tensor,
    c: int,
    R: float,
    *,
    scale: float,
    alpha: float = 0.001,
    n_verify: int = 10_000,
    boundary: int = 16,
    steps: int = 20,
    draws: int = 8,
    seed: int = 0,
    index: int = 0,
    ball: bool = False,
    shrink: float = 0.99,
    input_range: tuple[float, float] | None = None,
    batch_size: int = 1000,
    num_classes: int | None = None,
) -> AuditRecord:
    """Search the certified region of ``(x, c, R)`` for points where G is not ``c``.

    The candidates are ``boundary`` random points at ``shrink`` times the region's
    boundary (:func:`boundary_points`; clamped into ``input_range`` if one is given,
    which only shrinks each ``|δ_i|`` since ``x`` is in the box, so they stay inside)
    and, if ``steps > 0``, the end of one projected gradient ascent
    (:func:`attack_in_region` with ``draws`` draws per step). Each candidate is verified
    with ``n_verify`` fresh draws (:func:`verify_point`) at level ``alpha/(number of
    candidates)``. The same draws, with the frozen ``mu(x)``, ``sigma(x)``, give
    ``pA_frozen``. ``x`` is one input; ``R`` is the certificate's ``region_radius``.
    ``R = 0`` claims nothing and gives a record without points. ``ball`` audits the ℓ2
    ball ``‖δ‖₂ < min(sigma(x))·R`` (the certificate's ``radius``) instead of the
    ellipsoid. ``num_classes`` defaults to the width of the model's output.

    Guarantee: the record claims a contradiction while G = c on all of its
    candidates with probability at most ``alpha``. The search and verification draws
    are independent streams of ``(seed, index)``, so the record is a function of the
    arguments, and of the device and library versions.
    """
    check_model(model)
    check_alpha(alpha)
    check_count("n_verify", n_verify)
    check_count("draws", draws)
    check_count("batch_size", batch_size)
    for name, value in (("boundary", boundary), ("steps", steps)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 0:
            raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
    for name, value in (("seed", seed), ("index", index)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 0:
            raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
    R = _check_radius(R, positive=False)
    _check_shrink(shrink)
    Gaussian(scale)
    box = check_input_range(input_range)
    x = _to_model(model, x, "x")
    if box is not None and bool((x < box[0]).any() or (x > box[1]).any()):
        raise ValueError(f"x lies outside input_range {box}")
    if num_classes is None:
        with torch.inference_mode():
            num_classes = int(model(x.unsqueeze(0)).shape[-1])
    _check_num_classes(num_classes)
    _check_class(c, num_classes)
    control = frozen(params, x)
    region = "ball" if ball else "ellipsoid"
    common = {
        "index": int(index),
        "certified": int(c),
        "R": R,
        "region": region,
        "scale": float(scale),
        "alpha": float(alpha),
        "n_verify": int(n_verify),
        "seed": int(seed),
        "input_range": box,
    }
    if R == 0.0 or boundary + steps == 0:
        return AuditRecord(point_alpha=float(alpha), points=(), **common)

    def stream(name: str, point: int = 0) -> torch.Generator:
        return _audit_generator(seed, index, name, point, x.device)

    candidates, searches = [], []
    if boundary > 0:
        deltas = boundary_points(
            control.sigma, R, boundary, stream("boundary"), shrink=shrink, ball=ball
        )
        if box is not None:
            deltas = torch.minimum(torch.maximum(deltas, box[0] - x), box[1] - x)
        candidates.append(deltas)
        searches += ["boundary"] * boundary
    if steps > 0:
        delta = attack_in_region(
            model,
            params,
            x.unsqueeze(0),
            c,
            control.sigma.unsqueeze(0),
            R,
            scale=scale,
            steps=steps,
            draws=draws,
            generator=stream("attack"),
            ball=ball,
            shrink=shrink,
            input_range=box,
        )
        candidates.append(delta)
        searches.append("attack")
    deltas = torch.cat(candidates)
    zs = x + deltas if box is None else (x + deltas).clamp(*box)
    point_alpha = float(alpha) / len(searches)
    with torch.inference_mode():
        mu_z, sigma_z = noise_params(params, zs)
        mu_shift = (mu_z - control.mu).flatten(1).norm(dim=1).cpu().numpy()
        sigma_change = (sigma_z - control.sigma).flatten(1).abs().amax(dim=1).cpu().numpy()
        delta_norm = deltas.flatten(1).norm(dim=1).cpu().numpy()
        axes = _region_axes(control.sigma.unsqueeze(0), ball)
        fraction = (deltas / axes).flatten(1).norm(dim=1).cpu().numpy() / R
    points = []
    for j, (search, delta, z) in enumerate(zip(searches, deltas, zs, strict=True)):
        sampling = {
            "scale": scale,
            "n": n_verify,
            "batch_size": batch_size,
            "num_classes": num_classes,
        }
        verdict = verify_point(
            model, params, z, c, alpha=point_alpha, generator=stream("verify", j), **sampling
        )
        frozen_counts = deployed_counts(
            model, control, z, generator=stream("verify", j), **sampling
        )
        points.append(
            AuditPoint(
                search=search,
                delta=delta.detach().cpu().numpy(),
                delta_norm=float(delta_norm[j]),
                region_fraction=float(fraction[j]),
                verdict=verdict,
                pA_deployed=verdict.pA_hat,
                pA_frozen=float(frozen_counts[c]) / n_verify,
                mu_ratio=float(mu_shift[j] / delta_norm[j]) if delta_norm[j] > 0 else float("nan"),
                sigma_change=float(sigma_change[j]),
            )
        )
    return AuditRecord(point_alpha=point_alpha, points=tuple(points), **common)


# ----------------------------------------------------------------------------- summary


@dataclass(frozen=True, eq=False)
class AuditSummary:
    """A table of audits and the rate of contradicted images.

    ``table`` has one row per (image, region, search). ``images`` counts the distinct
    image indices and ``contradicted`` those with at least one contradiction in any of
    their records. ``rate`` is their ratio, and ``[low, high]`` its exact two-sided
    Clopper–Pearson interval at ``confidence``.
    """

    table: pd.DataFrame
    images: int
    contradicted: int
    rate: float
    low: float
    high: float
    confidence: float

    def row(self) -> dict[str, object]:
        """The summary as one table row (images, contradicted, rate and interval)."""
        return {
            "images": self.images,
            "with a contradiction": self.contradicted,
            "rate": round(self.rate, 3),
            f"{self.confidence:.0%} interval": f"[{self.low:.2f}, {self.high:.2f}]",
        }


def summarize_audits(records: Sequence[AuditRecord], confidence: float = 0.95) -> AuditSummary:
    """One row per (image, region, search), and the rate of images with a contradiction.

    Pass the records of certified images only: a record without points (``R = 0``)
    counts as an image without a contradiction. The interval is
    ``scipy.stats.binomtest(...).proportion_ci(method="exact")``. It
    covers the rate of images whose audit finds a contradiction; that rate is a lower
    bound on the rate of certificates that are wrong about G, since a search can miss.
    """
    records = list(records)
    if not records:
        raise ValueError("summarize_audits needs at least one AuditRecord")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence!r}")
    keys = ["index", "region", "search", "certified", "R"]
    rows = [row for record in records for row in record.rows()]
    points = pd.DataFrame(rows, columns=[*keys, *POINT_COLUMNS[1:]])
    verdicts = points["verdict"]
    table = (
        points.assign(
            contradictions=(verdicts == "contradiction").astype(int),
            agrees=(verdicts == "agrees").astype(int),
            ambiguous=(verdicts == "ambiguous").astype(int),
        )
        .groupby(keys, sort=True)
        .agg(
            points=("verdict", "size"),
            contradictions=("contradictions", "sum"),
            agrees=("agrees", "sum"),
            ambiguous=("ambiguous", "sum"),
            min_pA_deployed=("pA_deployed", "min"),
            min_pA_frozen=("pA_frozen", "min"),
            max_mu_ratio=("mu_ratio", "max"),
            max_sigma_change=("sigma_change", "max"),
        )
        .reset_index()
    )
    by_image: dict[int, bool] = {}
    for record in records:
        by_image[record.index] = by_image.get(record.index, False) or record.contradicted
    images, contradicted = len(by_image), sum(by_image.values())
    interval = binomtest(contradicted, images).proportion_ci(confidence, method="exact")
    return AuditSummary(
        table=table,
        images=images,
        contradicted=contradicted,
        rate=contradicted / images,
        low=float(interval.low),
        high=float(interval.high),
        confidence=float(confidence),
    )


# ------------------------------------------------------------------------------ checks


def _audit_generator(
    seed: int, index: int, stream: str, point: int, device: torch.device
) -> torch.Generator:
    """A generator on ``device`` seeded from ``(seed, index, stream, point)``."""
    sequence = np.random.SeedSequence(
        entropy=int(seed), spawn_key=(int(index), _STREAMS[stream], int(point))
    )
    generator = torch.Generator(device=device)
    generator.manual_seed(int(sequence.generate_state(1, np.uint64)[0]) >> 1)
    return generator


def _region_axes(sigma: torch.Tensor, ball: bool) -> torch.Tensor:
    """The region's axes for a batch of scales: sigma itself, or its minimum (ball)."""
    if not ball:
        return sigma
    smallest = sigma.flatten(1).amin(dim=1).reshape(-1, *[1] * (sigma.dim() - 1))
    return smallest.expand_as(sigma)


def _to_model(
    model: nn.Module, x: torch.Tensor, name: str, *, batched: bool = False
) -> torch.Tensor:
    if not isinstance(x, torch.Tensor) or not x.is_floating_point():
        raise TypeError(f"{name} must be a floating-point tensor, got {x!r}")
    if x.dim() < 1 + int(batched):
        what = "a batch (B, *shape)" if batched else "one input (no batch dimension)"
        raise ValueError(f"{name} must be {what}, got shape {tuple(x.shape)}")
    if not bool(torch.isfinite(x).all()):
        raise ValueError(f"{name} contains NaN or infinite values")
    return x.detach().to(model_device(model), model_dtype(model))


def _per_input(name: str, value: object, batch: int, dtype: torch.dtype | None) -> torch.Tensor:
    """``value`` as a length-``batch`` tensor: one number for all inputs, or one each."""
    try:
        tensor = torch.as_tensor(value, dtype=dtype).detach().reshape(-1).cpu()
    except (TypeError, ValueError, RuntimeError):
        raise ValueError(
            f"{name} must be a number or one number per input, got {value!r}"
        ) from None
    if tensor.numel() not in (1, batch):
        raise ValueError(f"{name} has {tensor.numel()} values for a batch of {batch} inputs")
    return tensor.expand(batch).clone()


def _check_sigma(sigma: torch.Tensor, name: str) -> torch.Tensor:
    if not isinstance(sigma, torch.Tensor) or not sigma.is_floating_point():
        raise TypeError(f"{name} must be a floating-point tensor, got {sigma!r}")
    if not bool(torch.isfinite(sigma).all() and (sigma > 0).all()):
        raise ValueError(f"{name} must be finite and positive in every dimension")
    return sigma


def _check_radius(R: float, *, positive: bool) -> float:
    try:
        value = float(R)
    except (TypeError, ValueError):
        raise ValueError(f"R must be a number, got {R!r}") from None
    if not np.isfinite(value) or value < 0 or (positive and value == 0):
        need = "positive" if positive else "non-negative"
        raise ValueError(f"R must be finite and {need} (the region radius), got {R!r}")
    return value


def _check_shrink(shrink: float) -> None:
    if not 0.0 < float(shrink) < 1.0:
        raise ValueError(f"shrink must lie in (0, 1) to stay strictly inside, got {shrink!r}")


def _check_num_classes(num_classes: int) -> None:
    if isinstance(num_classes, bool) or not isinstance(num_classes, int | np.integer):
        raise ValueError(f"num_classes must be an integer >= 2, got {num_classes!r}")
    if num_classes < 2:
        raise ValueError(f"num_classes must be an integer >= 2, got {num_classes!r}")


def _check_class(c: int, num_classes: int) -> None:
    if isinstance(c, bool) or not isinstance(c, int | np.integer) or not 0 <= c < num_classes:
        raise ValueError(f"c must be a class label in [0, {num_classes}), got {c!r}")


def _check_generator(generator: torch.Generator, device: torch.device) -> None:
    if not isinstance(generator, torch.Generator):
        raise TypeError(f"generator must be a torch.Generator, got {generator!r}")
    here, there = generator.device, torch.device(device)
    if here.type != there.type or (here.index or 0) != (there.index or 0):
        raise ValueError(
            f"generator lives on {here} but the draws are made on {there}; "
            f"create it with torch.Generator(device={str(there)!r})"
        )


def audit_log(
    model: nn.Module,
    generator: NoiseParams,
    data_images: torch.Tensor,
    log: pd.DataFrame,
    *,
    freeze: bool = False,
    limit: int | None = None,
    **settings: object,
) -> list[AuditRecord]:
    """:func:`audit_certificate` for the correct certificates of a log with ``R > 0``.

    ``data_images[idx]`` is the input of each row; its certificate is ``(predict,
    region_radius)``. ``freeze`` audits ``g_x`` (:func:`frozen`) instead of the deployed
    G. The first ``limit`` such rows are audited, each with its ``idx`` as ``index``;
    ``settings`` go to :func:`audit_certificate`.
    """
    rows = log[(log["correct"] == 1) & (log["region_radius"] > 0)].sort_values("idx")
    records = []
    for row in rows.head(limit).itertuples():
        x = data_images[int(row.idx)]
        params = frozen(generator, x) if freeze else generator
        record = audit_certificate(
            model,
            params,
            x,
            int(row.predict),
            float(row.region_radius),
            index=int(row.idx),
            **settings,  # type: ignore[arg-type]
        )
        records.append(record)
    return records


def record_to_dict(record: AuditRecord) -> dict[str, object]:
    """``record`` as plain containers and tensors (``torch.load(weights_only=True)`` reads it)."""
    values = {f.name: getattr(record, f.name) for f in fields(record) if f.name != "points"}
    values["input_range"] = None if record.input_range is None else list(record.input_range)
    values["points"] = [
        {
            **{f.name: getattr(p, f.name) for f in fields(p) if f.name not in ("delta", "verdict")},
            "delta": torch.from_numpy(np.ascontiguousarray(p.delta)),
            "verdict": {**asdict(p.verdict), "counts": list(p.verdict.counts)},
        }
        for p in record.points
    ]
    return values


def record_from_dict(values: dict[str, object]) -> AuditRecord:
    """The inverse of :func:`record_to_dict`."""
    points = tuple(
        AuditPoint(
            **{
                **point,
                "delta": point["delta"].numpy(),
                "verdict": PointVerdict(
                    **{**point["verdict"], "counts": tuple(point["verdict"]["counts"])}
                ),
            }
        )
        for point in values["points"]  # type: ignore[union-attr]
    )
    box = values["input_range"]
    return AuditRecord(
        **{
            **values,
            "input_range": None if box is None else tuple(box),  # type: ignore[arg-type]
            "points": points,
        }
    )
