"""The certificate memory's engine: the admission rules and the invariant, for any shape.

A :class:`RegionMemory` keeps every answer and its region in a
:class:`~rsutils.memory.storage.MemoryFile` and admits a new Monte Carlo certificate
``(x, class, R)`` by the rules stated in :mod:`rsutils.memory`; everything geometric is
asked of its :class:`~rsutils.memory.shapes.RegionShape`. The public memories are this
engine with a shape: :class:`~rsutils.memory.balls.CertificateMemory` (ℓp balls) and
:class:`~rsutils.memory.superellipsoids.AnisotropicMemory` (axis-aligned
super-ellipsoids).

**Why the invariant holds.** By induction over the admissions in the order they commit.
An admission holds the database's write lock from before it loads what other processes
committed until its own answer is stored, so it decides against every stored region.
If ``x`` lies in a stored region of another class, the answer becomes that class; if
``x`` then still lies in a region of a class other than the answer, two stored regions
of different classes meet, which the induction hypothesis excludes, and the memory
refuses (:class:`MemoryInconsistencyError`) instead of storing anything. Otherwise the
scale shrinks to one the shape *proves* disjoint from every stored region of another
class (scale 0, the point itself, always qualifies), and only then is the region
stored. So no two stored regions of different classes intersect, and since a centre
belongs to its region, no stored input lies in a region of another class.
:meth:`RegionMemory.violations` re-checks the invariant from the stored numbers.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Self

import numpy as np
import pandas as pd
import torch

from rsutils.core.smooth import ABSTAIN
from rsutils.memory.shapes import Placement, Regions, RegionShape
from rsutils.memory.storage import MemoryFile

__all__ = ["ACTIONS", "MemoryAnswer", "MemoryInconsistencyError", "RegionMemory"]

#: What the memory did to a Monte Carlo certificate.
ACTIONS = ("kept", "shrunk", "adopted", "abstained")


class MemoryInconsistencyError(RuntimeError):
    """A new input lies in stored regions of two different classes (a corrupted memory)."""


@dataclass(frozen=True)
class MemoryAnswer:
    """The memory's answer for one input: class (or ABSTAIN) and certified radius.

    ``mc_prediction`` and ``mc_radius`` are the Monte Carlo certificate it was given;
    ``action`` is one of ``kept``, ``shrunk``, ``adopted``, ``abstained``; ``repeated``
    is true when ``key`` was already in the memory (the stored answer is returned).
    """

    prediction: int
    radius: float
    mc_prediction: int
    mc_radius: float
    action: str
    entry: int
    repeated: bool = False


class _RegionTable:
    """The loaded regions, in admission order, in arrays that grow by doubling."""

    def __init__(self) -> None:
        self.ids: list[int] = []
        self.count = 0
        self.classes = np.empty(0, dtype=np.int64)
        self.scales = np.empty(0, dtype=np.float64)
        self.centers = np.empty((0, 0), dtype=np.float32)
        self.extras = np.empty((0, 0), dtype=np.float32)

    def view(self) -> Regions:
        n = self.count
        return Regions(self.centers[:n], self.extras[:n], self.classes[:n], self.scales[:n])

    def append(
        self, entry: int, prediction: int, scale: float, center: np.ndarray, extra: np.ndarray
    ) -> None:
        if self.count == len(self.centers):
            size = max(16, 2 * self.count)
            self.centers = _grown(self.centers, size, center.size)
            self.extras = _grown(self.extras, size, extra.size)
            self.classes = np.resize(self.classes, size)
            self.scales = np.resize(self.scales, size)
        n = self.count
        self.centers[n], self.extras[n] = center, extra
        self.classes[n], self.scales[n] = prediction, scale
        self.ids.append(entry)
        self.count += 1


def _grown(array: np.ndarray, rows: int, width: int) -> np.ndarray:
    grown = np.empty((rows, width), dtype=array.dtype)
    if len(array):
        grown[: len(array)] = array
    return grown


class RegionMemory:
    """A persistent memory of certified answers whose regions are ``shape``'s.

    ``path=None`` keeps it in RAM only. All inputs must have the same number of
    elements; they are stored as float32 (and the shape's per-region data too), and
    every test is computed from the stored values. The rules and the invariant are in
    :mod:`rsutils.memory`; why the invariant holds, in this module's docstring.
    """

    def __init__(self, path: str | os.PathLike[str] | None, shape: RegionShape) -> None:
        self.region_shape = shape
        self._file = MemoryFile(path, shape)
        self._table = _RegionTable()
        self._last_id = 0
        self._dim: int | None = None
        self._sync()

    @property
    def path(self) -> Path | None:
        """The memory's file (``None`` in RAM)."""
        return self._file.path

    @property
    def norm(self) -> str:
        """The norm of the regions (``"l1"``, ``"l2"`` or ``"linf"``)."""
        return self.region_shape.norm

    # -- the stored regions ----------------------------------------------------------------

    @property
    def centers(self) -> np.ndarray:
        """The stored inputs that carry a region, ``(N, d)`` float32, in admission order."""
        return self._table.view().centers

    @property
    def classes(self) -> np.ndarray:
        """The classes of the stored regions (int64), in admission order."""
        return self._table.view().classes

    @property
    def radii(self) -> np.ndarray:
        """The scales of the stored regions (float64)."""
        return self._table.view().scales

    def __len__(self) -> int:
        return self._file.count()

    def entries(self) -> pd.DataFrame:
        """Every stored answer (regions and abstentions), without the inputs."""
        return self._file.entries()

    def _sync(self) -> None:
        """Load the regions committed since the last call (by this or another process)."""
        for entry, prediction, radius, center_blob, extra_blob in self._file.rows_since(
            self._last_id
        ):
            self._last_id = entry
            center = np.frombuffer(center_blob, dtype=np.float32)
            self._check_dim(center.size)
            if prediction != ABSTAIN:
                extra = np.frombuffer(extra_blob or b"", dtype=np.float32)
                self._table.append(entry, prediction, radius, center, extra)

    def _check_dim(self, size: int) -> None:
        if self._dim is None:
            self._dim = size
        elif size != self._dim:
            raise ValueError(
                f"this memory holds inputs of {self._dim} elements, got one of {size}; "
                "use one memory per input shape"
            )

    # -- queries ---------------------------------------------------------------------------

    def lookup(self, x: torch.Tensor | np.ndarray) -> int | None:
        """The class of the first stored region containing ``x`` (decided exactly), or ``None``."""
        self._sync()
        placement = self._place(_as_vector(x), np.empty(0, dtype=np.float32))
        inside = placement.inside
        return int(self.classes[np.argmax(inside)]) if inside.any() else None

    def violations(self) -> list[tuple[int, int]]:
        """Entry ids of stored regions that break the invariant (empty when sound).

        A pair of regions of different classes counts unless the shape proves it
        disjoint.
        """
        self._sync()
        pairs = self.region_shape.conflicting_pairs(self._table.view())
        return [(self._table.ids[i], self._table.ids[j]) for i, j in pairs]

    def _place(self, center: np.ndarray, extra: np.ndarray) -> Placement:
        if self._table.count:
            self._check_dim(center.size)
        return self.region_shape.place(self._table.view(), center, extra)

    # -- admission -------------------------------------------------------------------------

    def admit_region(
        self,
        x: torch.Tensor | np.ndarray,
        prediction: int,
        radius: float,
        extra: object = None,
        *,
        key: str | None = None,
    ) -> MemoryAnswer:
        """Admit the Monte Carlo certificate ``(prediction, radius)`` at ``x``, any shape.

        ``extra`` is the region's per-region data (``None`` for balls, ``sigma`` for
        super-ellipsoids); the memories' own ``admit`` methods name it. Returns the
        memory's answer, which is what the certified classifier answers at ``x``. If
        ``key`` was admitted before (for the same input), the stored answer is returned
        unchanged, so a resumed run gets the same answers; a key reused for another
        input is an error. Bad input is refused before anything is written.
        """
        prediction, radius = int(prediction), float(radius)
        if not (math.isfinite(radius) and radius >= 0):
            raise ValueError(f"radius must be finite and >= 0, got {radius!r}")
        if prediction < ABSTAIN:
            raise ValueError(f"prediction must be a class index or ABSTAIN, got {prediction}")
        if prediction == ABSTAIN and radius != 0:
            raise ValueError(f"an abstention certifies nothing: its radius must be 0, got {radius}")
        center = _as_vector(x)
        data = self.region_shape.extra_data(extra, center.size)
        with self._file.transaction():
            if key is not None:
                stored = self._by_key(key, center)
                if stored is not None:
                    return stored
            self._sync()
            self._check_dim(center.size)
            final, scale, action = self._resolve(self._place(center, data), prediction, radius)
            entry = self._file.insert(key, (final, scale, prediction, radius, action), center, data)
        self._sync()
        return MemoryAnswer(final, scale, prediction, radius, action, entry)

    def _by_key(self, key: str, center: np.ndarray) -> MemoryAnswer | None:
        """The stored answer of ``key``, if any; a key reused for another input is an error."""
        found = self._file.by_key(key)
        if found is None:
            return None
        answer, stored_center = found
        if stored_center != center.tobytes():
            raise ValueError(
                f"key {key!r} was admitted for another input; keys must identify inputs "
                "(use a new key for a new input)"
            )
        return MemoryAnswer(*answer, repeated=True)

    def _resolve(
        self, placement: Placement, prediction: int, radius: float
    ) -> tuple[int, float, str]:
        """The rules: adopt a holder's class, abstain, then shrink to avoid the others."""
        regions, shape = self._table.view(), self.region_shape
        holders = placement.inside & (regions.classes != prediction)
        action = "kept"
        if holders.any():
            first = int(np.argmax(holders))
            prediction, action = int(regions.classes[first]), "adopted"
            radius = shape.fit_inside(regions, placement, first, radius)
        elif prediction == ABSTAIN:
            return ABSTAIN, 0.0, "abstained"
        others = regions.classes != prediction
        scale = None
        if not (placement.inside & others).any():
            scale = shape.shrink_to_avoid(regions, placement, others, radius)
        if scale is None:
            raise MemoryInconsistencyError(
                "the new input lies in stored regions of two different classes; the memory "
                f"{self.path or '(in RAM)'} is inconsistent (run .violations() to list them)"
            )
        if scale < radius and action == "kept":
            action = "shrunk"
        return prediction, scale, action

    # -- lifetime --------------------------------------------------------------------------

    def close(self) -> None:
        """Close the file (committed answers are already on disk)."""
        self._file.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _as_vector(x: torch.Tensor | np.ndarray) -> np.ndarray:
    """``x`` as a flat contiguous float32 vector, or a ValueError if it is not finite."""
    if isinstance(x, torch.Tensor):
        x = x.detach().cpu().numpy()
    vector = np.ascontiguousarray(np.asarray(x, dtype=np.float32).ravel())
    if not np.isfinite(vector).all():
        raise ValueError("x contains NaN or infinite values; clean the input first")
    return vector
