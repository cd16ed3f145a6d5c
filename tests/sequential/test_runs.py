"""Procedures over a dataset (rsutils.sequential.runs): live logs, replays, records."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from rsutils import CertifySettings, Dataset, Gaussian, Smooth
from rsutils.logs.runner import certify_dataset
from rsutils.sequential import (
    AnytimeSchedule,
    Decide,
    LookSchedule,
    PlannedDraws,
    decisions_long,
    settle,
)
from rsutils.sequential.decisions import decision_columns
from rsutils.sequential.runs import (
    certify_recorded_dataset,
    live_disagreements,
    read_record_log,
    read_records,
    record_dataset,
    replay_log,
    run_procedure,
)

SETTINGS = CertifySettings(n0=20, n=300, alpha=0.01, seed=3, batch_size=64)
SCHEDULE = LookSchedule.geometric(300, 0.01, first=20)
RADII = (0.0, 0.1, 0.3)


@pytest.fixture
def images() -> Dataset:
    x = torch.rand(5, 1, 28, 28, generator=torch.Generator().manual_seed(0))
    return Dataset("fashion-mnist", "test", x, torch.arange(5) % 10, tuple("abcdefghij"))


def test_a_decision_log_holds_the_decisions_and_resumes(cnn, images, tmp_path) -> None:
    smooth, path = Smooth(cnn, 10, Gaussian(0.25)), tmp_path / "d.tsv"
    procedure = Decide(SCHEDULE, RADII)
    first = run_procedure(smooth, images, [1], path, procedure, SETTINGS, progress=False)
    log = run_procedure(smooth, images, [1, 4], path, procedure, SETTINGS, progress=False)
    assert list(log.columns) == decision_columns(RADII) and list(log["idx"]) == [1, 4]
    assert log.iloc[:1].drop(columns="time").equals(first.drop(columns="time"))
    decisions = settle(procedure, smooth, images.images[4], n0=20, seed=3, index=4)
    row = log.set_index("idx").loc[4]
    for r, decision in zip(RADII, decisions, strict=True):
        assert row[f"certified@{r:g}"] == decision.certified
        assert row[f"draws@{r:g}"] == decision.draws
    long = decisions_long(log, RADII)
    assert len(long) == 2 * len(RADII)
    assert set(long["forward_passes"]) <= {20 + n for n in SCHEDULE.looks}
    assert (long["correct"] <= long["certified"]).all()


def test_a_true_label_log_tests_the_label_without_selection(cnn, images, tmp_path) -> None:
    smooth = Smooth(cnn, 10, Gaussian(0.25))
    procedure = Decide(SCHEDULE, RADII, true_label=True)
    log = run_procedure(smooth, images, [1, 4], tmp_path / "l.tsv", procedure, SETTINGS,
                        progress=False)  # fmt: skip
    assert (log["selected"] == log["label"]).all() and (log["n0"] == 0).all()
    long = decisions_long(log, RADII)
    assert (long["correct"] == long["certified"]).all()
    assert set(long["forward_passes"]) <= set(SCHEDULE.looks)
    sidecar = json.loads((tmp_path / "l.tsv.json").read_text())
    assert sidecar["tested"] == "true label" and sidecar["n0"] == 0


def test_a_planned_log_is_a_certify_log(cnn, images, tmp_path) -> None:
    smooth = Smooth(cnn, 10, Gaussian(0.25))
    procedure = PlannedDraws(300, 0.01, 0.05, min_draws=30)
    log = run_procedure(smooth, images, [0, 2], tmp_path / "p.tsv", procedure, SETTINGS,
                        progress=False)  # fmt: skip
    live = certify_dataset(smooth, images, [0], tmp_path / "c.tsv", SETTINGS, progress=False)
    assert list(log.columns) == list(live.columns)
    cert = settle(procedure, smooth, images.images[2], n0=20, seed=3, index=2)
    row = log.set_index("idx").loc[2]
    assert (row["predict"], row["n"], row["count"]) == (cert.prediction, cert.n, cert.count)
    assert row["radius"] == pytest.approx(cert.radius) and row["scale"] == 0.25


@pytest.mark.parametrize(
    "procedure",
    [
        Decide(SCHEDULE, RADII),
        Decide(LookSchedule.geometric(300, 0.01, first=20, randomized=True), RADII, True),
        Decide(AnytimeSchedule.geometric(300, 0.01), RADII, true_label=True),
        PlannedDraws(300, 0.01, 0.05),
    ],
    ids=["spending", "randomised label", "sequence label", "planned"],
)
def test_the_replayed_log_is_the_live_log(cnn, images, tmp_path, procedure) -> None:
    smooth = Smooth(cnn, 10, Gaussian(0.25))
    records = record_dataset(smooth, images, [0, 2, 3], tmp_path / "r.tsv", SETTINGS,
                             progress=False)  # fmt: skip
    live = run_procedure(smooth, images, [0, 2, 3], tmp_path / "d.tsv", procedure, SETTINGS,
                         progress=False)  # fmt: skip
    replayed = replay_log(smooth, records, procedure)
    expected = live.drop(columns=["time", "scale"], errors="ignore")
    assert replayed[expected.columns].equals(expected)
    recorded = json.loads((tmp_path / "d.tsv.json").read_text())
    assert recorded["procedure"] == procedure.name and recorded["seed"] == 3


def test_a_run_records_the_test_it_ran(cnn, images, tmp_path) -> None:
    """A confidence-sequence run records its looks, level and sidedness; a randomised
    one its levels, that it is randomised, and each input's u in a column."""
    smooth = Smooth(cnn, 10, Gaussian(0.25))
    sequence = Decide(AnytimeSchedule.geometric(300, 0.01), RADII)
    run_procedure(smooth, images, [0, 1], tmp_path / "s.tsv", sequence, SETTINGS, progress=False)
    recorded = json.loads((tmp_path / "s.tsv.json").read_text())
    assert recorded["test"] == "confidence sequence" and recorded["one_sided"] is True
    assert recorded["looks"] == list(sequence.test.looks) and recorded["alpha"] == 0.01
    randomised = Decide(LookSchedule.geometric(300, 0.01, first=20, randomized=True), RADII)
    log = run_procedure(smooth, images, [0, 1], tmp_path / "r.tsv", randomised, SETTINGS,
                        progress=False)  # fmt: skip
    assert list(log.columns) == decision_columns(RADII, randomized=True)
    assert json.loads((tmp_path / "r.tsv.json").read_text())["randomized"] is True
    assert log["u"].between(0, 1).all() and log["u"].nunique() == 2


