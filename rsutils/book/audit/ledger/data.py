"""The ledger's data: every number-bearing statement of the three papers, one per row.

One CSV per paper under ``tables/ledger/`` (:data:`LEDGER_PAPERS`), each row a
statement quoted verbatim from the paper's text as shipped (:data:`LEDGER_SEEDS`)
with what it compares and how the book checks it. Columns (:data:`COLUMNS`):

- ``id`` (unique, starting with the paper's short name), ``section`` (where it
  stands: abstract, introduction, method, experiments, results, discussion,
  appendix; ``summary`` for the structured summary of Cohen et al.);
- ``quote``: the words of the text, verbatim up to white space, that hold the
  numbers; ``compares``: what the statement says, in plain words with units;
- ``check``: the rule that checks it (:func:`~rsutils.book.audit.ledger.rules.ledger_rules`),
  with its arguments ``value``, ``value2``, ``tables``, ``rows`` (``|`` separated),
  ``column``, ``from`` and ``to``, read as printed text so that their printed
  precision is known;
- ``unit``: the unit of ``value`` (``% certified accuracy``, ``points`` for a
  difference of percentages, ``relative %``, ``ACR``, ``seconds`` …);
- ``chosen``: how the printed number was chosen, where the paper tunes something on
  the test set it reports on (empty otherwise); ``note``: the book's remark;
- ``reason``: why the statement cannot be checked (rule ``not_checkable``, and the
  rules that show what another paper's table or release gives but judge nothing by
  it, which require one).

:func:`coverage_gaps` lists the number-bearing sentences of a text
(:func:`~rsutils.book.audit.ledger.sentences.number_bearing_sentences`) whose numbers no
row quotes; :func:`misquoted` the rows whose quote is not in the text.
"""

from __future__ import annotations

from importlib.resources import files

import pandas as pd

from rsutils.book.audit.ledger.sentences import normalise, number_bearing_sentences, number_tokens

__all__ = [
    "COLUMNS",
    "LEDGER_PAPERS",
    "LEDGER_SEEDS",
    "coverage_gaps",
    "ledger",
    "misquoted",
]

#: The papers of the ledger, by the short name their rows' ids start with.
LEDGER_PAPERS = {"cohen2019": "cohen", "alfarra2022": "ddrs", "ucan2025": "ucan"}
#: The text each paper's rows are quoted from (a file of the seeds folder).
LEDGER_SEEDS = {
    "cohen2019": "001_a6d4f2ba80420c5a.txt",
    "alfarra2022": "000_e7087de3b75bbcd4.txt",
    "ucan2025": "002_9a42fdfdfbcb223c.txt",
}
#: The columns of every ledger file, in order.
COLUMNS = ["id", "section", "quote", "compares", "check", "value", "value2", "tables",
           "rows", "column", "from", "to", "unit", "chosen", "note", "reason"]  # fmt: skip
_FOLDER = files("rsutils.book").joinpath("tables", "ledger")


def ledger(paper: str | None = None) -> pd.DataFrame:
    """The ledger of ``paper`` (one of :data:`LEDGER_PAPERS`), or of all three with a
    ``paper`` column first. Every column is text (empty string where blank)."""
    if paper is None:
        return pd.concat([ledger(p).assign(paper=p) for p in LEDGER_PAPERS], ignore_index=True)[
            ["paper", *COLUMNS]
        ]
    if paper not in LEDGER_PAPERS:
        raise ValueError(f"unknown paper {paper!r}: choose one of {sorted(LEDGER_PAPERS)}")
    with _FOLDER.joinpath(f"{paper}.csv").open(encoding="utf-8") as handle:
        rows = pd.read_csv(handle, dtype=str, keep_default_na=False)
    missing = set(COLUMNS) - set(rows.columns)
    if missing:
        raise ValueError(f"ledger {paper}.csv lacks the columns {sorted(missing)}")
    return rows[COLUMNS]


def misquoted(rows: pd.DataFrame, text: str) -> list[str]:
    """The ids of ``rows`` whose quote is not in ``text`` (white space normalised)."""
    plain = normalise(text)
    return [row.id for row in rows.itertuples() if normalise(row.quote) not in plain]


def coverage_gaps(rows: pd.DataFrame, text: str) -> list[str]:
    """The number-bearing sentences of ``text`` that ``rows`` do not cover.

    A sentence is covered when each of its numbers
    (:func:`~rsutils.book.audit.ledger.sentences.number_tokens`) is a number
    of some row's quote that is part of the sentence: a quote covers only the numbers it
    holds, so a sentence with three numbers needs rows that quote all three.
    """
    quotes = [normalise(q) for q in rows["quote"]]
    gaps = []
    for sentence in number_bearing_sentences(text):
        quoted = [q for q in quotes if q in sentence or sentence in q]
        held = {token for q in quoted for token in number_tokens(q)}
        if not set(number_tokens(sentence)) <= held:
            gaps.append(sentence)
    return gaps
