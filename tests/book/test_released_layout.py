"""The re-analysis of every released log, on a made-up release whose answers are known."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from rsutils import ABSTAIN
from rsutils.book.papers.released import (
    COHEN2019_CERTIFY_LOGS,
    COHEN2019_PREDICT_NS,
    reanalyse_released_certify,
    reanalyse_released_predict,
    recertify_released,
    recertify_released_logs,
)
from rsutils.core.confidence import clopper_pearson_lower

ARCH = {"imagenet": "resnet50", "cifar10": "resnet110"}


def fake_release(root: Path) -> None:
    """Four images per log: radii 0.2σ, 1.2σ, a top one, and a wrong answer; the
    top one is 3.91σ (printed to three digits, as the release does) for ImageNet and
    3.80σ for CIFAR-10."""
    for dataset, trained, split, sigma in COHEN2019_CERTIFY_LOGS:
        s = float(sigma)
        top = (3.91 if dataset == "imagenet" else 3.80) * s
        folder = root / "cohen2019/certify" / dataset / ARCH[dataset] / f"noise_{trained}" / split
        folder.mkdir(parents=True, exist_ok=True)
        rows = [(0.2 * s, 1), (1.2 * s, 1), (top, 1), (0.0, 0)]
        lines = ["idx\tlabel\tpredict\tradius\tcorrect\ttime"]
        lines += [
            f"{i}\t1\t{1 if c else 2}\t{r:.3}\t{c}\t{10 + i}" for i, (r, c) in enumerate(rows)
        ]
        (folder / f"sigma_{sigma}").write_text("\n".join(lines) + "\n")
    folder = root / "cohen2019/predict/imagenet/resnet50/noise_0.25/test"
    folder.mkdir(parents=True)
    for n in COHEN2019_PREDICT_NS:
        lines = [
            "idx\tlabel\tpredict\tcorrect\ttime",
            "0\t1\t1\t1\t0:00:01.5",
            "1\t1\t-1\t0\t0:00:00.5",
        ]
        (folder / f"N_{n}").write_text("\n".join(lines) + "\n")


def test_every_released_log_in_the_tables_layout(tmp_path) -> None:
    fake_release(tmp_path)
    table = reanalyse_released_certify(root=tmp_path)
    assert len(table) == len(COHEN2019_CERTIFY_LOGS) and (table["images"] == 4).all()
    row = table.loc[("cifar10", 1.0, "test", 1.0)]
    # Radii 0.2, 1.2 and 3.8 correct, of 4: 3/4 at r = 0, 2/4 at 0.5 and 1, 1/4 at 2 and 3.
    assert row[["0", "0.5", "1", "2", "3"]].tolist() == [0.75, 0.5, 0.5, 0.25, 0.25]
    assert row["ACR"] == pytest.approx((0.2 + 1.2 + 3.8) / 4)
    assert row["seconds per image"] == pytest.approx(11.5)
    assert row["ceiling"] == pytest.approx(norm.ppf(0.001 ** (1 / 100_000)))


def test_a_certificate_beyond_the_ceiling_reveals_the_level_it_was_run_at(tmp_path) -> None:
    fake_release(tmp_path)
    table = reanalyse_released_certify(root=tmp_path)
    imagenet, cifar = table.loc["imagenet"], table.loc["cifar10"]
    # 3.91σ needs alpha ≈ 0.01 with 100,000 draws; 3.80σ fits alpha = 0.001.
    assert (imagenet["α it needs"] > 0.008).all() and (
        imagenet["largest radius"] > imagenet["ceiling"]
    ).all()
    assert (cifar["α it needs"] < 0.001).all() and (
        cifar["largest radius"] <= cifar["ceiling"]
    ).all()
    # ... or, at 0.001, more draws than 100,000: ln(0.001) / ln Φ(3.905) ≈ 146,600.
    assert (imagenet["draws it needs"] > 140_000).all()
    assert (cifar["draws it needs"] <= 100_000).all()


def test_the_gap_to_the_table_is_given_only_where_the_table_prints_the_model(tmp_path) -> None:
    fake_release(tmp_path)
    gaps = reanalyse_released_certify(root=tmp_path)["largest gap to the table"]
    printed = {("imagenet", s) for s in (0.25, 0.5, 1.0)} | {
        ("cifar10", s) for s in (0.25, 0.5, 1.0)
    }
    for (dataset, trained, split, sigma), gap in gaps.items():
        same = trained == sigma and split == "test" and (dataset, sigma) in printed
        assert np.isnan(gap) != same, (dataset, trained, split, sigma)
    # Table 1 prints 0.44, 0.38, 0.33, 0.19, 0.12 at σ = 1; the fake: 0.75, 0.5, 0.5, 0.25, 0.25.
    assert gaps[("imagenet", 1.0, "test", 1.0)] == pytest.approx(0.31)


def test_every_released_predict_log_beside_table_4(tmp_path) -> None:
    fake_release(tmp_path)
    table = reanalyse_released_predict(root=tmp_path)
    assert list(table.index) == list(COHEN2019_PREDICT_NS)
    assert (table["accuracy"] == 0.5).all() and (table["abstention rate"] == 0.5).all()
    assert (table["seconds per prediction"] == 1.0).all()  # 1.5 s and 0.5 s, as H:MM:SS
    assert table.loc[100, "accuracy, printed"] == 0.65
    assert np.isnan(table.loc[100_000, "accuracy, printed"])


def test_recertifying_recovers_the_counts_a_printed_radius_allows() -> None:
    n, sigma = 100_000, 0.25
    counts = np.array([50_400, 60_000, 90_000, 99_000, 99_990, 100_000])
    at_run = sigma * norm.ppf(clopper_pearson_lower(counts, n, 0.01))
    log = pd.DataFrame(
        {
            "radius": [float(f"{r:.3}") for r in at_run] + [0.0],  # printed as released
            "predict": [1] * 6 + [ABSTAIN],
            "label": 1,
            "correct": [1] * 6 + [0],
        }
    )
    out = recertify_released(log, sigma, alpha=0.001, run_alpha=0.01, n=n)
    bound = clopper_pearson_lower(counts, n, 0.001)
    truth = np.where(bound >= 0.5, sigma * norm.ppf(np.clip(bound, 0.5, 1)), 0.0)
    low, high = out["radius_low"].to_numpy()[:6], out["radius_high"].to_numpy()[:6]
    assert np.all((low <= truth + 1e-12) & (truth <= high + 1e-12))
    assert np.all(high - low < 0.002)  # three printed digits pin the count closely
    assert low[0] == 0.0 and at_run[0] > 0  # a bare majority at 0.01 abstains at 0.001
    assert out["radius_high"].iloc[6] == 0.0  # an abstention stays one
    assert high[-1] == pytest.approx(sigma * norm.ppf(0.001 ** (1 / n)))  # the ceiling
    same = recertify_released(log, sigma, alpha=0.01, run_alpha=0.01, n=n)
    # At the level it was run at, the range holds the unrounded radius itself.
    kept = same.iloc[:6]
    assert np.all((kept["radius_low"] <= at_run + 1e-12) & (at_run <= kept["radius_high"] + 1e-12))


def test_recertified_logs_report_the_change_at_each_radius(tmp_path) -> None:
    fake_release(tmp_path)
    key = ("imagenet", 1.0, "test", 1.0)  # radii 0.2, 1.2 and 3.91, run at 0.01 by hypothesis
    table = recertify_released_logs([key], alpha=0.001, run_alpha=0.01, root=tmp_path)
    assert table["radius"].tolist() == [0.0, 0.5, 1.0, 2.0, 3.0]
    # At 0.001 the 3.91 certificate shrinks to the ceiling 3.81: still above 3.0.
    assert table["as released"].tolist() == table["greatest"].tolist()
    assert (table["largest change"] == 0).all()
