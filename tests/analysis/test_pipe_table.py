"""The one Markdown table writer: one line per row, pipes escaped, numbers right-aligned."""

from __future__ import annotations

import pytest
from markdown_it import MarkdownIt

from rsutils.analysis.pipe_table import pipe_table


def test_cells_are_one_line_with_their_pipes_escaped() -> None:
    text = pipe_table(["claim", "n"], [["a | b\nc", 40], ["{ref}`x`", 7]], right=[1])
    assert text.splitlines() == [
        "| claim | n |",
        "| --- | ---: |",
        "| a \\| b c | 40 |",
        "| {ref}`x` | 7 |",
    ]


def test_a_markdown_parser_reads_back_every_cell() -> None:
    """The table as a CommonMark parser with tables (the one MyST builds on) reads it:
    as many rows and cells as written, an escaped pipe read back as a pipe."""
    rows = [["a | b", "1"], ["$x$", "2"]]
    html = MarkdownIt("commonmark").enable("table").render(pipe_table(["q", "n"], rows))
    assert html.count("<tr>") == 3 and html.count("<td") == 4
    assert "<td>a | b</td>" in html and 'style="text-align:right"' not in html


def test_a_row_of_the_wrong_length_is_refused() -> None:
    with pytest.raises(ValueError, match="a row of 1 cells under 2 columns"):
        pipe_table(["a", "b"], [["only one"]])
