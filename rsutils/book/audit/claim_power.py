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
comparison would need for 80% at the same number of models, for the book's own test
(:func:`~rsutils.analysis.power.images_for_simulated_power`; the closed form
overstates that test's power where the models do not vary, and could name fewer
images than a design already run that fell short of 80%).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from rsutils.analysis.power import comparison_power, images_for_simulated_power

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
    would reach :data:`TARGET_POWER` with the book's test (``None`` when
    :data:`~rsutils.analysis.power.MOST_IMAGES` would not: the models' part is then a
    floor, or the effect is beyond any design of these models), is about the power
    quoted. ``unknown`` counts the
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

    @property
    def needs(self) -> str:
        """What would reach :data:`TARGET_POWER`: ``"1,900 images"`` (at the same
        models), ``"more models"``, or ``"unknown"`` when no comparison saw a spread."""
        if self.unknown == self.comparisons:
            return "unknown"
        return "more models" if self.images_needed is None else f"{self.images_needed:,} images"

    def brief(self) -> str:
        """The median power and what would reach :data:`TARGET_POWER`, for a table's
        cell: ``"0.06; 80% needs 1,900 images"``."""
        if self.unknown == self.comparisons:
            return "unknown (no spread seen)"
        return f"{self.median:.2f}; {TARGET_POWER:.0%} needs {self.needs}"


def claim_power(
    table: pd.DataFrame, *, draws: int = 2000, seed: int = 0, images_factor: float = 1.0
) -> ClaimPower:
    """:class:`ClaimPower` of the comparisons of ``table`` (rows of
    :func:`~rsutils.analysis.differences.replicated_comparisons` judged with a margin, one
    claim's family), each at its own margin. Deterministic for a given ``seed``.

    ``images_factor`` asks it of a larger (or smaller) design of the same kind: each
    comparison with that many times its images (rounded up), the same models and the
    variance components it measured, so what a planned design would detect before it
    is run (equation (1) of :mod:`rsutils.analysis.power`)."""
    if table.empty:
        raise ValueError("no comparisons to compute a power for: pass a claim's rows")
    if not images_factor > 0:
        raise ValueError(f"images_factor must be positive, got {images_factor}")
    if images_factor != 1:
        scaled = np.ceil(table["images"].to_numpy(float) * images_factor).astype(int)
        table = table.assign(images=scaled)
    found = comparison_power(table, power=TARGET_POWER, draws=draws, seed=seed)
    known = found.dropna(subset=["power"])
    models = int(table["models"].max())
    if known.empty:
        nan = math.nan
        return ClaimPower(len(found), len(found), nan, nan, nan, models, None)
    powers = known["power"].to_numpy(float)
    place = int(np.argsort(powers, kind="stable")[(len(powers) - 1) // 2])
    middle, row = known.iloc[place], table.loc[known.index[place]]
    needed = images_for_simulated_power(
        middle["effect"],
        row["components"],
        models=int(row["models"]),
        power=TARGET_POWER,
        tests=int(row["tests"]),
        seed=seed,
    )
    return ClaimPower(
        comparisons=len(found),
        unknown=len(found) - len(known),
        median=float(middle["power"]),
        low=float(powers.min()),
        high=float(powers.max()),
        models=models,
        images_needed=needed,
    )
