"""Sequential and planned CERTIFY over a dataset: rows, resumption, checks first."""

from __future__ import annotations

import pytest
import torch

from rsutils import CertifySettings, Dataset, Gaussian, Smooth
from rsutils.core.evaluation import decide_label_radii
from rsutils.core.sample_size import certify_planned
from rsutils.core.sequential import LookSchedule, decide_radii
from rsutils.core.sequential_radius import certify_looks
from rsutils.logs.runner import CERTIFY_COLUMNS
from rsutils.logs.sequential_runs import (
    certify_looks_dataset,
    certify_planned_dataset,
    decide_dataset,
    decide_label_dataset,
    decision_columns,
    decisions_long,
)

SETTINGS = CertifySettings(n0=20, n=300, alpha=0.01, seed=3, batch_size=64)
SCHEDULE = LookSchedule.geometric(300, 0.01, first=20)
RADII = [0.0, 0.1, 0.3]


@pytest.fixture
def images() -> Dataset:
    x = torch.rand(5, 1, 28, 28, generator=torch.Generator().manual_seed(0))
    return Dataset("fashion-mnist", "test", x, torch.arange(5) % 10, tuple("abcdefghij"))


def test_decide_dataset_rows_are_the_decisions_and_resume(cnn, images, tmp_path) -> None:
    smooth = Smooth(cnn, 10, Gaussian(0.25))
    path = tmp_path / "d.tsv"
    first = decide_dataset(smooth, images, [1], path, SETTINGS, SCHEDULE, RADII, progress=False)
    log = decide_dataset(smooth, images, [1, 4], path, SETTINGS, SCHEDULE, RADII, progress=False)
    assert list(log.columns) == decision_columns(RADII) and list(log["idx"]) == [1, 4]
    assert log.iloc[:1].drop(columns="time").equals(first.drop(columns="time"))
    decisions = decide_radii(smooth, images.images[4], RADII, 20, SCHEDULE, 7, 3, index=4)
    row = log.set_index("idx").loc[4]
    for r, decision in zip(RADII, decisions, strict=True):
        assert row[f"certified@{r:g}"] == decision.certified
        assert row[f"draws@{r:g}"] == decision.draws
    long = decisions_long(log, RADII)
    assert len(long) == 2 * len(RADII)
    assert set(long["forward_passes"]) <= {20 + n for n in SCHEDULE.looks}
    assert (long["correct"] <= long["certified"]).all()


def test_decide_label_dataset_tests_the_label_without_selection_and_resumes(
    cnn, images, tmp_path
) -> None:
    smooth = Smooth(cnn, 10, Gaussian(0.25))
    path = tmp_path / "l.tsv"
    first = decide_label_dataset(
        smooth, images, [1], path, SETTINGS, SCHEDULE, RADII, progress=False
    )
    log = decide_label_dataset(
        smooth, images, [1, 4], path, SETTINGS, SCHEDULE, RADII, progress=False
    )
    assert list(log.columns) == decision_columns(RADII) and list(log["idx"]) == [1, 4]
    assert log.iloc[:1].drop(columns="time").equals(first.drop(columns="time"))
    assert (log["selected"] == log["label"]).all() and (log["n0"] == 0).all()
    label = int(images.labels[4])
    decisions = decide_label_radii(smooth, images.images[4], label, RADII, SCHEDULE, 7, 3, index=4)
    row = log.set_index("idx").loc[4]
    for r, decision in zip(RADII, decisions, strict=True):
        assert row[f"certified@{r:g}"] == decision.certified
        assert row[f"draws@{r:g}"] == decision.draws
    long = decisions_long(log, RADII)
    assert (long["correct"] == long["certified"]).all()
    assert set(long["forward_passes"]) <= set(SCHEDULE.looks)


def test_certify_planned_dataset_has_certifys_columns_and_rows(cnn, images, tmp_path) -> None:
    smooth = Smooth(cnn, 10, Gaussian(0.25))
    log = certify_planned_dataset(
        smooth, images, [0, 2], tmp_path / "p.tsv", SETTINGS, 0.05, min_draws=30, progress=False
    )
    assert list(log.columns) == CERTIFY_COLUMNS
    cert = certify_planned(smooth, images.images[2], 20, 300, 0.01, 0.05, 50, 3, 2, min_draws=30)
    row = log.set_index("idx").loc[2]
    assert (row["predict"], row["n"], row["count"]) == (cert.prediction, cert.n, cert.count)
    assert row["radius"] == pytest.approx(cert.radius)


