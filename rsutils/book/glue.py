"""Numbers for a chapter's prose: glued one by one, as a record's fields, or as table cells.

The prose of a chapter cites numbers by name (``{glue:text}`acr_best:.3f```) and
myst-nb fills them in from the values a cell glued under that name. A chapter glues

- single values with :func:`glue_all` (``glue_all(acr_best=0.61, n=1000)``);
- several fields of one record (a table row or column, a mapping, a dataclass) with
  :func:`glue_fields`, under ``prefix`` + a name per field;
- a block of a table's cells with :func:`glue_table`, under a key made from each cell's
  row and column labels.

Glued values are shown in the prose by their text, so numpy scalars are glued as the
Python numbers they hold (a glued ``numpy.float64`` would read ``np.float64(0.5)``) and
verdicts as their text (a glued enum member would read ``<ClaimVerdict.HOLDS: 'holds'>``):
:func:`plain` is the default conversion of :func:`glue_fields` and :func:`glue_table`.
Every key is checked before anything is glued: a missing field or label, a key that is
not a Python identifier (the prose could not cite it) or two cells under one key raise
:class:`KeyError` or :class:`ValueError` and glue nothing. They return nothing, so that
a cell ending in one shows no output.

A glued float is shown in the prose with a format (``{glue:text}`gap:.3f```): without
one, myst-nb prints its full ``repr`` (``0.012345678901234``).
:func:`unformatted_float_glues` finds the roles of an executed notebook that break this
rule; ``book/run_notebooks.py`` runs it on every chapter it executes.
"""

from __future__ import annotations

import ast
import re
import string
from collections.abc import Callable, Hashable, Iterable, Mapping
from enum import StrEnum
from typing import Any

import numpy as np
import pandas as pd

from rsutils.analysis.verdicts import MagnitudeVerdict, Verdict

__all__ = [
    "glue_all",
    "glue_fields",
    "glue_table",
    "glued_values",
    "key_part",
    "plain",
    "unformatted_float_glues",
]

#: What :func:`_field` returns for a field that a record lacks.
_ABSENT: Any = object()


