"""How each statement of the ledger is checked: a registry of named rules.

A rule takes one ledger row (a mapping of its text columns) and the
:class:`LedgerContext` and returns ``(found, verdict)``: what the tables, logs or other
statements give for the stated number, and a
:class:`~rsutils.book.audit.verdicts.LedgerVerdict` (one of :data:`VERDICTS`). Rules are
registered with :func:`ledger_rule`; :func:`check_ledger` applies them to every row.

The generic rules, and the columns they read:

- ``cell``: the printed cell of ``tables`` at ``rows`` and ``column`` equals ``value``;
- ``at_most``: no cell of ``rows`` at ``column`` exceeds ``value``;
- ``range``: the smallest and largest cells of ``rows`` at ``column`` are ``value`` and
  ``value2``;
- ``max_improvement``: the largest printed improvement of ``tables`` is ``value``;
- ``difference``, ``relative``, ``ratio``: ``value`` is ``to − from``,
  ``(to − from)/from × 100`` or ``to/from``;
- ``sum``: ``value`` is the sum of the values of the rows whose ids ``from`` lists;
- ``same_as``: ``value`` equals the value of the row whose id is ``from``;
- ``not_checkable``: nothing to compute; the row's ``reason`` says why.

Numbers are compared at their printed precision: a stated number ``v`` printed with
``k`` decimals stands for the interval ``v ± 0.5·10⁻ᵏ``, and so does each input; the
statement holds when its interval meets the range of the computed quantity over its
inputs' intervals (the quantities are monotone in each input, so the corners give the
range).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import pandas as pd

from rsutils.book.audit.verdicts import LedgerVerdict
from rsutils.book.papers.published import PublishedTable, published_table, published_table_names

__all__ = [
    "VERDICTS",
    "LedgerContext",
    "Rule",
    "check_ledger",
    "ledger_rule",
    "ledger_rules",
    "printed_interval",
    "verdict",
]

#: Every :class:`~rsutils.book.audit.verdicts.LedgerVerdict`, what a check can conclude.
VERDICTS = tuple(LedgerVerdict)
Rule = Callable[[Mapping[str, str], "LedgerContext"], tuple[str, LedgerVerdict]]
_RULES: dict[str, Rule] = {}


@dataclass
class LedgerContext:
    """What the rules read: the transcribed tables, every row of the ledger (for rules
    that relate statements), and the folder of released artefacts (``None``: the
    configured one), read only when a rule needs it. ``computed`` keeps what a rule
    computed from the release for the rows after it (by a key the rule chooses), so that
    statements repeated in several places read the release once per context."""

    rows: pd.DataFrame
    reference_root: str | Path | None = None
    tables: dict[str, PublishedTable] = field(default_factory=dict)
    computed: dict[object, object] = field(default_factory=dict)

    def table(self, name: str) -> PublishedTable:
        """The transcribed table ``name``, read once."""
        if name not in self.tables:
            if name not in published_table_names():
                raise ValueError(f"the ledger cites an unknown table {name!r}")
            self.tables[name] = published_table(name)
        return self.tables[name]

    @cached_property
    def values(self) -> dict[str, str]:
        """Each row's stated ``value`` by id."""
        return dict(zip(self.rows["id"], self.rows["value"], strict=True))


def ledger_rule(name: str) -> Callable[[Rule], Rule]:
    """Register a rule under ``name`` (a decorator); a name is registered once."""

    def register(rule: Rule) -> Rule:
        if name in _RULES:
            raise ValueError(f"a ledger rule named {name!r} is already registered")
        _RULES[name] = rule
        return rule

    return register


def ledger_rules() -> dict[str, Rule]:
    """The registered rules by name."""
    return dict(_RULES)


def check_ledger(rows: pd.DataFrame, context: LedgerContext | None = None) -> pd.DataFrame:
    """Each row of ``rows`` with ``stated`` (value and unit), ``found`` and ``verdict``
    (:class:`~rsutils.book.audit.verdicts.LedgerVerdict` members).

    Raises ``ValueError`` naming the row when its rule is unknown, says anything but a
    :class:`~rsutils.book.audit.verdicts.LedgerVerdict`, or is a not-checkable row
    without a reason.
    """
    context = context or LedgerContext(rows)
    found = []
    for row in rows.to_dict("records"):
        rule = _RULES.get(row["check"])
        if rule is None:
            raise ValueError(
                f"{row['id']}: unknown check {row['check']!r}; use one of {sorted(_RULES)}"
            )
        got, said = rule(row, context)
        if not isinstance(said, LedgerVerdict):
            raise ValueError(
                f"{row['id']}: rule {row['check']!r} said {said!r}, not a LedgerVerdict "
                f"({', '.join(map(str, VERDICTS))}): return a member"
            )
        found.append({**row, "stated": _stated(row), "found": got, "verdict": said})
    return pd.DataFrame(found)


