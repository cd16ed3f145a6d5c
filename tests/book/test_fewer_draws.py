"""The fewer-draws chapter's comparisons (rsutils.book.chapters.fewer_draws) on hand-made logs."""

from __future__ import annotations

import pandas as pd
import pytest
from scipy.stats import beta, norm

from rsutils.book.chapters.fewer_draws import (
    decision_table,
    disagreement_table,
    mode_agreement,
    planned_summary,
    precision_table,
    radius_floor,
    reference_ceiling,
)
from rsutils.core.confidence import min_samples_for_radius


def _certify_log(radii, counts, n=1000) -> pd.DataFrame:
    size = len(radii)
    return pd.DataFrame(
        {
            "idx": range(size),
            "label": [1] * size,
            "predict": [1 if r > 0 else -1 for r in radii],
            "radius": radii,
            "correct": [int(r > 0) for r in radii],
            "n0": [100] * size,
            "n": [n] * size,
            "count": counts,
            "alpha": [0.001] * size,
            "time": [0.2] * size,
        }
    )


def test_decision_table_counts_accuracy_and_passes_per_radius() -> None:
    standard = _certify_log([0.3, 0.1, 0.0, 0.5], [1000, 990, 400, 1000])
    decisions = pd.DataFrame(
        {
            "idx": [0, 1, 2, 3] * 2,
            "radius": [0.0] * 4 + [0.25] * 4,
            "certified": [True, True, False, True, True, False, False, True],
            "correct": [True, True, False, True, True, False, False, True],
            "forward_passes": [132, 164, 132, 132, 228, 164, 132, 228],
        }
    )
    table = decision_table(standard, decisions, sigma=0.25, alpha=0.001)
    assert table.loc[0.0, "CERTIFY acc."] == 0.75 and table.loc[0.25, "CERTIFY acc."] == 0.5
    assert table.loc[0.25, "sequential acc."] == 0.5 and table.loc[0.25, "gap (points)"] == 0
    assert table.loc[0.0, "sequential passes"] == 140
    assert table.loc[0.0, "fewer by"] == pytest.approx(1100 / 140)
    assert table.loc[0.25, "floor"] == 100 + min_samples_for_radius(1.0, 0.001)


def test_planned_summary_finds_the_gap_and_the_ceiling_images() -> None:
    ceiling = 0.25 * float(norm.ppf(0.001 ** (1 / 1000)))
    standard = _certify_log([ceiling, ceiling, 0.2, 0.1], [1000, 1000, 990, 950])
    planned = _certify_log([ceiling - 0.04, ceiling - 0.04, 0.2, 0.05], [500, 500, 99, 95])
    planned["n"] = [500, 500, 100, 100]
    radii = [0.0, 0.075, 0.15, ceiling - 0.02]
    summary = planned_summary(standard, planned, radii, sigma=0.25, radius_loss=0.05)
    assert summary["ceiling"] == pytest.approx(ceiling)
    assert summary["CERTIFY passes"] == 1100 and summary["planned passes"] == 400
    assert summary["largest gap (points)"] == -50  # both ceiling images, just below it
    assert summary["largest gap below the band (points)"] == -25  # 0.05 < 0.075 <= 0.1
    assert summary["images at the ceiling"] == 0.5
    assert summary["their share of planned draws"] == pytest.approx(1200 / 1600)


def test_radius_floor_is_the_all_in_class_floor_at_each_images_grid_radius() -> None:
    ceiling = 0.25 * float(norm.ppf(0.001 ** (1 / 1000)))  # 0.6155: band from 0.5655
    standard = _certify_log([ceiling, 0.5, 0.12, 0.0], [1000, 998, 900, 400])
    radii = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.55, 0.6]
    floor = radius_floor(standard, radii, sigma=0.25, radius_loss=0.05)
    assert floor["ceiling"] == pytest.approx(ceiling)
    assert floor["largest radius below the band"] == 0.55
    need = [min_samples_for_radius(r / 0.25, 0.001) for r in (0.55, 0.5, 0.1)]
    assert floor["floor there (draws)"] == need[0]
    assert floor["images certified there"] == 0.25
    assert floor["their floor (passes per image)"] == 100 + need[0] / 4
    assert floor["floor (passes per image)"] == pytest.approx(100 + sum(need) / 4)
    assert floor["most fewer by"] == pytest.approx(1100 / (100 + sum(need) / 4))
    with pytest.raises(ValueError, match="below the band"):
        radius_floor(standard, [0.6, 0.7], sigma=0.25, radius_loss=0.05)


