"""True-label evaluation: is the *given label* certified at radius ``r``? No selection.

An evaluation procedure, for measuring certified accuracy on a labelled test set: the
certified-accuracy curve counts the inputs whose true label is certified at each radius,
so the only question per input is whether the label is, and the ``n0`` selection draws
of CERTIFY and :func:`~rsutils.core.sequential.decide` (which pick the class to test)
are not needed. It cannot serve a deployed classifier, which has no label to test:
there, use :func:`~rsutils.core.sequential.decide` or CERTIFY.

:func:`decide_label` is :func:`~rsutils.core.sequential.decide` with the tested class
given instead of selected: the same :class:`~rsutils.core.sequential.LookSchedule`, the
same prefixes of CERTIFY's stream of estimation draws, and the same rule at each look
(:func:`~rsutils.core.sequential.settle_looks`): *certified* when the one-sided
Clopper–Pearson lower bound on the label's probability ``p_y`` at level ``alpha_k``
certifies ``r``; *not certified* when the upper bound at that level cannot, or at the
last look. Its :class:`~rsutils.core.sequential.Decision` has ``selected`` = the label
and ``n0 = 0``, so its ``forward_passes`` are its estimation draws.

Guarantee: for a fixed input and label, with probability at least ``1 - alpha`` (the
schedule's levels summed) no look's lower bound exceeds ``p_y`` (the union bound over
looks, whatever the stopping rule). So a *certified* answer means, with that
probability, ``p_y`` exceeds the certifying bound (at least 1/2): the smoothed
classifier predicts the label everywhere within ``r`` of ``x`` (Cohen et al.,
Theorem 1). On a test set, each input's count in the certified-accuracy curve at ``r``
is then a lower bound on its robust correctness, each wrong with probability at most
``alpha``, as for CERTIFY's curve (whose certificates are also counted only when the
selected class equals the label).

Floor: with ``m`` draws all in the label's class a level-``alpha_k`` test certifies
``p_y > p`` only if ``p^m <= alpha_k``; for Gaussian noise radius ``r`` needs
``m >= ln(alpha_k) / ln Φ(r/σ)`` draws
(:func:`~rsutils.core.confidence.min_samples_for_radius`), the fewest any
non-randomised test spends, and the look that certifies an input with ``p_y = 1`` is
the first whose ``n_k`` reaches the floor at its own level.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence

import torch

from rsutils.core.sequential import Decision, Schedule, check_radius
from rsutils.core.smooth import Smooth
from rsutils.core.streams import draw_seed

__all__ = ["check_label", "decide_label", "decide_label_radii"]


def decide_label(
    smooth: Smooth,
    x: torch.Tensor,
    label: int,
    radius: float,
    schedule: Schedule,
    batch_size: int = 1000,
    seed: int | None = None,
    index: int = 0,
) -> Decision:
    """Evaluation only: is ``label`` (the true label of ``x``) certified at ``radius``?

    The estimation draws are the prefixes of CERTIFY's (and
    :func:`~rsutils.core.sequential.decide`'s) stream for ``seed`` and ``index``, and
    no selection draws are made (``n0 = 0``; see the module's text).

    Guarantee: if ``certified``, then with probability at least ``1 - schedule.alpha``
    the smoothed classifier predicts ``label`` everywhere within ``radius`` of ``x``.
    """
    return decide_label_radii(smooth, x, label, [radius], schedule, batch_size, seed, index)[0]


def decide_label_radii(
    smooth: Smooth,
    x: torch.Tensor,
    label: int,
    radii: Sequence[float],
    schedule: Schedule,
    batch_size: int = 1000,
    seed: int | None = None,
    index: int = 0,
) -> list[Decision]:
    """:func:`decide_label` at each of ``radii``, from one pass over the stream.

    Each decision is the one :func:`decide_label` returns for that radius alone, and
    its ``draws`` are what it alone would spend; the stream is drawn once, up to the
    latest look any of them needs, so the draws of the whole certified-accuracy curve
    of ``x`` are the largest ``draws`` among them.
    """
    label = check_label(label, smooth.num_classes)
    radii = [check_radius(r) for r in radii]
    seed = draw_seed() if seed is None else seed
    counter = smooth.prefix_counter(x, schedule.n_max, batch_size, seed=seed, index=index)
    return schedule.settle(
        smooth, counter, label, radii, dim=x.numel(), n0=0, seed=seed, index=index
    )


def check_label(label: object, num_classes: int) -> int:
    """``label`` as an int if it is an integer in ``[0, num_classes)``, else a ``ValueError``."""
    if isinstance(label, torch.Tensor) and label.numel() == 1 and not label.is_floating_point():
        label = label.item()
    if isinstance(label, bool) or not isinstance(label, numbers.Integral):
        raise ValueError(
            f"a label must be an integer class index, got {label!r}; pass int(label) "
            "(the dataset's true label of the input)"
        )
    if not 0 <= int(label) < num_classes:
        raise ValueError(
            f"a label must lie in [0, {num_classes}) for a classifier of {num_classes} "
            f"classes, got {label!r}"
        )
    return int(label)
