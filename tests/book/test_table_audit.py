"""Each audit rule fires on a hand-made table where the answer is known, and not otherwise."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rsutils.book.audit.table_audit import (
    alm_radius_check,
    conversion_check,
    duplicate_rows,
    improvement_check,
    non_increasing_check,
    table_one_factor,
)
from rsutils.book.papers.published import PublishedTable, published_table, published_table_names

CA, IMP = "certified_accuracy", "improvement"


def made(rows: list[list[object]], kinds: list[str], dataset: str = "toy", name: str = "t"):
    data = pd.DataFrame(rows, columns=["row", "0.0", "0.5", "1.0"])
    meta = {"row_kinds": kinds, "dataset": dataset}
    return PublishedTable(name, data, meta)


def toy(improvement: list[float], ours: list[float] | None = None) -> PublishedTable:
    return made(
        [
            ["Baseline A", 80, 60, 40],
            ["Baseline B", 70, 65, np.nan],
            ["Ours (certified accuracy w.r.t. ALM)", *(ours or [84, 65, 50])],
            ["Improvement over the Best Baseline ($\\%$)", *improvement],
        ],
        [CA, CA, CA, IMP],
    )


def test_improvements_are_recomputed_against_the_best_baseline_of_each_column() -> None:
    # 84 vs 80: +5.0%; 65 vs 65 (B): +0.0%; 50 vs 40 (B is empty): +25.0%.
    found = improvement_check(toy([5.0, 0.0, 25.0]))
    assert found["verdict"].tolist() == ["matches"] * 3
    assert found["best_row"].tolist() == ["Baseline A", "Baseline B", "Baseline A"]
    assert found["points"].tolist() == [4.0, 0.0, 10.0]


def test_a_wrong_improvement_is_found_with_the_baseline_it_implies() -> None:
    found = improvement_check(toy([5.0, 0.0, 11.1]))  # 50/45 − 1: against a 45 not printed
    assert found["verdict"].tolist() == ["matches", "matches", "differs"]
    assert found.iloc[2]["implied_best"] == 45.0 and found.iloc[2]["relative"] == 25.0


def test_a_rounding_slip_is_told_apart_from_a_wrong_number() -> None:
    # 95/48 − 1 = 97.917%: printed 98.0 is a slip of rounding, 97.9 matches.
    table = toy([5.0, 0.0, 98.0], ours=[84, 65, 95])
    table.data.loc[:1, "1.0"] = [48, np.nan]
    assert improvement_check(table).iloc[2]["verdict"] == "rounding slip"
    table.data.loc[3, "1.0"] = 97.9
    assert improvement_check(table).iloc[2]["verdict"] == "matches"


def test_a_rising_row_is_flagged() -> None:
    table = made([["A", 80, 60, 40], ["B", 70, 72, 10]], [CA, CA])
    found = non_increasing_check(table)
    assert found[["row", "from", "to"]].values.tolist() == [["B", "0.0", "0.5"]]
    assert non_increasing_check(made([["A", 80, np.nan, 40]], [CA])).empty


def test_an_alm_row_below_its_radius_row_is_flagged() -> None:
    rows = [
        ["Ours (certified accuracy w.r.t. ALM)", 90, 80, 60],
        ["Ours (certified accuracy w.r.t. radius)", 90, 82, 50],
    ]
    found = alm_radius_check(made(rows, [CA, CA]))
    assert found["radius"].tolist() == ["0.5"]
    assert alm_radius_check(made(rows[:1], [CA])).empty


def test_rows_duplicated_across_datasets_are_found() -> None:
    a = made([["Cohen", 83, 61, 43], ["Other", 1, 1, 1]], [CA, CA], "mnist", "a")
    b = made([["Cohen", 83, 61, 43], ["Other", 2, 1, 1]], [CA, CA], "cifar10", "b")
    c = made([["Cohen", 83, 61, 43]], [CA], "mnist", "c")  # same dataset: not a finding
    found = duplicate_rows([a, b, c])
    assert found[["table", "same as", "datasets"]].values.tolist() == [
        ["b", "a", "mnist / cifar10"]
    ]


def test_on_ucans_tables_the_rules_find_what_the_chapter_reports() -> None:
    tables = [published_table(n) for n in published_table_names()]
    checks = pd.concat([improvement_check(t) for t in tables if IMP in t.kinds])
    wrong = checks[checks.verdict == "differs"]
    assert set(zip(wrong.table, wrong.radius, strict=True)) == {
        ("ucan2025_table_iv", "0.50"), ("ucan2025_table_iv", "1.00")
    }  # fmt: skip
    assert set(wrong.implied_best) == {77.0, 53.0}
    assert pd.concat([non_increasing_check(t) for t in tables]).empty
    below = pd.concat([alm_radius_check(t) for t in tables])
    assert below.groupby("table").size().to_dict() == {
        "ucan2025_table_iii": 10,
        "ucan2025_table_iv": 6,
    }
    assert duplicate_rows(tables)["row"].tolist() == ["Cohen’s [12]"]


@pytest.mark.parametrize("name", ["ucan2025_table_iii", "ucan2025_table_v"])
def test_printed_improvements_elsewhere_match_up_to_rounding(name: str) -> None:
    verdicts = set(improvement_check(published_table(name)).verdict)
    assert verdicts <= {"matches", "rounding slip"}


def test_accuracy_beyond_the_ceiling_of_n_and_alpha_is_flagged() -> None:
    from scipy.stats import norm

    from rsutils.book.audit.table_audit import ceiling_check

    table = PublishedTable(
        "t",
        pd.DataFrame([["A", 50, 10, 0], ["B", 40, 0, 5]], columns=["row", "0.0", "3.8", "3.9"]),
        {"row_kinds": [CA, CA], "dataset": "toy"},
    )
    assert norm.ppf(0.001 ** (1 / 100_000)) == pytest.approx(3.8115, abs=1e-4)
    found = ceiling_check(table, scale=1.0)
    assert found[["row", "radius"]].values.tolist() == [["B", "3.9"]]  # A is 0 there
    assert ceiling_check(table, scale=2.0).empty
    assert not ceiling_check(table, scale=1.0, n=10_000).empty  # 3.2 at n = 10,000
    for name in published_table_names():  # λ = 1 and sigma <= 1 (gamma = 1) in UCAN
        published = published_table(name)
        if published.meta["norm"] == "l2":
            assert ceiling_check(published, scale=1.0).empty
        else:
            with pytest.raises(ValueError, match="Gaussian noise against l2"):
                ceiling_check(published, scale=1.0)


def test_table_one_factors_are_those_of_the_norm_inequalities() -> None:
    # ‖δ‖2 ≤ ‖δ‖1 and ‖δ‖2 ≤ √d‖δ‖∞: Gaussian's ℓ2 radius r covers the ℓ1 ball r and
    # the ℓ∞ ball r/√d.
    assert table_one_factor("gaussian", "l2", "l1", dim=3072) == pytest.approx(1.0)
    assert table_one_factor("gaussian", "l2", "linf", dim=3072) == pytest.approx(np.sqrt(3072))
    assert table_one_factor("gaussian", "l2", "linf", dim=4) == pytest.approx(2.0)


def converted(values: list[float]) -> PublishedTable:
    data = pd.DataFrame([["Converted", *values]], columns=["row", "0.1", "0.3", "0.6"])
    return PublishedTable("target", data, {"row_kinds": [CA]})


def test_a_converted_row_must_lie_between_the_source_values_around_its_radius() -> None:
    source = made([["Source", 80, 60, 40]], [CA])  # radii 0.0, 0.5, 1.0
    # factor 2: target radii 0.1, 0.3, 0.6 read the source at 0.2, 0.6, 1.2.
    exact = dict(factor=2.0, exact=True)
    found = conversion_check(source, "Source", converted([70, 50, 30]), "Converted", **exact)
    assert found["low"].tolist()[:2] == [60, 40] and found["high"].tolist() == [80, 60, 40]
    assert np.isnan(found["low"].iloc[2])  # 1.2 lies beyond the last printed radius
    assert found["verdict"].tolist() == ["consistent"] * 3
    wrong = conversion_check(source, "Source", converted([85, 35, 45]), "Converted", **exact)
    assert wrong["verdict"].tolist() == ["above the bound", "below the bound", "above the bound"]
    # Not exact: only the lower bound binds, so more accuracy is always consistent.
    loose = conversion_check(
        source, "Source", converted([85, 35, np.nan]), "Converted", factor=2.0, exact=False
    )
    assert loose["verdict"].tolist() == ["consistent", "below the bound", "not printed"]


def test_a_printed_radius_equal_to_the_converted_one_binds_both_ways() -> None:
    source = made([["Source", 80, 60, 40]], [CA])
    # factor 5: 0.1, 0.3, 0.6 read the source at 0.5 (printed: exactly 60), 1.5 and 3.0
    # (beyond the last radius: only "at most 40" is known).
    check = {"factor": 5.0, "exact": True}
    found = conversion_check(source, "Source", converted([60, 41, 40]), "Converted", **check)
    assert found["verdict"].tolist() == ["consistent", "above the bound", "consistent"]
    found = conversion_check(source, "Source", converted([59, 0, 0]), "Converted", **check)
    assert found["verdict"].tolist() == ["below the bound", "consistent", "consistent"]
    loose = conversion_check(source, "Source", converted([60, 41, 40]), "Converted", factor=5.0,
                             exact=False)  # fmt: skip
    assert loose["verdict"].tolist() == ["consistent", "no bound", "no bound"]


def test_an_improvement_of_minus_one_hundred_percent_implies_no_baseline() -> None:
    found = improvement_check(toy([5.0, 0.0, -100.0], ours=[84, 65, 0]))
    assert found.iloc[2]["verdict"] == "matches" and np.isnan(found.iloc[2]["implied_best"])