def _stated(row: Mapping[str, str]) -> str:
    value = row["value"] + (f"–{row['value2']}" if row["value2"] else "")
    return f"{value} {row['unit']}".strip()


def printed_interval(text: str) -> tuple[float, float]:
    """The interval a number printed as ``text`` stands for (``"7.7"`` → 7.65…7.75)."""
    plain = text.replace(",", "").strip()
    decimals = len(plain.split(".")[1]) if "." in plain else 0
    half = 0.5 * 10.0**-decimals
    return float(plain) - half, float(plain) + half


def verdict(holds: bool) -> LedgerVerdict:
    """ "holds" when ``holds``, else "does not hold"."""
    return LedgerVerdict.HOLDS if holds else LedgerVerdict.DOES_NOT_HOLD


def _meets(stated: str, function: Callable[..., float], *inputs: str) -> tuple[str, LedgerVerdict]:
    """Whether ``stated``'s interval meets ``function``'s range over the inputs' intervals."""
    corners = [function(*point) for point in itertools.product(*map(printed_interval, inputs))]
    exact = function(*(float(x.replace(",", "")) for x in inputs))
    low, high = printed_interval(stated)
    return f"{exact:.4g}", verdict(min(corners) <= high and max(corners) >= low)


@ledger_rule("difference")
def _difference(row: Mapping[str, str], context: LedgerContext) -> tuple[str, LedgerVerdict]:
    return _meets(row["value"], lambda a, b: b - a, row["from"], row["to"])


@ledger_rule("relative")
def _relative(row: Mapping[str, str], context: LedgerContext) -> tuple[str, LedgerVerdict]:
    return _meets(row["value"], lambda a, b: (b - a) / a * 100, row["from"], row["to"])


@ledger_rule("ratio")
def _ratio(row: Mapping[str, str], context: LedgerContext) -> tuple[str, LedgerVerdict]:
    return _meets(row["value"], lambda a, b: b / a, row["from"], row["to"])


@ledger_rule("sum")
def _sum(row: Mapping[str, str], context: LedgerContext) -> tuple[str, LedgerVerdict]:
    parts = [context.values[i] for i in row["from"].split("|")]
    return _meets(row["value"], lambda *xs: sum(xs), *parts)


@ledger_rule("same_as")
def _same_as(row: Mapping[str, str], context: LedgerContext) -> tuple[str, LedgerVerdict]:
    other = context.values[row["from"]]
    return other, verdict(float(other.replace(",", "")) == float(row["value"].replace(",", "")))


@ledger_rule("not_checkable")
def _not_checkable(row: Mapping[str, str], context: LedgerContext) -> tuple[str, LedgerVerdict]:
    if not row["reason"].strip():
        raise ValueError(f"{row['id']}: a not-checkable statement needs its reason")
    return "", LedgerVerdict.NOT_CHECKABLE


def _cells(row: Mapping[str, str], context: LedgerContext) -> pd.Series:
    table = context.table(row["tables"].split("|")[0])
    return table.data.set_index("row").loc[row["rows"].split("|"), row["column"]]


def _table_rule(kind: str) -> Rule:
    def rule(row: Mapping[str, str], context: LedgerContext) -> tuple[str, LedgerVerdict]:
        cells = _cells(row, context)
        if cells.isna().any():
            return str(LedgerVerdict.NOT_PRINTED), LedgerVerdict.NOT_PRINTED
        cells = cells.astype(float)
        if kind == "cell":
            return f"{cells.iloc[0]:g}", verdict(abs(cells.iloc[0] - float(row["value"])) <= 0.05)
        if kind == "at_most":
            return f"max {cells.max():g}", verdict(cells.max() <= float(row["value"]))
        same = (cells.min(), cells.max()) == (float(row["value"]), float(row["value2"]))
        return f"{cells.min():g}–{cells.max():g}", verdict(same)

    return rule


for _kind in ("cell", "at_most", "range"):
    ledger_rule(_kind)(_table_rule(_kind))


@ledger_rule("max_improvement")
def _max_improvement(row: Mapping[str, str], context: LedgerContext) -> tuple[str, LedgerVerdict]:
    tables = [context.table(name) for name in row["tables"].split("|")]
    best = max(float(t.rows("improvement").max().max()) for t in tables)
    return f"{best:g}", verdict(abs(best - float(row["value"])) <= 0.05)
