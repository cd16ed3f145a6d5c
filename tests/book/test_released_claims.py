"""Cohen et al.'s σ trade-off judged on their released logs, by the book's own rule."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rsutils.book.audit.measured import ACCURACY_AT_0, REACH, tradeoff_verdict
from rsutils.book.audit.released_alpha import STATED_ALPHA
from rsutils.book.audit.released_claims import (
    RELEASED_N,
    largest_certificate,
    released_fixed_sigma_logs,
    released_name,
    released_tradeoff_comparisons,
    steps_evidence,
    tradeoff_steps,
)
from rsutils.book.audit.verdicts import ClaimVerdict
from rsutils.book.margins import MARGINS

SIGMAS = {"cifar10": ("0.12", "0.25", "0.50", "1.00"), "imagenet": ("0.25", "0.50", "1.00")}


def sigma_log(sigma: float, step: int, images: int = 500, reach: float = 3.0) -> pd.DataFrame:
    """The model at the ``step``-th σ: the first 90 − 10·step % of the images right,
    each certified at ``reach``·σ (so that the next σ up loses images at radius 0 and
    certifies, at 3.5 times the smaller σ, images the smaller σ cannot)."""
    right = int(images * (0.9 - 0.1 * step))
    correct = np.arange(images) < right
    return pd.DataFrame(
        {
            "idx": np.arange(images) * 20,
            "label": 0,
            "predict": np.where(correct, 0, 1),
            "radius": np.where(correct, reach * sigma, 0.0),
            "correct": correct.astype(int),
            "time": 1.0,
        }
    )


@pytest.fixture
def release(fake_release):
    """The fake release with trade-off logs at every model's own σ."""
    for dataset, sigmas in SIGMAS.items():
        for step, text in enumerate(sigmas):
            fake_release.certify(dataset, text, text, sigma_log(float(text), step))
    return fake_release


def test_the_logs_are_the_models_own_sigma_on_the_shared_images(release) -> None:
    cut = sigma_log(0.25, 0).iloc[:427]  # the released ImageNet log at 0.25 stops early
    release.certify("imagenet", "0.25", "0.25", cut)
    logs = released_fixed_sigma_logs("imagenet", root=release.root)
    assert list(logs) == [released_name("imagenet", s) for s in (0.25, 0.5, 1.0)]
    for sigma, log in zip((0.25, 0.5, 1.0), logs.values(), strict=True):
        assert log["idx"].tolist() == cut["idx"].tolist()
        assert (log["scale"] == sigma).all()
        assert (log["n"] == RELEASED_N).all() and (log["alpha"] == STATED_ALPHA).all()
    # the logs certified at another σ than the model's (σ = 0.5 for every model) stay out
    assert len(released_fixed_sigma_logs("cifar10", root=release.root)) == 4


def test_an_unknown_dataset_is_refused(release) -> None:
    with pytest.raises(ValueError, match="imagenet and cifar10"):
        released_fixed_sigma_logs("mnist", root=release.root)


def test_every_step_of_both_datasets_is_one_family(release) -> None:
    logs = {d: released_fixed_sigma_logs(d, root=release.root) for d in SIGMAS}
    table = released_tradeoff_comparisons(logs, margin=MARGINS)
    steps = table.groupby(level=["method", "against"], sort=False).size()
    assert len(steps) == 3 + 2
    assert set(table["dataset"]) == set(SIGMAS)
    tests = table["p"].notna().sum() + table["p equivalent"].notna().sum()
    assert (table["tests"] == tests).all()
    assert (table["models"] == 1).all()


def test_cost_and_reach_at_every_step_hold(release) -> None:
    logs = {d: released_fixed_sigma_logs(d, root=release.root) for d in SIGMAS}
    table = released_tradeoff_comparisons(logs, margin=MARGINS)
    measured = table.index.get_level_values("measured by")
    assert all(v.falls for v in table[measured == ACCURACY_AT_0]["verdict"])
    assert tradeoff_verdict(table) is ClaimVerdict.HOLDS


def test_a_step_that_gains_only_beyond_the_ceiling_does_not_hold_up(release) -> None:
    """The largest σ certifies its images at 3.5 times the smaller σ, no further than
    the smaller certifies its own: below the smaller σ's ceiling it gains nothing."""
    release.certify("imagenet", "1.00", "1.00", sigma_log(1.0, 2, reach=1.5))
    logs = {d: released_fixed_sigma_logs(d, root=release.root) for d in SIGMAS}
    table = released_tradeoff_comparisons(logs, margin=MARGINS)
    assert tradeoff_verdict(table) is not ClaimVerdict.HOLDS


def test_what_the_released_logs_say(reference: Path) -> None:
    """On the paper's own models: certified accuracy at radius 0 falls at all five steps
    up in σ, and the larger σ rises above the smaller below the smaller's ceiling at four
    (not ImageNet's σ = 1 against 0.5), so the claim is not resolved by this rule."""
    logs = {d: released_fixed_sigma_logs(d, root=reference) for d in SIGMAS}
    assert [len(next(iter(by.values()))) for by in logs.values()] == [500, 427]
    table = released_tradeoff_comparisons(logs, margin=MARGINS)
    measured = table.index.get_level_values("measured by")
    assert all(v.falls for v in table[measured == ACCURACY_AT_0]["verdict"])
    reach = table[measured.str.startswith(REACH)]
    rises = reach.groupby(level=["method", "against"], sort=False)["verdict"].agg(
        lambda verdicts: any(v.rises for v in verdicts)
    )
    assert rises.sum() == 4
    assert not rises[(released_name("imagenet", 1.0), released_name("imagenet", 0.5))]
    assert tradeoff_verdict(table) is ClaimVerdict.NOT_RESOLVED


def test_the_steps_say_where_each_step_costs_and_gains(release) -> None:
    release.certify("imagenet", "1.00", "1.00", sigma_log(1.0, 2, reach=1.5))
    logs = {d: released_fixed_sigma_logs(d, root=release.root) for d in SIGMAS}
    table = released_tradeoff_comparisons(logs, margin=MARGINS)
    steps = tradeoff_steps(table)
    flat = f"{released_name('imagenet', 1.0)} vs {released_name('imagenet', 0.5)}"
    assert len(steps) == 5 and steps.index[-1] == flat
    assert all(v.falls for v in steps["cost at r = 0"])
    assert steps["change at r = 0"].tolist() == pytest.approx([-0.1] * 5)
    assert steps["rises below the smaller σ's ceiling"].tolist() == [True] * 4 + [False]
    assert steps["largest rise there"].iloc[0] == pytest.approx(0.8)  # 3.5σ: 0.8 against 0
    assert steps_evidence(steps, len(table)) == (
        f"5 of 5 steps lose accuracy at r = 0; 4 of 5 rise below the smaller σ's ceiling "
        f"(not: {flat}); {len(table)} comparisons, one family"
    )
    assert largest_certificate(logs) == pytest.approx(3.0)
