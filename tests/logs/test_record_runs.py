"""Recorded draws over a dataset: a resumable log whose replays are the live runs' tables."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rsutils import CertifySettings, Dataset, Gaussian, Smooth
from rsutils.core.anytime import AnytimeSchedule
from rsutils.core.sequential import LookSchedule
from rsutils.logs.record_runs import (
    certify_recorded_dataset,
    live_disagreements,
    pack_labels,
    read_record_log,
    read_records,
    record_dataset,
    replay_certify_log,
    replay_decisions,
    replay_planned_log,
    replay_radius_looks_log,
    unpack_labels,
)
from rsutils.logs.runner import certify_dataset
from rsutils.logs.sequential_runs import (
    certify_planned_dataset,
    decide_dataset,
    decide_label_dataset,
)

SETTINGS = CertifySettings(n0=20, n=300, alpha=0.01, seed=3, batch_size=64)
RADII = [0.0, 0.1, 0.3]


@pytest.fixture
def images() -> Dataset:
    x = torch.rand(5, 1, 28, 28, generator=torch.Generator().manual_seed(0))
    return Dataset("fashion-mnist", "test", x, torch.arange(5) % 10, tuple("abcdefghij"))


def test_labels_pack_and_unpack() -> None:
    labels = np.array([0, 9, 9, 65535, 3])
    assert np.array_equal(unpack_labels(pack_labels(labels)), labels)
    assert "\t" not in pack_labels(np.zeros(10_000, dtype=int))
    with pytest.raises(ValueError, match="65535"):
        pack_labels(np.array([70_000]))


def test_the_record_log_resumes_and_replays_certify(cnn, images, tmp_path) -> None:
    smooth = Smooth(cnn, 10, Gaussian(0.25))
    path = tmp_path / "r.tsv"
    first = record_dataset(smooth, images, [1], path, SETTINGS, progress=False)
    log = record_dataset(smooth, images, [1, 4], path, SETTINGS, progress=False)
    assert list(log["idx"]) == [1, 4]
    assert log.iloc[:1].drop(columns="time").equals(first.drop(columns="time"))
    records = read_records(log, 10)
    assert [r.index for r in records] == [1, 4] and records[0].n == 300
    live = certify_dataset(smooth, images, [1, 4], tmp_path / "c.tsv", SETTINGS, progress=False)
    replayed = replay_certify_log(smooth, log, SETTINGS.alpha)
    for column in ("idx", "label", "predict", "count", "n", "n0", "correct"):
        assert replayed[column].tolist() == live[column].tolist(), column
    assert np.allclose(replayed["radius"], live["radius"], atol=1e-4)  # the log prints 4 digits


@pytest.mark.parametrize("true_label", [False, True])
def test_replayed_decisions_are_the_live_runs(cnn, images, tmp_path, true_label) -> None:
    smooth = Smooth(cnn, 10, Gaussian(0.25))
    log = record_dataset(smooth, images, [0, 2, 3], tmp_path / "r.tsv", SETTINGS, progress=False)
    schedule = LookSchedule.geometric(300, 0.01, first=20)
    run = decide_label_dataset if true_label else decide_dataset
    live = run(
        smooth, images, [0, 2, 3], tmp_path / "d.tsv", SETTINGS, schedule, RADII, progress=False
    )
    replayed = replay_decisions(smooth, log, RADII, schedule, true_label=true_label)
    assert replayed.equals(live.drop(columns="time")[replayed.columns])
    anytime = replay_decisions(
        smooth, log, RADII, AnytimeSchedule.geometric(300, 0.01), true_label=true_label
    )
    assert list(anytime.columns) == list(replayed.columns)


def test_replayed_planned_draws_are_the_live_run(cnn, images, tmp_path) -> None:
    smooth = Smooth(cnn, 10, Gaussian(0.25))
    log = record_dataset(smooth, images, [0, 2], tmp_path / "r.tsv", SETTINGS, progress=False)
    live = certify_planned_dataset(
        smooth, images, [0, 2], tmp_path / "p.tsv", SETTINGS, 0.05, progress=False
    )
    replayed = replay_planned_log(smooth, log, SETTINGS.alpha, 0.05)
    for column in ("idx", "predict", "count", "n"):
        assert replayed[column].tolist() == live[column].tolist(), column


def test_replayed_radius_looks_are_the_live_procedure(cnn, images, tmp_path) -> None:
    from rsutils.core.sequential_radius import certify_looks

    smooth = Smooth(cnn, 10, Gaussian(0.25))
    log = record_dataset(smooth, images, [0, 2], tmp_path / "r.tsv", SETTINGS, progress=False)
    schedule = LookSchedule.geometric(300, 0.01, first=20)
    replayed = replay_radius_looks_log(smooth, log, schedule, 0.05)
    for row in replayed.itertuples(index=False):
        live = certify_looks(
            smooth, images.images[row.idx], 20, schedule, 0.05, seed=3, index=row.idx
        )
        assert (row.count, row.n, row.look) == (
            live.certificate.count,
            live.certificate.n,
            live.look,
        )
        assert row.predict == live.prediction and row.radius == live.radius


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
