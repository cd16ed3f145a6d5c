"""The plug-in of the certificate memory: what a region shape must answer.

The engine (:mod:`rsutils.memory.engine`) owns the file, the keys and the admission
rules; a :class:`RegionShape` owns the geometry of one kind of region
``{c} ∪ {z : gauge(z − c) < R}``, indexed by a centre ``c``, a scale ``R`` that shrinks,
and possibly per-region data the kind needs (the super-ellipsoid's shape ``sigma``). A
shape answers four questions, vectorised over the stored regions:

- **membership** (:meth:`RegionShape.place`): which stored regions contain a point;
- **shrink to fit** (:meth:`RegionShape.fit_inside`): a scale at which a new region
  lies inside a stored one (used when the memory adopts a stored class);
- **shrink to avoid** (:meth:`RegionShape.shrink_to_avoid`): the largest scale at which
  a new region is *proven* disjoint from given stored regions;
- **separation** (:meth:`RegionShape.conflicting_pairs`): the pairs of regions of
  different classes not proven disjoint (the invariant check).

The memory is sound when shrink-to-avoid is: a scale it returns must make the new
region disjoint from every region it was given, in exact arithmetic on the stored
numbers (centres and per-region data as float32, scales as float64), and scale 0 (the
point itself) must always qualify when the point lies in none of them. Shrink-to-fit
only affects how much of an adopted certificate is kept, never soundness.

A new kind of region is a new subclass: it names itself (``kind``, ``plural``, the
class that opens its files), says which per-region data it stores (``extra_column``)
and implements the four questions. Subclasses register themselves, so a memory file of
any known kind is recognised (and refused by name) when opened as another.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar, NamedTuple

import numpy as np

__all__ = ["Placement", "RegionShape", "Regions", "known_shapes"]

_KNOWN: dict[str, type[RegionShape]] = {}


class Regions(NamedTuple):
    """The stored regions that carry a class, in admission order (views, not copies).

    ``centers`` ``(N, d)`` float32; ``extras`` ``(N, k)`` float32, the per-region data
    of the shape (``k = 0`` when it stores none); ``classes`` ``(N,)`` int64;
    ``scales`` ``(N,)`` float64.
    """

    centers: np.ndarray
    extras: np.ndarray
    classes: np.ndarray
    scales: np.ndarray


@dataclass(frozen=True)
class Placement:
    """Where a new input ``x`` lies among the stored regions.

    ``x`` is the input (float32), ``extra`` the new region's per-region data (float32,
    empty when the shape stores none), ``inside`` whether each stored region contains
    ``x``; ``distances`` is what the shape measured on the way, if it wants it back in
    :meth:`RegionShape.fit_inside` and :meth:`RegionShape.shrink_to_avoid`.
    """

    x: np.ndarray
    extra: np.ndarray
    inside: np.ndarray
    distances: np.ndarray | None = None


class RegionShape(ABC):
    """One kind of certified region, of one ``norm``: the questions the memory asks.

    Class attributes name the kind: ``kind`` (the suffix of the geometry name the file
    records in its ``meta`` table, e.g. ``"ball"`` in ``"l2-ball"``), ``plural`` (for
    messages), ``opened_by`` (the memory class that opens such files) and
    ``extra_column`` (the BLOB column holding the per-region data, or ``None``).
    """

    kind: ClassVar[str]
    plural: ClassVar[str]
    opened_by: ClassVar[str]
    extra_column: ClassVar[str | None] = None

    norm: str

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if "kind" in cls.__dict__:
            _KNOWN[cls.kind] = cls

    @property
    def name(self) -> str:
        """The geometry name a memory file records, e.g. ``"l2-ball"``."""
        return f"{self.norm}-{self.kind}"

    def extra_data(self, extra: object, size: int) -> np.ndarray:
        """The new region's per-region data as a flat float32 vector, or a ValueError.

        ``size`` is the number of elements of the input. Shapes without per-region data
        accept only ``None`` (and return an empty vector).
        """
        if extra is not None:
            raise ValueError(
                f"{self.plural} carry no per-region data, got {type(extra).__name__}; "
                "regions with a shape sigma belong in an AnisotropicMemory"
            )
        return np.empty(0, dtype=np.float32)

    @abstractmethod
    def place(self, regions: Regions, x: np.ndarray, extra: np.ndarray) -> Placement:
        """Which stored regions contain ``x`` (exactly, on the stored numbers)."""

    @abstractmethod
    def fit_inside(
        self, regions: Regions, placement: Placement, holder: int, upper: float
    ) -> float:
        """A scale ``≤ upper`` at which the new region lies inside region ``holder``.

        ``holder`` contains ``placement.x``; the result is ≥ 0 and may be
        conservative.
        """

    @abstractmethod
    def shrink_to_avoid(
        self, regions: Regions, placement: Placement, others: np.ndarray, upper: float
    ) -> float | None:
        """The largest scale ``≤ upper`` proven disjoint from the stored regions ``others``.

        ``others`` is a boolean mask over the stored regions, none of which contains
        ``placement.x``. The returned scale must make the new region disjoint from each
        of them in exact arithmetic; ``None`` means not even the point is.
        """

    @abstractmethod
    def conflicting_pairs(self, regions: Regions) -> list[tuple[int, int]]:
        """Index pairs ``i < j`` of regions of different classes not proven disjoint.

        Regions of class ABSTAIN are skipped.
        """


def known_shapes() -> dict[str, type[RegionShape]]:
    """The registered kinds of region, by ``kind`` (``"ball"``, ``"superellipsoid"``…)."""
    return dict(_KNOWN)
