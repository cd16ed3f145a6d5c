"""Our rows in a paper's layout, and the verdicts on qualitative claims, on made-up logs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from rsutils.analysis.differences import replicated_comparisons
from rsutils.analysis.grouped_differences import TOO_FEW_IMAGES
from rsutils.analysis.metrics import certified_accuracy
from rsutils.analysis.verdicts import Direction, Verdict, holm_family
from rsutils.book.audit.measured import (
    about,
    all_of,
    alm_beyond_radius,
    alm_claim_verdict,
    claim_verdict,
    crossing_verdict,
    curve_comparisons,
    curve_verdict,
    evidence_text,
    gain_text,
    measured_table,
    overall_verdict,
    radii_below_ceiling,
    tradeoff_comparisons,
    tradeoff_verdict,
    verdict_counts,
)
from rsutils.book.audit.table_audit import alm_radius_check, improvement_check, non_increasing_check
from rsutils.book.audit.verdicts import ClaimVerdict, LedgerVerdict
from rsutils.book.papers.published import check_schema, published_table
from rsutils.core.confidence import max_certifiable_pA


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


RISES, FALLS = Verdict(Direction.RISES), Verdict(Direction.FALLS)
UNDECIDED = Verdict()
EQUIVALENT = Verdict(margin=0.05, within_margin=True)
RISES_SMALL = Verdict(Direction.RISES, margin=0.05, within_margin=True)
FALLS_SMALL = Verdict(Direction.FALLS, margin=0.05, within_margin=True)
HOLDS, FAILS = ClaimVerdict.HOLDS, ClaimVerdict.DOES_NOT_HOLD
OPEN, UNTESTABLE = ClaimVerdict.NOT_RESOLVED, ClaimVerdict.NOT_TESTABLE
UP, DOWN = Direction.RISES, Direction.FALLS


@pytest.mark.parametrize(
    ("verdicts", "expected", "claim"),
    [
        ([RISES, RISES], UP, HOLDS),
        ([FALLS, FALLS], DOWN, HOLDS),
        ([RISES, UNDECIDED], UP, OPEN),
        ([UNDECIDED], DOWN, OPEN),
        ([RISES, FALLS, UNDECIDED], UP, FAILS),
        ([FALLS, RISES], DOWN, FAILS),
        # a change that cannot be told from 0 and is shown smaller than the margin
        ([RISES, EQUIVALENT], UP, FAILS),
        ([EQUIVALENT, UNDECIDED], DOWN, FAILS),
        # a real change, in the claimed direction, shown smaller than the margin: the
        # claimed effect (one of the margin's size) is excluded
        ([RISES, RISES_SMALL], UP, FAILS),
        ([FALLS_SMALL], DOWN, FAILS),
        ([FALLS_SMALL], UP, FAILS),
        ([RISES_SMALL, UNDECIDED], UP, FAILS),
        # a margin judged but not reached says only the sign
        ([Verdict(Direction.RISES, margin=0.05)], UP, HOLDS),
    ],
)
def test_a_claim_holds_when_every_comparison_goes_its_way(verdicts, expected, claim) -> None:
    assert claim_verdict(verdicts, expected) is claim
    table = pd.DataFrame({"verdict": verdicts, "gain": 0.0})
    assert claim_verdict(table, expected) is claim
    assert claim_verdict([{"verdict": v} for v in verdicts], expected) is claim
    if expected is UP:
        assert overall_verdict(verdicts) is claim


def test_a_claim_judges_only_the_shared_rules_verdicts() -> None:
    with pytest.raises(ValueError, match="no comparisons"):
        overall_verdict([])
    with pytest.raises(ValueError, match="judge"):
        overall_verdict([RISES, "no clear change"])  # the old single-model wording
    with pytest.raises(ValueError, match=r"Verdict\.parse"):
        overall_verdict(["rises"])  # a verdict's text is not the verdict
    with pytest.raises(ValueError, match="too few images"):
        overall_verdict([RISES, TOO_FEW_IMAGES])  # no test, no evidence
    with pytest.raises(ValueError, match="'verdict' column"):
        overall_verdict(pd.DataFrame({"gain": [0.1]}))
    with pytest.raises(ValueError, match="expected"):
        claim_verdict([RISES], "equivalent")


def test_a_claim_in_parts_holds_when_every_part_holds() -> None:
    assert all_of(HOLDS, HOLDS) is HOLDS
    assert all_of(HOLDS, OPEN) is OPEN
    assert all_of(OPEN, FAILS, HOLDS) is FAILS
    assert all_of(HOLDS, UNTESTABLE) is UNTESTABLE
    assert all_of(UNTESTABLE, OPEN) is UNTESTABLE
    assert all_of(UNTESTABLE, FAILS) is FAILS
    with pytest.raises(ValueError, match="no parts"):
        all_of()
    with pytest.raises(ValueError, match="claim verdicts"):
        all_of(HOLDS, "rises")
    with pytest.raises(ValueError, match="claim verdicts"):
        all_of(HOLDS, LedgerVerdict.DOES_NOT_HOLD)  # the same words, another test


def certify_log(radii, correct, scale, n=1000, alpha=0.001, alm=None) -> pd.DataFrame:
    """A CERTIFY log of rsutils' columns (``scale``, ``n``, ``alpha`` for the ceiling)."""
    frame = log(list(radii), list(correct), None if alm is None else list(alm))
    return frame.assign(scale=scale, n=n, alpha=alpha)


