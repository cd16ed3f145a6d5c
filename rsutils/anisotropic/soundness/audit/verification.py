"""The verification test: what the deployed classifier G says at one point, with confidence.

A search only proposes points; a fresh Monte Carlo sample and a Clopper–Pearson bound
decide. A contradiction needs another class's lower bound above 1/2, never a single
noisy vote.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import torch
from torch import nn

from rsutils.anisotropic.noise import Anisotropic
from rsutils.anisotropic.soundness.audit.checks import (
    as_model_input,
    check_class,
    check_generator,
    check_num_classes,
)
from rsutils.anisotropic.soundness.audit.params import NoiseParams, noise_params
from rsutils.core.confidence import check_alpha, clopper_pearson_lower
from rsutils.core.noise import Gaussian
from rsutils.core.sampling import count_classes
from rsutils.core.settings import check_count
from rsutils.core.validation import check_model

__all__ = ["PointVerdict", "Verdict", "classify_counts", "deployed_counts", "verify_point"]

#: What a point's counts say about G there (see :class:`PointVerdict`).
Verdict = Literal["contradiction", "agrees", "ambiguous"]


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
    check_class(c, counts.size)
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
    check_num_classes(num_classes)
    base = Gaussian(scale)
    z = as_model_input(model, z, "z")
    check_generator(generator, z.device)
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

    Ten parameters, for a reason: the deployed classifier G is four of them (``model``,
    ``params``, its λ ``scale`` and ``num_classes``), the point and the class two, and the
    draws (``n``, ``generator``, ``batch_size``) with the level ``alpha`` the rest; the audit
    passes its settings' ``n_verify`` and ``batch_size``.
    """
    check_alpha(alpha)
    check_class(c, num_classes)
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
