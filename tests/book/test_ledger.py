"""The ledger: number-bearing sentences, coverage, verbatim quotes and the rules."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from rsutils.book.audit.ledger import (
    COLUMNS,
    LEDGER_PAPERS,
    LEDGER_SEEDS,
    LedgerContext,
    check_ledger,
    coverage_gaps,
    ledger,
    misquoted,
    number_bearing_sentences,
    number_tokens,
    printed_interval,
)


def row(**fields: str) -> dict[str, str]:
    return {column: "" for column in COLUMNS} | {"id": "x", "unit": "points"} | fields


def checked(*rows: dict[str, str]) -> list[str]:
    return check_ledger(pd.DataFrame(list(rows)))["verdict"].tolist()


def test_notation_is_not_a_number() -> None:
    sentence = (
        r"As shown in Table 1 and Figure 3 of Cohen et al. 2019 [12, 69], the $\ell_{2}$"
        r" radius on CIFAR-10 uses $\sigma^{2}$ and $\frac{1}{2}$ (see Equation (20))."
    )
    assert number_tokens(sentence) == []
    formulas = (
        r"R = σ/2·(Φ⁻¹(pA) − Φ−1(pB)) holds with probability 1−α when pA+pB ≤ 1, with"
        r" $\frac{(2\Gamma(1+\frac{1}{p}))^{d}}{\Gamma(1+\frac{d}{p})}$ and entries $1/\sigma_{i}$"
    )
    assert number_tokens(formulas) == []
    assert number_tokens(r"by $7.7\%$ (from $40.1$ to $47.8$) with n = 100,000") == [
        "7.7", "40.1", "47.8", "100,000"
    ]  # fmt: skip


def test_sentences_split_at_full_stops_but_not_after_abbreviations() -> None:
    text = (
        "We reach 72% at R = 1.5 vs. 55% in the baseline, e.g. on MNIST. Then 3 more.\n"
        "$$x = 12$$ (4)\n"
        "Row\t61%\t39%\n"
        "A sentence without numbers."
    )
    assert number_bearing_sentences(text) == [
        "We reach 72% at R = 1.5 vs. 55% in the baseline, e.g. on MNIST.",
        "Then 3 more.",
    ]


def test_a_sentence_is_covered_only_when_every_number_is_quoted() -> None:
    text = "We gain 7.7% at radius 0.5 and 9.1% at 0.75. Training took 30 epochs."
    partial = pd.DataFrame({"quote": ["gain 7.7% at radius 0.5"]})
    assert coverage_gaps(partial, text) == [
        "We gain 7.7% at radius 0.5 and 9.1% at 0.75.",
        "Training took 30 epochs.",
    ]
    full = pd.DataFrame({"quote": [*partial.quote, "9.1% at 0.75", "took 30 epochs"]})
    assert coverage_gaps(full, text) == []
    assert misquoted(pd.DataFrame({"id": ["a"], "quote": ["took 31 epochs"]}), text) == ["a"]


def test_printed_numbers_stand_for_their_rounding_interval() -> None:
    assert printed_interval("7.7") == pytest.approx((7.65, 7.75))
    assert printed_interval("100,000") == pytest.approx((99_999.5, 100_000.5))


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"check": "difference", "value": "7.7", "from": "40.1", "to": "47.8"}, "holds"),
        ({"check": "difference", "value": "7.9", "from": "40.1", "to": "47.8"}, "does not hold"),
        # 8.67 against 8.7 - 0 = 8.7 ± 0.1: the inputs' rounding admits it
        ({"check": "difference", "value": "8.67", "from": "43.6", "to": "52.3"}, "holds"),
        ({"check": "relative", "value": "182.6", "from": "23", "to": "65"}, "holds"),
        ({"check": "relative", "value": "150.0", "from": "26", "to": "65"}, "holds"),
        ({"check": "relative", "value": "100.0", "from": "26", "to": "65"}, "does not hold"),
        ({"check": "ratio", "value": "6", "from": "1", "to": "6.2"}, "holds"),
        ({"check": "ratio", "value": "2", "from": "1", "to": "6.2"}, "does not hold"),
    ],
)
def test_arithmetic_rules_compare_at_printed_precision(fields: dict, expected: str) -> None:
    assert checked(row(**fields)) == [expected]


def test_statements_are_related_by_sum_and_same_as() -> None:
    parts = [row(id="a", check="not_checkable", value="5.4", reason="r"),
             row(id="b", check="not_checkable", value="0.7", reason="r")]  # fmt: skip
    good = row(id="c", check="sum", value="6.1", **{"from": "a|b"})
    bad = row(id="d", check="sum", value="6.5", **{"from": "a|b"})
    same = row(id="e", check="same_as", value="0.7", **{"from": "b"})
    assert checked(*parts, good, bad, same)[2:] == ["holds", "does not hold", "holds"]


L1, LINF = "ucan2025_table_ii_l1", "ucan2025_table_ii_linf"
L1_BASELINES = "Teng et al.’s [54]|Yang et al.’s [65]"
LINF_BASELINES = "Cohen et al.’s [12]|Zhang et al.’s [69]"


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"check": "cell", "value": "61", "tables": L1, "rows": "Ours (Ani. Laplace)",
          "column": "2.00"}, "holds"),
        ({"check": "cell", "value": "62", "tables": L1, "rows": "Ours (Ani. Laplace)",
          "column": "2.00"}, "does not hold"),
        ({"check": "cell", "value": "31", "tables": "ucan2025_table_iv",
          "rows": "ANCER [20]", "column": "1.25"}, "not printed"),
        ({"check": "max_improvement", "value": "121.1", "tables": "ucan2025_table_v"},
         "holds"),
        ({"check": "max_improvement", "value": "200", "tables": "ucan2025_table_v"},
         "does not hold"),
        ({"check": "at_most", "value": "48", "tables": L1, "rows": L1_BASELINES,
          "column": "2.00"}, "holds"),
        ({"check": "at_most", "value": "25", "tables": L1, "rows": L1_BASELINES,
          "column": "2.00"}, "does not hold"),
        ({"check": "range", "value": "31", "value2": "38", "tables": LINF,
          "rows": LINF_BASELINES, "column": "6/255"}, "holds"),
        ({"check": "range", "value": "31", "value2": "40", "tables": LINF,
          "rows": LINF_BASELINES, "column": "6/255"}, "does not hold"),
    ],
)  # fmt: skip
def test_table_rules_read_the_transcribed_tables(fields: dict, expected: str) -> None:
    assert checked(row(**fields)) == [expected]


def test_the_two_table_claims_that_fail_on_ucans_text() -> None:
    found = check_ledger(ledger("ucan2025")).set_index("id")
    assert found.loc["ucan-l1-baselines", "verdict"] == "does not hold"  # Yang: 48% at 2.0
    assert found.loc["ucan-l1-baselines", "found"] == "max 48"
    assert found.loc["ucan-ancer", "verdict"] == "not printed"  # no ANCER entry at 1.25


def test_a_bad_row_is_refused_with_the_fix() -> None:
    with pytest.raises(ValueError, match="needs its reason"):
        checked(row(check="not_checkable"))
    with pytest.raises(ValueError, match="unknown check 'guess'"):
        checked(row(check="guess"))
    with pytest.raises(ValueError, match="unknown table"):
        check_ledger(pd.DataFrame([row(check="cell", tables="nope", rows="a", column="1")]),
                     LedgerContext(pd.DataFrame()))  # fmt: skip
    with pytest.raises(ValueError, match="choose one of"):
        ledger("cohen")


def test_every_row_has_a_known_rule_and_a_unique_id() -> None:
    rows = ledger()
    assert rows.id.is_unique
    assert set(check_ledger(rows).verdict) <= {"holds", "does not hold", "not printed",
                                               "not checkable"}  # fmt: skip
    for paper, short in LEDGER_PAPERS.items():
        assert ledger(paper).id.str.startswith(f"{short}-").all()


@pytest.mark.parametrize("paper", list(LEDGER_PAPERS))
def test_every_quote_is_verbatim_from_its_paper(paper: str, seeds: Path) -> None:
    text = (seeds / LEDGER_SEEDS[paper]).read_text(encoding="utf-8")
    assert misquoted(ledger(paper), text) == []


@pytest.mark.parametrize("paper", list(LEDGER_PAPERS))
def test_every_number_bearing_sentence_is_in_the_ledger(paper: str, seeds: Path) -> None:
    """Each number a paper's prose states is quoted by a row: checked, or not checkable
    with its reason."""
    text = (seeds / LEDGER_SEEDS[paper]).read_text(encoding="utf-8")
    assert coverage_gaps(ledger(paper), text) == []


def test_a_notation_row_quotes_what_the_sentence_rule_still_counts() -> None:
    """A row marked as notation exists only because the sentence rule counts a digit
    in it; once the rule strips that notation, the row must go."""
    rows = ledger()
    notation = rows[rows.reason.str.startswith("notation")]
    assert all(number_tokens(quote) for quote in notation.quote)
