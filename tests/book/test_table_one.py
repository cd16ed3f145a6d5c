"""UCAN's Table I as the book renders it: every registered row, the columns asked for."""

from __future__ import annotations

import pandas as pd
import pytest

from rsutils.book.chapters.table_one import COLUMNS, table_one, table_one_markdown


def header(markdown: str) -> list[str]:
    return [cell.strip() for cell in markdown.splitlines()[0].strip("|").split("|")]


def test_the_default_table_has_every_column_and_every_registered_row() -> None:
    markdown = table_one_markdown()
    assert header(markdown) == list(COLUMNS)
    assert len(markdown.splitlines()) == 2 + len(table_one())
    assert "{cite:t}`" in markdown.splitlines()[2]


def test_a_chapter_can_split_the_table_and_append_its_checks() -> None:
    checks = pd.DataFrame({"verdict": ["tight"] * len(table_one())})
    markdown = table_one_markdown(checks, columns=("distribution", "adversary"))
    rows = markdown.splitlines()
    assert header(markdown) == ["distribution", "adversary", "verdict"]
    assert rows[2] == "| Gaussian | $\\ell_2$ | tight |"
    assert "cite" not in markdown and "\\|" not in markdown


def test_a_column_table_one_lacks_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="no column \\['radius'\\]"):
        table_one_markdown(columns=("distribution", "radius"))
