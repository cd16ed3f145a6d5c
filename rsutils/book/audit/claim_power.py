"""What a claim's comparisons could have detected: their power, summed up for one claim.

A verdict of "not resolved" means little without the chance that the design could have
resolved it, and a "holds" or "does not hold" means more beside a design that could
have gone the other way. :func:`claim_power` reads the comparisons a claim's verdict
rests on (rows of :func:`~rsutils.analysis.differences.replicated_comparisons`, judged
with the book's margins) and asks of each, by
:func:`~rsutils.analysis.power.comparison_power`, the chance that its own design (its
models × images, the variance components it measured) finds a difference of its
margin's size, the smallest that matters, at the strictest level Holm's correction
asks in its family. :class:`ClaimPower` sums these up for a claim: the median over the
comparisons (the lower of the two middle ones for an even count) with their range, how
many saw no spread (every image agreed: power unknown), and how many images that median
comparison would need for 80% at the same number of models.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from rsutils.analysis.power import comparison_power

__all__ = ["TARGET_POWER", "ClaimPower", "claim_power"]

#: The power a design should have against the smallest difference that matters, the
#: usual planning figure of 80%.
TARGET_POWER = 0.8


@dataclass(frozen=True)
class ClaimPower:
    """The power of a claim's comparisons against a difference of their margins.

    ``median``, ``low`` and ``high`` summarise the comparisons whose power is known
    (``nan`` when none is); ``median`` is one comparison's power, the lower middle one
    for an even count, so that ``images_needed``, the images at which that comparison
    would reach :data:`TARGET_POWER` (``None`` when no number of images would: the
    models' part is a floor), is about the power quoted. ``unknown`` counts the
    comparisons that saw no spread and ``models`` is the design's number of models.
    """

    comparisons: int
    unknown: int
    median: float
    low: float
    high: float
    models: int
    images_needed: int | None

    def __str__(self) -> str:
        if self.unknown == self.comparisons:
            return f"unknown: none of {self.comparisons} comparisons saw a spread"
        spread = "" if self.low == self.high else f", {self.low:.2f}–{self.high:.2f}"
        known = self.comparisons - self.unknown
        median = "median" if known % 2 else "lower median"
        said = f"{self.median:.2f} ({median} of {known}{spread})"
        if self.unknown:
            said += f"; {self.unknown} with no spread seen"
        target = f"{TARGET_POWER:.0%} needs "
        if self.images_needed is None:
            return f"{said}; {target}more models, not images"
        models = f"{self.models} model{'s' if self.models != 1 else ''}"
        return f"{said}; {target}{self.images_needed:,} images at {models}"

    def brief(self) -> str:
        """The median power and what would reach :data:`TARGET_POWER`, for a table's
        cell: ``"0.06; 80% needs 1,900 images"``."""
        if self.unknown == self.comparisons:
            return "unknown (no spread seen)"
        needs = "more models" if self.images_needed is None else f"{self.images_needed:,} images"
        return f"{self.median:.2f}; {TARGET_POWER:.0%} needs {needs}"


def claim_power(table: pd.DataFrame, *, draws: int = 2000, seed: int = 0) -> ClaimPower:
    """:class:`ClaimPower` of the comparisons of ``table`` (rows of
    :func:`~rsutils.analysis.differences.replicated_comparisons` judged with a margin, one
    claim's family), each at its own margin. Deterministic for a given ``seed``."""
    if table.empty:
        raise ValueError("no comparisons to compute a power for: pass a claim's rows")
    found = comparison_power(table, power=TARGET_POWER, draws=draws, seed=seed)
    known = found.dropna(subset=["power"])
    models = int(table["models"].max())
    if known.empty:
        nan = math.nan
        return ClaimPower(len(found), len(found), nan, nan, nan, models, None)
    powers = known["power"].to_numpy(float)
    middle = known.iloc[int(np.argsort(powers, kind="stable")[(len(powers) - 1) // 2])]
    needed = middle["images for power"]
    return ClaimPower(
        comparisons=len(found),
        unknown=len(found) - len(known),
        median=float(middle["power"]),
        low=float(powers.min()),
        high=float(powers.max()),
        models=models,
        images_needed=None if pd.isna(needed) else int(needed),
    )
