"""One model, one value at radius 0: the ALM row and the radius row of one method.

UCAN print, for one method, certified accuracy "w.r.t. ALM" and "w.r.t. radius". If
both rows come from one set of certificates they are tied twice:

- every certificate has ``ALM = (∏σ_i)^(1/d)·R ≥ min_i σ_i·R`` (the geometric mean of
  positive numbers is at least their minimum), so the ALM row is nowhere below the
  radius row (:func:`rsutils.book.audit.table_audit.alm_radius_check`);
- at ``r = 0`` both rows count the same inputs: those classified correctly and not
  abstained on (a certificate with ``pA_lower > 1/2`` has ``R > 0``, hence both a
  positive radius and a positive ALM, since every ``σ_i > 0``; an abstention has
  neither). Rounded to the printed digit, one number gives one printed value, so the
  two rows must print the same value at ``r = 0``.

:func:`zero_radius_check` applies the second tie to every table; a pair of rows that
differs at ``r = 0`` reports two models (or two runs), whatever the other columns say.
:func:`one_model_check` gives both ties per table.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from rsutils.book.audit.table_audit import alm_radius_check
from rsutils.book.audit.verdicts import LedgerVerdict
from rsutils.book.papers.published import PublishedTable

__all__ = ["ALM_MARK", "RADIUS_MARK", "alm_radius_pairs", "one_model_check", "zero_radius_check"]

#: The label fragments that mark a row measured by ALM and one measured by the radius.
ALM_MARK, RADIUS_MARK = "w.r.t. ALM", "w.r.t. radius"


def alm_radius_pairs(table: PublishedTable) -> list[tuple[str, str, str]]:
    """``(method, ALM row, radius row)`` for each method that has both rows.

    Rows are paired by the part of their label before ``"(certified accuracy"`` (the
    method), among the certified-accuracy rows (the row kinds of the table's JSON);
    a table whose labels do not say which measure a row uses has no pair.
    """
    kinds = np.array(table.kinds)
    labels = table.data["row"][kinds == "certified_accuracy"].tolist()
    by_method: dict[str, dict[str, str]] = {}
    for label in labels:
        for mark in (ALM_MARK, RADIUS_MARK):
            if mark in label:
                method = label.split("(certified accuracy")[0].strip()
                by_method.setdefault(method, {})[mark] = label
    return [
        (method, rows[ALM_MARK], rows[RADIUS_MARK])
        for method, rows in by_method.items()
        if len(rows) == 2
    ]


def zero_radius_check(table: PublishedTable) -> pd.DataFrame:
    """Each ALM/radius pair of ``table`` at ``r = 0``, with a verdict.

    One row per pair (:func:`alm_radius_pairs`): ``table``, ``method``, ``ALM at 0``
    and ``radius at 0`` (the printed values; NaN where the table has no ``r = 0``
    column or leaves the cell empty) and ``verdict``: ``one value`` (the two rows
    agree, as one model's must), ``two models`` (they differ: no single set of
    certificates gives both rows), ``no r = 0 column`` or ``not printed``.
    """
    columns = ["table", "method", "ALM at 0", "radius at 0", "verdict"]
    zero = np.flatnonzero(table.radii == 0)
    rows = table.data.set_index("row")
    found = []
    for method, alm, radius in alm_radius_pairs(table):
        if len(zero) == 0:
            found.append([table.name, method, np.nan, np.nan, "no r = 0 column"])
            continue
        header = table.data.columns[1 + int(zero[0])]
        at_alm, at_radius = float(rows.loc[alm, header]), float(rows.loc[radius, header])
        if np.isnan(at_alm) or np.isnan(at_radius):
            verdict = LedgerVerdict.NOT_PRINTED
        else:
            verdict = "one value" if at_alm == at_radius else "two models"
        found.append([table.name, method, at_alm, at_radius, verdict])
    return pd.DataFrame(found, columns=columns)


def one_model_check(tables: Iterable[PublishedTable]) -> pd.DataFrame:
    """Per table, whether its ALM and radius rows can be one model's.

    Columns: ``table``, ``pairs`` (ALM/radius pairs of rows, :func:`alm_radius_pairs`),
    ``ALM at 0``/``radius at 0`` (the first pair's printed values at ``r = 0``),
    ``columns ALM below radius`` (how many columns
    :func:`~rsutils.book.audit.table_audit.alm_radius_check` flags), and ``verdict``:
    ``no pair`` (the table prints no such pair of rows, so neither tie applies),
    ``two models`` (a pair differs at ``r = 0``, or its ALM row is below its radius row
    somewhere), or ``one model possible`` (both ties hold; that proves nothing more).
    """
    found = []
    for table in tables:
        pairs = alm_radius_pairs(table)
        zero = zero_radius_check(table)
        below = alm_radius_check(table)
        at_alm = float(zero["ALM at 0"].iloc[0]) if len(zero) else np.nan
        at_radius = float(zero["radius at 0"].iloc[0]) if len(zero) else np.nan
        if not pairs:
            verdict = "no pair"
        elif (zero["verdict"] == "two models").any() or len(below) > 0:
            verdict = "two models"
        else:
            verdict = "one model possible"
        found.append(
            {
                "table": table.name,
                "pairs": len(pairs),
                "ALM at 0": at_alm,
                "radius at 0": at_radius,
                "differ at 0": bool((zero["verdict"] == "two models").any()),
                "columns ALM below radius": len(below),
                "verdict": verdict,
            }
        )
    return pd.DataFrame(found)
