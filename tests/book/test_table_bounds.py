"""Bounds per norm and noise family: closed forms, and the rules on hand-made tables."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from rsutils.book.audit.table_bounds import (
    bound_cells,
    bound_summary,
    can_fire,
    certifiable_bound,
    misses_allowed,
    required_pA,
    row_noise,
    scale_for_std,
)
from rsutils.book.papers.published import PublishedTable, published_table, published_table_names
from rsutils.core.confidence import (
    clopper_pearson_lower,
    min_alpha_for_radius,
    min_samples_for_radius,
)

N, ALPHA = 100_000, 0.001
TOP = ALPHA ** (1 / N)
CA = "certified_accuracy"


def test_unit_variance_scales_match_scipys_variances() -> None:
    assert stats.norm(scale=scale_for_std("gaussian", 1.0)).var() == pytest.approx(1)
    assert stats.laplace(scale=scale_for_std("laplace", 1.0)).var() == pytest.approx(1)
    half = scale_for_std("uniform", 2.0)
    assert stats.uniform(loc=-half, scale=2 * half).var() == pytest.approx(4)
    with pytest.raises(ValueError, match="no variance convention"):
        scale_for_std("power_law", 1.0)


def test_the_bounds_are_the_closed_forms_at_alpha_to_the_one_over_n() -> None:
    gaussian = stats.norm.ppf(TOP)
    assert certifiable_bound("gaussian", "l2", 1.0, n=N, alpha=ALPHA) == pytest.approx(gaussian)
    assert gaussian == pytest.approx(3.8115, abs=1e-4)
    assert certifiable_bound("gaussian", "l1", 1.0, n=N, alpha=ALPHA) == pytest.approx(gaussian)
    linf = certifiable_bound("gaussian", "linf", 1.0, n=N, alpha=ALPHA, dim=3072)
    assert linf == pytest.approx(gaussian / math.sqrt(3072))
    uniform = certifiable_bound("uniform", "l1", math.sqrt(3), n=N, alpha=ALPHA)
    assert uniform == pytest.approx(2 * math.sqrt(3) * (TOP - 0.5))  # below 2.0
    laplace = certifiable_bound("laplace", "l1", 1 / math.sqrt(2), n=N, alpha=ALPHA)
    assert laplace == pytest.approx(-math.log(2 * (1 - TOP)) / math.sqrt(2))


@pytest.mark.parametrize("radius", [0.3, 1.0, 2.5])
def test_required_pA_inverts_each_rule_in_closed_form(radius: float) -> None:
    assert required_pA("gaussian", "l2", radius, 0.8) == pytest.approx(stats.norm.cdf(radius / 0.8))
    lam = 1.5
    expected = 0.5 + radius / (2 * lam) if radius < lam else math.inf
    assert required_pA("uniform", "l1", radius, lam) == pytest.approx(expected)
    laplace = 1 - math.exp(-radius / lam) / 2
    assert required_pA("laplace", "l1", radius, lam) == pytest.approx(laplace)
    assert required_pA("gaussian", "l2", 0.0, 1.0) == 0.5


def test_misses_allowed_is_the_last_count_whose_bound_reaches_pA() -> None:
    for pA in (0.9999, 0.99977, 0.999):
        k = misses_allowed(pA, N, ALPHA)
        assert clopper_pearson_lower(N - k, N, ALPHA) >= pA
        assert clopper_pearson_lower(N - k - 1, N, ALPHA) < pA
    assert misses_allowed(TOP * 1.0000001, N, ALPHA) == -1
    assert misses_allowed(TOP, N, ALPHA) == 0


def toy(rows, noise, *, norm="l1", headers=("0.5", "2.0", "3.5", "4.0")) -> PublishedTable:
    data = pd.DataFrame(rows, columns=["row", *headers])
    meta = {"row_kinds": [CA] * len(rows), "dataset": "toy", "norm": norm,
            "noise": {"n": N, "alpha": ALPHA, "dim": None, "rows": noise}}  # fmt: skip
    return PublishedTable("toy", data, meta)


def entry(family, std, gamma=1.0):
    return {"family": family, "std": std, "gamma": gamma, "why": "hand-made"}


def test_each_verdict_fires_on_a_hand_made_l1_table() -> None:
    table = toy(
        [
            ["uniform, 0 beyond", 80, 0, 0, 0],  # bound 1.73: the zeros are forced
            ["uniform, positive beyond", 80, 5, 0, 0],
            ["gaussian", 80, 60, 40, 0],  # 3.5 needs pA ≥ Φ(3.5); 4.0 beyond 3.81
            ["laplace, unknown scale", 70, 50, 30, 20],
            ["no noise stated", 70, np.nan, 30, 20],
        ],
        {
            "uniform, 0 beyond": entry("uniform", 1.0),
            "uniform, positive beyond": entry("uniform", 1.0),
            "gaussian": entry("gaussian", 1.0),
            "laplace, unknown scale": entry("laplace", None),
            "no noise stated": entry(None, None),
        },
    )
    cells = bound_cells(table).set_index(["row", "radius"])["verdict"]
    assert cells["uniform, 0 beyond"].tolist() == ["within the bound"] + ["forced 0"] * 3
    assert cells["uniform, positive beyond"]["2.0"] == "beyond the bound"
    assert cells["gaussian"].tolist() == ["within the bound"] * 2 + ["near-certain pA", "forced 0"]
    assert set(cells["laplace, unknown scale"]) == {"scale not stated"}
    assert cells["no noise stated"]["2.0"] == "not printed"
    assert cells["no noise stated"]["0.5"] == "noise not stated"
    summary = bound_summary([table]).set_index("row")
    assert summary["forced 0"].tolist() == [3, 2, 1, 0, 0]
    assert summary["beyond the bound"].tolist() == [0, 1, 0, 0, 0]
    # Laplace at unit variance certifies 6.28: a scale of 4.0 / 6.28 suffices for 4.0.
    assert summary.loc["laplace, unknown scale", "std needed"] == pytest.approx(
        4.0 / certifiable_bound("laplace", "l1", 1 / math.sqrt(2), n=N, alpha=ALPHA)
    )


def test_a_near_certain_cell_says_how_few_draws_may_miss() -> None:
    table = toy([["gaussian", 80, 60, 40, 0]], {"gaussian": entry("gaussian", 1.0)}, norm="l2")
    cell = bound_cells(table).set_index("radius").loc["3.5"]
    assert cell["pA needed"] == pytest.approx(stats.norm.cdf(3.5))
    assert cell["draws needed"] == min_samples_for_radius(3.5, ALPHA)
    assert cell["α needed"] == pytest.approx(min_alpha_for_radius(3.5, N))
    assert cell["misses allowed"] == misses_allowed(stats.norm.cdf(3.5), N, ALPHA) == 9
    # With a γ that caps σ at 0.5, 2.0 is beyond the bound as well.
    halved = toy([["gaussian", 80, 0, 0, 0]], {"gaussian": entry("gaussian", 1.0, 0.5)}, norm="l2")
    assert bound_cells(halved)["verdict"].tolist() == ["within the bound"] + ["forced 0"] * 3


def test_a_table_without_its_noise_is_refused() -> None:
    table = toy([["a", 1, 1, 1, 1]], {"a": entry("gaussian", 1.0)})
    bare = PublishedTable("bare", table.data, {k: v for k, v in table.meta.items() if k != "noise"})
    with pytest.raises(ValueError, match="add a 'noise' block"):
        row_noise(bare)
    other = toy([["b", 1, 1, 1, 1]], {"a": entry("gaussian", 1.0)})
    with pytest.raises(ValueError, match="no entry for row 'b'"):
        row_noise(other)


def test_the_l2_ceiling_check_cannot_fire_on_the_papers_radii() -> None:
    short = toy([["a", 1, 1, 1, 1]], {}, norm="l2", headers=("0.0", "1.0", "2.0", "3.5"))
    long = toy([["a", 1, 1, 1, 1]], {}, norm="l2", headers=("0.0", "1.0", "2.0", "3.9"))
    assert not can_fire(short, scale=1.0) and can_fire(long, scale=1.0)
    assert can_fire(short, scale=0.5)  # 3.5 > 1.91
    for name in published_table_names():
        table = published_table(name)
        if table.meta["norm"] == "l2":
            assert not can_fire(table, scale=1.0), name


def test_on_the_papers_the_bounds_find_what_the_chapter_reports() -> None:
    tables = [published_table(name) for name in published_table_names()]
    for table in tables:  # every row of every table states its noise
        assert len(row_noise(table)) == table.kinds.count(CA)
    cells = pd.concat([bound_cells(t) for t in tables])
    counts = cells.groupby(["table", "verdict"]).size()
    assert counts.xs("forced 0", level="verdict").to_dict() == {
        "cohen2019_tables_1_3": 6,
        "ucan2025_table_ii_l1": 6,
    }
    assert "beyond the bound" not in set(cells["verdict"])
    near = cells[cells["verdict"] == "near-certain pA"]
    assert sorted(zip(near.table, near.radius, near.printed, strict=True)) == [
        ("ucan2025_table_ii_l1", "3.5", 47.0),
        ("ucan2025_table_ii_linf", "16/255", 48.0),
        ("ucan2025_table_v", "3.50", 9.0),
        ("ucan2025_table_v", "3.50", 38.0),
        ("ucan2025_table_v", "3.50", 42.0),
    ]
    uniform = cells[cells["row"] == "Ours (Ani. Uniform)"]
    assert uniform["bound"].iloc[0] < 2.0  # UCAN's collapse to 0 at R = 2.0 is forced
    assert (uniform.loc[uniform["r"] >= 2.0, "verdict"] == "forced 0").all()
