"""Cross-paper rows: UCAN's rows for Cohen et al. and for data-dependent smoothing."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rsutils.book.audit.cross_paper import (
    cross_paper_check,
    cross_paper_evidence,
    ddrs_stated,
    released_accuracy,
    within_rounding,
)
from rsutils.book.papers.published import PublishedTable

CA = "certified_accuracy"


def log(radii: list[float], correct: list[int] | None = None) -> pd.DataFrame:
    """A certification log of each of ``radii`` 20 times (only what certified accuracy
    reads): 200 images, whose standard error is at most 3.5 points."""
    correct = correct or [1] * len(radii)
    return pd.DataFrame({"radius": radii * 20, "correct": correct * 20})


#: At σ = 0.25, 80% certified at 0, 50% at 0.5; at σ = 1.00, 60% at 0, 40% at 0.5 and
#: at 1.0. The envelope is 80, 50, 40 at 0, 0.5, 1.0.
LOGS = {
    "cifar10": {
        0.25: log([0.9] * 5 + [0.3] * 3 + [0.0] * 2, [1] * 8 + [0] * 2),
        1.00: log([2.0] * 4 + [0.2] * 2 + [0.0] * 4, [1] * 6 + [0] * 4),
    }
}


def table(rows, headers=("0.0", "0.5", "1.0"), norm="l2", dataset="cifar10", dim=None):
    data = pd.DataFrame(rows, columns=["row", *headers])
    meta = {"row_kinds": [CA] * len(rows), "dataset": dataset, "norm": norm,
            "noise": {"dim": dim}}  # fmt: skip
    return PublishedTable(f"toy_{dataset}_{norm}", data, meta)


def test_rounding_intervals_decide_a_match() -> None:
    assert within_rounding(43, 1, 42.8, 0)  # a log's exact 42.8% prints as 43
    assert not within_rounding(43, 1, 42.4, 0)
    assert within_rounding(52, 1, 52.3, 0.1) and not within_rounding(53, 1, 52.3, 0.1)
    assert within_rounding(49, 1, 49, 1) and not within_rounding(49, 1, 48, 1)


def test_the_stated_values_are_quoted_verbatim_and_the_derived_ones_added_up() -> None:
    stated = ddrs_stated().set_index(["method", "radius"])
    assert stated.loc[("Cohen-DS", 0.5), "value"] == 47.8
    assert stated.loc[("MACER-DS", 0.25), "value"] == 66.7
    assert stated.loc[("Cohen-DS²", 0.5), "value"] == pytest.approx(50.4)
    assert stated.loc[("Cohen-DS²", 0.75), "how"] == "Cohen-DS + 0.9"
    assert set(stated["dataset"]) == {"cifar10"}


def test_the_stated_values_are_quoted_verbatim(seeds: Path) -> None:
    for row in ddrs_stated().itertuples():
        assert row.quote in (seeds / row.seed).read_text(encoding="utf-8"), row.id


def test_released_accuracy_and_its_envelope_on_hand_made_logs() -> None:
    found = released_accuracy("cifar10", [0.0, 0.5, 1.0], logs=LOGS["cifar10"])
    assert found.loc[[0.0, 0.5, 1.0], "envelope"].tolist() == [80.0, 50.0, 40.0]
    assert found.loc[[0.0, 0.5, 1.0], "envelope σ"].tolist() == [0.25, 0.25, 1.0]
    assert found.loc["images", 0.25] == 200


def test_a_row_that_is_the_envelope_matches_and_one_that_is_not_differs() -> None:
    tables = [
        table(
            [
                ["Cohen’s [12]", 80, 50, 40],  # the envelope
                ["Data-depend [2]", 90, 52, 10],  # 52 is MACER-DS's 52.3 at 0.5
            ]
        ),
        table([["Cohen’s [12]", 80, 50, 40]], dataset="mnist"),
    ]
    check = cross_paper_check(tables, logs=LOGS).set_index(["table", "row", "radius"])
    cohen = check.loc[("toy_cifar10_l2", "Cohen’s [12]")]
    assert cohen["verdict"].tolist() == ["matches"] * 3
    assert "envelope σ = 0.25" in cohen.loc["0.5", "matches"]
    ddrs = check.loc[("toy_cifar10_l2", "Data-depend [2]")]
    assert ddrs["verdict"].tolist() == ["no counterpart", "matches", "no counterpart"]
    assert ddrs.loc["0.5", "matches"] == "DDRS prose MACER-DS"
    mnist = check.loc[("toy_mnist_l2", "Cohen’s [12]")]
    assert set(mnist["verdict"]) == {"no counterpart"}
    assert set(mnist["note"]) == {"same numbers as toy_cifar10_l2"}

    wrong = table([["Cohen’s [12]", 95, 70, 40], ["Data-depend [2]", 90, 55, 10]])
    check = cross_paper_check([wrong], logs=LOGS).set_index(["row", "radius"])
    # 95 vs 80 (σ = 0.25) is beyond two standard errors of 200 images; 70 vs 50 too.
    assert check.loc["Cohen’s [12]", "verdict"].tolist() == ["differs", "differs", "matches"]
    assert check.loc[("Cohen’s [12]", "0.0"), "gap"] == 15.0
    # 84 vs 80 is within them (2.8 points each): not told apart from a subsample's chance.
    near = table([["Cohen’s [12]", 84, 50, 40]])
    found = cross_paper_check([near], logs=LOGS)["verdict"].tolist()
    assert found == ["within sampling error", "matches", "matches"]
    assert check.loc[("Data-depend [2]", "0.5"), "verdict"] == "differs"


def test_an_linf_radius_is_compared_at_its_l2_equivalent() -> None:
    # ε·√d with d = 4: 0.25 ↔ ℓ2 0.5, where the envelope is 50%.
    linf = table([["Cohen et al.’s [12]", 50, 40]], headers=("1/4", "1/2"), norm="linf", dim=4)
    evidence = cross_paper_evidence([linf], logs=LOGS)
    envelope = evidence[evidence["source"] == "envelope"]
    assert envelope["ℓ2 radius"].tolist() == [0.5, 1.0]
    assert envelope["value"].tolist() == [50.0, 40.0] and envelope["match"].all()
    with pytest.raises(ValueError, match="state the input dimension"):
        cross_paper_evidence([table([["Cohen", 1, 1, 1]], norm="linf")], logs=LOGS)


def test_on_the_papers_the_cross_paper_rows_give_what_the_chapter_reports(
    reference: Path,
) -> None:
    check = cross_paper_check(root=reference)
    counts = check.groupby(["table", "row", "verdict"]).size().to_dict()
    assert counts == {
        ("ucan2025_table_ii_linf", "Cohen et al.’s [12]", "differs"): 6,
        ("ucan2025_table_iii", "Cohen’s [12]", "no counterpart"): 10,
        ("ucan2025_table_iv", "Cohen’s [12]", "matches"): 5,
        ("ucan2025_table_iv", "Cohen’s [12]", "within sampling error"): 4,
        ("ucan2025_table_iv", "Cohen’s [12]", "differs"): 1,
        ("ucan2025_table_iv", "Data-depend [2]", "differs"): 3,
        ("ucan2025_table_iv", "Data-depend [2]", "no counterpart"): 7,
        ("ucan2025_table_v", "Cohen’s [12]", "matches"): 7,
        ("ucan2025_table_v", "Cohen’s [12]", "within sampling error"): 1,
        ("ucan2025_table_v", "Data-depend [2]", "no counterpart"): 8,
    }
    linf = check[check["table"] == "ucan2025_table_ii_linf"]
    assert (linf["UCAN"] - linf["envelope"]).min() == pytest.approx(9)  # above every model
    assert linf["ℓ2 radius"].iloc[0] == pytest.approx(2 / 255 * math.sqrt(3072))
    mnist = check[check["table"] == "ucan2025_table_iii"]
    assert set(mnist["note"]) == {"same numbers as ucan2025_table_iv"}
    ddrs = check[(check["row"] == "Data-depend [2]") & (check["verdict"] == "differs")]
    assert ddrs["nearest"].tolist() == [
        "DDRS prose MACER-DS", "DDRS prose MACER-DS", "DDRS prose Cohen-DS²"
    ]  # fmt: skip
    assert np.allclose(ddrs["gap"], [1.3, 0.7, 4.8])
