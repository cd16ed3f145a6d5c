"""The chapters read as a book: prose explains the code, and the code fits the page.

A chapter answers "why this step?" in prose between its cells. Whether it does is a
question for whoever reads the page, not a number: a floor on the lines of prose per line
of code (it was 0.85) was met just above it by nine pages, which is a floor steering the
pages, not the pages meeting it. What stays here is a backstop far below every page
(:data:`PROSE_BACKSTOP`), which only a page turned into a listing would reach. And its
code is read in the book's code cells, which hold ``notebooks/ruff.toml``'s line length
at 1280 px: ``ruff format`` wraps code to it, but not strings or comments, so every line
of every code cell is checked here.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import jupytext
import pytest

REPO = Path(__file__).resolve().parents[2]
CHAPTERS = sorted((REPO / "notebooks").glob("[0-9][0-9]*_*.py"))
#: Lines of prose per line of code below which a page is a listing, not a chapter: a
#: backstop, well below every page (QuantEcon's lectures have about 1.3, the book's
#: pages 0.87 to 2.2), not a target.
PROSE_BACKSTOP = 0.5
#: The widest code line a code cell shows without scrolling at 1280 px.
LINE_LENGTH = tomllib.loads((REPO / "notebooks" / "ruff.toml").read_text())["line-length"]


def prose_and_code(text: str) -> tuple[int, int]:
    """Non-blank lines of Markdown cells (a bare ``#`` is a blank line) and non-blank,
    non-comment lines of code cells, in a Jupytext percent script."""
    prose = code = 0
    for cell in re.split(r"^# %%", text, flags=re.M)[1:]:
        header, _, body = cell.partition("\n")
        lines = [line.strip() for line in body.splitlines() if line.strip()]
        if "[markdown]" in header:
            prose += sum(line != "#" for line in lines)
        else:
            code += sum(not line.startswith("#") for line in lines)
    return prose, code


def test_the_count_reads_markdown_cells_as_prose_and_skips_comments() -> None:
    text = "\n".join(
        [
            "# %% [markdown]",
            "# ## A heading",
            "#",
            "# One line of prose.",
            "",
            "# %% tags=['remove-cell']",
            "# a comment is not code",
            "x = 1",
            "",
            "y = 2",
        ]
    )
    assert prose_and_code(text) == (2, 2)


@pytest.mark.parametrize("source", CHAPTERS, ids=[path.stem for path in CHAPTERS])
def test_no_chapter_is_a_listing(source: Path) -> None:
    prose, code = prose_and_code(source.read_text())
    assert prose / code >= PROSE_BACKSTOP, (
        f"{source.name}: {prose} lines of prose for {code} of code ({prose / code:.2f}); "
        "move the logic into rsutils and say in prose why each step is there"
    )


@pytest.mark.parametrize("source", CHAPTERS, ids=[path.stem for path in CHAPTERS])
def test_every_code_line_fits_the_book_column(source: Path) -> None:
    cells = jupytext.read(source).cells
    too_long = [
        f"code cell {number}: {line!r}"
        for number, cell in enumerate((c for c in cells if c.cell_type == "code"), start=1)
        for line in cell.source.splitlines()
        if len(line) > LINE_LENGTH
    ]
    assert not too_long, (
        f"{source.name} has code lines over {LINE_LENGTH} characters, which scroll "
        "sideways in the book: " + "; ".join(too_long)
    )


#: The most words of prose a page may have: one main line, about 3,000 words (a lecture
#: of QuantEcon's), with what does not serve it on pages of its own.
MAIN_LINE_WORDS = 3300
#: The findings page is the book's summary; it has no summary of its own.
SUMMARIES = [path for path in CHAPTERS if path.stem != "00_findings"]


def prose_words(text: str) -> int:
    """Words of a Jupytext percent notebook's Markdown cells, a glued value (a
    ``{glue:text}`` role) counting as one word."""
    cells = jupytext.reads(text, fmt="py:percent").cells
    prose = " ".join(c.source for c in cells if c.cell_type == "markdown")
    return len(re.sub(r"\{glue:text\}`[^`]*`", "N", prose).split())


def test_a_glued_value_counts_as_one_word() -> None:
    text = "# %% [markdown]\n# ## Heading\n#\n# It is {glue:text}`acr_best:.3f` here.\n"
    assert prose_words(text) == 6


@pytest.mark.parametrize("source", CHAPTERS, ids=[path.stem for path in CHAPTERS])
def test_every_page_has_one_main_line(source: Path) -> None:
    words = prose_words(source.read_text())
    assert words <= MAIN_LINE_WORDS, (
        f"{source.name} has {words} words of prose; a page has one main line of at most "
        f"about {MAIN_LINE_WORDS:,}: move what does not serve it to a linked page"
    )


@pytest.mark.parametrize("source", SUMMARIES, ids=[path.stem for path in SUMMARIES])
def test_every_chapter_ends_with_what_holds_up(source: Path) -> None:
    cells = jupytext.read(source).cells
    headings = [
        line
        for cell in cells
        if cell.cell_type == "markdown"
        for line in cell.source.splitlines()
        if line.startswith("## ")
    ]
    assert headings and headings[-1] == "## What holds up", (
        f"{source.name} ends with {headings[-1:]}: end it with '## What holds up', whose "
        "first sentence answers the page's question"
    )
