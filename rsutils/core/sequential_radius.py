"""What radius do ``n_max`` draws give? Sequential looks at the radius itself.

:func:`~rsutils.core.sample_size.certify_planned` fixes the number of estimation draws
from the ``n0`` selection draws; :func:`certify_looks` instead looks at CERTIFY's
estimation stream after ``n_1 < … < n_K = n_max`` draws (a
:class:`~rsutils.core.sequential.LookSchedule`) and stops at the first look where the
radius cannot grow by more than ``radius_loss`` by going on to ``n_max``: look ``k``
certifies CERTIFY's radius ``r_k`` from its count at level ``alpha_k`` and stops when
``r_k >= R(p) - radius_loss``, with ``R(p)`` the radius ``n_max`` draws give at the
schedule's level ``alpha`` if a fraction ``p`` of them falls in the class
(:func:`~rsutils.core.sample_size.expected_radius`) and ``p`` judged from the look's
count: its proportion (``judge="estimate"``) or its Clopper–Pearson upper bound at
level ``gamma`` (``judge="upper"``, more draws, less loss). The last look always stops.
An abstention stops early only when ``R(p)`` is an abstention too.

Guarantee (alpha spending, as :func:`~rsutils.core.sequential.decide`): the levels sum
to ``alpha``, so with probability at least ``1 - alpha`` *no* look's lower bound
exceeds the true ``pA``, whatever the stopping rule (the union bound over looks). Hence
if the answer is a class, with probability at least ``1 - alpha`` over the noise the
smoothed classifier predicts it everywhere within ``radius``: CERTIFY's guarantee
(Cohen et al., Proposition 2). With ``keep_best`` the answer is the largest radius of
the looks read, valid by the same union bound. ``radius_loss`` is a plan, not a
guarantee: ``p`` may misjudge ``pA``, and the split of ``alpha`` costs radius too.

Chapter 08 sets it beside the planned draws on the book's models, on the same
recorded draws: there splitting ``alpha`` over the looks costs more radius than the
misjudged ``pA`` it corrects.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch

from rsutils.core.confidence import check_alpha, clopper_pearson_lower, clopper_pearson_upper
from rsutils.core.record import DrawRecord
from rsutils.core.sample_size import check_radius_loss, expected_radius
from rsutils.core.sequential import Counter, LookSchedule
from rsutils.core.settings import check_count
from rsutils.core.smooth import Certificate, Smooth
from rsutils.core.streams import draw_seed

__all__ = [
    "RadiusLooks",
    "certify_looks",
    "check_looks",
    "replay_certify_looks",
    "settle_radius",
]

Judge = Literal["estimate", "upper"]


@dataclass(frozen=True)
class RadiusLooks:
    """The answer of :func:`certify_looks` for one input.

    ``certificate`` is CERTIFY's answer from the ``certificate.n`` draws of the
    stopping ``look`` (1-based), its bound at level ``alpha_spent``
    (``certificate.alpha``); ``alpha`` is the procedure's failure probability, the
    schedule's (the level of the guarantee).
    """

    certificate: Certificate
    look: int
    alpha: float
    alpha_spent: float

    @property
    def prediction(self) -> int:
        return self.certificate.prediction

    @property
    def radius(self) -> float:
        return self.certificate.radius

    @property
    def forward_passes(self) -> int:
        """Noisy copies the base model classified, selection and estimation draws."""
        return self.certificate.n0 + self.certificate.n

    def as_dict(self) -> dict[str, object]:
        return {
            **self.certificate.as_dict(),
            "look": self.look,
            "alpha": self.alpha,
            "alpha_spent": self.alpha_spent,
        }


def certify_looks(
    smooth: Smooth,
    x: torch.Tensor,
    n0: int,
    schedule: LookSchedule,
    radius_loss: float,
    batch_size: int = 1000,
    seed: int | None = None,
    index: int = 0,
    *,
    judge: Judge = "estimate",
    gamma: float = 0.05,
    keep_best: bool = False,
) -> RadiusLooks:
    """CERTIFY with sequential looks at the radius (see the module's text).

    The ``n0`` selection draws and the estimation stream are CERTIFY's with
    ``n = schedule.n_max``; the looks read its prefixes.

    Guarantee: if the answer is a class, then with probability at least
    ``1 - schedule.alpha`` over the noise the smoothed classifier predicts it
    everywhere within ``radius`` of ``x``.
    """
    check_count("n0", n0)
    check_looks(schedule, radius_loss, judge, gamma)
    seed = draw_seed() if seed is None else seed
    selection = smooth.sample_counts(x, n0, batch_size, seed=seed, index=index, phase="select")
    selected = int(selection.argmax())
    counter = smooth.prefix_counter(x, schedule.n_max, batch_size, seed=seed, index=index)
    return settle_radius(
        smooth, counter, selected, schedule, radius_loss,
        dim=x.numel(), n0=n0, seed=seed, index=index,
        judge=judge, gamma=gamma, keep_best=keep_best,
    )  # fmt: skip


def replay_certify_looks(
    smooth: Smooth,
    record: DrawRecord,
    schedule: LookSchedule,
    radius_loss: float,
    *,
    judge: Judge = "estimate",
    gamma: float = 0.05,
    keep_best: bool = False,
) -> RadiusLooks:
    """:func:`certify_looks` on recorded draws (:mod:`rsutils.core.record`): the
    answer the live procedure gives with the record's ``n0``, ``seed`` and ``index``."""
    check_looks(schedule, radius_loss, judge, gamma)
    return settle_radius(
        smooth, record.counter(), record.selected, schedule, radius_loss,
        dim=record.dim, n0=record.n0, seed=record.seed, index=record.index,
        judge=judge, gamma=gamma, keep_best=keep_best,
    )  # fmt: skip


def settle_radius(
    smooth: Smooth,
    counter: Counter,
    selected: int,
    schedule: LookSchedule,
    radius_loss: float,
    *,
    dim: int,
    n0: int,
    seed: int,
    index: int,
    judge: Judge = "estimate",
    gamma: float = 0.05,
    keep_best: bool = False,
) -> RadiusLooks:
    """The looks of ``schedule`` at class ``selected``'s count in ``counter``'s prefixes,
    with the stopping rule of :func:`certify_looks`; the counter is advanced only to
    the stopping look."""
    check_looks(schedule, radius_loss, judge, gamma)
    last = len(schedule.looks)
    best: tuple[Certificate, int, float] | None = None
    for look, (n, level) in enumerate(zip(schedule.looks, schedule.alphas, strict=True), 1):
        count = int(counter.advance(n)[selected])
        cert = smooth.certificate(
            count, n, selected, n0=n0, alpha=level, seed=seed, index=index, dim=dim
        )
        if best is None or not keep_best or _better(cert, best[0]):
            best = (cert, look, level)
        if look == last or _settled(smooth, cert, schedule, radius_loss, dim, judge, gamma):
            break
    assert best is not None
    cert, look, level = best
    return RadiusLooks(cert, look, schedule.alpha, level)


def _settled(
    smooth: Smooth,
    cert: Certificate,
    schedule: LookSchedule,
    radius_loss: float,
    dim: int,
    judge: Judge,
    gamma: float,
) -> bool:
    """Whether ``n_max`` draws would give at most ``radius_loss`` more radius, judged
    from the look's count."""
    if judge == "estimate":
        p = cert.count / cert.n
    else:
        p = float(clopper_pearson_upper(cert.count, cert.n, gamma))
    if cert.abstained:  # stop only if n_max draws would abstain too
        n_max = schedule.n_max
        return float(clopper_pearson_lower(p * n_max, n_max, schedule.alpha)) < 0.5
    target = expected_radius(smooth, p, schedule.n_max, schedule.alpha, dim)
    return cert.radius >= target - radius_loss


def _better(cert: Certificate, other: Certificate) -> bool:
    if other.abstained:
        return not cert.abstained
    return not cert.abstained and cert.radius > other.radius


def check_looks(schedule: LookSchedule, radius_loss: float, judge: str, gamma: float) -> None:
    """A ``ValueError`` naming the fix unless the arguments of :func:`certify_looks` are
    a non-randomised :class:`~rsutils.core.sequential.LookSchedule`, a loss >= 0, a
    known ``judge`` and a level ``gamma`` in (0, 1)."""
    if not isinstance(schedule, LookSchedule) or schedule.randomized:
        raise ValueError(
            "certify_looks uses Clopper-Pearson bounds at a LookSchedule's looks; pass a "
            f"LookSchedule with randomized=False, got {schedule!r}"
        )
    check_radius_loss(radius_loss)
    if judge not in ("estimate", "upper"):
        raise ValueError(f"judge must be 'estimate' or 'upper', got {judge!r}")
    check_alpha(gamma)
