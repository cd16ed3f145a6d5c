"""One model, one value at radius 0: the rule fires on a hand-made table and not otherwise."""

from __future__ import annotations

import numpy as np
import pandas as pd

from rsutils.book.audit.one_model import alm_radius_pairs, one_model_check, zero_radius_check
from rsutils.book.papers.published import PublishedTable, published_table, published_table_names

CA, IMP = "certified_accuracy", "improvement"
ALM, RADIUS = "Ours (certified accuracy w.r.t. ALM)", "Ours (certified accuracy w.r.t. radius)"


def made(rows: list[list[object]], kinds: list[str], headers=("0.0", "0.5", "1.0"), name="t"):
    data = pd.DataFrame(rows, columns=["row", *headers])
    return PublishedTable(name, data, {"row_kinds": kinds, "dataset": "toy"})


def test_rows_are_paired_by_method_among_accuracy_rows() -> None:
    table = made(
        [
            ["Baseline", 80, 60, 40],
            [ALM, 90, 80, 70],
            ["Improvement over the Best Baseline w.r.t. ALM", 1, 1, 1],
            [RADIUS, 90, 70, 50],
            ["Other (certified accuracy w.r.t. ALM)", 85, 75, 65],  # no radius row
        ],
        [CA, CA, IMP, CA, CA],
    )
    assert alm_radius_pairs(table) == [("Ours", ALM, RADIUS)]


def test_two_rows_that_differ_at_radius_zero_are_two_models() -> None:
    differs = made([[ALM, 91, 85, 70], [RADIUS, 90, 80, 60]], [CA, CA])
    found = zero_radius_check(differs)
    assert found[["ALM at 0", "radius at 0", "verdict"]].values.tolist() == [
        [91.0, 90.0, "two models"]
    ]
    # ALM is above the radius everywhere, so only the rule at 0 sees it.
    assert one_model_check([differs]).iloc[0]["verdict"] == "two models"
    assert one_model_check([differs]).iloc[0]["columns ALM below radius"] == 0


def test_a_sound_pair_stays_quiet() -> None:
    sound = made([[ALM, 90, 85, 70], [RADIUS, 90, 80, 60]], [CA, CA])
    assert zero_radius_check(sound)["verdict"].tolist() == ["one value"]
    assert one_model_check([sound]).iloc[0]["verdict"] == "one model possible"


def test_tables_without_a_pair_or_a_zero_column_are_said_so() -> None:
    no_zero = made([[ALM, 90, 85, 70], [RADIUS, 91, 80, 60]], [CA, CA], ("0.25", "0.5", "1.0"))
    assert zero_radius_check(no_zero)["verdict"].tolist() == ["no r = 0 column"]
    empty = made([[ALM, np.nan, 85, 70], [RADIUS, 90, 80, 60]], [CA, CA])
    assert zero_radius_check(empty)["verdict"].tolist() == ["not printed"]
    alone = made([["Ours (Ani. Gaussian)", 90, 85, 70]], [CA])
    assert zero_radius_check(alone).empty
    assert one_model_check([alone]).iloc[0]["verdict"] == "no pair"


def test_on_the_papers_every_table_with_a_pair_reports_two_models() -> None:
    tables = [published_table(name) for name in published_table_names()]
    found = one_model_check(tables).set_index("table")
    pairs = found[found["pairs"] > 0]
    assert pairs.index.tolist() == ["ucan2025_table_iii", "ucan2025_table_iv", "ucan2025_table_v"]
    assert (pairs["verdict"] == "two models").all() and pairs["differ at 0"].all()
    assert pairs[["ALM at 0", "radius at 0"]].values.tolist() == [[98, 99], [86, 85], [71, 65]]
    # Table V's ALM row is nowhere below its radius row: only the rule at 0 finds it.
    assert pairs["columns ALM below radius"].tolist() == [10, 6, 0]
    assert set(found.loc[found["pairs"] == 0, "verdict"]) == {"no pair"}
