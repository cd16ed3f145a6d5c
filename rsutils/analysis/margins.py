"""Equivalence margins, one per kind of measure.

A comparison of two methods is judged by the book's verdict rule
(:func:`~rsutils.analysis.verdicts.judge`): a difference whose (1 − 2α) interval lies
inside ±m is "equivalent within ±m" (or "rises, within ±m" when it is also
significantly positive). The margin m is the smallest difference that matters, and it
depends on what is measured: a distance (the ACR, by radius or by ALM) or a share of
test images (certified accuracy at a radius). :class:`Margins` holds one of each and
picks the right one for a measure as
:func:`~rsutils.analysis.differences.replicated_comparisons` names it (a log column for
the ACR, a ``(column, radius)`` pair for certified accuracy).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["Margins", "Measure", "margin_for"]

#: A measure as :func:`~rsutils.analysis.differences.replicated_comparisons` takes it: a
#: log column (the ACR by that column) or ``(column, radius)`` (certified accuracy).
Measure = str | tuple[str, float]


@dataclass(frozen=True)
class Margins:
    """The equivalence margin of each kind of measure.

    ``acr`` is in the radius's units (an ℓ2 distance, also for the ALM, the radius of
    the ball of the region's volume); ``accuracy`` is a share of the test images (0.05
    is 5 percentage points).
    """

    acr: float
    accuracy: float

    def __post_init__(self) -> None:
        for name in ("acr", "accuracy"):
            value = getattr(self, name)
            if not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
                raise ValueError(f"Margins.{name} must be a positive number, got {value!r}")

    def for_measure(self, measure: Measure) -> float:
        """The margin of ``measure``: ``acr`` for a column, ``accuracy`` for a pair."""
        return self.acr if isinstance(measure, str) else self.accuracy

    def scaled(self, factor: float) -> Margins:
        """Both margins times ``factor`` (a sensitivity analysis: half, twice)."""
        return Margins(self.acr * factor, self.accuracy * factor)


def margin_for(margin: float | Margins | None, measure: Measure) -> float | None:
    """The margin a comparison of ``measure`` is judged with: ``margin`` itself when it
    is one number, its :meth:`Margins.for_measure` when it is a :class:`Margins`."""
    if margin is None or not isinstance(margin, Margins):
        return margin
    return margin.for_measure(measure)
