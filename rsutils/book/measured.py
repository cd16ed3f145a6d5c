"""This book's measured rows beside the papers' tables, and verdicts on their claims.

:func:`measured_table` lays out certification logs like a published table (the same
radius columns, units and, where the paper prints them, improvement rows), so that the
audit rules of :mod:`rsutils.book.table_audit` run on our numbers exactly as on
theirs. The other functions turn the book's logs into evidence for one qualitative
claim each (:func:`rsutils.book.published.qualitative_claims`) with a verdict:

- :func:`tradeoff_check`: Cohen et al.'s σ trade-off;
- :func:`overall_verdict`: a claim that a method beats others, from paired ACR
  comparisons (:func:`rsutils.logs.analysis.acr_comparisons`);
- :func:`alm_beyond_radius`: how much a log's ACR measured by ALM exceeds its ACR
  measured by the inscribed radius (UCAN's "modest by radius, significant by ALM").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd

from rsutils.book.published import PublishedTable, full_scale
from rsutils.logs.analysis import (
    ACRDifference,
    acr_difference,
    average_certified_radius,
    certified_accuracy,
)

__all__ = [
    "alm_beyond_radius",
    "measured_table",
    "overall_verdict",
    "tradeoff_check",
]

#: Verdicts on a qualitative claim.
HOLDS, FAILS, UNRESOLVED = "holds", "does not hold", "not resolved at this scale"


def measured_table(
    like: PublishedTable,
    rows: Mapping[str, tuple[pd.DataFrame, str]],
    *,
    name: str,
    dataset: str,
    scale: str,
) -> PublishedTable:
    """Our logs laid out as ``like``: its radius headers, units and row kinds.

    ``rows`` maps a row label to ``(log, column)``, the column being ``"radius"`` or
    ``"alm"``. When ``like`` prints improvement rows, each row labelled ``"Ours …"``
    gets one under it, computed as the paper defines it: relative percent over the
    best row not labelled "Ours" in the column (empty where that best is 0).
    Accuracies are in ``like``'s unit, to one decimal more than a paper prints.
    """
    top = full_scale(like)
    digits = 1 if top == 100 else 3
    headers = list(like.data.columns[1:])
    records, kinds = [], []
    for label, (log, column) in rows.items():
        values = certified_accuracy(log, like.radii, column=column) * top
        records.append({"row": label, **dict(zip(headers, np.round(values, digits), strict=True))})
        kinds.append("certified_accuracy")
    data = pd.DataFrame(records, columns=["row", *headers])
    if "improvement" in like.kinds:
        data, kinds = _with_improvements(data, headers)
    meta = {
        "paper": "this book (measured)",
        "seed": "none: measured by the book",
        "table": f"{like.meta['table']}, our rows",
        "caption": f"Our certified accuracy in the layout of {like.name}",
        "dataset": dataset,
        "norm": like.meta["norm"],
        "columns": like.meta["columns"],
        "row_kinds": kinds,
        "units": like.meta["units"],
        "scale": scale,
    }
    return PublishedTable(name, data, meta)


def _with_improvements(data: pd.DataFrame, headers: list[str]) -> tuple[pd.DataFrame, list[str]]:
    ours = data["row"].str.startswith("Ours")
    best = data.loc[~ours, headers].max()
    records, kinds = [], []
    for _, row in data.iterrows():
        records.append(row.to_dict())
        kinds.append("certified_accuracy")
        if row["row"].startswith("Ours"):
            gain = (row[headers].astype(float) - best) / best.where(best > 0) * 100
            records.append({"row": "Improvement over the Best Baseline (%)", **gain.round(1)})
            kinds.append("improvement")
    return pd.DataFrame(records, columns=data.columns), kinds


def tradeoff_check(logs: Mapping[float, pd.DataFrame]) -> tuple[pd.DataFrame, str]:
    """Cohen et al.'s trade-off on logs of one model family by noise level σ.

    Per σ: certified accuracy at radius 0, the largest radius certified correctly, and
    the ACR. The claim holds when, as σ grows, accuracy at radius 0 does not rise and
    the largest certified radius grows (more noise buys reach at the cost of accuracy).
    """
    sigmas = sorted(logs)
    table = pd.DataFrame(
        {
            "accuracy at r = 0": [float(certified_accuracy(logs[s], [0.0])[0]) for s in sigmas],
            "largest certified radius": [_largest_radius(logs[s]) for s in sigmas],
            "ACR": [average_certified_radius(logs[s]) for s in sigmas],
        },
        index=pd.Index(sigmas, name="σ"),
    )
    falls = bool(np.all(np.diff(table["accuracy at r = 0"]) <= 0))
    reaches = bool(np.all(np.diff(table["largest certified radius"]) > 0))
    return table, HOLDS if falls and reaches else FAILS


def _largest_radius(log: pd.DataFrame) -> float:
    correct = log.loc[log["correct"] == 1, "radius"]
    return float(correct.max()) if len(correct) else 0.0


def overall_verdict(verdicts: Iterable[str]) -> str:
    """One verdict on "A beats B" from the paired verdicts of its comparisons.

    Holds when every comparison rises; does not hold when any falls; otherwise the
    test images cannot tell (no comparison falls, some show no clear change).
    """
    verdicts = list(verdicts)
    if not verdicts:
        raise ValueError("no comparisons to judge the claim by")
    if all(v == "rises" for v in verdicts):
        return HOLDS
    return FAILS if "falls" in verdicts else UNRESOLVED


def alm_beyond_radius(log: pd.DataFrame, *, seed: int = 0) -> ACRDifference:
    """ACR measured by ALM minus ACR measured by the inscribed radius, same certificates.

    Against an isotropic control (whose ALM equals its radius) this is exactly how much
    more a method gains by ALM than by radius. Paired BCa interval over the inputs.
    """
    return acr_difference(log, log.assign(radius=log["alm"]), seed=seed)
