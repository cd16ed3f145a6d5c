"""The book's one verdict rule, on intervals or on p-values, and its family correction.

A difference between two methods (method minus control) gets one verdict: "rises" or
"falls" when its (1 − α) interval excludes 0; "equivalent within ±m" when its (1 − 2α)
interval lies inside the margin ±m and the (1 − α) interval contains 0; "rises, within
±m" ("falls, …") when both hold, a real change smaller than the smallest that matters;
"undecided" otherwise (:func:`judge`; :func:`judge_p` on p-values). The rows of one table
of comparisons, or of one claim, are one family: :func:`holm_family` judges them on
Holm-adjusted p-values. :func:`judge_magnitude` tests a stated size ("+7.7 points")
rather than a direction.

A verdict is a value, :class:`Verdict` (its :class:`Direction`, the margin it was judged
with and whether it lies within it, the family it was judged in), whose ``str()`` is the
text above; callers ask its properties (``v.rises``, ``v.equivalent``…), never its text.
A stated magnitude's verdict is a :class:`MagnitudeVerdict`.

**Verdicts in tables.** A table's ``verdict`` column holds the values themselves (a
pandas object column), here and in every table built from these; they become text only
at the edge where a table leaves Python: pandas and
:func:`~rsutils.analysis.pipe_table.pipe_table` print a cell by ``str()``, so shown
tables and CSV files read as the text, and the book glues a verdict as its text
(:func:`rsutils.book.glue.plain`). A verdict read back from text is parsed once
(:meth:`Verdict.parse`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from enum import StrEnum

import numpy as np
import pandas as pd

from rsutils.analysis.multiplicity import holm

__all__ = [
    "Direction",
    "Magnitude",
    "MagnitudeVerdict",
    "Verdict",
    "holm_family",
    "judge",
    "judge_magnitude",
    "judge_p",
]


class Direction(StrEnum):
    """The sign of a difference that its (1 − α) interval shows (method minus control)."""

    RISES = "rises"
    """The (1 − α) interval lies above 0."""
    FALLS = "falls"
    """The (1 − α) interval lies below 0."""


#: The text of a verdict with neither a sign nor an equivalence.
UNDECIDED = "undecided"


@dataclass(frozen=True, eq=False)
class Verdict:
    """The verdict on one difference (method minus control); ``str()`` is its text.

    - ``direction``: the sign the (1 − α) interval shows, or ``None`` when it
      contains 0;
    - ``margin``: the equivalence margin m it was judged with (``None``: no
      equivalence test); ``within_margin``: whether the (1 − 2α) interval lies
      inside ±m (the two one-sided tests both reject);
    - ``family``: the family it was judged in: the number of tests of its Holm family
      (:func:`holm_family`), a name, or ``None`` for a difference judged alone on its
      own intervals or p-values;
    - ``untested``: why no test was made (e.g. a group of images too small for an
      interval); the verdict's text is then this reason, and it decides nothing.

    Two verdicts are equal when they say the same: the same direction, the same
    equivalence (and margin, when within it) and the same reason for no test; the
    family and a margin not reached are where it was judged, not what it says. A
    verdict is not its text: comparing one with a ``str`` raises :class:`TypeError`
    (compare ``str(v)``, or ask a property); pandas, which compares a column
    element-wise, answers all False instead, so ask a column
    ``column.map(lambda v: v.rises)``.
    """

    direction: Direction | None = None
    margin: float | None = None
    within_margin: bool = False
    family: int | str | None = None
    untested: str | None = None

    def __post_init__(self) -> None:
        if self.direction is not None and not isinstance(self.direction, Direction):
            raise ValueError(
                f"direction must be a Direction or None, got {self.direction!r}: "
                "pass Direction.RISES or Direction.FALLS"
            )
        if self.margin is not None and not (math.isfinite(self.margin) and self.margin > 0):
            raise ValueError(f"margin must be a positive number or None, got {self.margin!r}")
        if self.within_margin and self.margin is None:
            raise ValueError("within_margin needs the margin it lies within: pass margin=m")
        if self.untested is not None and (self.direction or self.within_margin):
            raise ValueError("an untested verdict has no direction and no equivalence")

    @property
    def label(self) -> str:
        """The text of the verdict, ``str()`` of it (``"rises"``, ``"falls, within
        ±0.05"``, ``"equivalent within ±0.05"``, ``"undecided"``), or the reason it is
        untested."""
        if self.untested is not None:
            return self.untested
        if self.within_margin:
            if self.direction is None:
                return f"equivalent within ±{self.margin:g}"
            return f"{self.direction}, within ±{self.margin:g}"
        return str(self.direction) if self.direction else UNDECIDED

    def __str__(self) -> str:
        return self.label

    @property
    def rises(self) -> bool:
        """Significantly above 0, within a margin or not."""
        return self.direction is Direction.RISES

    @property
    def falls(self) -> bool:
        """Significantly below 0, within a margin or not."""
        return self.direction is Direction.FALLS

    @property
    def equivalent(self) -> bool:
        """Inside ±margin and not significantly different from 0 ("equivalent within ±m")."""
        return self.within_margin and self.direction is None

    @property
    def decided(self) -> bool:
        """Whether a sign or an equivalence was shown (anything but "undecided" or untested)."""
        return self.direction is not None or self.within_margin

    @property
    def tested(self) -> bool:
        """The difference was tested (it had an interval)."""
        return self.untested is None

    def _says(self) -> tuple[object, ...]:
        margin = self.margin if self.within_margin else None
        return (self.direction, self.within_margin, margin, self.untested)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            raise TypeError(
                f"a Verdict is compared with the text {other!r}: compare str(verdict), "
                "or ask its properties (verdict.rises, verdict.equivalent, …)"
            )
        if not isinstance(other, Verdict):
            return NotImplemented
        return self._says() == other._says()

    def __hash__(self) -> int:
        return hash(self._says())

    @classmethod
    def untested_because(cls, reason: str) -> Verdict:
        """A verdict where no test could be made, reading ``reason`` (``"too few images"``)."""
        if not reason or reason in _FIXED or _WITHIN.fullmatch(reason):
            raise ValueError(f"{reason!r} is not a reason for no test: name why none was made")
        return cls(untested=reason)

    @classmethod
    def parse(cls, text: str) -> Verdict:
        """The verdict whose text is ``text`` (a verdict read back from a table or a
        glued value): ``str(Verdict.parse(str(v))) == str(v)``. The margin is the one
        the text prints. Raises :class:`ValueError` for any other text."""
        if text in _FIXED:
            return _FIXED[text]
        match = _WITHIN.fullmatch(text)
        found = None
        if match is not None:
            sign = match.group("sign")
            direction = Direction(sign) if sign else None
            try:
                found = cls(direction, margin=float(match.group("margin")), within_margin=True)
            except ValueError:  # no number, or not a positive one
                found = None
        if found is None or str(found) != text:
            raise ValueError(
                f"{text!r} is not a verdict of rsutils.analysis.verdicts.judge (rises, "
                "falls, equivalent within ±m, rises/falls, within ±m, undecided)"
            )
        return found


#: The verdicts whose text names no margin, by text.
_FIXED = {str(d): Verdict(d) for d in Direction} | {UNDECIDED: Verdict()}
#: The text of a verdict within a margin (:meth:`Verdict.parse` checks the round trip).
_WITHIN = re.compile(
    rf"(?:(?P<sign>{'|'.join(Direction)}), within|equivalent within) ±(?P<margin>[0-9.e+-]+)"
)


def judge(
    low: float,
    high: float,
    *,
    margin: float | None = None,
    equivalence: tuple[float, float] | None = None,
) -> Verdict:
    """The verdict on a difference from its confidence intervals: the book's one rule.

    ``(low, high)`` is the (1 − α) confidence interval of the difference (method minus
    control). Without ``margin`` the verdict is "rises" (``low > 0``), "falls"
    (``high < 0``) or "undecided". With ``margin`` m > 0, ``equivalence`` must be the
    (1 − 2α) interval of the same difference: two one-sided tests at level α (is the
    difference below m? above −m?) both reject exactly when that interval lies inside
    (−m, m) (Schuirmann's TOST). The verdicts are then:

    - "equivalent within ±m": inside ±m, and not significantly different from 0;
    - "rises, within ±m" ("falls, within ±m"): inside ±m, and significantly above
      (below) 0: a real change, smaller than the smallest that matters;
    - "rises", "falls", "undecided" as without a margin otherwise.

    Each verdict is an error-controlled statement at level α: a sign is the (1 − α)
    interval excluding 0, equivalence the TOST. Returns a :class:`Verdict` judged
    alone (``family`` None) whose ``str()`` is the text above. :func:`judge_p` is the
    same rule on p-values.
    """
    low, high = _interval("(low, high)", low, high)
    inside = _inside_margin(margin, equivalence)
    return _verdict(low > 0, high < 0, inside, margin)


def judge_p(
    difference: float,
    p_difference: float,
    *,
    alpha: float = 0.05,
    margin: float | None = None,
    p_equivalent: float | None = None,
) -> Verdict:
    """:func:`judge` from p-values: ``p_difference`` the two-sided p-value of "no
    difference" (below α exactly when the (1 − α) interval excludes 0), ``p_equivalent``
    the TOST p-value of "a difference of at least ``margin``" (below α exactly when the
    (1 − 2α) interval lies inside ±margin). Used with adjusted p-values (Holm's, within a
    family of comparisons); with raw ones it agrees with :func:`judge` on the intervals.
    """
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie strictly between 0 and 1, got {alpha!r}")
    if (margin is None) != (p_equivalent is None or math.isnan(p_equivalent)):
        raise ValueError("pass margin and p_equivalent together (the TOST of that margin)")
    significant = p_difference < alpha
    inside = margin is not None and p_equivalent < alpha
    return _verdict(significant and difference > 0, significant and difference < 0, inside, margin)


def _inside_margin(margin: float | None, equivalence: tuple[float, float] | None) -> bool:
    if margin is None:
        if equivalence is not None:
            raise ValueError(
                "equivalence was given without margin: pass margin=m (the smallest "
                "difference that matters) to test equivalence within ±m"
            )
        return False
    if not (math.isfinite(margin) and margin > 0):
        raise ValueError(f"margin must be a positive number (e.g. 0.05 ACR), got {margin!r}")
    if equivalence is None:
        raise ValueError(
            "margin was given without equivalence: pass equivalence=(low, high), the "
            "(1 − 2α) interval of the same difference (ReplicatedDifference.equivalence)"
        )
    eq_low, eq_high = _interval("equivalence", *equivalence)
    return -margin < eq_low and eq_high < margin


def _verdict(rises: bool, falls: bool, inside: bool, margin: float | None) -> Verdict:
    direction = Direction.RISES if rises else Direction.FALLS if falls else None
    margin = None if margin is None else float(margin)
    return Verdict(direction, margin=margin, within_margin=inside)


class Magnitude(StrEnum):
    """Where a difference lies against the magnitude a paper states."""

    AS_STATED = "as stated"
    """The (1 − 2α) interval lies inside stated ± margin (two one-sided tests)."""
    BELOW = "below the stated"
    """The (1 − α) interval lies wholly below the stated value."""
    ABOVE = "above the stated"
    """The (1 − α) interval lies wholly above the stated value."""


@dataclass(frozen=True)
class MagnitudeVerdict:
    """The verdict on a stated magnitude (:func:`judge_magnitude`): where the difference
    lies against it (``None``: undecided) and the margin it was judged with.

    Its own type, not a :class:`Verdict`: it says nothing of a sign against 0 (a
    difference "below the stated" +7.7 points may still rise), and "as stated" names
    its margin, so it is no fixed word of an enum. ``str()`` is its text: ``"as
    stated, within ±m"``, ``"below the stated"``, ``"above the stated"`` or
    ``"undecided"``.
    """

    position: Magnitude | None
    margin: float

    def __str__(self) -> str:
        if self.position is Magnitude.AS_STATED:
            return f"{self.position}, within ±{self.margin:g}"
        return str(self.position) if self.position else UNDECIDED

    @property
    def as_stated(self) -> bool:
        """The difference is the stated one, within the margin."""
        return self.position is Magnitude.AS_STATED

    @property
    def decided(self) -> bool:
        """Whether the difference is as stated, below or above it (anything but undecided)."""
        return self.position is not None


def judge_magnitude(
    low: float, high: float, *, stated: float, margin: float, equivalence: tuple[float, float]
) -> MagnitudeVerdict:
    """The verdict on a difference that a paper states as a magnitude ("+7.7 points").

    "as stated, within ±m" when the (1 − 2α) interval ``equivalence`` lies inside
    ``stated ± margin`` (two one-sided tests against the stated value); "below the
    stated" ("above the stated") when the (1 − α) interval ``(low, high)`` lies
    wholly below (above) ``stated``; "undecided" otherwise. A direction alone does
    not confirm a magnitude: +1 point, significant, is below a stated +7.7.
    """
    low, high = _interval("(low, high)", low, high)
    eq_low, eq_high = _interval("equivalence", *equivalence)
    if not (math.isfinite(margin) and margin > 0):
        raise ValueError(f"margin must be a positive number, got {margin!r}")
    position = None
    if stated - margin < eq_low and eq_high < stated + margin:
        position = Magnitude.AS_STATED
    elif high < stated:
        position = Magnitude.BELOW
    elif low > stated:
        position = Magnitude.ABOVE
    return MagnitudeVerdict(position, float(margin))


def _interval(name: str, low: float, high: float) -> tuple[float, float]:
    low, high = float(low), float(high)
    if math.isnan(low) or math.isnan(high) or low > high:
        raise ValueError(f"{name} must be an interval with low ≤ high, got ({low!r}, {high!r})")
    return low, high


def _alpha(confidence: float) -> float:
    if not 0.0 < float(confidence) < 1.0:
        raise ValueError(
            f"confidence must lie strictly between 0 and 1 (e.g. 0.95), got {confidence!r}"
        )
    return 1.0 - float(confidence)


def _judge_row(gain: float, p: float, p_eq: float, margin: float, alpha: float) -> Verdict:
    if math.isnan(margin):
        return judge_p(gain, p, alpha=alpha)
    return judge_p(gain, p, alpha=alpha, margin=float(margin), p_equivalent=p_eq)


def holm_family(
    table: pd.DataFrame, *, confidence: float = 0.95, adjust: bool = True
) -> pd.DataFrame:
    """The rows of ``table`` (of
    :func:`~rsutils.analysis.differences.replicated_comparisons`, or several concatenated)
    judged as one family: Holm's correction (:func:`~rsutils.analysis.multiplicity.holm`)
    over all their tests, the difference test of every row (``p``) and, where the row
    has a margin, its equivalence test (``p equivalent``); then :func:`judge_p` on the
    adjusted p-values at α = 1 − ``confidence``. Sets ``tests`` (the family's number of
    tests) and ``verdict`` (:class:`Verdict` values whose ``family`` is that number);
    the ``p`` columns stay unadjusted. With ``adjust`` False each row is judged on its
    own p-values (``tests``: that row's; ``family`` None).

    A claim whose comparisons come from several tables is one family: concatenate
    them and pass them here again.
    """
    alpha = _alpha(confidence)
    missing = {"gain", "p"} - set(table.columns)
    if missing:
        raise ValueError(f"the table lacks {sorted(missing)}: pass replicated_comparisons' rows")
    table = table.copy()
    margins = table["margin"] if "margin" in table.columns else pd.Series(np.nan, table.index)
    p_eq = table["p equivalent"] if "p equivalent" in table.columns else margins * np.nan
    raw = np.concatenate([table["p"].to_numpy(float), p_eq.to_numpy(float)])
    family = None
    if adjust:
        adjusted, family = holm(raw), int((~np.isnan(raw)).sum())
        table["tests"] = family
    else:
        adjusted = raw
        table["tests"] = 1 + (~p_eq.isna()).astype(int)
    rows = len(table)
    margin_values = margins.to_numpy(float)
    judged = zip(table["gain"], adjusted[:rows], adjusted[rows:], margin_values, strict=True)
    table["verdict"] = [
        replace(_judge_row(gain, p, q, m, alpha), family=family) for gain, p, q, m in judged
    ]
    return table
