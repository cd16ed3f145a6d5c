"""This book's measured rows beside the papers' tables, and verdicts on their claims.

:func:`measured_table` lays out certification logs like a published table (the same
radius columns, units and, where the paper prints them, improvement rows), so that the
audit rules of :mod:`rsutils.book.audit.table_audit` run on our numbers exactly as on
theirs. The other functions turn the book's replicated comparisons
(:func:`rsutils.analysis.replicates.replicated_comparisons`: intervals over replicate
models and images, each judged by :func:`rsutils.analysis.replicates.judge` as "rises",
"falls", "equivalent within ±m" or "undecided") into a verdict on one qualitative
claim each (:func:`rsutils.book.papers.published.qualitative_claims`): "holds", "does not
hold" or "not resolved at this scale".

- :func:`overall_verdict` and :func:`claim_verdict`: a claim that a method beats others
  (every comparison must go the claimed way);
- :func:`tradeoff_comparisons` and :func:`tradeoff_verdict`: Cohen et al.'s σ
  trade-off;
- :func:`alm_beyond_radius` and :func:`alm_claim_verdict`: how much a method's ACR
  measured by ALM exceeds its ACR measured by the inscribed radius (UCAN's "modest by
  radius, significant by ALM");
- :func:`about`: whether a stated round number ("about 10⁵") has the right order of
  magnitude.

A verdict never rests on one model's interval over the images alone unless the rows
say so (``models`` = 1): the chapters pass the replicate models' comparisons.
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd
from scipy.stats import norm

from rsutils.analysis.metrics import certified_accuracy
from rsutils.analysis.replicates import replicated_comparisons
from rsutils.book.papers.published import PublishedTable, full_scale
from rsutils.core.confidence import max_certifiable_pA

__all__ = [
    "ACCURACY_AT_0",
    "FAILS",
    "HOLDS",
    "REACH",
    "UNRESOLVED",
    "about",
    "all_of",
    "alm_beyond_radius",
    "alm_claim_verdict",
    "claim_verdict",
    "evidence_text",
    "gain_text",
    "measured_table",
    "overall_verdict",
    "tradeoff_comparisons",
    "tradeoff_verdict",
    "verdict_counts",
]

#: Verdicts on a qualitative claim.
HOLDS, FAILS, UNRESOLVED = "holds", "does not hold", "not resolved at this scale"

#: :func:`~rsutils.analysis.replicates.judge`'s verdicts on one comparison (the equivalence
#: verdict is this prefix followed by ``±m``).
RISES, FALLS, UNDECIDED, EQUIVALENT = "rises", "falls", "undecided", "equivalent within "

#: The measured-by label of :func:`tradeoff_comparisons`' accuracy rows.
ACCURACY_AT_0 = "accuracy at r = 0"

#: The prefix of the measured-by label of :func:`tradeoff_comparisons`' reach rows.
REACH = "reach: "

#: Rows to judge: a :func:`~rsutils.analysis.replicates.replicated_comparisons` table, or
#: verdict strings (or rows with a ``verdict``).
Rows = pd.DataFrame | Iterable[str] | Iterable[Mapping[str, object]]

#: One ``{name: log}`` dictionary per replicate model.
Replicates = Sequence[Mapping[str, pd.DataFrame]]


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


def _verdicts(rows: Rows) -> list[str]:
    """The verdicts of ``rows``: a table's ``verdict`` column, or verdict strings."""
    if isinstance(rows, pd.DataFrame):
        if "verdict" not in rows.columns:
            raise ValueError(
                "the table has no 'verdict' column: pass the rows of "
                "rsutils.analysis.replicates.replicated_comparisons"
            )
        verdicts = [str(v) for v in rows["verdict"]]
    else:
        verdicts = [v if isinstance(v, str) else str(v["verdict"]) for v in rows]
    if not verdicts:
        raise ValueError("no comparisons to judge the claim by")
    unknown = [v for v in verdicts if v not in (RISES, FALLS, UNDECIDED) and not _equivalent(v)]
    if unknown:
        raise ValueError(
            f"{unknown} are not verdicts of rsutils.analysis.replicates.judge (rises, falls, "
            "equivalent within ±m, undecided): judge the comparisons with it"
        )
    return verdicts


def _equivalent(verdict: str) -> bool:
    return verdict.startswith(EQUIVALENT)