def test_mode_agreement_compares_answers_radii_and_time() -> None:
    reference = _certify_log([0.3, 0.0, 0.2], [1000, 400, 990])
    fast = _certify_log([0.31, 0.0, 0.2], [1000, 400, 990]).assign(time=0.05)
    agreement = mode_agreement(reference, fast)
    assert agreement["same answer"] == 1.0
    assert agreement["largest radius difference"] == pytest.approx(0.01)
    assert agreement["faster by"] == pytest.approx(4.0)


def test_precision_table_sets_the_runs_side_by_side() -> None:
    fp32 = _certify_log([0.3, 0.0, 0.2, 0.5], [1000, 400, 990, 1000]).assign(time=0.8)
    fast = _certify_log([0.31, 0.0, 0.2, 0.5], [1000, 400, 990, 1000]).assign(time=0.1)
    reference = _certify_log([0.25, 0.0, 0.0, 0.45], [1000, 400, 990, 1000]).assign(time=0.2)
    logs = {"fp32": fp32, "bf16": fast, "fp32 from bf16": reference.iloc[::-1]}
    table = precision_table(logs, [0.0, 0.25, 0.5])
    assert list(table.index) == ["fp32", "bf16", "fp32 from bf16"]
    assert list(
        table.loc["fp32 from bf16", ["acc. % at 0", "acc. % at 0.25", "acc. % at 0.5"]]
    ) == [
        50.0,
        50.0,
        0.0,
    ]
    assert table.loc["fp32", "ACR"] == pytest.approx((0.3 + 0.2 + 0.5) / 4)
    assert table.loc["bf16", "faster by"] == pytest.approx(8.0)
    assert table.loc["fp32 from bf16", "s / image"] == pytest.approx(0.2)
    with pytest.raises(ValueError, match=r"the log 'bf16' holds other images than 'fp32'"):
        precision_table({"fp32": fp32, "bf16": fast.iloc[:2]}, [0.0])
    with pytest.raises(ValueError, match=r"at least one run"):
        precision_table({}, [0.0])


def _decisions(draws: dict[float, list[int]], n0: int = 0) -> pd.DataFrame:
    size = len(next(iter(draws.values())))
    frame = pd.DataFrame({"idx": range(size), "label": 1, "selected": 1, "n0": n0})
    for r, values in draws.items():
        frame[f"certified@{r:g}"] = 1
        frame[f"draws@{r:g}"] = values
    return frame


def test_a_curve_costs_each_image_its_most_expensive_radius() -> None:
    from rsutils.book.chapters.fewer_draws import curve_passes

    log = _decisions({0.0: [10, 50], 0.25: [40, 20], 0.5: [5, 900]}, n0=100)
    assert curve_passes(log, [0.0, 0.25]) == (140 + 150) / 2
    assert curve_passes(log, [0.0, 0.25, 0.5]) == (140 + 1000) / 2


def test_the_savings_bound_charges_undecided_images_the_larger_n() -> None:
    from rsutils.book.chapters.fewer_draws import savings_bound_at

    log = _decisions({0.0: [10, 1000], 0.5: [40, 30]})
    # image 0 stops at 40 whatever n is; image 1 reached n = 1000 and is charged 10,000
    assert savings_bound_at(log, [0.0, 0.5], 1000, 10_000) == pytest.approx(10_000 / 5020)


def test_draws_at_p_one_never_go_below_the_floor() -> None:
    from rsutils.book.chapters.fewer_draws import draws_at_p_one
    from rsutils.sequential.confidence_sequence import cs_min_draws_all_successes
    from rsutils.sequential.procedure import labelled_tests

    tests = labelled_tests(10_000, 0.001)
    anytime = tests["confidence sequence"]
    table = draws_at_p_one((1.0, 2.0), 0.001, tests)
    needed = cs_min_draws_all_successes(norm.cdf(1.0), 0.0005, one_sided=True)
    assert table.loc[1.0, "confidence sequence"] == min(n for n in anytime.looks if n >= needed)
    assert list(table["floor"]) == [min_samples_for_radius(k, 0.001) for k in (1.0, 2.0)]
    designs = table.drop(columns="floor")
    assert ((designs == 0) | designs.ge(table["floor"], axis=0)).all().all()
    assert table.loc[1.0, "spending"] == 64  # alpha_k = 5e-5: 59 draws, next look 64
    # every test of the registry but the randomised one, by its label, in its order
    assert list(designs.columns) == [name for name, t in tests.items() if not t.randomized]


