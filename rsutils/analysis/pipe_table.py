"""Markdown pipe tables: the one writer behind every Markdown table the library and the
book print (:func:`rsutils.analysis.report.render`, the book's findings and Table I)."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence

__all__ = ["pipe_table"]


def _cell(value: object) -> str:
    """A cell as one line: line breaks and runs of spaces become one space, and a pipe,
    which would end the cell, is escaped."""
    return " ".join(str(value).split()).replace("|", "\\|")


def pipe_table(
    header: Sequence[object], rows: Iterable[Sequence[object]], *, right: Collection[int] = ()
) -> str:
    """``header`` and ``rows`` as a Markdown pipe table, one line per row, the columns
    whose positions are in ``right`` right-aligned (numbers), the others left as they
    are. A row of another length than ``header`` raises :class:`ValueError`, which
    Markdown would otherwise render as a shifted row."""
    lines = [header, ["---:" if i in right else "---" for i in range(len(header))]]
    for row in rows:
        if len(row) != len(header):
            raise ValueError(f"a row of {len(row)} cells under {len(header)} columns: {row!r}")
        lines.append(row)
    return "\n".join("| " + " | ".join(map(_cell, line)) + " |" for line in lines)
