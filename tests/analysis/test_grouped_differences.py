"""Replicated comparisons within groups of images and against the best control, on
synthetic logs whose differences are known."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rsutils.analysis.differences import replicated_difference
from rsutils.analysis.grouped_differences import (
    TOO_FEW_IMAGES,
    against_best,
    best_controls,
    ceiling_groups,
    grouped_comparisons,
    majority_groups,
    restrict_replicates,
)
from rsutils.core.streams import derived_seed

IMAGES = np.arange(0, 400, 10)  # 40 images, idx 0, 10, …, 390


def log(radius, *, idx=IMAGES, count=None, n=1000) -> pd.DataFrame:
    radius = np.asarray(radius, dtype=float)
    count = np.full(len(radius), n // 2 + 100) if count is None else np.asarray(count)
    return pd.DataFrame(
        {
            "idx": idx,
            "label": 0,
            "predict": 0,
            "correct": 1,
            "radius": radius,
            "count": count,
            "n": n,
        }
    )


def test_majority_takes_the_images_flagged_in_more_than_half_the_replicates() -> None:
    flags = [
        [1, 1, 0, 0, 1] + [0] * 35,
        [1, 0, 1, 0, 1] + [0] * 35,
        [0, 1, 0, 0, 1] + [0] * 35,
    ]
    # each replicate's log in its own row order: the rule reads idx, not row numbers
    replicates = []
    for m, f in enumerate(flags):
        order = np.roll(np.arange(len(IMAGES)), 7 * m)
        replicates.append({"x": log(np.asarray(f, float)[order], idx=IMAGES[order])})
    found = majority_groups(replicates, "x", lambda lg: lg["radius"].to_numpy() > 0)
    assert found["flagged"].tolist() == [0, 10, 40]  # 2, 2 and 3 of 3 votes; 20 has one
    assert found["not flagged"].tolist() == sorted(set(IMAGES) - {0, 10, 40})
    two = majority_groups(replicates[:2], "x", lambda lg: lg["radius"].to_numpy() > 0)
    assert two["flagged"].tolist() == [0, 40]  # with two replicates: in both


def test_ceiling_groups_read_all_draws_agreeing() -> None:
    at_top = [1000] * 3 + [700] * 37
    replicates = [{"fixed": log(np.ones(40), count=at_top)} for _ in range(3)]
    found = ceiling_groups(replicates, "fixed")
    assert found["at ceiling"].tolist() == [0, 10, 20]
    assert len(found["below ceiling"]) == 37


def test_a_group_comparison_recovers_the_difference_within_the_group() -> None:
    # The method gains exactly 0.5 on the first 20 images and nothing on the rest,
    # plus a model effect and image noise shared by method and control in part.
    rng = np.random.default_rng(derived_seed(0, 0, "bootstrap"))
    group = {"gains": IMAGES[:20], "no gain": IMAGES[20:]}
    gain = np.where(np.isin(IMAGES, group["gains"]), 0.5, 0.0)
    replicates, expected = [], {"gains": [], "no gain": []}
    for _ in range(3):
        control = rng.uniform(0.5, 1.5, len(IMAGES))
        difference = gain + rng.normal(0, 0.01) + rng.normal(0, 0.01, len(IMAGES))
        replicates.append({"control": log(control), "method": log(control + difference)})
        expected["gains"].append(difference[:20].mean())
        expected["no gain"].append(difference[20:].mean())
    table = grouped_comparisons(
        replicates, [("method", "control")], lambda m, c: group, margin=0.05
    )
    rows = table.xs(("method", "control", "radius"), level=[0, 1, 3])
    assert rows.loc["gains", "gain"] == pytest.approx(np.mean(expected["gains"]), abs=1e-12)
    assert rows.loc["no gain", "gain"] == pytest.approx(np.mean(expected["no gain"]), abs=1e-12)
    assert rows.loc["gains", "verdict"].rises
    assert str(rows.loc["no gain", "verdict"]) == "equivalent within ±0.05"
    assert rows["share"].tolist() == [0.5, 0.5]
    assert rows["images"].tolist() == [20, 20]
    # the same interval as replicated_difference on the restricted logs
    restricted = restrict_replicates(replicates, group["gains"])
    direct = replicated_difference([(r["control"], r["method"]) for r in restricted])
    assert rows.loc["gains", "low"] == pytest.approx(direct.low, rel=1e-12)


def test_a_group_of_one_image_has_no_verdict() -> None:
    replicates = [{"control": log(np.ones(40)), "method": log(2 * np.ones(40))}] * 2
    groups = {"one": IMAGES[:1], "rest": IMAGES[1:]}
    measures = {"ACR": "radius", "r = 1": ("radius", 1.0)}
    table = grouped_comparisons(
        replicates, [("method", "control")], lambda m, c: groups, measures=measures
    )
    one = table.xs("one", level="images")
    assert one["verdict"].tolist() == [TOO_FEW_IMAGES] * 2
    assert not TOO_FEW_IMAGES.tested and str(TOO_FEW_IMAGES) == "too few images"
    assert one["gain"].isna().all() and (one["share"] == 1 / 40).all()
    # the ACR doubles; at r = 1 both certify every image (a zero difference, no margin)
    rest = table.xs("rest", level="images")
    assert [str(v) for v in rest["verdict"]] == ["rises", "undecided"]
    assert all(v.tested and v.family == 2 for v in rest["verdict"])  # 2 rows, no margin


def test_the_best_control_is_chosen_per_measure() -> None:
    # "wide" certifies every image at 0.9 (ACR 0.9, nothing at r = 1); "narrow"
    # certifies half at 1.5 and half at 0 (ACR 0.75, 50% at r = 1).
    half = np.where(np.arange(40) < 20, 1.5, 0.0)
    replicates = [
        {"wide": log(np.full(40, 0.9)), "narrow": log(half), "DS": log(np.full(40, 1.2))}
    ] * 3
    measures = {"ACR": "radius", "r = 1": ("radius", 1.0)}
    assert best_controls(replicates, ["narrow", "wide"], measures) == {
        "ACR": "wide",
        "r = 1": "narrow",
    }
    table = against_best(replicates, ["DS"], ["narrow", "wide"], measures)
    assert table.index.tolist() == [("DS", "wide", "ACR"), ("DS", "narrow", "r = 1")]
    np.testing.assert_allclose(table["gain"], [1.2 - 0.9, 1.0 - 0.5])
    assert (table["tests"] == 2).all()  # one family: the two comparisons


def test_a_held_out_choice_is_made_on_the_first_replicate_and_judged_on_the_others() -> None:
    half = np.where(np.arange(40) < 20, 1.5, 0.0)
    # On the first replicate "narrow" leads by ACR; on the others "wide" does.
    first = {"wide": log(np.full(40, 0.7)), "narrow": log(half), "DS": log(np.full(40, 1.2))}
    rest = {**first, "wide": log(np.full(40, 0.9))}
    replicates = [first, rest, rest]
    measures = {"ACR": "radius"}
    pooled = against_best(replicates, ["DS"], ["narrow", "wide"], measures)
    assert pooled.index.tolist() == [("DS", "wide", "ACR")]  # chosen on all three
    held = against_best(replicates, ["DS"], ["narrow", "wide"], measures, held_out=True)
    assert held.index.tolist() == [("DS", "narrow", "ACR")]  # chosen on the first
    assert (held["models"] == 2).all()  # judged on the other two
    np.testing.assert_allclose(held["gain"], [1.2 - 0.75])
    with pytest.raises(ValueError, match="at least two replicates"):
        against_best(replicates[:1], ["DS"], ["wide"], measures, held_out=True)


def test_bad_input_is_refused_with_the_fix() -> None:
    replicates = [{"a": log(np.ones(40))}, {"a": log(np.ones(39), idx=IMAGES[:39])}]
    with pytest.raises(ValueError, match="same test images"):
        majority_groups(replicates, "a", lambda lg: lg["radius"].to_numpy() > 0)
    with pytest.raises(ValueError, match="no log for 'b'"):
        ceiling_groups(replicates, "b")
    with pytest.raises(ValueError, match="controls is empty"):
        best_controls(replicates, [], {"ACR": "radius"})