def plain(value: object) -> object:
    """``value`` with a numpy scalar replaced by the Python number it holds (the same
    value as ``float()`` or ``int()`` would give), and a verdict (a
    :class:`~rsutils.analysis.verdicts.Verdict`, or a member of a string enum such as
    :class:`~rsutils.book.audit.verdicts.ClaimVerdict`) by its text, ``str(value)``;
    other values unchanged."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, Verdict | MagnitudeVerdict | StrEnum):
        return str(value)
    return value


def key_part(label: Hashable) -> str:
    """A row or column label as part of a glue key: lower case ASCII letters and digits,
    every other run of characters one underscore (``"r = 0"`` → ``"r_0"``, ``0.25`` →
    ``"0_25"``, ``"Cohen-DS"`` → ``"cohen_ds"``)."""
    part = re.sub(r"[^a-z0-9]+", "_", str(label).lower()).strip("_")
    if not part:
        raise ValueError(
            f"the label {label!r} has no ASCII letter or digit to name a glue key; "
            "give its key part explicitly (rows={label: 'name'} or columns=...)"
        )
    return part


def glue_all(**values: object) -> None:
    """Glue every keyword as a named value for ``{glue:text}`` in the prose (not shown).

    A numpy scalar is glued as the Python number it holds, a verdict as its text
    (:func:`plain`): glue stores a value's ``repr``, and ``np.float64(0.03)`` is not a
    number a format can print.
    """
    from myst_nb import glue

    for name, value in values.items():
        glue(name, plain(value), display=False)


def glue_fields(
    record: object,
    prefix: str,
    fields: Mapping[str, Hashable] | Iterable[str],
    *,
    convert: Callable[[Any], object] = plain,
    default: object = None,
) -> None:
    """Glue fields of ``record`` under ``prefix`` + a name each.

    ``record`` is a mapping or a :class:`pandas.Series` (a table's row or column),
    read by key, or any other object (a dataclass), read by attribute. ``fields`` maps
    each key's name to the field it glues (``{"min": "min σ"}`` glues
    ``record["min σ"]`` as ``prefix + "min"``), or lists fields whose names are their
    keys' names. Each value is glued as ``convert(value)``. A field that ``record``
    lacks raises :class:`KeyError`, unless a ``default`` other than ``None`` is given
    (e.g. ``0`` for the counts of ``value_counts()``), which it then glues instead.
    """
    named = dict(fields) if isinstance(fields, Mapping) else {name: name for name in fields}
    values = {}
    for name, field in named.items():
        found = _field(record, field)
        if found is _ABSENT:
            if default is None:
                raise KeyError(
                    f"the record has no field {field!r} (it has {_fields_of(record)}); "
                    "name an existing field, or pass default= for absent ones"
                )
            found = default
        values[prefix + name] = convert(found)
    _check_keys(values)
    glue_all(**values)


def glue_table(
    frame: pd.DataFrame,
    key: str,
    *,
    rows: Mapping[Hashable, str] | None = None,
    columns: Mapping[Hashable, str] | None = None,
    convert: Callable[[Any], object] = plain,
) -> None:
    """Glue cells of ``frame`` under ``key.format(row=..., column=...)``.

    ``rows`` and ``columns`` map the labels of the cells to glue to their parts of the
    key (``rows={"Cohen-DS": "ds"}``); left out, every row or column is glued, its part
    of the key made from its label by :func:`key_part`. ``key`` names the parts it uses
    (``"env_{row}_{column}"``, or ``"acr_{row}"`` for one column). Each cell is glued as
    ``convert(cell)``. A label that ``frame`` lacks raises :class:`KeyError`; a key that
    names anything but ``{row}`` and ``{column}``, or leaves one out while several rows
    or columns are glued (two cells, one name), and a table with repeated labels raise
    :class:`ValueError`.
    """
    named = {field for _, field, _, _ in string.Formatter().parse(key) if field is not None}
    if not named <= {"row", "column"}:
        raise ValueError(
            f"the key {key!r} names {sorted(named - {'row', 'column'})}; "
            "a table's key may name only {row} and {column}"
        )
    if not (frame.index.is_unique and frame.columns.is_unique):
        raise ValueError("the table repeats a row or column label; glue cells of unique labels")
    row_parts = _parts(frame.index, rows, "row")
    column_parts = _parts(frame.columns, columns, "column")
    values = {
        key.format(row=row_part, column=column_part): convert(frame.loc[row, column])
        for row, row_part in row_parts.items()
        for column, column_part in column_parts.items()
    }
    if len(values) < len(row_parts) * len(column_parts):
        raise ValueError(
            f"the key {key!r} names {len(values)} value(s) for "
            f"{len(row_parts) * len(column_parts)} cells; put {{row}} and {{column}} in it "
            "or glue fewer rows or columns"
        )
    _check_keys(values)
    glue_all(**values)


def _field(record: object, field: Hashable) -> object:
    """``record``'s ``field`` (by key for a mapping or Series, else by attribute), or
    ``_ABSENT`` when it has none."""
    if isinstance(record, Mapping | pd.Series):
        return record[field] if field in record.keys() else _ABSENT
    return getattr(record, str(field), _ABSENT)


def _fields_of(record: object) -> list[object]:
    if isinstance(record, Mapping | pd.Series):
        return list(record.keys())
    return sorted(name for name in dir(record) if not name.startswith("_"))


def _parts(
    labels: pd.Index, chosen: Mapping[Hashable, str] | None, axis: str
) -> dict[Hashable, str]:
    """The labels to glue along one axis, each with its part of the key."""
    if chosen is None:
        return {label: key_part(label) for label in labels}
    missing = [label for label in chosen if label not in labels]
    if missing:
        raise KeyError(f"no {axis} labelled {missing} in the table (it has {list(labels)})")
    return dict(chosen)


def _check_keys(values: Mapping[str, object]) -> None:
    """Every key must be citable from the prose: a Python identifier."""
    bad = [name for name in values if not name.isidentifier()]
    if bad:
        raise ValueError(
            f"glue keys {bad} are not identifiers, so the prose cannot cite them; map the "
            "labels to key parts of letters, digits and underscores"
        )


#: A role that pastes a glued value as text (``{glue:text}`name``` or
#: ``{glue:text}`name:.2f```); ``{glue}`` and ``{glue:any}`` paste it with no format.
_PASTE_ROLE = re.compile(r"\{glue(?::(text|any))?\}`([^`]+)`")
#: The type characters of a format spec that format a number (myst-nb converts the
#: glued text to a number for them); ``s`` or no spec pastes the text as it is.
_NUMBER_TYPES = frozenset("bcdoxXeEfFgGn%")
#: How a numpy float glued without conversion reads (``np.float64(0.5)``).
_NUMPY_FLOAT = re.compile(r"^np\.float\d*\((.*)\)$")


def glued_values(notebook: Mapping[str, Any]) -> dict[str, str]:
    """The ``text/plain`` of every value glued in an executed notebook, by name (the
    last one where a name is glued twice), read from the outputs myst-nb's ``glue``
    tags with ``scrapbook`` metadata (under its ``mime_prefix``, as papermill
    records them)."""
    values: dict[str, str] = {}
    for cell in notebook.get("cells", []):
        for output in cell.get("outputs", []) or []:
            scrapbook = (output.get("metadata") or {}).get("scrapbook", {})
            name = scrapbook.get("name")
            prefix = scrapbook.get("mime_prefix", "")
            text = (output.get("data") or {}).get(prefix + "text/plain")
            if name is not None and text is not None:
                values[name] = "".join(text) if isinstance(text, list) else text
    return values


def unformatted_float_glues(notebook: Mapping[str, Any]) -> list[str]:
    """One message per role of ``notebook``'s markdown that pastes a glued float as its
    raw text: a ``{glue:text}`` role without a numeric format spec (none, or one of
    type ``s``), or a ``{glue}`` / ``{glue:any}`` role (which takes none), whose glued
    value is a float (Python's, or a numpy float glued unconverted). An integer-valued
    float counts too: it prints as ``3.0`` and, at another profile, as a long fraction.

    ``notebook`` is an executed notebook (an ``nbformat`` node or its JSON as a
    dict). Each message names the value, what the reader would see and the fix (a
    format in the role). Roles pasting from another document (``doc::name``) and names
    glued nowhere in the notebook are left to myst-nb, which warns about the latter.
    An empty list means every glued float of the prose is formatted.
    """
    values = glued_values(notebook)
    found = []
    for index, cell in enumerate(notebook.get("cells", [])):
        if cell.get("cell_type") != "markdown":
            continue
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else source
        for role, content in _PASTE_ROLE.findall(source):
            if "::" in content:
                continue
            key, spec = content.rsplit(":", 1) if ":" in content else (content, "")
            if role == "text" and spec and spec[-1] in _NUMBER_TYPES:
                continue
            if key in values and _is_float(values[key]):
                shown = f"{{glue:{role}}}`{content}`" if role else f"{{glue}}`{content}`"
                found.append(
                    f"cell {index}: {shown} pastes the float {key!r} as its raw text "
                    f"{values[key]}; give it a format, e.g. {{glue:text}}`{key}:.3f`"
                )
    return found


def _is_float(text: str) -> bool:
    """Whether a glued value's ``text/plain`` is a float's."""
    match = _NUMPY_FLOAT.match(text.strip())
    try:
        value = ast.literal_eval(match.group(1) if match else text.strip())
    except (SyntaxError, ValueError):
        return False
    return isinstance(value, float)
