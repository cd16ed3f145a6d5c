"""This book's measured rows beside the papers' tables, and verdicts on their claims.

:func:`measured_table` lays out certification logs like a published table (the same
radius columns, units and, where the paper prints them, improvement rows), so that the
audit rules of :mod:`rsutils.book.table_audit` run on our numbers exactly as on
theirs. The other functions turn the book's logs into evidence for one qualitative
claim each (:func:`rsutils.book.published.qualitative_claims`) with a verdict:

- :func:`tradeoff_check`: Cohen et al.'s σ trade-off;
- :func:`overall_verdict`: a claim that a method beats others, from paired ACR
  comparisons (:func:`rsutils.logs.analysis.acr_comparisons`);
- :func:`alm_beyond_radius` and :func:`alm_claim_verdict`: how much a log's ACR
  measured by ALM exceeds its ACR measured by the inscribed radius (UCAN's "modest by
  radius, significant by ALM");
- :func:`about`: whether a stated round number ("about 10⁵") has the right order of
  magnitude.
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
    "about",
    "alm_beyond_radius",
    "alm_claim_verdict",
    "describe_tradeoff",
    "evidence_text",
    "gain_text",
    "measured_table",
    "overall_verdict",
    "tradeoff_check",
    "verdict_counts",
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


def describe_tradeoff(table: pd.DataFrame) -> str:
    """:func:`tradeoff_check`'s table in one line."""
    sigmas = ", ".join(f"{s:g}" for s in table.index)
    accuracy = ", ".join(f"{v:.2f}" for v in table["accuracy at r = 0"])
    reach = ", ".join(f"{v:.2f}" for v in table["largest certified radius"])
    return f"σ = {sigmas}: accuracy at r = 0 {accuracy}; largest certified radius {reach}"


def overall_verdict(comparisons: Iterable[str | ACRDifference]) -> str:
    """One verdict on "A beats B" from the paired verdicts of its comparisons.

    Holds when every comparison rises; does not hold when any falls; otherwise the
    test images cannot tell (no comparison falls, some show no clear change).
    """
    verdicts = [c.verdict if isinstance(c, ACRDifference) else c for c in comparisons]
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


def alm_claim_verdict(
    radius_gain: ACRDifference, alm_beyond: ACRDifference, *, resolution: float = 0.01
) -> str:
    """UCAN's "modest by radius but significant by ALM", from two paired differences.

    Holds when the gain measured by ALM exceeds the gain measured by radius by more
    than ``resolution`` (the interval of ``alm_beyond`` above it: a difference of
    rounding, e.g. 1e-16 from a sigma that is constant up to float error, is no boost)
    and the radius gain does not fall. Does not hold when the radius gain falls or ALM
    cannot exceed the radius by more than ``resolution``; otherwise not resolved.
    """
    if radius_gain.verdict == "falls" or alm_beyond.high <= resolution:
        return FAILS
    return HOLDS if alm_beyond.low > resolution else UNRESOLVED


def about(stated: float, actual: float) -> str:
    """Whether "about ``stated``" fits ``actual``: within half a decade of it."""
    if stated <= 0 or actual <= 0:
        raise ValueError("an order of magnitude needs two positive numbers")
    return HOLDS if abs(np.log10(actual / stated)) < 0.5 else FAILS


def gain_text(found: ACRDifference) -> str:
    """A paired difference as ``+0.258 [0.153, 0.362]`` (95% interval)."""
    return f"{found.difference:+.3f} [{found.low:.3f}, {found.high:.3f}]"


def evidence_text(found: Mapping[str, ACRDifference]) -> str:
    """Labelled differences in one line: ``label +0.1 [0.05, 0.2]; …``."""
    return "; ".join(f"{label} {gain_text(d)}" for label, d in found.items())


def verdict_counts(found: Mapping[str, ACRDifference]) -> str:
    """How many of the comparisons rise, fall or show no clear change."""
    verdicts = [d.verdict for d in found.values()]
    counts = [f"{verdicts.count(v)} {v}" for v in ("rises", "falls", "no clear change")]
    return f"of {len(verdicts)} comparisons, " + ", ".join(counts)
