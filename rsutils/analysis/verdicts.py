"""The book's one verdict rule, on intervals or on p-values, and its family correction.

A difference between two methods (method minus control) gets one verdict: "rises" or
"falls" when its (1 − α) interval excludes 0; "equivalent within ±m" when its (1 − 2α)
interval lies inside the margin ±m and the (1 − α) interval contains 0; "rises, within
±m" ("falls, …") when both hold, a real change smaller than the smallest that matters;
"undecided" otherwise (:func:`judge`; :func:`judge_p` on p-values). The rows of one table
of comparisons, or of one claim, are one family: :func:`holm_family` judges them on
Holm-adjusted p-values. :func:`judge_magnitude` tests a stated size ("+7.7 points")
rather than a direction.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from rsutils.analysis.multiplicity import holm

__all__ = ["holm_family", "judge", "judge_magnitude", "judge_p"]


def judge(
    low: float,
    high: float,
    *,
    margin: float | None = None,
    equivalence: tuple[float, float] | None = None,
) -> str:
    """The verdict on a difference from its confidence intervals: the book's one rule.

    ``(low, high)`` is the (1 − α) confidence interval of the difference (method minus
    control). Without ``margin`` the verdict is ``"rises"`` (``low > 0``), ``"falls"``
    (``high < 0``) or ``"undecided"``. With ``margin`` m > 0, ``equivalence`` must be the
    (1 − 2α) interval of the same difference: two one-sided tests at level α (is the
    difference below m? above −m?) both reject exactly when that interval lies inside
    (−m, m) (Schuirmann's TOST). The verdicts are then:

    - ``"equivalent within ±m"``: inside ±m, and not significantly different from 0;
    - ``"rises, within ±m"`` (``"falls, within ±m"``): inside ±m, and significantly
      above (below) 0: a real change, smaller than the smallest that matters;
    - ``"rises"``, ``"falls"``, ``"undecided"`` as without a margin otherwise.

    Each verdict is an error-controlled statement at level α: a sign is the (1 − α)
    interval excluding 0, equivalence the TOST. :func:`judge_p` is the same rule on
    p-values.
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
) -> str:
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


def _verdict(rises: bool, falls: bool, inside: bool, margin: float | None) -> str:
    sign = "rises" if rises else "falls" if falls else None
    if inside:
        return f"{sign}, within ±{margin:g}" if sign else f"equivalent within ±{margin:g}"
    return sign or "undecided"


def judge_magnitude(
    low: float, high: float, *, stated: float, margin: float, equivalence: tuple[float, float]
) -> str:
    """The verdict on a difference that a paper states as a magnitude ("+7.7 points").

    ``"as stated, within ±m"`` when the (1 − 2α) interval ``equivalence`` lies inside
    ``stated ± margin`` (two one-sided tests against the stated value); ``"below the
    stated"`` (``"above the stated"``) when the (1 − α) interval ``(low, high)`` lies
    wholly below (above) ``stated``; ``"undecided"`` otherwise. A direction alone does
    not confirm a magnitude: +1 point, significant, is below a stated +7.7.
    """
    low, high = _interval("(low, high)", low, high)
    eq_low, eq_high = _interval("equivalence", *equivalence)
    if not (math.isfinite(margin) and margin > 0):
        raise ValueError(f"margin must be a positive number, got {margin!r}")
    if stated - margin < eq_low and eq_high < stated + margin:
        return f"as stated, within ±{margin:g}"
    if high < stated:
        return "below the stated"
    if low > stated:
        return "above the stated"
    return "undecided"


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


def _judge_row(gain: float, p: float, p_eq: float, margin: float, alpha: float) -> str:
    if math.isnan(margin):
        return judge_p(gain, p, alpha=alpha)
    return judge_p(gain, p, alpha=alpha, margin=float(margin), p_equivalent=p_eq)


def holm_family(
    table: pd.DataFrame, *, confidence: float = 0.95, adjust: bool = True
) -> pd.DataFrame:
    """The rows of ``table`` (of
    :func:`~rsutils.analysis.replicates.replicated_comparisons`, or several concatenated)
    judged as one family: Holm's correction (:func:`~rsutils.analysis.multiplicity.holm`)
    over all their tests, the difference test of every row (``p``) and, where the row
    has a margin, its equivalence test (``p equivalent``); then :func:`judge_p` on the
    adjusted p-values at α = 1 − ``confidence``. Sets ``tests`` (the family's number of
    tests) and ``verdict``; the ``p`` columns stay unadjusted. With ``adjust`` False
    each row is judged on its own p-values (``tests``: that row's).

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
    if adjust:
        adjusted, tests = holm(raw), int((~np.isnan(raw)).sum())
        table["tests"] = tests
    else:
        adjusted = raw
        table["tests"] = 1 + (~p_eq.isna()).astype(int)
    rows = len(table)
    margin_values = margins.to_numpy(float)
    judged = zip(table["gain"], adjusted[:rows], adjusted[rows:], margin_values, strict=True)
    table["verdict"] = [_judge_row(gain, p, q, m, alpha) for gain, p, q, m in judged]
    return table
