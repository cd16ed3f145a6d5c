"""The certificate memory: sound answers when the noise depends on the input.

With a noise level (DDRS, :mod:`rsutils.ddrs`) or a noise shape (UCAN,
:mod:`rsutils.anisotropic`) chosen per input, the smoothed classifier is no longer one
fixed classifier, and two certificates can contradict each other: the region certified
at one input may contain another input answered with a different class. The memory
(DDRS §3.5) keeps every answer and its region, and admits a new Monte Carlo certificate
``(x, class, R)`` so that this cannot happen:

1. if ``x`` lies in a stored region of another class, the answer becomes that class
   and the region shrinks to fit inside the stored one ("adopted");
2. the region then shrinks until it misses every stored region of another class
   ("shrunk"), otherwise it is kept as certified ("kept");
3. the answer and its region are stored; an abstention outside every region is stored
   without a region ("abstained"). Only the scale ``R`` ever shrinks; a region's shape
   (a super-ellipsoid's ``sigma``) stays.

Invariant after any sequence of admissions: no two stored regions of different
classes intersect, and every stored input lies in its own region and in no region of
another class (the second follows from the first: a centre belongs to its region).
Why it holds is in :mod:`rsutils.memory.engine`; why each shape's tests are exact, in
its module.

One engine, several shapes: :mod:`rsutils.memory.engine` (the rules, the invariant
check, keys: :class:`~rsutils.memory.engine.RegionMemory`) on
:mod:`rsutils.memory.storage` (the SQLite file: one transaction per admission, safe
for concurrent processes and kills), with a
:class:`~rsutils.memory.shapes.RegionShape` plug-in per kind of region:
:mod:`rsutils.memory.balls` (ℓp balls,
:class:`~rsutils.memory.balls.CertificateMemory`) and
:mod:`rsutils.memory.superellipsoids` (axis-aligned super-ellipsoids,
:class:`~rsutils.memory.superellipsoids.AnisotropicMemory`). This package imports only
:mod:`rsutils.core` and :mod:`rsutils.geometry`.
"""

from rsutils.memory.balls import (
    CertificateMemory,
    NormBalls,
    closest_conflict,
    conflicting_pairs,
    replay,
)
from rsutils.memory.engine import MemoryAnswer, MemoryInconsistencyError, RegionMemory
from rsutils.memory.shapes import RegionShape
from rsutils.memory.storage import copy_memory
from rsutils.memory.superellipsoids import (
    AnisotropicMemory,
    SuperEllipsoids,
    anisotropic_conflicting_pairs,
)

__all__ = [
    "AnisotropicMemory",
    "CertificateMemory",
    "MemoryAnswer",
    "MemoryInconsistencyError",
    "NormBalls",
    "RegionMemory",
    "RegionShape",
    "SuperEllipsoids",
    "anisotropic_conflicting_pairs",
    "closest_conflict",
    "conflicting_pairs",
    "copy_memory",
    "replay",
]
