"""The audit's three vocabularies: their members and texts, parsing a word back, and
gluing a verdict as its text."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from rsutils.analysis.verdicts import Direction, Verdict
from rsutils.book.audit.ledger import VERDICTS
from rsutils.book.audit.verdicts import AlphaVerdict, ClaimVerdict, LedgerVerdict
from rsutils.book.glue import plain

#: Each vocabulary with its texts, in its order: what CSV files, glue and tables show.
TEXTS = {
    ClaimVerdict: [
        "holds", "does not hold", "not resolved at this scale", "not testable here",
    ],
    LedgerVerdict: ["holds", "does not hold", "not printed", "not checkable"],
    AlphaVerdict: ["α = 0.001", "α = 0.01", "neither", "undecidable", "conflicting"],
}  # fmt: skip
VOCABULARIES = list(TEXTS)


@pytest.mark.parametrize("vocabulary", VOCABULARIES, ids=lambda v: v.__name__)
def test_each_member_is_its_text_and_says_what_test_it_means(vocabulary) -> None:
    assert [str(member) for member in vocabulary] == TEXTS[vocabulary]
    for member in vocabulary:
        assert member == str(member) and f"{member}" == str(member) and isinstance(member, str)
        assert vocabulary.parse(str(member)) is member
        assert member.__doc__ and member.__doc__ != vocabulary.__doc__, member.name
        assert f"- ``{member}``: {member.__doc__}" in vocabulary.__doc__  # the API page's
    assert len({member.__doc__ for member in vocabulary}) == len(vocabulary)


@pytest.mark.parametrize("vocabulary", VOCABULARIES, ids=lambda v: v.__name__)
def test_parsing_refuses_an_unknown_word_naming_the_members(vocabulary) -> None:
    for word in ("hold", "Holds", "holds ", "", "rises"):
        with pytest.raises(ValueError, match=rf"{word!r} is not a {vocabulary.__name__} \(one of"):
            vocabulary.parse(word)


def test_the_ledger_verdicts_are_derived_from_the_enum() -> None:
    assert VERDICTS == tuple(LedgerVerdict)
    assert list(VERDICTS) == ["holds", "does not hold", "not printed", "not checkable"]


def test_a_level_is_named_by_its_member_or_refused() -> None:
    assert AlphaVerdict.at_level(0.001) is AlphaVerdict.ALPHA_0_001
    assert AlphaVerdict.at_level(1e-2) is AlphaVerdict.ALPHA_0_01
    with pytest.raises(ValueError, match=r"no AlphaVerdict names α = 0\.05.*add a member"):
        AlphaVerdict.at_level(0.05)


def test_a_table_of_members_reads_and_writes_as_before() -> None:
    """What pandas makes of a column of members: the same as of their texts."""
    said = [LedgerVerdict.HOLDS, LedgerVerdict.NOT_PRINTED, LedgerVerdict.HOLDS]
    table = pd.DataFrame({"id": ["a", "b", "c"], "verdict": said})
    texts = table.assign(verdict=[str(v) for v in said])
    assert table.to_csv() == texts.to_csv() and table.to_html() == texts.to_html()
    assert table.verdict.value_counts().to_dict() == {"holds": 2, "not printed": 1}
    crossed = pd.crosstab(table.id, table.verdict)
    assert crossed.to_html() == pd.crosstab(texts.id, texts.verdict).to_html()
    assert json.dumps(said) == '["holds", "not printed", "holds"]'


@pytest.mark.parametrize(
    ("value", "glued"),
    [
        (ClaimVerdict.NOT_TESTABLE, "not testable here"),
        (LedgerVerdict.NOT_CHECKABLE, "not checkable"),
        (AlphaVerdict.ALPHA_0_01, "α = 0.01"),
        (Verdict(Direction.FALLS, margin=0.05, within_margin=True), "falls, within ±0.05"),
    ],
)
def test_a_verdict_is_glued_as_its_text(value, glued: str) -> None:
    """Glue stores a value's repr: a member's would read <ClaimVerdict.HOLDS: 'holds'>."""
    converted = plain(value)
    assert type(converted) is str and converted == glued and repr(converted) == repr(glued)
