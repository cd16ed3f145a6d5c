"""The README's findings are the build's: each number it states is recomputed here.

Only findings that need no model (the same at every profile) are stated in the README;
those that depend on the scale are on the book's findings page, glued from the run.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def findings_paragraph() -> str:
    readme = (REPO / "README.md").read_text()
    return " ".join(readme[readme.index("## What the book found") :].split("\n## ")[0].split())


@pytest.mark.slow
def test_the_released_logs_alpha_is_the_books(reference: Path) -> None:
    from rsutils.book.audit.released_alpha import (
        ALTERNATIVE_ALPHA,
        STATED_ALPHA,
        released_alpha_evidence,
    )
    from rsutils.book.papers.released import COHEN2019_CERTIFY_LOGS

    implied = released_alpha_evidence(root=reference)["implied α"]
    found = (implied == f"α = {ALTERNATIVE_ALPHA:g}").sum()
    assert ALTERNATIVE_ALPHA / STATED_ALPHA == pytest.approx(10)  # "ten times"
    stated = (
        f"the certificates of {found} of the {len(COHEN2019_CERTIFY_LOGS)} CERTIFY logs "
        f"Cohen et al. released imply a failure probability of α = {ALTERNATIVE_ALPHA:g}, "
        "ten times the level"
    )
    assert stated in findings_paragraph()


@pytest.mark.slow
def test_the_ledger_counts_are_the_books(reference: Path) -> None:
    from rsutils.book.audit import ledger as lg

    statements = lg.ledger()
    checked = lg.check_ledger(statements, lg.LedgerContext(statements, reference_root=reference))
    judged = checked[checked.verdict != "not checkable"]
    failing = judged[judged.verdict.isin(["does not hold", "not printed"])]
    numbers = re.search(
        r"of the (\d+) numbers the three papers state.*?, (\d+) do not hold", findings_paragraph()
    )
    assert numbers is not None, "the README's ledger sentence changed: update this test"
    assert (int(numbers[1]), int(numbers[2])) == (len(judged), len(failing))
