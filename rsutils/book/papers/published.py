"""The papers' published numbers, as data with provenance (never typed into prose).

Each table of results is a CSV under ``tables/published/`` with its rows and columns as
printed (row labels kept, typos included; an empty cell where the paper prints '–')
and a JSON file beside it that says where it comes from: the seed text and table, the
caption, the dataset, the norm and scale, what the columns are, the kind of each row
(``certified_accuracy`` or ``improvement``) with its units, and notes on anything the
printed text leaves ambiguous. :func:`published_table` reads one; :func:`check_schema`
says what is wrong with it, if anything.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from fractions import Fraction
from importlib.resources import files

import numpy as np
import pandas as pd

__all__ = [
    "ROW_KINDS",
    "PublishedTable",
    "check_schema",
    "cohen2019_published",
    "full_scale",
    "published_table",
    "published_table_names",
    "qualitative_claims",
    "transcription_mismatches",
]

#: What a row of a published table holds.
ROW_KINDS = ("certified_accuracy", "improvement")
_REQUIRED = ("paper", "seed", "table", "caption", "dataset", "norm", "columns", "row_kinds")
_FOLDER = files("rsutils.book").joinpath("tables", "published")


@dataclass(frozen=True)
class PublishedTable:
    """One printed table: ``data`` (a ``row`` label column, then one column per printed
    header, values as numbers in the table's units) and its provenance ``meta``."""

    name: str
    data: pd.DataFrame
    meta: dict[str, object]

    @property
    def radii(self) -> np.ndarray:
        """The column headers as numbers (``"2/255"`` becomes 2/255)."""
        return np.array([float(Fraction(h)) for h in self.data.columns[1:]])

    @property
    def kinds(self) -> list[str]:
        return list(self.meta["row_kinds"])  # type: ignore[call-overload]

    def rows(self, kind: str) -> pd.DataFrame:
        """The rows of one kind, values only, indexed by their printed labels."""
        mask = np.array(self.kinds) == kind
        return self.data[mask].set_index("row")


def published_table_names() -> list[str]:
    """The names of every published table shipped with the package."""
    return sorted(p.name.removesuffix(".csv") for p in _FOLDER.iterdir() if p.name.endswith(".csv"))


def published_table(name: str) -> PublishedTable:
    """The published table called ``name`` (see :func:`published_table_names`)."""
    if name not in published_table_names():
        raise ValueError(f"no published table {name!r}; choose one of {published_table_names()}")
    with _FOLDER.joinpath(f"{name}.csv").open(encoding="utf-8") as handle:
        data = pd.read_csv(handle, dtype={"row": str})
    with _FOLDER.joinpath(f"{name}.json").open(encoding="utf-8") as handle:
        meta = json.load(handle)
    return PublishedTable(name, data, meta)


def check_schema(table: PublishedTable) -> list[str]:
    """What breaks the schema (empty when sound): provenance fields present, one kind
    per row with its units declared, radii strictly increasing, certified accuracies in
    [0, 100] percent (or [0, 1] for fractions), every value a number."""
    meta, problems = table.meta, []
    problems += [f"missing provenance field {key!r}" for key in _REQUIRED if key not in meta]
    kinds = table.kinds if "row_kinds" in meta else []
    if len(kinds) != len(table.data):
        problems.append(f"{len(kinds)} row kinds for {len(table.data)} rows")
    units = meta.get("units", {})
    problems += [f"unknown row kind {k!r}" for k in sorted(set(kinds) - set(ROW_KINDS))]
    problems += [f"no units declared for {k!r}" for k in sorted(set(kinds)) if k not in units]
    if not np.all(np.diff(table.radii) > 0):
        problems.append(f"radius columns are not increasing: {list(table.data.columns[1:])}")
    values = table.data.iloc[:, 1:]
    if not all(pd.api.types.is_numeric_dtype(values[c]) for c in values):
        problems.append("a cell is not a number")
    elif len(kinds) == len(table.data):
        accuracy = values[np.array(kinds) == "certified_accuracy"].to_numpy(dtype=float)
        finite, top = accuracy[np.isfinite(accuracy)], full_scale(table)
        if np.any((finite < 0) | (finite > top)):
            problems.append(f"a certified accuracy lies outside [0, {top:g}]")
    return problems


def full_scale(table: PublishedTable) -> float:
    """100 for accuracies in percent, 1 for fractions (from the declared units)."""
    units = str(table.meta.get("units", {}).get("certified_accuracy", "percent"))
    return 1.0 if units.startswith("fraction") else 100.0


def transcription_mismatches(table: PublishedTable, seed_text: str) -> list[str]:
    """Where ``table`` differs from the seed text it was transcribed from (empty if nowhere).

    The printed table is the tab-separated block after the line that starts with the
    caption's ``TABLE N:``; within it, the rows from the header row that matches the CSV's
    headers to the next ``Radius`` header (Table II prints two blocks). Cells are compared
    as printed, after removing ``%`` and spaces and reading '–' as empty.
    """
    lines = seed_text.splitlines()
    inline = table.meta.get("layout") == "inline"
    printed = _printed_inline(table, lines) if inline else _printed_block(table, lines)
    if printed is None:
        return [f"{table.name}: its caption and header row are not in the seed text"]
    problems = []
    if len(printed) != len(table.data):
        problems.append(f"{table.name}: {len(printed)} printed rows, {len(table.data)} in the CSV")
    for position, (cells, (_, row)) in enumerate(zip(printed, table.data.iterrows(), strict=False)):
        if cells[0] != row["row"]:
            problems.append(
                f"{table.name} row {position}: label {row['row']!r}, printed {cells[0]!r}"
            )
        if len(cells) != len(table.data.columns):
            problems.append(f"{table.name} row {position}: {len(cells) - 1} printed cells")
        for header, text in zip(table.data.columns[1:], cells[1:], strict=False):
            if not _same(text, row[header]):
                problems.append(
                    f"{table.name} {row['row']!r} at {header}: {row[header]!r}, printed {text!r}"
                )
    return problems


def _printed_block(table: PublishedTable, lines: list[str]) -> list[list[str]] | None:
    label = str(table.meta["caption"]).split(":")[0] + ":"
    start = next((k for k, line in enumerate(lines) if line.startswith(label)), None)
    if start is None:
        return None
    headers = [str(c) for c in table.data.columns[1:]]
    block: list[list[str]] | None = None
    for line in lines[start + 1 :]:
        if not line.strip():
            if block is not None:
                break
            continue
        cells = line.split("\t")
        if cells[0].startswith("Radius"):
            if block is not None:
                break
            block = [] if [c.strip() for c in cells[1:]] == headers else None
        elif block is not None:
            block.append(cells)
    return block


def _printed_inline(table: PublishedTable, lines: list[str]) -> list[list[str]] | None:
    """A table printed on one line (``caption`` first): ``<dataset> <σ> <values…>`` rows."""
    caption = str(table.meta["caption"])
    line = next((line for line in lines if line.startswith(caption)), None)
    if line is None:
        return None
    tokens = line.removeprefix(caption).split()
    width = len(table.data.columns) - 1
    rows = []
    while len(tokens) >= width + 2 and not tokens[0].startswith("("):
        rows.append([f"{tokens[0]} {tokens[1]}", *tokens[2 : 2 + width]])
        tokens = tokens[2 + width :]
    return rows


def _same(printed: str, value: object) -> bool:
    text = printed.replace("%", "").replace(" ", "").strip()
    if text in ("–", "—", "-", ""):
        return bool(pd.isna(value))
    return not pd.isna(value) and float(text) == float(value)  # type: ignore[arg-type]


def qualitative_claims() -> pd.DataFrame:
    """The papers' qualitative claims that this book's own runs can test, with provenance.

    Columns: ``id``, ``paper``, ``seed`` (the text it is quoted from), ``place`` (where in
    that text: its section, as ``§VI-A``, where the text numbers its sections, else the
    part of the paper it summarises, in the ledger's words, e.g. ``summary`` or
    ``results``), ``quote`` (verbatim) and ``measured`` (which of the book's runs test it,
    and how; see :mod:`rsutils.book.audit.measured`).
    """
    folder = files("rsutils.book").joinpath("tables")
    with folder.joinpath("qualitative_claims.csv").open(encoding="utf-8") as handle:
        return pd.read_csv(handle)


def cohen2019_published() -> pd.DataFrame:
    """Cohen et al.'s Tables 1, 3 and 4 as long-format rows (one number per row).

    Columns: ``table, dataset, quantity, sigma, radius, n, value, source``. Tables 1 and
    3 come from the published table ``cohen2019_tables_1_3`` (one number each, as
    printed); Table 4 (PREDICT), which the text states in prose, from
    ``tables/cohen2019_published.csv``.
    """
    printed = published_table("cohen2019_tables_1_3").data
    long = printed.melt(id_vars="row", var_name="radius", value_name="value").dropna()
    dataset = long["row"].str.split().str[0]
    certify = pd.DataFrame(
        {
            "table": np.where(dataset == "ImageNet", 1, 3),
            "dataset": np.where(dataset == "ImageNet", "imagenet", "cifar10"),
            "quantity": "certified_accuracy",
            "sigma": long["row"].str.split().str[1].astype(float),
            "radius": long["radius"].astype(float),
            "n": np.nan,
            "value": long["value"].astype(float),
        }
    )
    certify["source"] = "Cohen et al. 2019, Table " + certify["table"].astype(str)
    certify = certify.sort_values(["table", "sigma", "radius"], kind="stable")
    with files("rsutils.book").joinpath("tables", "cohen2019_published.csv").open() as handle:
        predict = pd.read_csv(handle)
    return pd.concat([certify, predict], ignore_index=True)
