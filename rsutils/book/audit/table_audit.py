"""Audit rules for the papers' published tables: what the printed numbers must satisfy.

Each rule takes :class:`~rsutils.book.papers.published.PublishedTable` objects and returns a
table of findings with the evidence (an empty table when the rule holds):

- :func:`improvement_check` recomputes every printed "improvement over the best
  baseline" from the table's own rows, as relative percent (the paper's stated rule)
  and as absolute points, and gives the baseline value the printed number implies;
- :func:`non_increasing_check` flags certified accuracies that rise with the radius
  (the fraction of inputs certified at radius r cannot grow with r);
- :func:`alm_radius_check` flags columns where accuracy measured by ALM is below
  accuracy measured by the radius: for one model, ALM ≥ min(σ)·R for every certificate,
  so that can only happen if the two rows come from different models;
- :func:`ceiling_check` flags a positive certified accuracy beyond the largest radius
  that ``n`` draws at level ``alpha`` can certify, ``λ·Φ⁻¹(alpha^(1/n))`` times the
  largest scale multiplier;
- :func:`conversion_check` checks a row of one norm against a row of another norm
  that Table I's factor (:func:`table_one_factor`) would turn into it: the same
  certificates, measured in the other norm, bound it;
- :func:`duplicate_rows` finds rows with identical numbers in tables of different
  datasets.

The numbers the papers state in their prose are checked by the ledger
(:mod:`rsutils.book.audit.ledger`).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd
from scipy.stats import norm

from rsutils.book.audit.verdicts import LedgerVerdict
from rsutils.book.papers.published import PublishedTable
from rsutils.core.confidence import max_certifiable_pA
from rsutils.core.radius import certified_radius

__all__ = [
    "alm_radius_check",
    "ceiling_check",
    "conversion_check",
    "duplicate_rows",
    "improvement_check",
    "non_increasing_check",
    "table_one_factor",
]

#: A recomputed improvement within this many percent of the printed one (after
#: rounding to the printed 0.1) matches; within twice that, it is a rounding slip.
ROUNDING = 0.05


def _accuracy(table: PublishedTable) -> pd.DataFrame:
    """The certified-accuracy rows, with their row positions kept."""
    mask = np.array(table.kinds) == "certified_accuracy"
    return table.data[mask]


def _baselines(table: PublishedTable) -> pd.DataFrame:
    rows = _accuracy(table)
    return rows[~rows["row"].str.startswith("Ours")].set_index("row").astype(float)


def improvement_check(table: PublishedTable) -> pd.DataFrame:
    """Each printed improvement against the one recomputed from the table's rows.

    An improvement row refers to the row above it ("ours"); the best baseline of a
    column is the largest certified accuracy among the rows not labelled "Ours". Columns:
    ``row`` (ours), ``radius``, ``ours``, ``best`` and ``best_row``, ``printed``,
    ``relative`` ((ours − best)/best × 100), ``points`` (ours − best), ``implied_best``
    (the baseline the printed relative number implies) and ``verdict`` (``matches``,
    ``rounding slip``, ``differs``; ``not printed`` for an empty cell, ``undefined``
    where the best baseline is 0).
    """
    baselines = _baselines(table)
    found = []
    for position, kind in enumerate(table.kinds):
        if kind != "improvement":
            continue
        ours_row = table.data.iloc[position - 1]
        for header in table.data.columns[1:]:
            ours, printed = float(ours_row[header]), float(table.data.iloc[position][header])
            column = baselines[header].dropna()
            best, best_row = float(column.max()), str(column.idxmax())
            relative = (ours - best) / best * 100 if best > 0 else np.nan
            verdict = _improvement_verdict(printed, relative)
            # -100% (ours at 0) implies no particular baseline.
            implied = ours / (1 + printed / 100) if printed > -100 else np.nan
            found.append(
                {
                    "table": table.name,
                    "row": ours_row["row"],
                    "radius": header,
                    "ours": ours,
                    "best": best,
                    "best_row": best_row,
                    "printed": printed,
                    "relative": round(relative, 2),
                    "points": ours - best,
                    "implied_best": round(implied, 1),
                    "verdict": verdict,
                }
            )
    return pd.DataFrame(found)


def _improvement_verdict(printed: float, relative: float) -> str:
    if np.isnan(printed):
        return LedgerVerdict.NOT_PRINTED
    if np.isnan(relative):
        return "undefined (the best baseline is 0)"
    gap = abs(printed - round(relative, 1))
    if gap <= ROUNDING:
        return "matches"
    return "rounding slip" if gap <= 2.5 * ROUNDING else "differs"


def non_increasing_check(table: PublishedTable) -> pd.DataFrame:
    """Certified accuracies that rise from one printed radius to the next (gaps skipped)."""
    found = []
    for _, row in _accuracy(table).iterrows():
        values = row.iloc[1:].astype(float).dropna()
        for (r0, v0), (r1, v1) in zip(values.items(), list(values.items())[1:], strict=False):
            if v1 > v0:
                found.append({"table": table.name, "row": row["row"], "from": r0, "to": r1,
                              "at from": v0, "at to": v1})  # fmt: skip
    return pd.DataFrame(found, columns=["table", "row", "from", "to", "at from", "at to"])


def alm_radius_check(table: PublishedTable) -> pd.DataFrame:
    """Columns where the "w.r.t. ALM" row is below the "w.r.t. radius" row."""
    rows = _accuracy(table).set_index("row")
    alm = [r for r in rows.index if "w.r.t. ALM" in r]
    radius = [r for r in rows.index if "w.r.t. radius" in r]
    columns = ["table", "radius", "ALM row", "radius row"]
    if not (alm and radius):
        return pd.DataFrame(columns=columns)
    by_alm, by_radius = rows.loc[alm[0]].astype(float), rows.loc[radius[0]].astype(float)
    below = by_alm < by_radius
    found = [
        {"table": table.name, "radius": r, "ALM row": by_alm[r], "radius row": by_radius[r]}
        for r in by_alm.index[below]
    ]
    return pd.DataFrame(found, columns=columns)


def ceiling_check(
    table: PublishedTable, *, scale: float, n: int = 100_000, alpha: float = 0.001
) -> pd.DataFrame:
    """Positive certified accuracies at ℓ2 radii no Gaussian CERTIFY can reach.

    With ``n`` draws all in one class, ``pA_lower = alpha^(1/n)``, so no certificate
    exceeds ``scale·Φ⁻¹(alpha^(1/n))`` (3.81·scale at Cohen et al.'s n = 100,000,
    alpha = 0.001); ``scale`` is the largest noise level (times the largest ``sigma``
    for anisotropic noise) that the table's rows may have used.
    """
    if table.meta.get("norm", "l2") != "l2":
        raise ValueError(
            f"the ceiling is that of Gaussian noise against l2; {table.name} certifies "
            f"{table.meta['norm']}, where other families have other ceilings"
        )
    ceiling = scale * float(norm.ppf(max_certifiable_pA(n, alpha)))
    found = []
    for _, row in _accuracy(table).iterrows():
        values = row.iloc[1:].astype(float)
        for header, radius in zip(values.index, table.radii, strict=True):
            if radius > ceiling and values[header] > 0:
                found.append({"table": table.name, "row": row["row"], "radius": header,
                              "value": values[header], "ceiling": round(ceiling, 3)})  # fmt: skip
    return pd.DataFrame(found, columns=["table", "row", "radius", "value", "ceiling"])


def table_one_factor(family: str, source: str, target: str, *, dim: int) -> float:
    """Table I's ratio of a ``family`` certificate against ``source`` to one against ``target``.

    Read from the radius registry (:func:`rsutils.core.radius.certified_radius`) at one
    ``pA`` (the ratio does not depend on it): for Gaussian noise, √d from ℓ2 to ℓ∞ and 1
    from ℓ2 to ℓ1. A ``source`` certificate of radius ``r`` covers the ``target`` ball of
    radius ``r / factor``.
    """
    radii = [certified_radius(family, n, 0.9, scale=1.0, dim=dim) for n in (source, target)]
    return float(radii[0] / radii[1])


def conversion_check(
    source: PublishedTable,
    source_row: str,
    target: PublishedTable,
    target_row: str,
    *,
    factor: float,
    exact: bool,
) -> pd.DataFrame:
    """Can ``target_row`` be ``source_row``'s certificates measured in the other norm?

    A certificate of radius ``factor·t`` in the source norm covers the target ball of
    radius ``t``, so the same certificates give target accuracy at ``t`` at least the
    source accuracy at ``factor·t``, itself at least the source's value at the next
    printed radius (accuracy falls with the radius). When the conversion is ``exact``
    (the largest target ball inside the source region has exactly radius ``t``: an
    isotropic ℓ2 ball and the ℓ∞ cube or ℓ1 cross-polytope, or an anisotropic region's
    ℓ1 ball and its inscribed ℓ2 radius), it is also at most the value at the previous
    printed radius. One row per target column, with ``low``/``high`` (the bracket; NaN
    where no printed radius gives one), ``printed`` and ``verdict`` (``consistent``,
    ``below the bound``, ``above the bound``, ``no bound`` or ``not printed``).
    """
    values = source.data.set_index("row").loc[source_row].astype(float)
    radii = source.radii
    printed_row = target.data.set_index("row").loc[target_row].astype(float)
    found = []
    for header, t in zip(target.data.columns[1:], target.radii, strict=True):
        at = factor * t
        after, before = radii >= at - 1e-9, radii <= at + 1e-9
        low = float(values.iloc[np.argmax(after)]) if after.any() else np.nan
        high = float(values.iloc[np.flatnonzero(before)[-1]]) if exact and before.any() else np.nan
        printed = float(printed_row[header])
        found.append({"target": target.name, "row": target_row, "radius": header,
                      "source radius": round(at, 3), "low": low, "high": high,
                      "printed": printed, "verdict": _bracket(printed, low, high)})  # fmt: skip
    return pd.DataFrame(found)


def _bracket(printed: float, low: float, high: float) -> str:
    if np.isnan(printed):
        return LedgerVerdict.NOT_PRINTED
    if np.isnan(low) and np.isnan(high):
        return "no bound"
    if printed < low:
        return "below the bound"
    return "above the bound" if printed > high else "consistent"


def duplicate_rows(tables: Iterable[PublishedTable]) -> pd.DataFrame:
    """Pairs of certified-accuracy rows with the same numbers in tables of other datasets."""
    seen: dict[tuple, tuple[str, str, str]] = {}
    found = []
    for table in tables:
        for _, row in _accuracy(table).iterrows():
            values = tuple(row.iloc[1:].astype(float).fillna(-1.0))
            key = (tuple(table.data.columns[1:]), values)
            if key in seen and seen[key][2] != table.meta["dataset"]:
                first_table, first_row, first_dataset = seen[key]
                found.append({"table": table.name, "row": row["row"], "same as": first_table,
                              "its row": first_row, "datasets": f"{first_dataset} / "
                              f"{table.meta['dataset']}"})  # fmt: skip
            seen.setdefault(key, (table.name, row["row"], str(table.meta["dataset"])))
    return pd.DataFrame(found, columns=["table", "row", "same as", "its row", "datasets"])
