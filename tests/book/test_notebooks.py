"""No computation hidden from the reader: what a chapter shows comes from code it shows.

A cell tagged ``remove-cell`` is left out of the book, so it may glue numbers for the
prose and assert what the prose says, but nothing a shown cell uses may come from it:
a table or figure computed there would appear without its origin. (A cell tagged
``hide-input`` is shown folded, which the reader can unfold; ``remove-input`` would show
a result with no way to see its code, so the chapters do not use it.)
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import jupytext
import pytest

REPO = Path(__file__).resolve().parents[2]
CHAPTERS = sorted((REPO / "notebooks").glob("[0-9][0-9]*_*.py"))
HIDDEN = {"remove-cell", "remove-input"}
NESTED_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
COMPOUND = (ast.For, ast.AsyncFor, ast.While, ast.If, ast.With, ast.AsyncWith, ast.Try)


@dataclass(frozen=True)
class Cell:
    number: int  # 1-based, code cells only
    source: str
    hidden: bool


@dataclass(frozen=True)
class HiddenUse:
    """A shown cell reading a name that a hidden cell bound."""

    name: str
    bound_in: int
    read_in: int

    def __str__(self) -> str:
        return f"{self.name!r}: bound in hidden code cell {self.bound_in}, read in {self.read_in}"


def code_cells(text: str) -> list[Cell]:
    """The code cells of a Jupytext percent notebook, numbered, hidden or not."""
    cells = [c for c in jupytext.reads(text, fmt="py:percent").cells if c.cell_type == "code"]
    return [
        Cell(i, c.source, bool(HIDDEN & set(c.metadata.get("tags", []))))
        for i, c in enumerate(cells, start=1)
    ]


def _local_names(node: ast.AST) -> set[str]:
    """The names a function, lambda, class or comprehension binds in its own scope."""
    stored = [n for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]
    names = {n.id for n in stored}
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
        arguments = node.args
        every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
        every += [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
        names |= {a.arg for a in every}
    return names


def _scan(node: ast.AST, local: frozenset[str], reads: set[str], binds: set[str] | None) -> None:
    """Collect the names ``node`` reads from the notebook's namespace, and (``binds`` not
    None: at the top level) those it binds there."""
    if isinstance(node, NESTED_SCOPES + COMPREHENSIONS):
        if binds is not None and not isinstance(node, (ast.Lambda, *COMPREHENSIONS)):
            binds.add(node.name)
        inner = local | _local_names(node)
        for child in ast.iter_child_nodes(node):
            _scan(child, frozenset(inner), reads, None)
        return
    if isinstance(node, ast.Name):
        if isinstance(node.ctx, ast.Load) and node.id not in local:
            reads.add(node.id)
        elif binds is not None:
            binds.add(node.id)
        return
    if isinstance(node, ast.Import | ast.ImportFrom) and binds is not None:
        binds |= {(a.asname or a.name).split(".")[0] for a in node.names}
    for child in ast.iter_child_nodes(node):
        _scan(child, local, reads, binds)


def statements(body: list[ast.stmt]) -> list[ast.AST]:
    """Top-level statements in execution order, compound ones opened (their header, then
    each statement of their bodies), so that a name bound and then read inside a loop
    counts as read after it was bound."""
    found: list[ast.AST] = []
    for statement in body:
        if not isinstance(statement, COMPOUND):
            found.append(statement)
            continue
        headers = [getattr(statement, f, None) for f in ("test", "iter", "target")]
        headers += list(getattr(statement, "items", []))
        found += [h for h in headers if h is not None]
        for block in ("body", "handlers", "orelse", "finalbody"):
            for inner in getattr(statement, block, []):
                found += statements(inner.body if isinstance(inner, ast.ExceptHandler) else [inner])
    return found


def hidden_uses(cells: list[Cell]) -> list[HiddenUse]:
    """Every read, in a shown cell, of a name whose latest binding is in a hidden cell."""
    bound_in: dict[str, Cell] = {}
    uses = []
    for cell in cells:
        for statement in statements(ast.parse(cell.source).body):
            reads: set[str] = set()
            binds: set[str] = set()
            _scan(statement, frozenset(), reads, binds)
            for name in sorted(reads):
                origin = bound_in.get(name)
                if not cell.hidden and origin is not None and origin.hidden:
                    uses.append(HiddenUse(name, origin.number, cell.number))
            bound_in |= dict.fromkeys(binds, cell)
    return list(dict.fromkeys(uses))


def test_the_checker_sees_a_shown_result_computed_in_a_hidden_cell() -> None:
    text = "\n".join(
        [
            '# %% tags=["remove-cell"]',
            "bounds = {'a': 1}\nglue_all(n=len(bounds))",
            '# %% tags=["hide-input"]',
            "def plot(x):\n    return [bounds[k] for k in x]\nplot(['a'])",
            "# %%",
            "for bounds in range(3):\n    print(bounds)",
            "[total for total in (1, 2)]",
        ]
    )
    assert [str(u) for u in hidden_uses(code_cells(text))] == [
        "'bounds': bound in hidden code cell 1, read in 2"
    ]


def test_the_checker_lets_hidden_cells_glue_what_shown_cells_computed() -> None:
    text = "\n".join(
        [
            "# %%",
            "table = [1, 2]\ntable",
            '# %% tags=["remove-cell"]',
            "best = max(table)\nglue_all(best=best)\nassert best == 2",
            "# %%",
            "best = min(table)\nbest",
        ]
    )
    assert hidden_uses(code_cells(text)) == []


@pytest.mark.parametrize("source", CHAPTERS, ids=[path.stem for path in CHAPTERS])
def test_nothing_a_chapter_shows_is_computed_in_a_hidden_cell(source: Path) -> None:
    uses = hidden_uses(code_cells(source.read_text()))
    assert not uses, f"{source.name}: move into a shown cell: " + "; ".join(map(str, uses))


@pytest.mark.parametrize("source", CHAPTERS, ids=[path.stem for path in CHAPTERS])
def test_no_chapter_shows_a_result_whose_code_cannot_be_unfolded(source: Path) -> None:
    tagged = [
        cell.metadata.get("tags", [])
        for cell in jupytext.reads(source.read_text(), fmt="py:percent").cells
    ]
    assert not any("remove-input" in tags for tags in tagged), (
        f"{source.name}: tag the cell hide-input (shown folded) instead of remove-input"
    )
