"""The papers' published tables: transcribed exactly, with provenance, in a sound schema."""

from __future__ import annotations

import os
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from rsutils.book.papers.published import (
    check_schema,
    published_table,
    published_table_names,
    transcription_mismatches,
)

SEEDS = Path(
    os.environ.get("RSUTILS_SEEDS") or Path(__file__).resolve().parents[3] / "shared/seeds"
)
needs_seeds = pytest.mark.skipif(
    not SEEDS.is_dir(), reason=f"the papers' texts are not at {SEEDS}; set RSUTILS_SEEDS"
)
UCAN = ["ucan2025_table_ii_l1", "ucan2025_table_ii_linf", "ucan2025_table_iii"]
UCAN += ["ucan2025_table_iv", "ucan2025_table_v"]


def test_every_ucan_results_table_is_shipped() -> None:
    assert set(UCAN) <= set(published_table_names())


@pytest.mark.parametrize("name", published_table_names())
def test_schema_and_provenance(name: str) -> None:
    table = published_table(name)
    assert check_schema(table) == []
    assert table.meta["seed"].endswith(".txt") and table.meta["caption"]


@needs_seeds
@pytest.mark.parametrize("name", published_table_names())
def test_each_table_matches_the_seed_text_it_came_from(name: str) -> None:
    table = published_table(name)
    seed = (SEEDS / str(table.meta["seed"])).read_text(encoding="utf-8")
    assert transcription_mismatches(table, seed) == []


@needs_seeds
def test_a_changed_digit_or_label_is_caught() -> None:
    table = published_table("ucan2025_table_iv")
    seed = (SEEDS / str(table.meta["seed"])).read_text(encoding="utf-8")
    digit = table.data.copy()
    digit.loc[3, "1.25"] = 35  # Consistency [34] prints 34%
    found = transcription_mismatches(replace(table, data=digit), seed)
    assert found == ["ucan2025_table_iv 'Consistency [34]' at 1.25: 35.0, printed '34%'"]
    label = table.data.copy()
    label.loc[4, "row"] = "SmoothMix [33]"  # printed with a typo, kept as printed
    assert len(transcription_mismatches(replace(table, data=label), seed)) == 1
    missing = table.data.copy()
    missing.loc[0, "0.0"] = np.nan
    assert len(transcription_mismatches(replace(table, data=missing), seed)) == 1
    assert transcription_mismatches(table, "no tables here") == [
        "ucan2025_table_iv: its caption and header row are not in the seed text"
    ]


def test_the_schema_check_fires_on_each_kind_of_damage() -> None:
    table = published_table("ucan2025_table_v")
    too_high = table.data.copy()
    too_high.loc[0, "0.50"] = 120
    assert check_schema(replace(table, data=too_high)) == [
        "a certified accuracy lies outside [0, 100]"
    ]
    swapped = table.data[["row", "0.50", "0.00", *table.data.columns[3:]]]
    assert "radius columns are not increasing" in check_schema(replace(table, data=swapped))[0]
    meta = {k: v for k, v in table.meta.items() if k != "caption"}
    assert check_schema(replace(table, meta=meta)) == ["missing provenance field 'caption'"]
    meta = {**table.meta, "units": {"certified_accuracy": "percent"}}
    assert check_schema(replace(table, meta=meta)) == ["no units declared for 'improvement'"]
    meta = {**table.meta, "row_kinds": table.kinds[:-1]}
    assert check_schema(replace(table, meta=meta)) == ["15 row kinds for 16 rows"]


def test_radii_and_rows_of_a_kind() -> None:
    linf = published_table("ucan2025_table_ii_linf")
    assert linf.radii == pytest.approx([k / 255 for k in range(2, 17, 2)])
    iv = published_table("ucan2025_table_iv")
    improvements = iv.rows("improvement")
    assert improvements.shape == (2, 10) and improvements.iloc[1]["2.25"] == 182.6
    with pytest.raises(ValueError, match="no published table 'table_9'"):
        published_table("table_9")


@needs_seeds
def test_every_qualitative_claim_is_quoted_verbatim_from_its_paper() -> None:
    from rsutils.book.papers.published import qualitative_claims

    claims = qualitative_claims()
    assert claims["id"].is_unique and len(claims) >= 6
    assert set(claims["paper"]) == {"cohen2019", "alfarra2022", "ucan2025"}
    for claim in claims.itertuples():
        text = (SEEDS / claim.seed).read_text(encoding="utf-8")
        assert claim.quote in text, claim.id
        assert claim.measured.strip(), claim.id


#: A numbered section heading of a paper's text, as UCAN's text writes them: "VI-A …".
SECTION_HEADING = re.compile(r"^([IVX]+(?:-[A-Z])?) [A-Z]")


@needs_seeds
def test_every_qualitative_claim_is_placed_where_its_paper_says_it() -> None:
    """A claim quoted from a text with numbered sections names the last section heading
    before its quote; one quoted from a text without them names the part of the paper
    in the ledger's words, as the ledger's own rows do."""
    from rsutils.book.audit.ledger import ledger
    from rsutils.book.papers.published import qualitative_claims

    parts = set(ledger().section)
    for claim in qualitative_claims().itertuples():
        text = (SEEDS / claim.seed).read_text(encoding="utf-8")
        before = text[: text.index(claim.quote)].splitlines()
        headings = [m.group(1) for line in before if (m := SECTION_HEADING.match(line))]
        if any(SECTION_HEADING.match(line) for line in text.splitlines()):
            assert claim.place == f"§{headings[-1]}", claim.id
        else:
            assert claim.place in parts, claim.id


def test_a_table_in_fractions_is_checked_against_one() -> None:
    cohen = published_table("cohen2019_tables_1_3")
    assert check_schema(cohen) == []
    doubled = cohen.data.copy()
    doubled.loc[0, "0"] = 1.34  # 0.67 written as if it were out of 0.5
    assert check_schema(replace(cohen, data=doubled)) == [
        "a certified accuracy lies outside [0, 1]"
    ]


@needs_seeds
def test_the_inline_table_of_the_cohen_summary_is_read_cell_by_cell() -> None:
    cohen = published_table("cohen2019_tables_1_3")
    seed = (SEEDS / str(cohen.meta["seed"])).read_text(encoding="utf-8")
    assert transcription_mismatches(cohen, seed) == []
    moved = cohen.data.copy()
    moved.loc[3, ["0.5", "1.0"]] = [0.00, 0.42]  # CIFAR-10's 0.42 under another radius
    assert len(transcription_mismatches(replace(cohen, data=moved), seed)) == 2
