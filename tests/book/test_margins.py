"""The book's margins: one per kind of measure, each with a reason that stays true,
checked against the ledger rows and published tables it cites."""

from __future__ import annotations

import numpy as np
import pytest

from rsutils.analysis.margins import Margins
from rsutils.book.audit.ledger import ledger
from rsutils.book.margins import MARGIN_REASONS, MARGIN_SOURCES, MARGINS, margins_table
from rsutils.book.papers.published import published_table


@pytest.fixture(scope="module")
def rows():
    return ledger().set_index("id")


def test_every_kind_of_measure_has_a_margin_a_reason_and_sources() -> None:
    assert isinstance(MARGINS, Margins)
    assert set(MARGIN_REASONS) == set(MARGIN_SOURCES) == {"acr", "accuracy"}
    table = margins_table()
    assert table.index.tolist() == ["ACR", "certified accuracy"]
    assert table["margin"].tolist() == [MARGINS.acr, MARGINS.accuracy]
    assert table["why"].str.len().min() > 80
    assert table["source"].str.contains("ledger").all()


def test_every_source_names_a_ledger_row_or_a_published_table(rows) -> None:
    for sources in MARGIN_SOURCES.values():
        for source in sources:
            kind, name = source.split(" ", 1)
            if kind == "ledger":
                assert name in rows.index, source
            else:
                assert kind == "table" and not published_table(name).data.empty


def test_the_acr_margin_is_the_drop_alfarra_et_al_call_marginal(rows) -> None:
    drop = rows.loc["ddrs-cohen-ds2-acr-drop"]
    assert "marginally drops" in drop.quote
    gains = rows.loc["ddrs-cohen-ds2-acr-cifar"]
    before, after = float(gains["from"]), float(gains["to"])
    assert (before, after) == (0.193, 0.173)
    assert MARGINS.acr == pytest.approx(before - after)
    assert "0.020" in MARGIN_REASONS["acr"] and "marginally drops" in MARGIN_REASONS["acr"]


def test_the_accuracy_margin_is_the_smallest_difference_the_papers_present(rows) -> None:
    """UCAN's MNIST table: the smallest non-zero gap between its rows and the best
    baseline is one point, printed as ±1.0%; Alfarra et al.'s smallest stated gains are
    0.7 and 0.9 points; Cohen et al.'s tables print hundredths."""
    table = published_table("ucan2025_table_iii").data.set_index("row")
    ours = table[table.index.str.startswith("Ours")].astype(float)
    baselines = table[~table.index.str.startswith(("Ours", "Improvement"))].astype(float)
    gaps = (ours - baselines.max()).abs().to_numpy()
    assert gaps[gaps > 0].min() == 1.0  # points, of 100 images
    improvements = table.loc[table.index.str.startswith("Improvement")].astype(float)
    assert {-1.0, 1.0} <= set(improvements.to_numpy().ravel())
    assert float(rows.loc["ddrs-cohen-ds2-cifar", "value2"]) == 0.9
    assert float(rows.loc["ddrs-smoothadv-ds2-0.5-cifar", "value"]) == 0.7
    cohen = published_table("cohen2019_tables_1_3").data.iloc[:, 1:].astype(float)
    hundredths = cohen.to_numpy() * 100
    finite = hundredths[np.isfinite(hundredths)]
    assert np.allclose(finite, np.round(finite))
    assert MARGINS.accuracy == 0.01
    assert "one point" in MARGIN_REASONS["accuracy"]