def claim_verdict(rows: Rows, expected: str = RISES) -> str:
    """A claim that every comparison of ``rows`` goes the ``expected`` way.

    ``rows`` are verdicts of :func:`~rsutils.analysis.replicates.judge` (a table of
    :func:`~rsutils.analysis.replicates.replicated_comparisons`, or its verdict strings),
    ``expected`` ``"rises"`` or ``"falls"``. Holds when every comparison goes the
    expected way; does not hold when any goes the other way or is "equivalent within
    ±m" (a change shown to be smaller than the margin is not the change claimed);
    otherwise (some undecided, none against) not resolved at this scale.
    """
    if expected not in (RISES, FALLS):
        raise ValueError(f"expected must be 'rises' or 'falls', got {expected!r}")
    verdicts = _verdicts(rows)
    against = FALLS if expected == RISES else RISES
    if any(v == against or _equivalent(v) for v in verdicts):
        return FAILS
    return HOLDS if all(v == expected for v in verdicts) else UNRESOLVED


def overall_verdict(rows: Rows) -> str:
    """One verdict on "A beats B" from its comparisons (:func:`claim_verdict` with
    ``"rises"``): holds when every comparison rises, does not hold when any falls or is
    equivalent within the margin, otherwise not resolved at this scale."""
    return claim_verdict(rows, RISES)


def all_of(*verdicts: str) -> str:
    """The verdict on a claim made of parts: holds when every part holds, does not hold
    when any part does not, otherwise not resolved at this scale."""
    if not verdicts:
        raise ValueError("no parts to judge the claim by")
    unknown = set(verdicts) - {HOLDS, FAILS, UNRESOLVED}
    if unknown:
        raise ValueError(f"{sorted(unknown)} are not claim verdicts ({HOLDS!r}, {FAILS!r}, …)")
    if FAILS in verdicts:
        return FAILS
    return HOLDS if all(v == HOLDS for v in verdicts) else UNRESOLVED


def tradeoff_comparisons(
    replicates: Replicates,
    names: Sequence[str],
    *,
    margin: float | None = None,
    seed: int = 0,
) -> pd.DataFrame:
    """Cohen et al.'s trade-off over replicate models: each σ against the next smaller.

    ``names`` are the fixed-σ logs of every replicate in order of growing σ. For each
    neighbouring pair (larger σ against smaller) two
    :func:`~rsutils.analysis.replicates.replicated_comparisons`: certified accuracy at
    radius 0 (:data:`ACCURACY_AT_0`; the trade's cost, expected to fall) and the
    *reach*, certified accuracy just beyond the smaller σ's CERTIFY ceiling
    σ·Φ⁻¹(α^(1/n)) (its log's ``scale``, ``n`` and ``alpha``), which no certificate of
    the smaller σ attains: it rises exactly when the larger σ certifies correctly where
    the smaller cannot (measured-by label ``"reach: r > c"``).
    """
    if len(names) < 2:
        raise ValueError("names must list at least two fixed-σ logs, in order of growing σ")
    tables = []
    for smaller, larger in itertools.pairwise(names):
        ceiling = _ceiling(replicates[0][smaller])
        measures = {
            ACCURACY_AT_0: ("radius", 0.0),
            f"{REACH}r > {ceiling:.2f}": ("radius", float(np.nextafter(ceiling, np.inf))),
        }
        tables.append(
            replicated_comparisons(
                replicates, [(larger, smaller)], measures=measures, margin=margin, seed=seed
            )
        )
    return pd.concat(tables)


def _ceiling(log: pd.DataFrame) -> float:
    missing = {"scale", "n", "alpha"} - set(log.columns)
    if missing:
        raise ValueError(f"the log lacks {sorted(missing)}: pass CERTIFY logs of rsutils")
    top = max_certifiable_pA(int(log["n"].max()), float(log["alpha"].iloc[0]))
    return float(log["scale"].max() * norm.ppf(top))


def tradeoff_verdict(table: pd.DataFrame) -> str:
    """Cohen et al.'s trade-off from :func:`tradeoff_comparisons`: holds when, at every
    step up in σ, accuracy at radius 0 falls and the reach rises (:func:`all_of` of the
    two :func:`claim_verdict`)."""
    measured = table.index.get_level_values("measured by")
    accuracy, reach = measured == ACCURACY_AT_0, measured.str.startswith(REACH)
    if not accuracy.any() or not reach.any():
        raise ValueError("the table lacks accuracy or reach rows: pass tradeoff_comparisons")
    return all_of(claim_verdict(table[accuracy], FALLS), claim_verdict(table[reach], RISES))