def test_certify_looks_dataset_rows_are_the_answers_and_resume(cnn, images, tmp_path) -> None:
    smooth, path = Smooth(cnn, 10, Gaussian(0.25)), tmp_path / "l.tsv"
    first = certify_looks_dataset(
        smooth, images, [2], path, SETTINGS, SCHEDULE, 0.05, progress=False
    )
    log = certify_looks_dataset(
        smooth, images, [2, 3], path, SETTINGS, SCHEDULE, 0.05, progress=False
    )
    assert list(log.columns) == [*CERTIFY_COLUMNS, "look", "alpha_spent"]
    assert log.iloc[:1].drop(columns="time").equals(first.drop(columns="time"))
    answer = certify_looks(smooth, images.images[3], 20, SCHEDULE, 0.05, 64, 3, 3)
    row = log.set_index("idx").loc[3]
    assert (row["predict"], row["n"], row["count"]) == (
        answer.prediction,
        answer.certificate.n,
        answer.certificate.count,
    )
    assert (row["look"], row["alpha"]) == (answer.look, pytest.approx(0.01))
    assert row["alpha_spent"] == pytest.approx(answer.alpha_spent)
    assert row["radius"] == pytest.approx(answer.radius)


@pytest.mark.parametrize(
    ("schedule", "loss", "message"),
    [
        (LookSchedule.geometric(400, 0.01, first=20), 0.05, "settings.n"),
        (LookSchedule.geometric(300, 0.02, first=20), 0.05, "settings.alpha"),
        (SCHEDULE, -1.0, "radius_loss"),
    ],
)
def test_certify_looks_dataset_refuses_a_mismatch_and_writes_nothing(
    cnn, images, tmp_path, schedule, loss, message
) -> None:
    smooth = Smooth(cnn, 10, Gaussian(0.25))
    with pytest.raises(ValueError, match=message):
        certify_looks_dataset(
            smooth, images, [0], tmp_path / "l.tsv", SETTINGS, schedule, loss, progress=False
        )
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("kind", "bad", "message"),
    [("decide", [0.1, -1.0], "radius"), ("decide", [0.1, 0.1], "differ"), ("planned", -1, "loss")],
)
def test_bad_arguments_write_nothing(cnn, images, tmp_path, kind, bad, message) -> None:
    smooth, path = Smooth(cnn, 10, Gaussian(0.25)), tmp_path / "log.tsv"
    with pytest.raises(ValueError, match=message):
        if kind == "decide":
            decide_dataset(smooth, images, [0], path, SETTINGS, SCHEDULE, bad, progress=False)
        else:
            certify_planned_dataset(smooth, images, [0], path, SETTINGS, bad, progress=False)
    assert list(tmp_path.iterdir()) == []


def test_sequence_and_randomised_runs_record_their_test(cnn, images, tmp_path) -> None:
    """A confidence-sequence run records its looks, level and sidedness; a randomised
    one its levels, that it is randomised, and each input's u in a column."""
    import json

    from rsutils.core.anytime import AnytimeSchedule

    smooth = Smooth(cnn, 10, Gaussian(0.25))
    sequence = AnytimeSchedule.geometric(300, 0.01)
    log = decide_dataset(
        smooth, images, [0, 1], tmp_path / "s.tsv", SETTINGS, sequence, RADII, progress=False
    )
    assert list(log.columns) == decision_columns(RADII)
    recorded = json.loads((tmp_path / "s.tsv.json").read_text())
    assert recorded["test"] == "confidence sequence" and recorded["one_sided"] is True
    assert recorded["looks"] == list(sequence.looks) and recorded["alpha"] == 0.01
    randomised = LookSchedule.geometric(300, 0.01, first=20, randomized=True)
    log = decide_label_dataset(
        smooth, images, [0, 1], tmp_path / "r.tsv", SETTINGS, randomised, RADII, progress=False
    )
    assert list(log.columns) == decision_columns(RADII, randomized=True)
    assert json.loads((tmp_path / "r.tsv.json").read_text())["randomized"] is True
    assert log["u"].between(0, 1).all() and log["u"].nunique() == 2