def test_procedure_table_sets_each_procedure_beside_certify() -> None:
    from rsutils.book.chapters.fewer_draws import procedure_table

    standard = _certify_log([0.3, 0.1, 0.0, 0.5], [1000, 990, 400, 1000])
    long = pd.DataFrame(
        {
            "idx": [0, 1, 2, 3],
            "radius": [0.25] * 4,
            "certified": [True, False, False, True],
            "correct": [True, False, False, True],
            "forward_passes": [110, 1100, 220, 110],
        }
    )
    table = procedure_table(standard, {"a": long}, sigma=0.25, alpha=0.001)
    assert table.loc[1.0, ("a", "gap")] == 0
    assert table.loc[1.0, ("CERTIFY", "acc. %")] == 50
    assert table.loc[1.0, ("a", "fewer by")] == pytest.approx(1100 / 385)
    assert table.loc[1.0, ("floor", "draws")] == min_samples_for_radius(1.0, 0.001)


def test_the_best_possible_saving_charges_walds_bound_to_certified_images() -> None:
    import numpy as np

    from rsutils.book.chapters.fewer_draws import best_possible_savings
    from rsutils.core.confidence import least_expected_draws
    from rsutils.sequential.record import pack_labels

    standard = _certify_log([0.3, 0.0], [1000, 400])
    estimation = [np.ones(1000, int), np.r_[np.ones(400, int), np.zeros(600, int)]]
    records = pd.DataFrame(
        {
            "idx": [0, 1],
            "label": [1, 1],
            "n0": [100, 100],
            "n": [1000, 1000],
            "estimation": [pack_labels(e) for e in estimation],
        }
    )
    saving = best_possible_savings(standard, records, [1.0], 0.25, 0.001)
    charge = float(least_expected_draws(1.0, norm.cdf(1.0), 0.001)) / 2  # image 1: nothing
    assert saving[1.0] == pytest.approx(1100 / charge)


def test_the_uncertified_share_counts_passes_on_images_certify_leaves_out() -> None:
    from rsutils.book.chapters.fewer_draws import uncertified_share

    standard = _certify_log([0.3, 0.1, 0.0, 0.5], [1000, 990, 400, 1000])
    long = pd.DataFrame(
        {
            "idx": [0, 1, 2, 3, 0, 1, 2, 3],
            "radius": [0.25] * 4 + [0.0] * 4,
            "forward_passes": [100, 300, 500, 100, 9, 9, 9, 9],
        }
    )
    # at 0.25 CERTIFY certifies images 0 and 3 only: 800 of the 1,000 passes are elsewhere
    assert uncertified_share(standard, long, 0.25) == pytest.approx(0.8)


def test_disagreement_table_pools_the_paired_draws_with_scipys_bound() -> None:
    log = pd.DataFrame({"m": [300, 300, 0], "differ": [2, 0, 0], "disagreements": [1, 0, 0]})
    row = disagreement_table({"m=300": log}, 0.05).loc["m=300"]
    assert row["paired draws"] == 600
    assert row["differ %"] == pytest.approx(100 * 2 / 600)
    assert row["disagree %"] == pytest.approx(100 * 1 / 600)
    assert row["differ, upper %"] == pytest.approx(100 * beta.ppf(0.95, 3, 598))
    assert row["disagree, upper %"] == pytest.approx(100 * beta.ppf(0.95, 2, 599))


def test_the_reference_ceiling_is_certifys_less_the_disagreement_bound() -> None:
    n, m, alpha = 1000, 300, 0.001
    fast = (alpha / 2) ** (1 / n)  # all n in the class, at half of alpha
    d_upper = 1 - (alpha / 2) ** (1 / m)  # no disagreement in m, at the other half
    expected = 0.25 * norm.ppf(fast - d_upper)
    assert reference_ceiling(0.25, n, m, alpha) == pytest.approx(expected, rel=1e-9)
    assert reference_ceiling(0.25, n, m, alpha) < 0.25 * norm.ppf(alpha ** (1 / n))
    assert reference_ceiling(0.25, n, 5, alpha) == 0.0  # five pairs bound nothing