def alm_beyond_radius(
    replicates: Replicates, name: str, *, margin: float | None = None, seed: int = 0
) -> pd.DataFrame:
    """ACR measured by ALM minus ACR measured by the inscribed radius, same certificates.

    For the logs ``name`` of every replicate: one row of
    :func:`~rsutils.analysis.replicates.replicated_comparisons`, index
    ``(f"{name} by ALM", f"{name} by radius", "ACR")``, its interval over the replicate
    models and images. Against an isotropic control (whose ALM equals its radius) this
    is exactly how much more ``name`` gains by ALM than by radius.
    """
    by_alm, by_radius = f"{name} by ALM", f"{name} by radius"
    paired = [
        {by_alm: logs[name].assign(radius=logs[name]["alm"]), by_radius: logs[name]}
        for logs in replicates
    ]
    return replicated_comparisons(
        paired, [(by_alm, by_radius)], measures={"ACR": "radius"}, margin=margin, seed=seed
    )


def alm_claim_verdict(radius_gain: Rows, alm_beyond: pd.DataFrame) -> str:
    """UCAN's "modest by radius but significant by ALM", from replicated comparisons.

    ``radius_gain``: the method against isotropic noise by radius; ``alm_beyond``: its
    :func:`alm_beyond_radius`, which must be judged with a margin (without one a
    difference of rounding, 1e-16 from a σ constant up to float error, would read as a
    rise). Does not hold when the radius gain falls, or ALM's excess over the radius
    falls or is equivalent within the margin (no boost that matters); holds when the
    excess rises; otherwise not resolved at this scale.
    """
    if "margin" not in alm_beyond.columns or alm_beyond["margin"].isna().any():
        raise ValueError(
            "alm_beyond was judged without a margin: pass margin=EQUIVALENCE_MARGIN to "
            "alm_beyond_radius, or a difference of rounding reads as a boost"
        )
    if FALLS in _verdicts(radius_gain):
        return FAILS
    return claim_verdict(alm_beyond, RISES)


def about(stated: float, actual: float) -> str:
    """Whether "about ``stated``" fits ``actual``: within half a decade of it."""
    if stated <= 0 or actual <= 0:
        raise ValueError("an order of magnitude needs two positive numbers")
    return HOLDS if abs(np.log10(actual / stated)) < 0.5 else FAILS


def gain_text(row: Mapping[str, float]) -> str:
    """A difference with its interval, ``+0.258 [0.153, 0.362]``, from a row of
    :func:`~rsutils.analysis.replicates.replicated_comparisons` (``gain``, ``low``, ``high``)."""
    return f"{row['gain']:+.3f} [{row['low']:.3f}, {row['high']:.3f}]"


def _label(index: Hashable) -> str:
    if isinstance(index, tuple) and len(index) == 3:
        method, against, measure = index
        return f"{method} − {against}, {measure}"
    return " · ".join(map(str, index)) if isinstance(index, tuple) else str(index)


def evidence_text(rows: pd.DataFrame, *, labels: Mapping[Hashable, str] | None = None) -> str:
    """Replicated comparisons in one line: ``label +0.1 [0.05, 0.2] rises; …``.

    Each row of a :func:`~rsutils.analysis.replicates.replicated_comparisons` table, labelled
    ``labels[index]`` (by default ``"method − against, measure"``), with its gain, its
    interval and its verdict.
    """
    labels = labels or {}
    return "; ".join(
        f"{labels.get(index, _label(index))} {gain_text(row)} {row['verdict']}"
        for index, row in rows.iterrows()
    )


def verdict_counts(rows: Rows) -> str:
    """How many comparisons rise, fall, are equivalent within the margin or are
    undecided: ``"of 4 comparisons, 1 rises, 0 falls, 2 equivalent within ±0.05,
    1 undecided"`` (one count per margin that occurs; a margin is stated even at 0)."""
    verdicts = _verdicts(rows)
    kinds = [RISES, FALLS, *sorted({v for v in verdicts if _equivalent(v)}), UNDECIDED]
    if not any(_equivalent(v) for v in verdicts) and isinstance(rows, pd.DataFrame):
        margins = rows["margin"].dropna().unique() if "margin" in rows.columns else []
        kinds[2:2] = [f"{EQUIVALENT}±{m:g}" for m in sorted(margins)]
    counts = [f"{verdicts.count(v)} {v}" for v in kinds]
    return f"of {len(verdicts)} comparisons, " + ", ".join(counts)
