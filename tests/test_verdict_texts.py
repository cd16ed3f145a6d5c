"""No verdict of rsutils is written as text outside the definitions of its vocabulary.

The verdicts' words are members of enums (:class:`~rsutils.analysis.verdicts.Direction`,
:class:`~rsutils.book.audit.verdicts.ClaimVerdict`, ``LedgerVerdict``, ``AlphaVerdict``),
defined once; code names the members. A string constant equal to a member's text,
anywhere in ``rsutils/`` but the two modules that define them, is a verdict written as
text again. Docstrings (any string standing alone as a statement) are prose and may
quote the words; the name a ledger rule is registered under (``ledger_rule("rises")``)
is a name of the ledger's ``check`` column, not a verdict.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import rsutils
from rsutils.analysis.verdicts import Direction
from rsutils.book.audit.verdicts import AlphaVerdict, ClaimVerdict, LedgerVerdict

PACKAGE = Path(rsutils.__file__).resolve().parent
#: The modules that define the vocabularies, where their texts are written once.
DEFINITIONS = {PACKAGE / "analysis" / "verdicts.py", PACKAGE / "book" / "audit" / "verdicts.py"}
#: Every member's text.
TEXTS = frozenset(str(m) for enum in (Direction, ClaimVerdict, LedgerVerdict, AlphaVerdict)
                  for m in enum)  # fmt: skip
#: Calls whose string arguments name something else than a verdict.
NAMING_CALLS = frozenset({"ledger_rule"})


def verdict_texts(source: str) -> list[str]:
    """``line: 'text'`` for each string constant of ``source`` equal to a member's
    text, leaving out docstrings and the arguments of :data:`NAMING_CALLS`."""
    tree = ast.parse(source)
    prose = {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) in NAMING_CALLS:
            prose |= {id(argument) for argument in node.args}
    found = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and node.value in TEXTS and id(node) not in prose
    ]
    found.sort(key=lambda node: (node.lineno, node.col_offset))
    return [f"{node.lineno}: {node.value!r}" for node in found]


def test_the_scan_sees_a_verdict_written_as_text_and_not_prose() -> None:
    planted = '''
def rule(row):
    """Says "holds" or "does not hold"."""
    "not checkable"
    return "found", "not checkable"
x = {"verdict": "α = 0.01"}
y = said == "rises"
@ledger_rule("rises")
def rises(row): ...
'''
    assert verdict_texts(planted) == ["5: 'not checkable'", "6: 'α = 0.01'", "7: 'rises'"]
    assert verdict_texts("z = f'{verdict} holds'; w = 'holds, by less'") == []


SOURCES = sorted(path for path in PACKAGE.rglob("*.py") if path not in DEFINITIONS)


@pytest.mark.parametrize("path", SOURCES, ids=[str(p.relative_to(PACKAGE)) for p in SOURCES])
def test_no_verdict_is_written_as_text_outside_its_definition(path: Path) -> None:
    assert verdict_texts(path.read_text()) == [], f"{path.relative_to(PACKAGE)}: name the member"
