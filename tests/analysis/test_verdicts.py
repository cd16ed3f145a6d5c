"""Verdicts as values: each text from its inputs, the round trip through text, and what a
verdict answers instead of being parsed."""

from __future__ import annotations

import pandas as pd
import pytest

from rsutils.analysis.verdicts import (
    Direction,
    Magnitude,
    MagnitudeVerdict,
    Verdict,
    holm_family,
    judge,
)

RISES, FALLS = Direction.RISES, Direction.FALLS

#: Every kind of verdict: (value, its text, rises, falls, equivalent, within, decided).
KINDS = [
    (Verdict(RISES), "rises", True, False, False, False, True),
    (Verdict(FALLS), "falls", False, True, False, False, True),
    (Verdict(), "undecided", False, False, False, False, False),
    (Verdict(margin=0.05, within_margin=True), "equivalent within ±0.05",
     False, False, True, True, True),
    (Verdict(RISES, margin=0.05, within_margin=True), "rises, within ±0.05",
     True, False, False, True, True),
    (Verdict(FALLS, margin=0.25, within_margin=True), "falls, within ±0.25",
     False, True, False, True, True),
    (Verdict(RISES, margin=0.05), "rises", True, False, False, False, True),  # margin not met
    (Verdict(margin=1.0), "undecided", False, False, False, False, False),
]  # fmt: skip


@pytest.mark.parametrize(("verdict", "text", "rises", "falls", "equivalent", "within", "decided"),
                         KINDS, ids=[k[1] for k in KINDS])  # fmt: skip
def test_each_verdict_reads_as_its_text_and_answers_its_properties(
    verdict: Verdict, text, rises, falls, equivalent, within, decided
) -> None:
    assert str(verdict) == verdict.label == f"{verdict}" == text
    assert (verdict.rises, verdict.falls, verdict.equivalent) == (rises, falls, equivalent)
    assert (verdict.within_margin, verdict.decided, verdict.tested) == (within, decided, True)
    assert Verdict.parse(text) == verdict and str(Verdict.parse(text)) == text


def test_judge_builds_each_verdict_from_its_intervals() -> None:
    """The same verdicts, from judge's inputs: the margin it was judged with is kept."""
    assert judge(0.01, 0.2) == Verdict(RISES) and judge(0.01, 0.2).margin is None
    inside = judge(-0.03, 0.03, margin=0.05, equivalence=(-0.02, 0.02))
    assert inside.equivalent and inside.margin == 0.05 and inside.family is None
    outside = judge(0.02, 0.08, margin=0.05, equivalence=(0.025, 0.07))
    assert outside == Verdict(RISES) and outside.margin == 0.05 and not outside.within_margin
    small = judge(0.01, 0.03, margin=0.05, equivalence=(0.012, 0.028))
    assert small.rises and small.within_margin and str(small) == "rises, within ±0.05"


def test_equal_verdicts_say_the_same_whatever_their_family() -> None:
    family = holm_family(pd.DataFrame({"gain": [0.1, -0.2], "p": [0.001, 0.3]}))
    first = family["verdict"].iloc[0]
    assert first == Verdict(RISES) and first.family == 2 and Verdict(RISES).family is None
    assert hash(first) == hash(Verdict(RISES))
    assert family["verdict"].value_counts().to_dict() == {Verdict(RISES): 1, Verdict(): 1}
    assert Verdict(RISES, margin=0.05) == Verdict(RISES)  # a margin not met says nothing
    assert Verdict(margin=0.05, within_margin=True) != Verdict(margin=0.1, within_margin=True)
    assert Verdict(RISES) != Verdict(RISES, margin=0.05, within_margin=True)


def test_a_verdict_is_not_its_text() -> None:
    with pytest.raises(TypeError, match=r"compare str\(verdict\)"):
        _ = Verdict(RISES) == "rises"
    with pytest.raises(TypeError, match=r"verdict\.rises"):
        _ = "rises" in [Verdict(RISES)]
    assert Verdict(RISES) != 1  # another type: unequal, as for any value


def test_an_untested_verdict_reads_its_reason_and_decides_nothing() -> None:
    few = Verdict.untested_because("too few images")
    assert str(few) == "too few images" and not few.tested and not few.decided
    assert not (few.rises or few.falls or few.equivalent) and few != Verdict()
    with pytest.raises(ValueError, match="not a reason"):
        Verdict.untested_because("undecided")
    with pytest.raises(ValueError, match="no direction"):
        Verdict(RISES, untested="too few images")


@pytest.mark.parametrize(
    "text",
    ["rise", "Rises", "rises, within 0.05", "rises within ±0.05", "equivalent, within ±0.05",
     "equivalent within ±0.050", "equivalent within ±-0.05", "equivalent within ±e",
     "falls, within ±1.2.3", "too few images", ""],
)  # fmt: skip
def test_parsing_refuses_any_other_text(text: str) -> None:
    with pytest.raises(ValueError, match="is not a verdict"):
        Verdict.parse(text)


def test_a_verdict_refuses_inconsistent_fields() -> None:
    with pytest.raises(ValueError, match="Direction"):
        Verdict("rises")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="positive"):
        Verdict(margin=0.0)
    with pytest.raises(ValueError, match="needs the margin"):
        Verdict(within_margin=True)


def test_a_table_of_verdicts_writes_and_shows_their_texts() -> None:
    table = pd.DataFrame({"verdict": [Verdict(RISES), Verdict(margin=0.05, within_margin=True)]})
    assert table.to_csv(index=False) == "verdict\nrises\nequivalent within ±0.05\n"
    assert "equivalent within ±0.05" in table.to_string() and "Verdict(" not in table.to_html()


@pytest.mark.parametrize(
    ("verdict", "text"),
    [
        (MagnitudeVerdict(Magnitude.AS_STATED, 0.01), "as stated, within ±0.01"),
        (MagnitudeVerdict(Magnitude.BELOW, 0.01), "below the stated"),
        (MagnitudeVerdict(Magnitude.ABOVE, 0.01), "above the stated"),
        (MagnitudeVerdict(None, 0.01), "undecided"),
    ],
)
def test_a_magnitude_verdict_reads_as_its_text(verdict: MagnitudeVerdict, text: str) -> None:
    assert str(verdict) == text
    assert verdict.as_stated == (verdict.position is Magnitude.AS_STATED)
    assert verdict.decided == (text != "undecided")
