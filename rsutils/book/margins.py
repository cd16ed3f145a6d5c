"""The book's equivalence margins, one per kind of measure, and why.

Every comparison of the book is judged by one rule
(:func:`~rsutils.analysis.verdicts.judge`) with the margin of its measure: the smallest
difference that matters, fixed here before any comparison was run and cited by every
chapter that judges one. Chapter 07 shows how each claim's verdict moves when both are
halved or doubled.
"""

from __future__ import annotations

import pandas as pd

from rsutils.analysis.margins import Margins

__all__ = ["MARGINS", "MARGIN_REASONS", "margins_table"]

#: The equivalence margins of the book's comparisons, one per kind of measure, fixed
#: before any comparison was run (their reasons: :data:`MARGIN_REASONS`).
MARGINS = Margins(acr=0.05, accuracy=0.05)

#: Why each margin of :data:`MARGINS` is the smallest difference that matters.
MARGIN_REASONS = {
    "acr": (
        "ACR, by radius or by ALM, in ℓ2 distance in [0, 1] pixel space: a tenth of the "
        "anisotropic chapters' λ = 0.5 and about a tenth of the ACRs they measure, below "
        "which no reader would prefer one method to the other"
    ),
    "accuracy": (
        "certified accuracy at a radius, as a share of the test images: about the "
        "half-width of a 95% Clopper–Pearson interval for an accuracy near one half on "
        "500 test images, the size of Cohen et al.'s released CIFAR-10 logs; a "
        "difference smaller than that between two printed tables is not resolved by "
        "the papers' own test sets"
    ),
}


def margins_table() -> pd.DataFrame:
    """:data:`MARGINS` with their units and reasons, one row per kind of measure."""
    units = {"acr": "ℓ2 radius", "accuracy": "share of test images"}
    rows = {
        kind: {"margin": getattr(MARGINS, kind), "unit": units[kind], "why": reason}
        for kind, reason in MARGIN_REASONS.items()
    }
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.index = table.index.map({"acr": "ACR", "accuracy": "certified accuracy"})
    table.index.name = "measure"
    return table
