"""What a procedure reads of one input: selection counts and a stream of estimation draws.

Every procedure of :mod:`rsutils.sequential` reads prefixes of CERTIFY's two seeded
streams of one input: the ``n0`` selection draws (their class counts pick the class to
test) and the estimation draws, read after ``n_1 < n_2 < …`` of them through a
:class:`Counter`. A :class:`Draws` holds both for one input, with what identifies the
input's noise (``seed``, ``index``), its size ``dim`` (which the radius of some noises
depends on) and, for the evaluation of a labelled test set, its true ``label``.

The same :class:`Draws` comes from the base model run live (:func:`live_draws`, a
:class:`~rsutils.core.sampling.PrefixCounter` that runs the model only as far as the
procedure reads) or from recorded draws
(:meth:`~rsutils.sequential.record.DrawRecord.draws`): a procedure cannot tell them
apart, which is why a replay *is* the procedure.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import torch

from rsutils.core.settings import check_count
from rsutils.core.smooth import Smooth

__all__ = ["Counter", "Draws", "check_label", "live_draws"]


class Counter(Protocol):
    """Class counts over growing prefixes of one stream of draws
    (:class:`~rsutils.core.sampling.PrefixCounter` live, or
    :class:`~rsutils.sequential.record.RecordedCounter` on recorded draws)."""

    def advance(self, to: int) -> torch.Tensor | np.ndarray: ...

    def labels(self) -> np.ndarray: ...


@dataclass(eq=False)
class Draws:
    """One input's draws, as a procedure reads them (see the module's text).

    ``selection`` holds the class counts of the ``n0`` selection draws (all zero when
    the procedure reads none); ``counter`` the estimation stream's prefixes, which
    can only be read forward, so a :class:`Draws` serves one procedure once.
    """

    selection: np.ndarray
    counter: Counter
    dim: int
    seed: int
    index: int
    label: int | None = None

    @property
    def n0(self) -> int:
        """The selection draws read."""
        return int(np.asarray(self.selection).sum())

    @property
    def selected(self) -> int:
        """The class CERTIFY selects, the most frequent selection draw (lowest on ties)."""
        if self.n0 == 0:
            raise ValueError("no selection draws were made: the procedure tests a given label")
        return int(np.argmax(self.selection))

    @property
    def true_label(self) -> int:
        """The input's true label, which an evaluation procedure tests."""
        if self.label is None:
            raise ValueError(
                "this procedure tests the input's true label: give label=int(y) (the "
                "dataset's label of the input)"
            )
        return self.label

    def count(self, tested: int, n: int) -> int:
        """How many of the first ``n`` estimation draws fell in class ``tested``."""
        return int(self.counter.advance(n)[tested])

    def hits(self, tested: int, n: int) -> np.ndarray:
        """The first ``n`` estimation draws as 0/1 (1: class ``tested``), in stream order."""
        self.counter.advance(n)
        return (self.counter.labels()[:n] == tested).astype(np.int8)


def live_draws(
    smooth: Smooth,
    x: torch.Tensor,
    *,
    n0: int,
    n_max: int,
    batch_size: int = 1000,
    seed: int,
    index: int = 0,
    label: int | None = None,
) -> Draws:
    """The draws of ``x`` that CERTIFY with ``n0`` and ``n = n_max`` makes for ``seed`` and
    ``index``: the ``n0`` selection draws now (none if ``n0 = 0``), the estimation draws
    as a procedure reads them (the model runs on a batch only when a look needs it)."""
    check_count("n_max", n_max)
    if n0:
        selection = smooth.sample_counts(x, n0, batch_size, seed=seed, index=index, phase="select")
    else:
        selection = np.zeros(smooth.num_classes, dtype=np.int64)
    counter = smooth.prefix_counter(x, n_max, batch_size, seed=seed, index=index, keep_labels=True)
    if label is not None:
        label = check_label(label, smooth.num_classes)
    return Draws(selection, counter, x.numel(), seed, index, label)


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
