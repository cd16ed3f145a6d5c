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

from rsutils.anisotropic.soundness.audit.classifier import DeployedClassifier
from rsutils.core.confidence import check_alpha, clopper_pearson_lower
from rsutils.core.validation import check_class

__all__ = ["PointVerdict", "Verdict", "classify_counts", "verify_point"]

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


def verify_point(
    classifier: DeployedClassifier,
    z: torch.Tensor,
    c: int,
    *,
    n: int,
    alpha: float,
    generator: torch.Generator,
    batch_size: int = 1000,
) -> PointVerdict:
    """G's class at ``z`` from ``n`` fresh draws
    (:meth:`~rsutils.anisotropic.soundness.audit.classifier.DeployedClassifier.counts`),
    as a verdict.

    Guarantee: with ``generator`` independent of how ``z`` was chosen, a
    ``"contradiction"`` (G(z) ≠ c) or an ``"agrees"`` (G(z) = c) is wrong with
    probability at most ``alpha`` (:func:`classify_counts`). A contradiction needs the
    other class's lower bound above 1/2, never a single noisy vote.

    The audit passes its settings' ``n_verify`` and ``batch_size``.
    """
    check_alpha(alpha)
    check_class(c, classifier.num_classes)
    counts = classifier.counts(z, n, generator=generator, batch_size=batch_size)
    return classify_counts(counts, c, alpha)
