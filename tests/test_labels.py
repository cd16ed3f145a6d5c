"""One label scheme for the book's targets, and no reference to a target that is gone.

The rule: a page's label is its kind and its slug, ``KIND-SLUG``; a section's label is
its page's label, a hyphen and the section's own slug. The kind is the part of the book
the page stands in (``_toc.yml``): ``book`` for *Using this book* and the back matter,
``manual`` for *Using rsutils*, ``chapter`` for every other part (the chapters and their
linked pages). The slug is the file's name without its number, ``_`` written ``-``:
``notebooks/08a_design_costs.py`` is ``chapter-design-costs``, a section of it
``chapter-design-costs-SECTION``. Labels are lower-case words joined by hyphens, and
each names one target.

Every ``{ref}`` and ``{numref}`` of the notebooks, of the book's Markdown pages and of
the package's data (the findings page's links) names a label or a figure that exists,
and every page with settings opens itself by its own label.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest
import yaml

from rsutils.book.findings import CLAIM_RUNS

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((REPO / "notebooks").glob("[0-9][0-9]*_*.py"))
PAGES_MD = sorted((REPO / "book").glob("*.md"))
#: The kind of each part of the book, by its caption; any other part holds chapters.
PART_KINDS = {"Using this book": "book", "Using rsutils": "manual", "Back matter": "book"}
#: A label: lower-case words joined by hyphens.
WORDS = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")
#: A label's definition: ``(label)=`` alone on a line (a notebook's Markdown cells are
#: comments).
DEFINITION = re.compile(r"^(?:# )?\(([^()\s]+)\)=\s*$", re.MULTILINE)
#: A figure's name in a ``{glue:figure}`` or ``{figure}`` directive.
FIGURE_NAME = re.compile(r"^(?:# )?:name: (\S+)\s*$", re.MULTILINE)
#: A reference: ``{ref}`label``` or ``{ref}`text <label>``` (likewise ``{numref}``).
REFERENCE = re.compile(r"\{(ref|numref)\}`(?:[^`<]*<)?([^`<>]+)>?`")


def toc_pages() -> dict[Path, str]:
    """Every page of ``_toc.yml`` (its source file) with the kind of its part."""
    toc = yaml.safe_load((REPO / "_toc.yml").read_text())
    pages: dict[Path, str] = {}

    def source(entry: str) -> Path:
        name = Path(entry).name
        found = REPO / "notebooks" / f"{name}.py"
        return found if found.exists() else REPO / f"{entry}.md"

    def add(entries: list[dict], kind: str) -> None:
        for entry in entries:
            pages[source(entry["file"])] = kind
            add(entry.get("sections", []), kind)

    pages[source(toc["root"])] = "book"
    for part in toc["parts"]:
        add(part["chapters"], PART_KINDS.get(part["caption"], "chapter"))
    return pages


def page_label(path: Path, kind: str) -> str:
    """The label the rule gives the page of ``path`` in a part of ``kind``."""
    slug = re.sub(r"^\d\d[a-z]?_", "", path.stem) if path.suffix == ".py" else path.stem
    return f"{kind}-{slug.replace('_', '-')}"


def rule_violations(path: Path, kind: str, labels: list[str]) -> list[str]:
    """What breaks the rule among the ``labels`` defined in the page at ``path``, in
    their order there: the page's own label must come first (a notebook's, on its first
    line of Markdown), then its sections'."""
    own = page_label(path, kind)
    problems = [f"{x!r} is not words joined by hyphens" for x in labels if not WORDS.fullmatch(x)]
    if path.suffix == ".py" and labels[:1] != [own]:
        problems.append(f"the page's first label must be {own!r}, not {labels[:1]}")
    sections = labels[1:] if labels[:1] == [own] else labels
    prefix = own + "-"
    problems += [f"{s!r} must start with {prefix!r}" for s in sections if not s.startswith(prefix)]
    return problems


def defined(path: Path) -> list[str]:
    return DEFINITION.findall(path.read_text())


def test_every_page_is_in_the_toc() -> None:
    assert set(NOTEBOOKS) <= set(toc_pages())
    assert all(path.exists() for path in toc_pages())


@pytest.mark.parametrize("path", NOTEBOOKS + PAGES_MD, ids=lambda p: p.name)
def test_every_label_follows_the_rule(path: Path) -> None:
    problems = rule_violations(path, toc_pages().get(path, "book"), defined(path))
    assert not problems, problems


def test_the_rule_as_stated() -> None:
    toc = toc_pages()
    notebook = REPO / "notebooks" / "08a_design_costs.py"
    assert toc[notebook] == "chapter"
    assert page_label(notebook, "chapter") == "chapter-design-costs"
    findings = REPO / "notebooks" / "00_findings.py"
    assert page_label(findings, toc[findings]) == "book-findings"
    assert toc[REPO / "notebooks" / "12_faster.py"] == "manual"
    assert page_label(REPO / "book" / "reproduce.md", "book") == "book-reproduce"


def test_the_rule_check_sees_labels_of_other_schemes() -> None:
    page, own = REPO / "notebooks" / "06a_npg_saturation.py", "chapter-npg-saturation"
    assert rule_violations(page, "chapter", [own, f"{own}-pull"]) == []
    assert rule_violations(page, "chapter", ["sec-saturation"]) == [
        "the page's first label must be 'chapter-npg-saturation', not ['sec-saturation']",
        "'sec-saturation' must start with 'chapter-npg-saturation-'",
    ]
    assert len(rule_violations(page, "chapter", [own, "appendix-pull"])) == 1
    assert len(rule_violations(page, "chapter", [own, f"{own}-A"])) == 1
    assert len(rule_violations(page, "chapter", [f"{own}-pull", own])) == 2  # its own first


def every_label() -> list[str]:
    return [label for path in NOTEBOOKS + PAGES_MD for label in defined(path)]


def test_every_label_names_one_target() -> None:
    labels = every_label()
    assert len(labels) == len(set(labels)), sorted({x for x in labels if labels.count(x) > 1})


def references() -> list[tuple[str, str, str]]:
    """Every reference of the book's sources: where it is, its role and its target."""
    found = [
        (path.name, role, target)
        for path in NOTEBOOKS + PAGES_MD
        for role, target in REFERENCE.findall(path.read_text())
    ]
    table = REPO / "rsutils" / "book" / "tables" / "beyond_findings.csv"
    found += [(table.name, "ref", label) for label in pd.read_csv(table)["label"]]
    found += [("findings.CLAIM_RUNS", "ref", label) for label, _ in CLAIM_RUNS.values()]
    return found


def test_every_reference_names_a_target_that_exists() -> None:
    sources = NOTEBOOKS + PAGES_MD
    figures = {name for path in sources for name in FIGURE_NAME.findall(path.read_text())}
    targets = {"ref": set(every_label()) | figures, "numref": figures}
    missing = [(where, role, x) for where, role, x in references() if x not in targets[role]]
    assert not missing, missing
    assert len(references()) > 100  # the book's references were found


def test_every_page_with_settings_opens_by_its_own_label() -> None:
    from rsutils.book.chapters.pages import SETTINGS

    toc = toc_pages()
    labels = {page_label(path, toc[path]): path for path in NOTEBOOKS}
    for kind in SETTINGS:
        for page in kind.PAGES:
            assert page in labels, f"{kind.__name__} names {page!r}, which is no page's label"
            opened = re.findall(r'open_page\(\s*"([^"]+)"', labels[page].read_text())
            assert opened == [page], labels[page].name
