"""Recorded draws: the class of every noisy copy CERTIFY classifies, to replay procedures.

Every procedure of :mod:`rsutils.core.sequential`, :mod:`rsutils.core.evaluation` and
:mod:`rsutils.core.sample_size` reads prefixes of CERTIFY's two seeded streams of one
input (``n0`` selection draws, ``n`` estimation draws). :func:`record_draws` runs the
base model once over both streams and keeps each draw's class (a :class:`DrawRecord`);
the ``replay_*`` functions then give exactly what the live procedure with the same
``seed`` and ``index`` returns, reading the recorded classes instead of running the
model (a :class:`RecordedCounter` stands in for
:class:`~rsutils.core.sampling.PrefixCounter`). So procedures are compared on the same
draws, and a procedure's cost is the draws it reads, counted, not timed.

A replay is the procedure, not an approximation of it: its certificate holds with the
procedure's guarantee, because the recorded classes are the base model's answers on
the procedure's own noise. The record must hold at least the draws the procedure may
read (``n_max`` of a schedule); asking for more is an error.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from rsutils.core.confidence import check_alpha
from rsutils.core.evaluation import check_label
from rsutils.core.sample_size import check_radius_loss, planned_draws
from rsutils.core.sequential import Decision, Schedule, check_radius
from rsutils.core.settings import check_count
from rsutils.core.smooth import Certificate, Smooth
from rsutils.core.streams import draw_seed

__all__ = [
    "DrawRecord",
    "RecordedCounter",
    "record_draws",
    "replay_certify",
    "replay_decide",
    "replay_decide_label",
    "replay_planned",
]


@dataclass(frozen=True, eq=False)
class DrawRecord:
    """The classes of one input's ``n0`` selection and ``n`` estimation draws.

    ``selection`` and ``estimation`` are integer arrays in stream order, for the input
    ``index`` of run ``seed``, of a classifier with ``num_classes`` classes; ``dim``
    is the input's number of values (which the radius of some noises depends on).
    """

    selection: np.ndarray
    estimation: np.ndarray
    num_classes: int
    seed: int
    index: int
    dim: int

    def __post_init__(self) -> None:
        for name in ("selection", "estimation"):
            labels = np.asarray(getattr(self, name))
            if labels.ndim != 1 or not np.issubdtype(labels.dtype, np.integer):
                raise ValueError(f"{name} must be a 1-D integer array of classes")
            if labels.size and not (0 <= labels.min() and labels.max() < self.num_classes):
                raise ValueError(f"{name} holds classes outside [0, {self.num_classes})")

    @property
    def n0(self) -> int:
        return int(self.selection.size)

    @property
    def n(self) -> int:
        return int(self.estimation.size)

    @property
    def selected(self) -> int:
        """The class CERTIFY selects, the most frequent among the selection draws (lowest
        on ties)."""
        return int(np.argmax(np.bincount(self.selection, minlength=self.num_classes)))

    def counter(self) -> RecordedCounter:
        """A counter over the estimation draws' prefixes."""
        return RecordedCounter(self.estimation, self.num_classes)


class RecordedCounter:
    """:class:`~rsutils.core.sampling.PrefixCounter`'s interface on recorded classes."""

    def __init__(self, labels: np.ndarray, num_classes: int) -> None:
        self.labels, self.num_classes = np.asarray(labels), num_classes
        self.total, self.drawn = int(self.labels.size), 0

    def advance(self, to: int) -> np.ndarray:
        """The class counts of the first ``to`` recorded draws (``drawn <= to <= total``)."""
        if not self.drawn <= to <= self.total:
            raise ValueError(
                f"the record holds {self.total} draws and {self.drawn} were read; cannot "
                f"advance to {to}: record at least the draws the procedure may read"
            )
        self.drawn = to
        return np.bincount(self.labels[:to], minlength=self.num_classes)


def record_draws(
    smooth: Smooth,
    x: torch.Tensor,
    n0: int,
    n: int,
    batch_size: int = 1000,
    seed: int | None = None,
    index: int = 0,
) -> DrawRecord:
    """Run the base model on CERTIFY's ``n0`` selection and ``n`` estimation draws of
    ``x`` (the streams of ``seed`` and ``index``) and keep every draw's class."""
    check_count("n0", n0)
    check_count("n", n)
    seed = draw_seed() if seed is None else seed
    streams = {}
    for phase, total in (("select", n0), ("estimate", n)):
        counter = smooth.prefix_counter(
            x, total, batch_size, seed=seed, index=index, phase=phase, keep_labels=True
        )
        counter.advance(total)
        streams[phase] = counter.labels()
    return DrawRecord(
        streams["select"], streams["estimate"], smooth.num_classes, seed, index, x.numel()
    )


def replay_certify(
    smooth: Smooth, record: DrawRecord, alpha: float, n: int | None = None
) -> Certificate:
    """CERTIFY on the record (its first ``n`` estimation draws, all by default): the
    certificate :meth:`~rsutils.core.smooth.Smooth.certify` gives with the record's
    ``n0``, that ``n``, ``seed`` and ``index``."""
    check_alpha(alpha)
    if n is None:
        n = record.n
    check_count("n", n)
    count = int(record.counter().advance(n)[record.selected])
    return _certificate(smooth, record, count, n, alpha)


def replay_decide(
    smooth: Smooth, record: DrawRecord, radii: Sequence[float], schedule: Schedule
) -> list[Decision]:
    """:func:`~rsutils.core.sequential.decide_radii` on the record."""
    radii = [check_radius(r) for r in radii]
    _check_length(record, schedule)
    return schedule.settle(
        smooth, record.counter(), record.selected, radii,
        dim=record.dim, n0=record.n0, seed=record.seed, index=record.index,
    )  # fmt: skip


def replay_decide_label(
    smooth: Smooth,
    record: DrawRecord,
    label: int,
    radii: Sequence[float],
    schedule: Schedule,
) -> list[Decision]:
    """:func:`~rsutils.core.evaluation.decide_label_radii` on the record (evaluation
    of the true ``label``; the selection draws are not read)."""
    label = check_label(label, record.num_classes)
    radii = [check_radius(r) for r in radii]
    _check_length(record, schedule)
    return schedule.settle(
        smooth, record.counter(), label, radii,
        dim=record.dim, n0=0, seed=record.seed, index=record.index,
    )  # fmt: skip


def replay_planned(
    smooth: Smooth,
    record: DrawRecord,
    alpha: float,
    radius_loss: float,
    *,
    min_draws: int = 100,
) -> Certificate:
    """:func:`~rsutils.core.sample_size.certify_planned` on the record, with
    ``n_max`` the record's ``n``."""
    check_alpha(alpha)
    check_radius_loss(radius_loss)
    selected = record.selected
    p_hat = float(np.count_nonzero(record.selection == selected)) / record.n0
    n = planned_draws(smooth, p_hat, record.n, alpha, radius_loss, record.dim, min_draws=min_draws)
    count = int(record.counter().advance(n)[selected])
    return _certificate(smooth, record, count, n, alpha)


def _check_length(record: DrawRecord, schedule: Schedule) -> None:
    if schedule.n_max > record.n:
        raise ValueError(
            f"the schedule may read {schedule.n_max} draws but the record holds {record.n}; "
            "record at least the draws the procedure may read (record_draws(..., n=n_max))"
        )


def _certificate(
    smooth: Smooth, record: DrawRecord, count: int, n: int, alpha: float
) -> Certificate:
    return smooth.certificate(
        count, n, record.selected, n0=record.n0, alpha=alpha,
        seed=record.seed, index=record.index, dim=record.dim,
    )  # fmt: skip