def test_a_log_of_another_procedure_is_refused_and_left_alone(cnn, images, tmp_path) -> None:
    smooth, path = Smooth(cnn, 10, Gaussian(0.25)), tmp_path / "log.tsv"
    run_procedure(smooth, images, [0], path, Decide(SCHEDULE, RADII), SETTINGS, progress=False)
    before = path.read_text()
    with pytest.raises(ValueError, match="settings"):
        run_procedure(smooth, images, [1], path, Decide(SCHEDULE, (0.2,)), SETTINGS,
                      progress=False)  # fmt: skip
    assert path.read_text() == before


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: Decide(SCHEDULE, (0.1, -1.0)), "radius"),
        (lambda: Decide(SCHEDULE, (0.1, 0.1)), "differ"),
        (lambda: Decide(SCHEDULE, ()), "at least one radius"),
        (lambda: PlannedDraws(300, 0.01, -1), "radius_loss"),
    ],
)
def test_a_bad_procedure_is_refused_before_anything_runs(make, message) -> None:
    with pytest.raises(ValueError, match=message):
        make()


def test_the_record_log_resumes_and_replays_certify(cnn, images, tmp_path) -> None:
    from rsutils.sequential import Certify

    smooth = Smooth(cnn, 10, Gaussian(0.25))
    path = tmp_path / "r.tsv"
    first = record_dataset(smooth, images, [1], path, SETTINGS, progress=False)
    log = record_dataset(smooth, images, [1, 4], path, SETTINGS, progress=False)
    assert list(log["idx"]) == [1, 4]
    assert log.iloc[:1].drop(columns="time").equals(first.drop(columns="time"))
    records = read_records(log, 10)
    assert [r.index for r in records] == [1, 4] and records[0].n == 300
    live = certify_dataset(smooth, images, [1, 4], tmp_path / "c.tsv", SETTINGS, progress=False)
    replayed = replay_log(smooth, log, Certify(SETTINGS.n, SETTINGS.alpha))
    for column in ("idx", "label", "predict", "count", "n", "n0", "correct"):
        assert replayed[column].tolist() == live[column].tolist(), column
    assert np.allclose(replayed["radius"], live["radius"], atol=1e-4)  # the log prints 4 digits


def test_certify_with_a_record_is_certify_and_keeps_the_draws(cnn, images, tmp_path) -> None:
    """The CERTIFY log made by recording then replaying is the live run's, settings and
    all, resumes from where it stopped, and leaves the record of every input behind."""
    smooth = Smooth(cnn, 10, Gaussian(0.25))
    path, record_path = tmp_path / "c.tsv", tmp_path / "r.tsv"
    live = certify_dataset(smooth, images, [1, 4, 2], tmp_path / "l.tsv", SETTINGS, progress=False)
    certify_recorded_dataset(smooth, images, [1], path, record_path, SETTINGS, progress=False)
    log = certify_recorded_dataset(
        smooth, images, [1, 4, 2], path, record_path, SETTINGS, progress=False
    )
    assert log.drop(columns="time").equals(live.drop(columns="time"))
    sidecar = path.with_name(path.name + ".json").read_text()
    assert sidecar == (tmp_path / "l.tsv.json").read_text()
    record = read_record_log(record_path)
    assert record["idx"].tolist() == [1, 4, 2]
    assert log["time"].tolist() == record["time"].tolist()


def test_certify_with_a_record_checks_the_log_before_it_records(cnn, images, tmp_path) -> None:
    smooth = Smooth(cnn, 10, Gaussian(0.25))
    path, record_path = tmp_path / "c.tsv", tmp_path / "r.tsv"
    certify_recorded_dataset(smooth, images, [1], path, record_path, SETTINGS, progress=False)
    other = SETTINGS.replace(n=200)
    with pytest.raises(ValueError, match="settings"):
        certify_recorded_dataset(smooth, images, [2], path, tmp_path / "r2.tsv", other,
                                 progress=False)  # fmt: skip
    assert not (tmp_path / "r2.tsv").exists()


def test_live_certify_finds_a_log_whose_draws_are_not_certifys(cnn, images, tmp_path) -> None:
    smooth = Smooth(cnn, 10, Gaussian(0.25))
    log = certify_recorded_dataset(
        smooth, images, [0, 3], tmp_path / "c.tsv", tmp_path / "r.tsv", SETTINGS, progress=False
    )
    assert live_disagreements(smooth, images, log, SETTINGS, [0, 3]) == []
    other_seed = SETTINGS.replace(seed=4)  # other draws: some count differs
    assert live_disagreements(smooth, images, log, other_seed, [0, 3]) != []
