"""Our rows in a paper's layout, and the verdicts on qualitative claims, on made-up logs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rsutils.book.measured import (
    about,
    alm_beyond_radius,
    alm_claim_verdict,
    describe_tradeoff,
    evidence_text,
    gain_text,
    measured_table,
    overall_verdict,
    tradeoff_check,
    verdict_counts,
)
from rsutils.book.published import check_schema, published_table
from rsutils.book.table_audit import alm_radius_check, improvement_check, non_increasing_check
from rsutils.logs.analysis import ACRDifference


def log(radii: list[float], correct: list[int], alm: list[float] | None = None) -> pd.DataFrame:
    frame = pd.DataFrame({"idx": range(len(radii)), "radius": radii, "correct": correct})
    return frame.assign(alm=alm if alm is not None else radii)


# Four inputs; the baseline certifies radii 0.3, 0.6, 1.1 (and one wrong answer),
# ours 0.5, 1.0, 1.6, 2.1 by radius and more by ALM.
BASELINE = log([0.3, 0.6, 1.1, 2.0], [1, 1, 1, 0])
OURS = log([0.5, 1.0, 1.6, 2.1], [1, 1, 1, 1], alm=[0.6, 1.2, 1.8, 2.4])


def ucan_layout():
    return measured_table(
        published_table("ucan2025_table_iii"),
        {
            "Cohen's (isotropic)": (BASELINE, "radius"),
            "Ours (certified accuracy w.r.t. ALM)": (OURS, "alm"),
            "Ours (certified accuracy w.r.t. radius)": (OURS, "radius"),
        },
        name="ours_iii",
        dataset="toy",
        scale="4 inputs",
    )


def test_our_rows_take_the_papers_radii_units_and_improvement_rows() -> None:
    table = ucan_layout()
    assert list(table.data.columns) == list(published_table("ucan2025_table_iii").data.columns)
    assert table.kinds == ["certified_accuracy", "certified_accuracy", "improvement"] * 1 + [
        "certified_accuracy",
        "improvement",
    ]
    assert check_schema(table) == []
    rows = table.data.set_index("row")
    # Percent of the 4 inputs correct with radius >= r, at r = 0.0, 0.25, ..., 2.25.
    assert rows.loc["Cohen's (isotropic)"].tolist() == [75, 75, 50, 25, 25, 0, 0, 0, 0, 0]
    assert rows.loc["Ours (certified accuracy w.r.t. radius)"].tolist() == [
        100, 100, 100, 75, 75, 50, 50, 25, 25, 0
    ]  # fmt: skip
    improvements = table.rows("improvement").to_numpy(dtype=float)
    # (100 − 75)/75 = +33.3% at r = 0; no improvement where the baseline is at 0.
    assert improvements[1, 0] == pytest.approx(33.3)
    assert np.isnan(improvements[1, 5:]).all()


def test_the_papers_audit_rules_pass_on_our_rows() -> None:
    table = ucan_layout()
    assert alm_radius_check(table).empty and non_increasing_check(table).empty
    checked = improvement_check(table)
    assert set(checked["verdict"]) == {"matches", "not printed"}
    assert (checked["verdict"] == "not printed").tolist() == (checked["best"] == 0).tolist()


def test_a_table_in_fractions_gets_fractions() -> None:
    table = measured_table(
        published_table("cohen2019_tables_1_3"),
        {"toy 0.25": (BASELINE, "radius")},
        name="ours_cohen",
        dataset="toy",
        scale="4 inputs",
    )
    assert table.data.iloc[0, 1:].tolist() == [0.75, 0.5, 0.25, 0.0, 0.0]
    assert table.kinds == ["certified_accuracy"] and check_schema(table) == []


def test_the_tradeoff_holds_when_more_noise_costs_accuracy_and_buys_reach() -> None:
    small = log([0.2, 0.4, 0.5, 0.0], [1, 1, 1, 1])
    large = log([0.5, 1.5, 0.0, 0.0], [1, 1, 1, 0])
    table, verdict = tradeoff_check({0.25: small, 1.0: large})
    assert verdict == "holds"
    assert table["accuracy at r = 0"].tolist() == [1.0, 0.75]
    assert table["largest certified radius"].tolist() == [0.5, 1.5]
    assert describe_tradeoff(table) == (
        "σ = 0.25, 1: accuracy at r = 0 1.00, 0.75; largest certified radius 0.50, 1.50"
    )
    assert tradeoff_check({0.25: large, 1.0: small})[1] == "does not hold"
    # More noise that reaches no further does not make the trade.
    assert tradeoff_check({0.25: small, 1.0: small})[1] == "does not hold"


def test_a_claim_that_a_method_beats_others_needs_every_comparison_to_rise() -> None:
    assert overall_verdict(["rises", "rises"]) == "holds"
    assert overall_verdict([ACRDifference(0.2, 0.1, 0.3, 0.95)]) == "holds"
    assert overall_verdict(["rises", "no clear change"]) == "not resolved at this scale"
    assert overall_verdict(["rises", "falls", "no clear change"]) == "does not hold"
    with pytest.raises(ValueError, match="no comparisons"):
        overall_verdict([])


def test_alm_beyond_radius_measures_the_gap_on_the_same_certificates() -> None:
    found = alm_beyond_radius(OURS)
    assert found.difference == pytest.approx((0.1 + 0.2 + 0.2 + 0.3) / 4)
    assert found.verdict == "rises"
    isotropic = alm_beyond_radius(BASELINE)
    assert isotropic.difference == 0 and isotropic.verdict == "no clear change"


def test_modest_by_radius_significant_by_alm_needs_alm_beyond_radius() -> None:
    flat, up, down = (ACRDifference(*v, 0.95) for v in [(0, -0.1, 0.1), (0.3, 0.1, 0.5),
                                                          (-0.3, -0.5, -0.1)])  # fmt: skip
    none = ACRDifference(0.0, 0.0, 0.0, 0.95)  # isotropic noise: ALM is the radius
    noise = ACRDifference(5e-16, 2e-16, 8e-16, 0.95)  # sigma constant up to float error
    assert noise.verdict == "rises"  # the interval alone would call it a gain
    assert alm_claim_verdict(flat, up) == alm_claim_verdict(up, up) == "holds"
    assert alm_claim_verdict(up, none) == alm_claim_verdict(down, up) == "does not hold"
    assert alm_claim_verdict(up, noise) == "does not hold"
    assert alm_claim_verdict(up, flat) == "not resolved at this scale"
    assert gain_text(up) == "+0.300 [0.100, 0.500]"
    found = {"a": up, "b": flat, "c": up}
    assert evidence_text({"a": up}) == "a +0.300 [0.100, 0.500]"
    assert verdict_counts(found) == "of 3 comparisons, 2 rises, 0 falls, 1 no clear change"


def test_about_means_the_same_order_of_magnitude() -> None:
    assert about(1e5, 218_105) == "holds" and about(1e5, 40_000) == "holds"
    assert about(1e5, 400_000) == "does not hold" and about(1e5, 20_000) == "does not hold"
    with pytest.raises(ValueError, match="positive"):
        about(0, 1)
