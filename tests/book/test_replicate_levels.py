"""Levels, curves and ceiling shares over replicate models, on logs with known answers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from rsutils.book.replicate_levels import ceiling_columns, replicate_curves, replicate_levels
from rsutils.core.confidence import clopper_pearson_lower


def log_of(counts, *, factor=1.0, n=100, alpha=0.001, scale=0.5, wrong=()):
    counts = np.asarray(counts)
    p_lower = clopper_pearson_lower(counts, n, alpha)
    certified = p_lower > 0.5
    region = np.where(certified, scale * norm.ppf(p_lower), 0.0)
    label = np.zeros(len(counts), dtype=int)
    label[list(wrong)] = 1
    predict = np.where(certified, 0, -1)
    return pd.DataFrame(
        {
            "idx": np.arange(len(counts)),
            "label": label,
            "predict": predict,
            "radius": factor * region,
            "alm": 1.5 * factor * region,
            "region_radius": region,
            "correct": (predict == label).astype(int),
            "count": counts,
            "n": n,
            "alpha": alpha,
            "scale": scale,
        }
    )


REPLICATES = [
    {"a": log_of([100, 90, 40]), "b": log_of([100, 100, 90], factor=2.0)},
    {"a": log_of([95, 100, 100], wrong=[2]), "b": log_of([80, 100, 40], factor=2.0)},
]


def test_levels_average_the_replicates_and_keep_their_range() -> None:
    table = replicate_levels(REPLICATES, [0.0, 0.5], measures={"radius": "radius", "ALM": "alm"})
    acrs = [float((logs["a"].radius * logs["a"].correct).mean()) for logs in REPLICATES]
    row = table.loc[("a", "radius")]
    assert row["ACR"] == pytest.approx(np.mean(acrs))
    assert (row["ACR min"], row["ACR max"]) == pytest.approx((min(acrs), max(acrs)))
    assert row["r = 0"] == pytest.approx(np.mean([2 / 3, 2 / 3]))
    assert table.loc[("a", "ALM"), "ACR"] == pytest.approx(1.5 * np.mean(acrs))
    # "a": 1 of 2 correct at the ceiling in the first replicate, 1 of 2 in the second
    assert row["at ceiling"] == pytest.approx(0.5)
    assert table.loc[("b", "radius"), "at ceiling"] == pytest.approx((2 / 3 + 1 / 2) / 2)


def test_curves_band_the_replicates_and_name_the_median_ceiling() -> None:
    grid = np.linspace(0, 3, 31)
    curves, bands, ceilings = replicate_curves(REPLICATES, grid, ["b"])
    each = [
        [((log.radius >= r) & (log.correct == 1)).mean() for r in grid]
        for log in (logs["b"] for logs in REPLICATES)
    ]
    np.testing.assert_allclose(curves["b"], np.mean(each, axis=0))
    np.testing.assert_allclose(bands["b"][0], np.min(each, axis=0))
    np.testing.assert_allclose(bands["b"][1], np.max(each, axis=0))
    top = 0.5 * norm.ppf(0.001 ** (1 / 100))
    assert ceilings["b"] == pytest.approx(2 * top)
    assert (np.asarray(curves["b"])[grid > 2 * top + 1e-9] == 0).all()


def test_ceiling_columns_give_each_sides_share() -> None:
    table = ceiling_columns(REPLICATES, [("b", "a")])
    assert table.loc[("b", "a"), "control at ceiling"] == pytest.approx(0.5)
    assert table.loc[("b", "a"), "method at ceiling"] == pytest.approx(7 / 12)


def test_replicates_must_hold_the_same_methods() -> None:
    with pytest.raises(ValueError, match="dict per replicate model"):
        replicate_levels([], [0.0])
    with pytest.raises(ValueError, match="the same methods"):
        replicate_levels([{"a": REPLICATES[0]["a"]}, REPLICATES[1]], [0.0])


def test_a_method_without_correct_certificates_has_no_ceiling_share() -> None:
    """Nothing certified correctly anywhere: the share is undefined (NaN, no warning);
    in one replicate only: the mean runs over the replicates that have one."""
    nothing = log_of([10, 20, 30])
    replicates = [{"a": nothing, "b": nothing}, {"a": nothing, "b": log_of([100, 60, 40])}]
    table = replicate_levels(replicates, [0.0])
    assert np.isnan(table.loc[("a", "radius"), "at ceiling"])
    assert table.loc[("b", "radius"), "at ceiling"] == pytest.approx(1.0)
    assert np.isnan(ceiling_columns(replicates, [("b", "a")]).loc[("b", "a"), "control at ceiling"])
