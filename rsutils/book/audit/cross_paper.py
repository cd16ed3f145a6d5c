"""UCAN's rows for other papers' methods, against those papers' own numbers.

UCAN's tables print rows for Cohen et al. ("Cohen’s [12]" in Tables III–V, "Cohen et
al.’s [12]" in Table II's ℓ∞ block) and for data-dependent smoothing ("Data-depend
[2]", Tables IV and V). Each printed cell is set beside:

- Cohen et al.'s printed Tables 1 and 3
  (:func:`~rsutils.book.papers.published.cohen2019_published`),
  per σ, where they print that radius;
- the certified accuracy of each released CERTIFY log at that radius (the models
  trained and certified at one σ, test split; :mod:`rsutils.book.papers.released`), and their
  envelope, the largest over σ: what a "best per radius" row over Cohen et al.'s models
  would print;
- the absolute numbers the data-dependent smoothing paper states in its prose
  (:func:`ddrs_stated`; its tables are missing from its text), for Cohen's rows (its own
  runs of Cohen et al.'s method; on CIFAR-10 it does not say whose models they certify)
  and for the "Data-depend" rows (every method it states).

Radii in another norm are converted first: an isotropic Gaussian ℓ2 certificate of
radius ``r`` is exactly an ℓ∞ certificate of radius ``r/√d`` (Table I;
:func:`~rsutils.book.audit.table_audit.table_one_factor`), so the ℓ∞ radius ``ε`` is the ℓ2
radius ``ε·√d``. Two numbers *match* when their printed roundings allow one value
(:func:`within_rounding`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from importlib.resources import files

import numpy as np
import pandas as pd

from rsutils.analysis.metrics import certified_accuracy
from rsutils.book.audit.table_audit import duplicate_rows, table_one_factor
from rsutils.book.papers.published import (
    PublishedTable,
    cohen2019_published,
    published_table,
    published_table_names,
)
from rsutils.book.papers.released import COHEN2019_CERTIFY_LOGS, cohen2019_certify_log
from rsutils.logs.read import read_log

__all__ = [
    "COMPARED_ROWS",
    "cross_paper_check",
    "cross_paper_evidence",
    "ddrs_stated",
    "released_accuracy",
    "within_rounding",
]

#: The label prefix of each row compared, and the paper whose numbers it reports.
COMPARED_ROWS = {"Cohen": "cohen2019", "Data-depend": "alfarra2022"}
#: The printed unit of each source, in percent: UCAN and Cohen et al. print whole
#: percents (Cohen as fractions to two decimals), the data-dependent paper one decimal;
#: a log gives the exact share of its images.
_UNITS = {"UCAN": 1.0, "printed table": 1.0, "released log": 0.0, "envelope": 0.0}


def within_rounding(a: float, unit_a: float, b: float, unit_b: float) -> bool:
    """Whether ``a`` (printed to ``unit_a``) and ``b`` (to ``unit_b``) can be one value.

    Two numbers printed on the same grid match only when equal; otherwise when their
    rounding intervals ``[x − unit/2, x + unit/2]`` meet (a unit of 0 is exact).
    """
    if unit_a == unit_b and unit_a > 0:
        return bool(np.isclose(a, b, rtol=0, atol=1e-9))
    return bool(abs(a - b) <= (unit_a + unit_b) / 2 + 1e-9)


def ddrs_stated() -> pd.DataFrame:
    """The certified accuracies the data-dependent smoothing paper states in prose.

    Columns: ``id``, ``method``, ``dataset``, ``radius`` (ℓ2), ``value`` (percent),
    ``unit`` (0.1 as printed; 0.2 for a value ``derived`` from a stated value and a
    stated difference, each rounded to 0.1), ``how`` (``stated`` or ``<method> + d``),
    ``seed`` and ``quote`` (verbatim). Every value is on CIFAR10: for ImageNet the text
    states only differences.
    """
    folder = files("rsutils.book").joinpath("tables")
    with folder.joinpath("ddrs_stated.csv").open(encoding="utf-8") as handle:
        data = pd.read_csv(handle)
    stated = data.set_index(["method", "radius"])["value"]
    derived = data["from_method"].notna()
    base = [
        stated.get((m, r), np.nan) for m, r in zip(data["from_method"], data["radius"], strict=True)
    ]
    data["value"] = np.where(derived, np.add(base, data["difference"]), data["value"])
    data["unit"] = np.where(derived, 0.2, 0.1)
    data["how"] = np.where(
        derived, data["from_method"] + " + " + data["difference"].astype(str), "stated"
    )
    return data[["id", "method", "dataset", "radius", "value", "unit", "how", "seed", "quote"]]


def released_accuracy(
    dataset: str,
    radii: Iterable[float],
    *,
    logs: Mapping[float, pd.DataFrame] | None = None,
    root: str | os.PathLike[str] | None = None,
    download: bool = False,
) -> pd.DataFrame:
    """Certified accuracy (percent) of each released log of ``dataset`` at ``radii``.

    One row per ℓ2 radius; one column per σ (models trained and certified at σ, test
    split), ``envelope`` (the largest over σ) and ``envelope σ``; the last row,
    ``images``, holds each log's number of images (ImageNet's σ = 0.25 log has 427, the
    others 500: CIFAR-10's every 20th test image). ``logs`` (σ → certification log)
    replaces the release, e.g. in tests.
    """
    if logs is None:
        logs = {
            float(sigma): read_log(
                cohen2019_certify_log(dataset, trained, sigma, root=root, download=download)
            )
            for name, trained, split, sigma in COHEN2019_CERTIFY_LOGS
            if name == dataset and split == "test" and trained == sigma
        }
    if not logs:
        raise ValueError(f"no certification log for {dataset!r}; Cohen et al. released "
                         "ImageNet and CIFAR-10 only")  # fmt: skip
    radii = [float(r) for r in radii]
    ordered = sorted(logs)
    table = pd.DataFrame({s: certified_accuracy(logs[s], radii) * 100 for s in ordered}, radii)
    table["envelope σ"] = table[ordered].idxmax(axis=1)
    table["envelope"] = table[ordered].max(axis=1)
    table.loc["images"] = [len(logs[s]) for s in ordered] + [np.nan, np.nan]
    return table


def cross_paper_evidence(
    tables: Iterable[PublishedTable] | None = None,
    *,
    logs: Mapping[str, Mapping[float, pd.DataFrame]] | None = None,
    root: str | os.PathLike[str] | None = None,
    download: bool = False,
) -> pd.DataFrame:
    """Every counterpart of every compared cell, one row per (cell, source).

    ``tables`` default to every published table; their rows starting with a prefix of
    :data:`COMPARED_ROWS` are compared. ``logs`` (dataset → σ → log) replaces the
    release. Columns: ``table``, ``row``, ``radius`` (printed), ``r`` (its value),
    ``ℓ2 radius`` (converted), ``UCAN`` (percent), ``source`` (``printed table``,
    ``released log``, ``envelope`` or ``DDRS prose``; ``none`` for a cell without any
    counterpart), ``which`` (the σ, or the method), ``value`` (percent), ``unit``,
    ``images`` (of a log; NaN otherwise), ``match`` (:func:`within_rounding`) and
    ``sampling`` (for a log: UCAN's value within two standard errors of the log's
    share, ``√(p(1 − p)/m)`` over its ``m`` images and at least one image, beyond the
    rounding; a log of a subsample cannot tell such a gap from chance).
    """
    tables = list(tables) if tables is not None else _all_tables()
    printed, stated = cohen2019_published(), ddrs_stated()
    released: dict[str, pd.DataFrame] = {}
    found = []
    for table, label in _compared_rows(tables):
        dataset, factor = str(table.meta["dataset"]), _to_l2(table)
        paper = next(p for prefix, p in COMPARED_ROWS.items() if label.startswith(prefix))
        if paper == "cohen2019" and dataset in _RELEASED and dataset not in released:
            given = None if logs is None else logs.get(dataset)
            radii = _l2_radii(tables, dataset)
            released[dataset] = released_accuracy(
                dataset, radii, logs=given, root=root, download=download
            )
        values = table.data.set_index("row").loc[label]
        for header, r in zip(table.data.columns[1:], table.radii, strict=True):
            ucan = float(values[header])
            if np.isnan(ucan):
                continue
            cell = {"table": table.name, "row": label, "radius": header, "r": float(r),
                    "ℓ2 radius": float(r) * factor, "UCAN": ucan}  # fmt: skip
            if paper == "alfarra2022":
                sources = _stated(stated, dataset, cell["ℓ2 radius"], methods=None)
            else:
                sources = _cohen(printed, stated, released.get(dataset), dataset, cell["ℓ2 radius"])
            for source in sources or [_NONE]:
                found.append(cell | source | _agreement(ucan, source))
    return pd.DataFrame(found)


#: The datasets of Cohen et al.'s release.
_RELEASED = ("imagenet", "cifar10")
_NONE = {"source": "none", "which": "", "value": np.nan, "unit": np.nan, "images": np.nan}


def _compared_rows(tables: list[PublishedTable]) -> list[tuple[PublishedTable, str]]:
    return [
        (table, label)
        for table in tables
        for label in table.data["row"]
        if any(label.startswith(prefix) for prefix in COMPARED_ROWS)
    ]


def _agreement(ucan: float, source: dict) -> dict[str, bool]:
    if source["source"] == "none":
        return {"match": False, "sampling": False}
    match = within_rounding(ucan, _UNITS["UCAN"], source["value"], source["unit"])
    m = source["images"]
    if np.isnan(m):
        return {"match": match, "sampling": False}
    p = source["value"] / 100
    se = 100 * max(float(np.sqrt(p * (1 - p) / m)), 1 / m)
    return {"match": match, "sampling": bool(abs(ucan - source["value"]) <= 0.5 + 2 * se)}


def _all_tables() -> list[PublishedTable]:
    return [published_table(name) for name in published_table_names()]


def _l2_radii(tables: list[PublishedTable], dataset: str) -> list[float]:
    """Every ℓ2 radius a table of ``dataset`` prints, converted."""
    radii: set[float] = set()
    for table in tables:
        if table.meta["dataset"] == dataset:
            radii |= {float(r) * _to_l2(table) for r in table.radii}
    return sorted(radii)


def _to_l2(table: PublishedTable) -> float:
    """The ℓ2 radius per unit of ``table``'s radius, for isotropic Gaussian noise
    (Table I's factor at the input dimension its JSON ``noise`` block states)."""
    norm = str(table.meta["norm"])
    if norm == "l2":
        return 1.0
    dim = table.meta.get("noise", {}).get("dim")
    if not dim:
        raise ValueError(f"{table.name} certifies {norm}: state the input dimension in its JSON")
    return table_one_factor("gaussian", "l2", norm, dim=int(dim))


def _stated(
    stated: pd.DataFrame, dataset: str, radius: float, *, methods: tuple[str, ...] | None
) -> list[dict]:
    near = stated[(stated["dataset"] == dataset) & np.isclose(stated["radius"], radius)]
    if methods is not None:
        near = near[near["method"].isin(methods)]
    return [
        _source("DDRS prose", m, v, u)
        for m, v, u in zip(near["method"], near["value"], near["unit"], strict=True)
    ]


def _source(source: str, which: str, value: float, unit: float, images: float = np.nan) -> dict:
    return {"source": source, "which": which, "value": float(value), "unit": float(unit),
            "images": float(images)}  # fmt: skip


def _cohen(
    printed: pd.DataFrame,
    stated: pd.DataFrame,
    released: pd.DataFrame | None,
    dataset: str,
    radius: float,
) -> list[dict]:
    """Cohen et al.'s numbers at ``radius``: printed, per log, the envelope, and the data-
    dependent paper's runs of their models. None for a dataset they did not report."""
    if dataset not in _RELEASED:
        return []
    table = printed.query("quantity == 'certified_accuracy' and dataset == @dataset")
    table = table[np.isclose(table["radius"], radius)]
    found = [
        _source("printed table", f"σ = {s:.2f}", 100 * float(v), _UNITS["printed table"])
        for s, v in zip(table["sigma"], table["value"], strict=True)
    ]
    if released is not None and radius in released.index:
        at, images = released.loc[radius], released.loc["images"]
        sigmas = [c for c in released.columns if c not in ("envelope", "envelope σ")]
        for s in sigmas:
            found.append(_source("released log", f"σ = {s:.2f}", at[s], 0.0, images[s]))
        best = float(at["envelope σ"])
        found.append(_source("envelope", f"σ = {best:.2f}", at["envelope"], 0.0, images[best]))
    return found + _stated(stated, dataset, radius, methods=("Cohen",))


def cross_paper_check(
    tables: Iterable[PublishedTable] | None = None,
    *,
    logs: Mapping[str, Mapping[float, pd.DataFrame]] | None = None,
    root: str | os.PathLike[str] | None = None,
    download: bool = False,
) -> pd.DataFrame:
    """One row per compared cell, its counterparts and a verdict.

    Columns: ``table``, ``row``, ``radius`` (printed), ``ℓ2 radius`` (converted),
    ``UCAN``, ``envelope`` (of the released logs, NaN without one) and ``envelope σ``,
    ``printed`` (Cohen et al.'s tables at that radius, per σ), ``logs`` (per σ),
    ``DDRS`` (per method), ``matches`` (the sources that match within rounding),
    ``nearest`` (the counterpart closest to UCAN's value) and ``gap`` (UCAN − nearest),
    ``note`` (the row is printed for another dataset too,
    :func:`~rsutils.book.audit.table_audit.duplicate_rows`) and
    ``verdict``: ``matches`` (a counterpart within the printed rounding), ``within
    sampling error`` (none, but a released log within two standard errors),
    ``differs`` or ``no counterpart``. See :func:`cross_paper_evidence` for the
    arguments.
    """
    tables = list(tables) if tables is not None else _all_tables()
    evidence = cross_paper_evidence(tables, logs=logs, root=root, download=download)
    copies = duplicate_rows(tables)
    notes: dict[tuple[str, str], str] = {}
    for t, r, other, its in zip(
        copies["table"], copies["row"], copies["same as"], copies["its row"], strict=True
    ):
        notes[(t, r)] = f"same numbers as {other}"
        notes[(other, its)] = f"same numbers as {t}"
    found = []
    for (name, label, header), cell in evidence.groupby(["table", "row", "radius"], sort=False):
        have = cell[cell["source"] != "none"]
        envelope = have[have["source"] == "envelope"]
        row = {"table": name, "row": label, "radius": header,
               "ℓ2 radius": float(cell["ℓ2 radius"].iloc[0]), "UCAN": float(cell["UCAN"].iloc[0]),
               "envelope": float(envelope["value"].iloc[0]) if len(envelope) else np.nan,
               "envelope σ": envelope["which"].iloc[0] if len(envelope) else ""}  # fmt: skip
        row |= {column: _listed(have, source) for column, source in _LISTED.items()}
        matched = have[have["match"]]
        row["matches"] = "; ".join(
            f"{s} {w}".strip() for s, w in zip(matched.source, matched.which, strict=True)
        )
        row |= _nearest(have)
        row["note"] = notes.get((name, label), "")
        row["verdict"] = _cross_verdict(have)
        found.append(row)
    return pd.DataFrame(found)


_LISTED = {"printed": "printed table", "logs": "released log", "DDRS": "DDRS prose"}


def _listed(have: pd.DataFrame, source: str) -> str:
    part = have[have["source"] == source]
    return ", ".join(f"{w}: {v:.4g}" for w, v in zip(part["which"], part["value"], strict=True))


def _nearest(have: pd.DataFrame) -> dict[str, object]:
    if not len(have):
        return {"nearest": "", "gap": np.nan}
    best = have.iloc[int(np.argmin(np.abs(have["value"] - have["UCAN"]).to_numpy()))]
    return {
        "nearest": f"{best['source']} {best['which']}",
        "gap": round(float(best["UCAN"] - best["value"]), 9) + 0.0,  # not -0.0
    }


def _cross_verdict(have: pd.DataFrame) -> str:
    if not len(have):
        return "no counterpart"
    if have["match"].any():
        return "matches"
    return "within sampling error" if have["sampling"].any() else "differs"
