"""The attack: a projected gradient ascent inside the certified region.

It pushes the deployed classifier ``G`` away from the certified class, through the
base model and the noise parameters both, and stays strictly inside the region (and
inside the input box when one is given) by an exact projection. Two objectives
(:data:`~rsutils.anisotropic.soundness.audit.settings.ATTACK_LOSSES`): the noisy
cross-entropy, and the noisy logit margin, whose
gradient survives where saturated logits make the cross-entropy's vanish. For a
positive control of the search, the ascent can instead run in a shell outside the
region (``region_scale``), where contradictions of a sound certificate may exist.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from rsutils.anisotropic.soundness.audit.boundary import region_axes
from rsutils.anisotropic.soundness.audit.checks import (
    as_model_input,
    check_generator,
    check_radius,
    check_sigma,
)
from rsutils.anisotropic.soundness.audit.classifier import DeployedClassifier
from rsutils.anisotropic.soundness.audit.params import noise_params
from rsutils.anisotropic.soundness.audit.settings import ATTACK_LOSSES, AuditSettings
from rsutils.core.settings import check_count

__all__ = ["Region", "attack_in_region", "attack_objective"]


@dataclass(frozen=True)
class Region:
    """The certified regions an attack searches, a batch of them: inputs ``x``
    ``(B, *shape)`` (``B = 1`` for one image), their certified classes ``c`` (one, or
    one per input), their scales ``sigma_x`` (shape of ``x``) and region radii ``R`` (one,
    or one per input): the region of input ``i`` is ``‖δ ⊘ sigma_x[i]‖₂ < R[i]``."""

    x: torch.Tensor
    c: int | Sequence[int] | torch.Tensor
    sigma_x: torch.Tensor
    R: float | Sequence[float] | torch.Tensor


def attack_in_region(
    classifier: DeployedClassifier,
    region: Region,
    settings: AuditSettings,
    *,
    generator: torch.Generator,
    loss: str = "ce",
) -> torch.Tensor:
    """A perturbation inside each region that pushes the deployed classifier away from ``c``.

    The search's settings are the audit's: ``settings.steps``, ``settings.draws``,
    ``settings.ball``, ``settings.shrink``, ``settings.input_range`` and
    ``settings.region_scale`` (written below without ``settings.``); λ is the
    classifier's ``scale``. The ascent runs on :func:`attack_objective` with ``loss``, by
    default the noisy cross-entropy

        ``(1/m) Σ_j CE(f(x + δ + mu(x + δ) + sigma(x + δ) ⊙ λε_j), c)``

    with ``m = draws`` fresh reparameterised draws per step. The gradient flows through
    the base model and through the classifier's ``params``. The perturbation is
    ``δ = a ⊙ u``, with ``a = sigma_x`` (the ellipsoid) or ``a = min(sigma_x)`` (with
    ``ball``, the ℓ2 ball inside it), and ``‖u‖₂ ≤ shrink·R``. The search runs in
    u-space, where the region is a ball. Each of the ``steps`` steps moves ``u`` by
    ``2.5·R/steps`` along the normalised gradient in ``u``. It then projects exactly onto
    the ball of radius ``shrink·R``, intersected with the input box when ``input_range``
    is given.

    Box or region: with ``input_range=None`` the attack searches the whole region
    claimed by the certificate (Theorem 7 says nothing about a pixel box). With a
    range, ``x + δ`` also stays in ``[low, high]``. In u-space the box is the box
    ``[(low − x)/a, (high − x)/a]``, which contains 0. The projection onto ball ∩ box is
    then ``clamp(t·v)`` for the largest ``t ∈ [0, 1]`` that lands in the ball (KKT
    conditions of the projection). ``t`` is found by bisection, keeping the feasible
    end. This is exact, unlike alternating projections, and unlike a final clamp,
    which would keep feasibility but is not a projection.

    Positive control: with ``region_scale = (inner, outer)`` the ascent searches the
    shell ``inner·R ≤ ‖u‖₂ ≤ shrink·outer·R`` instead (steps of ``2.5·outer·R/steps``).
    Each step projects onto the outer ball (and box) as above, then pushes a point
    that fell inside ``inner·R`` outwards along its own direction to ``‖u‖₂ = inner·R``
    (in the box, the smallest ``t ≥ 1`` with ``‖clamp(t·u)‖₂ ≥ inner·R``, by bisection).
    The shell is not convex, so this is a feasible step rather than a projection. Where
    the box stops a direction short of ``inner·R`` (or the gradient was zero from the
    start, ``u = 0``), the point stays as far out as the box lets it, inside the shell's
    hole; the audit's ``region_fraction`` shows it.

    Guarantee: whatever the gradients, the returned δ (shape of ``x``, on the model's
    device) satisfies ``‖δ ⊘ a‖₂ ≤ shrink·R < R`` up to rounding: it is strictly inside
    the open region (with ``region_scale``: ``≤ shrink·outer·R``, and ``≥ inner·R``
    except where the box or a zero gradient prevents it, as said). With a range,
    ``x + δ`` is in the box up to one rounding of the sum
    (:func:`~rsutils.anisotropic.soundness.audit.runs.audit_certificate` clamps the sum, which
    moves it by at most that). Nothing is promised about G at ``x + δ``;
    :func:`~rsutils.anisotropic.soundness.audit.verification.verify_point` decides. Noise is
    drawn from ``generator`` (on the model's device), so the result is a function of
    its state.
    """
    steps, draws, shrink = settings.steps, settings.draws, settings.shrink
    check_count("steps", steps)
    box, shell = settings.input_range, settings.region_scale
    _check_loss(loss)
    inner, outer = (0.0, 1.0) if shell is None else shell
    x, sigma_x, radius, labels = _batch(classifier.model, region)
    check_generator(generator, x.device)
    axes = region_axes(sigma_x, settings.ball)
    view = (x.shape[0], *[1] * (x.dim() - 1))
    limit = (shrink * outer * radius).to(x.device, x.dtype)
    hole = (inner * radius).to(x.device, x.dtype)
    lower = upper = None
    if box is not None:
        if bool((x < box[0]).any() or (x > box[1]).any()):
            raise ValueError(f"x lies outside input_range {box}; the box must contain x")
        lower, upper = (box[0] - x) / axes, (box[1] - x) / axes
    step = (2.5 * outer * radius / steps).to(x.device, x.dtype).reshape(view)
    u = torch.zeros_like(x)
    for _ in range(steps):
        u.requires_grad_(True)
        objective = attack_objective(
            classifier, x + axes * u, labels, draws=draws, generator=generator, loss=loss
        )
        (grad,) = torch.autograd.grad(objective.sum(), u)
        if not bool(torch.isfinite(grad).all()):
            raise ValueError("the attack's gradient is not finite; check the model and params")
        with torch.no_grad():
            norm = grad.flatten(1).norm(dim=1).clamp_min(torch.finfo(x.dtype).tiny)
            u = _project(u + step * grad / norm.reshape(view), limit, lower, upper)
            if shell is not None and inner > 0:
                u = _push_out(u, hole, lower, upper)
    return (axes * u).detach()


def _check_loss(loss: object) -> None:
    if loss not in ATTACK_LOSSES:
        raise ValueError(f"loss must be one of {ATTACK_LOSSES}, got {loss!r}")


def _batch(
    model: nn.Module, region: Region
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """The batch ``x``, its scales, radii (float64, on the CPU) and labels, checked."""
    x, c, sigma_x, R = region.x, region.c, region.sigma_x, region.R
    x = as_model_input(model, x, "x", batched=True)
    batch = x.shape[0]
    sigma_x = check_sigma(sigma_x, "sigma_x").detach().to(x.device, x.dtype)
    if sigma_x.shape != x.shape:
        raise ValueError(
            f"sigma_x has shape {tuple(sigma_x.shape)} but x has shape {tuple(x.shape)}"
        )
    radius = _per_input("R", R, batch, torch.float64)
    for value in radius.tolist():
        check_radius(value, positive=True)
    labels = _per_input("c", c, batch, None).to(x.device)
    if labels.is_floating_point() or labels.is_complex() or labels.dtype == torch.bool:
        raise ValueError(f"c must hold integer class labels, got {c!r}")
    return x, sigma_x, radius, labels


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


def attack_objective(
    classifier: DeployedClassifier,
    z: torch.Tensor,
    labels: torch.Tensor,
    *,
    draws: int,
    generator: torch.Generator,
    loss: str = "ce",
) -> torch.Tensor:
    """What the attack ascends, per input: a mean over ``draws`` noisy copies of ``z``.

    The copies are ``z + mu(z) + sigma(z) ⊙ λε_j`` with reparameterised draws ``ε_j``
    from ``generator`` (λ the classifier's ``scale``), so the result is differentiable
    in ``z`` through the base model and the noise parameters. ``labels`` holds the
    certified class ``c`` of each input of the batch ``z``. With ``loss``:

    - ``"ce"``: the cross-entropy ``CE(logits, c)``. Where the logits saturate
      (``logit_c`` far above the others) its gradient, ``softmax − onehot``,
      underflows to exactly zero and the ascent cannot move;
    - ``"margin"``: ``max_{k≠c} logit_k − logit_c``, the negated margin (so that
      ascending it minimises the margin of ``c``). Its gradient is the difference of
      two logits' gradients, which saturation does not shrink.

    A value (and gradient) per input, shape ``(B,)``.
    """
    _check_loss(loss)
    batch, shape = z.shape[0], z.shape[1:]
    mu, sigma = noise_params(classifier.params, z)
    eps = torch.randn((batch, draws, *shape), generator=generator, device=z.device, dtype=z.dtype)
    noisy = (z + mu).unsqueeze(1) + sigma.unsqueeze(1) * (classifier.scale * eps)
    logits = classifier.model(noisy.reshape(batch * draws, *shape))
    if logits.dim() != 2 or logits.shape[0] != batch * draws or not logits.is_floating_point():
        raise ValueError(
            f"the attack needs logits of shape ({batch * draws}, K) from the base model, "
            f"got {tuple(logits.shape)} ({logits.dtype})"
        )
    if bool((labels < 0).any() or (labels >= logits.shape[1]).any()):
        raise ValueError(f"c must be class labels in [0, {logits.shape[1]}), got {labels.tolist()}")
    targets = labels.repeat_interleave(draws)
    if loss == "ce":
        values = F.cross_entropy(logits, targets, reduction="none")
    else:
        own = logits.gather(1, targets[:, None])[:, 0]
        others = logits.scatter(1, targets[:, None], float("-inf")).amax(dim=1)
        values = others - own
    return values.reshape(batch, draws).mean(dim=1)


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


def _push_out(
    u: torch.Tensor,
    inner: torch.Tensor,
    lower: torch.Tensor | None,
    upper: torch.Tensor | None,
) -> torch.Tensor:
    """Each row of ``u`` with ``‖u‖ < inner`` moved outwards along itself to ``‖u‖ = inner``.

    Without a box, ``u·inner/‖u‖``. With a box containing 0, ``clamp(t·u)`` for the
    smallest ``t ≥ 1`` with ``‖clamp(t·u)‖ ≥ inner``: the norm does not decrease in
    ``t``, so bisection finds it, keeping the end that reaches ``inner``. A direction
    the box stops short of ``inner`` ends where every moving coordinate is at its
    bound (the farthest point of the box along it); a zero row stays zero.
    """
    view = (u.shape[0], *[1] * (u.dim() - 1))
    r = inner.reshape(view)
    tiny = torch.finfo(u.dtype).tiny
    short = u.flatten(1).norm(dim=1).reshape(view) < r
    if not bool(short.any()):
        return u
    if lower is None or upper is None:
        norm = u.flatten(1).norm(dim=1).reshape(view)
        return torch.where(short & (norm > 0), u * (r / norm.clamp_min(tiny)), u)

    def reaches(t: torch.Tensor) -> torch.Tensor:
        moved = torch.clamp(t * u, lower, upper)
        return moved.flatten(1).norm(dim=1).reshape(view) >= r

    bound = torch.where(u > 0, upper, lower)
    ratio = torch.where(u != 0, bound / torch.where(u != 0, u, 1.0), 1.0)
    high = ratio.flatten(1).amax(dim=1).reshape(view).clamp_min(1.0)
    low = torch.ones_like(high)
    for _ in range(60):
        mid = (low + high) / 2
        ok = reaches(mid)
        low, high = torch.where(ok, low, mid), torch.where(ok, mid, high)
    return torch.where(short, torch.clamp(high * u, lower, upper), u)