# 40 images; each replicate model has its own radii (a model effect of ±0.01).
IMAGES, CAP = 40, float(norm.ppf(max_certifiable_pA(1000, 0.001)))  # Φ⁻¹(α^(1/n)) ≈ 2.46


def tradeoff_replicates(larger_reaches: bool, images: int = 400) -> list[dict[str, pd.DataFrame]]:
    replicates = []
    for shift in (-0.01, 0.0, 0.01):
        small = certify_log(np.linspace(0.1, 0.25 * CAP - 0.02, images) - shift, [1] * images, 0.25)
        # σ = 0.5 answers three quarters of the images correctly, with radii up to its
        # own ceiling (beyond σ = 0.25's) or, when it does not reach, below σ = 0.25's.
        top = 0.5 * CAP if larger_reaches else 0.2 * CAP
        radii = np.linspace(0.1, top, images) - shift
        correct = [1] * (3 * images // 4) + [0] * (images // 4)
        replicates.append({"σ = 0.25": small, "σ = 0.5": certify_log(radii, correct, 0.5)})
    return replicates


def test_the_tradeoff_holds_when_more_noise_costs_accuracy_and_buys_reach() -> None:
    names = ["σ = 0.25", "σ = 0.5"]
    table = tradeoff_comparisons(tradeoff_replicates(True), names, margin=0.05)
    ceiling = 0.25 * CAP
    grid = radii_below_ceiling(tradeoff_replicates(True)[0]["σ = 0.25"])
    # 0, σ/2, σ, … strictly below the smaller σ's ceiling: where both can certify
    assert grid[0] == 0 and np.allclose(np.diff(grid), 0.125) and grid[-1] < ceiling
    assert ceiling - grid[-1] <= 0.125
    assert table.index.tolist() == [
        ("σ = 0.5", "σ = 0.25", "accuracy at r = 0"),
        *[("σ = 0.5", "σ = 0.25", f"reach: r = {r:.2f}") for r in grid[1:]],
    ]
    accuracy = table.iloc[0]
    # a quarter of the answers turn wrong on every model: −0.25 exactly.
    assert accuracy.gain == pytest.approx(-0.25) and accuracy.verdict == FALLS
    reach = table.iloc[-1]  # at the largest radius below σ = 0.25's ceiling
    expected = np.mean(
        [
            certified_accuracy(logs["σ = 0.5"], [grid[-1]])[0]
            - certified_accuracy(logs["σ = 0.25"], [grid[-1]])[0]
            for logs in tradeoff_replicates(True)
        ]
    )
    assert reach.gain == pytest.approx(expected) and reach.verdict == RISES
    assert (table["models"] == 3).all() and (table["margin"] == 0.05).all()
    assert (table["tests"] == 2 * len(table)).all()  # one family
    assert tradeoff_verdict(table) is HOLDS
    # More noise that is nowhere above the smaller σ where both certify: no trade.
    no_reach = tradeoff_comparisons(tradeoff_replicates(False), names, margin=0.05)
    assert no_reach["verdict"].iloc[-1].falls
    assert crossing_verdict(no_reach.iloc[1:]) is FAILS
    assert tradeoff_verdict(no_reach) is FAILS
    # Less accuracy with no sign of reach either way: not resolved.
    open_table = table.assign(verdict=[FALLS] + [UNDECIDED] * (len(table) - 1))
    assert tradeoff_verdict(open_table) is OPEN
    with pytest.raises(ValueError, match="at least two"):
        tradeoff_comparisons(tradeoff_replicates(True), ["σ = 0.25"])
    with pytest.raises(ValueError, match="accuracy or reach"):
        tradeoff_verdict(table.iloc[:1])


def test_a_crossing_needs_one_rise_and_fails_only_when_every_radius_is_against() -> None:
    assert crossing_verdict([UNDECIDED, RISES]) is HOLDS
    assert crossing_verdict([UNDECIDED, RISES_SMALL]) is OPEN  # too small to count
    assert crossing_verdict([FALLS, RISES_SMALL]) is FAILS
    assert crossing_verdict([FALLS, EQUIVALENT]) is FAILS
    assert crossing_verdict([FALLS, UNDECIDED]) is OPEN


def test_the_tradeoff_needs_the_logs_certify_settings() -> None:
    bare = [{name: log([0.1, 0.2], [1, 1]) for name in ("a", "b")}]
    with pytest.raises(ValueError, match="scale"):
        tradeoff_comparisons(bare, ["a", "b"])


def alm_replicates(factor: float) -> list[dict[str, pd.DataFrame]]:
    """An isotropic control and a method with the same radii and ALM = factor × radius."""
    replicates = []
    for shift in (-0.02, 0.0, 0.02):
        radii = np.linspace(0.2, 1.0, IMAGES) + shift
        correct = [1] * IMAGES
        replicates.append(
            {
                "isotropic": certify_log(radii, correct, 0.5),
                "method": certify_log(radii, correct, 0.5, alm=radii * factor),
            }
        )
    return replicates


def test_alm_beyond_radius_measures_the_gap_on_the_same_certificates() -> None:
    found = alm_beyond_radius(alm_replicates(1.5), "method", margin=0.05)
    assert found.index.tolist() == [("method by ALM", "method by radius", "ACR")]
    row = found.iloc[0]
    # ALM − radius = 0.5 × the mean radius (0.6) on every model and every image's mean.
    assert row["gain"] == pytest.approx(0.3) and row["verdict"] == RISES
    assert row["models"] == 3 and row["images"] == IMAGES
    isotropic = alm_beyond_radius(alm_replicates(1.5), "isotropic", margin=0.05).iloc[0]
    assert isotropic["gain"] == 0 and isotropic["verdict"] == EQUIVALENT


def test_modest_by_radius_significant_by_alm_needs_alm_beyond_radius() -> None:
    by = {"radius": "radius"}
    radius_gain = replicated_comparisons(
        alm_replicates(1.5), [("method", "isotropic")], measures=by, margin=0.05
    )
    assert radius_gain["verdict"].tolist() == [EQUIVALENT]  # the same radii
    boost = alm_beyond_radius(alm_replicates(1.5), "method", margin=0.05)
    assert alm_claim_verdict(radius_gain, boost) is HOLDS
    # A σ constant up to float error: ALM beyond radius is rounding, within the margin.
    rounding = alm_beyond_radius(alm_replicates(1 + 1e-15), "method", margin=0.05)
    assert rounding["gain"].iloc[0] > 0
    assert rounding["verdict"].iloc[0] == RISES_SMALL  # real, and too small
    assert alm_claim_verdict(radius_gain, rounding) is FAILS
    assert alm_claim_verdict([FALLS], boost) is FAILS
    undecided = boost.assign(verdict=UNDECIDED, p=0.5, **{"p equivalent": 0.5})
    assert alm_claim_verdict([UNDECIDED], undecided) is OPEN
    assert alm_claim_verdict([RISES], boost.assign(verdict=FALLS)) is FAILS
    unjudged = alm_beyond_radius(alm_replicates(1 + 1e-15), "method")
    assert unjudged["verdict"].iloc[0] == RISES  # why the margin is required
    with pytest.raises(ValueError, match="without a margin"):
        alm_claim_verdict(radius_gain, unjudged)


def test_the_evidence_reads_each_gain_its_interval_and_verdict() -> None:
    table = pd.DataFrame(
        {"gain": [0.3, -0.01], "low": [0.1, -0.04], "high": [0.5, 0.02],
         "verdict": [RISES, EQUIVALENT], "margin": 0.05},
        index=pd.MultiIndex.from_tuples(
            [("DS", "Cohen", "ACR"), ("DS", "Cohen", "r = 0")],
            names=["method", "against", "measured by"],
        ),
    )  # fmt: skip
    assert gain_text(table.iloc[0]) == "+0.300 [0.100, 0.500]"
    assert evidence_text(table) == (
        "DS − Cohen, ACR +0.300 [0.100, 0.500] rises; "
        f"DS − Cohen, r = 0 -0.010 [-0.040, 0.020] {EQUIVALENT}"
    )
    labels = {("DS", "Cohen", "ACR"): "σ = 0.25"}
    assert evidence_text(table.iloc[:1], labels=labels) == "σ = 0.25 +0.300 [0.100, 0.500] rises"


def test_the_counts_name_every_verdict_and_the_margin() -> None:
    verdicts = [RISES, UNDECIDED, EQUIVALENT, RISES]
    assert verdict_counts(verdicts) == (
        f"of 4 comparisons, 2 rises, 0 falls, 1 {EQUIVALENT}, 1 undecided"
    )
    table = pd.DataFrame({"verdict": [FALLS, UNDECIDED], "margin": [0.05, 0.05]})
    assert verdict_counts(table) == (
        f"of 2 comparisons, 0 rises, 1 falls, 0 {EQUIVALENT}, 1 undecided"
    )
    assert verdict_counts([RISES]) == "of 1 comparisons, 1 rises, 0 falls, 0 undecided"
    # a sign within each margin apart, in the order of its text
    mixed = [RISES_SMALL, Verdict(Direction.RISES, margin=0.1, within_margin=True), RISES]
    assert verdict_counts(mixed) == (
        "of 3 comparisons, 1 rises, 0 falls, 1 rises, within ±0.05, "
        "1 rises, within ±0.1, 0 undecided"
    )


def test_about_means_the_same_order_of_magnitude() -> None:
    assert about(1e5, 218_105) is HOLDS and about(1e5, 40_000) is HOLDS
    assert about(1e5, 400_000) is FAILS and about(1e5, 20_000) is FAILS
    with pytest.raises(ValueError, match="positive"):
        about(0, 1)


def test_almost_all_radii_is_a_stated_share_of_the_grid_for_every_control() -> None:
    index = pd.MultiIndex.from_tuples(
        [("DS", c, f"r = {r}") for c in ("σ = 0.25", "σ = 0.5") for r in range(5)],
        names=["method", "against", "measured by"],
    )

    def table(first: list[Verdict], second: list[Verdict]) -> pd.DataFrame:
        return pd.DataFrame({"verdict": first + second, "gain": 0.0}, index=index)

    rises = [RISES] * 5
    assert curve_verdict(table(rises, [RISES] * 4 + [UNDECIDED])) is HOLDS  # 4 of 5
    assert curve_verdict(table(rises, [RISES] * 3 + [UNDECIDED] * 2)) is OPEN
    assert curve_verdict(table(rises, [RISES] * 4 + [FALLS])) is HOLDS  # one exception
    assert curve_verdict(table(rises, [RISES] * 3 + [FALLS, EQUIVALENT])) is FAILS
    assert curve_verdict(table(rises, [RISES] * 5), share=1.0) is HOLDS
    with pytest.raises(ValueError, match="share"):
        curve_verdict(table(rises, rises), share=0.0)


def test_curve_comparisons_stay_below_the_controls_ceiling() -> None:
    replicates = tradeoff_replicates(True)
    found = curve_comparisons(replicates, [("σ = 0.5", "σ = 0.25")], margin=0.05)
    grid = radii_below_ceiling(replicates[0]["σ = 0.25"])
    assert found.index.get_level_values("measured by").tolist() == [f"r = {r:.2f}" for r in grid]
    assert (found["tests"] == 2 * len(grid)).all()


def family(gains, p, p_equivalent) -> pd.DataFrame:
    """A family of comparisons judged by Holm (as replicated_comparisons leaves it)."""
    table = pd.DataFrame(
        {"gain": gains, "p": p, "margin": 0.01, "p equivalent": p_equivalent},
        index=pd.Index([f"r{i}" for i in range(len(gains))]),
    )
    return holm_family(table)


def test_holds_needs_every_comparison_each_at_alpha_and_fails_by_holm() -> None:
    """Every comparison rises at p = 0.03: Holm's adjusted p (0.06 for two tests, the
    equivalences too) leaves each undecided, yet "holds" is an intersection–union test
    whose error is α when each is tested at α. One equivalence at p = 0.03 is not
    enough for "does not hold" (any one: Holm's adjusted verdicts decide)."""
    rising = family([0.2, 0.3], [0.03, 0.03], [0.9, 0.9])
    assert not any(v.rises for v in rising["verdict"])  # Holm: undecided
    assert claim_verdict(rising) is HOLDS
    flat = family([0.2, 0.0], [0.001, 0.9], [0.9, 0.03])
    assert claim_verdict(flat) is OPEN  # the equivalence does not survive Holm
    assert claim_verdict(family([0.2, 0.0], [0.001, 0.9], [0.9, 0.001])) is FAILS


def test_reach_somewhere_needs_holm_and_none_needs_every_comparison() -> None:
    """crossing_verdict the other way round: one rise at p = 0.03 in a family of four
    tests is not a rise after Holm; every comparison against at p = 0.03 is."""
    one = family([0.2, -0.1], [0.03, 0.9], [0.9, 0.9])
    assert crossing_verdict(one) is OPEN
    against = family([-0.2, -0.1], [0.03, 0.03], [0.9, 0.9])
    assert not any(v.falls for v in against["verdict"])
    assert crossing_verdict(against) is FAILS
