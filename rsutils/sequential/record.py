"""Recorded draws: the class of every noisy copy CERTIFY classifies, to replay procedures.

:func:`record_draws` runs the base model once over CERTIFY's two seeded streams of one
input (``n0`` selection draws, ``n`` estimation draws) and keeps each draw's class (a
:class:`DrawRecord`). :meth:`DrawRecord.draws` hands them to any procedure of
:mod:`rsutils.sequential` as :class:`~rsutils.sequential.draws.Draws` (a
:class:`RecordedCounter` standing in for
:class:`~rsutils.core.sampling.PrefixCounter`), so
:func:`~rsutils.sequential.procedure.replay` gives exactly what the live procedure
with the same ``seed`` and ``index`` returns. Procedures are then compared on the same
draws, and a procedure's cost is the draws it reads, counted, not timed.

A replay is the procedure, not an approximation of it: its answer holds with the
procedure's guarantee, because the recorded classes are the base model's answers on
the procedure's own noise. The record must hold at least the draws the procedure may
read (its ``n_max``); asking for more is an error.

:func:`pack_labels` and :func:`unpack_labels` turn a stream of classes into text for a
log (:func:`~rsutils.sequential.runs.record_dataset`).
"""

from __future__ import annotations

import base64
import zlib
from dataclasses import dataclass

import numpy as np
import torch

from rsutils.core.settings import check_count
from rsutils.core.smooth import Smooth
from rsutils.core.streams import draw_seed
from rsutils.sequential.draws import Draws, check_label

__all__ = [
    "DrawRecord",
    "RecordedCounter",
    "pack_labels",
    "record_draws",
    "unpack_labels",
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

    def draws(self, *, selects: bool = True, label: int | None = None) -> Draws:
        """The record as a procedure reads it: the selection counts (none unless
        ``selects``), a fresh counter over the estimation draws, and ``label``."""
        if selects:
            selection = np.bincount(self.selection, minlength=self.num_classes)
        else:
            selection = np.zeros(self.num_classes, dtype=np.int64)
        if label is not None:
            label = check_label(label, self.num_classes)
        return Draws(selection, self.counter(), self.dim, self.seed, self.index, label)


class RecordedCounter:
    """:class:`~rsutils.core.sampling.PrefixCounter`'s interface on recorded classes."""

    def __init__(self, labels: np.ndarray, num_classes: int) -> None:
        self._labels, self.num_classes = np.asarray(labels), num_classes
        self.total, self.drawn = int(self._labels.size), 0

    def advance(self, to: int) -> np.ndarray:
        """The class counts of the first ``to`` recorded draws (``drawn <= to <= total``)."""
        if not self.drawn <= to <= self.total:
            raise ValueError(
                f"the record holds {self.total} draws and {self.drawn} were read; cannot "
                f"advance to {to}: record at least the draws the procedure may read"
            )
        self.drawn = to
        return np.bincount(self._labels[:to], minlength=self.num_classes)

    def labels(self) -> np.ndarray:
        """The classes of the draws read so far, in stream order."""
        return self._labels[: self.drawn]


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


def pack_labels(labels: np.ndarray) -> str:
    """Classes as text without tabs: little-endian uint16, zlib, URL-safe base64."""
    values = np.asarray(labels)
    if values.size and (values.min() < 0 or values.max() > np.iinfo(np.uint16).max):
        raise ValueError("can only pack classes in [0, 65535]")
    raw = values.astype("<u2").tobytes()
    return base64.urlsafe_b64encode(zlib.compress(raw, 6)).decode("ascii")


def unpack_labels(text: str) -> np.ndarray:
    """The classes :func:`pack_labels` packed, as int32."""
    raw = zlib.decompress(base64.urlsafe_b64decode(text.encode("ascii")))
    return np.frombuffer(raw, dtype="<u2").astype(np.int32)
