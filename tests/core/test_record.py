"""Recorded draws (rsutils.core.record): every replay is the live procedure exactly."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import rsutils as rs
from rsutils.core.evaluation import decide_label_radii
from rsutils.core.record import (
    DrawRecord,
    RecordedCounter,
    replay_certify,
    replay_decide,
    replay_decide_label,
    replay_planned,
)
from rsutils.core.sample_size import certify_planned
from rsutils.core.sequential import LookSchedule, decide_radii

N0, N, ALPHA, SEED, INDEX = 30, 1200, 0.01, 5, 3
RADII = [0.0, 0.1, 0.25, 0.6]
SCHEDULES = {
    "spending": LookSchedule.geometric(N, ALPHA, first=20),
    "randomised": LookSchedule.geometric(N, ALPHA, first=20, randomized=True),
    "anytime": rs.AnytimeSchedule.geometric(N, ALPHA, growth=1.3),
}


@pytest.fixture
def setting(cnn) -> tuple[rs.Smooth, torch.Tensor, DrawRecord]:
    smooth = rs.Smooth(cnn, 10, rs.Gaussian(0.25))
    x = torch.rand(1, 28, 28, generator=torch.Generator().manual_seed(1))
    record = rs.record_draws(smooth, x, N0, N, batch_size=97, seed=SEED, index=INDEX)
    return smooth, x, record


def test_the_record_is_certifys_draws(setting) -> None:
    smooth, x, record = setting
    assert (record.n0, record.n, record.dim) == (N0, N, x.numel())
    counts = smooth.sample_counts(x, N, 200, seed=SEED, index=INDEX)
    assert np.array_equal(np.bincount(record.estimation, minlength=10), counts)
    live = smooth.certify(x, N0, N, ALPHA, batch_size=300, seed=SEED, index=INDEX)
    assert replay_certify(smooth, record, ALPHA) == live
    fewer = smooth.certify(x, N0, 500, ALPHA, seed=SEED, index=INDEX)
    assert replay_certify(smooth, record, ALPHA, n=500).count <= fewer.n
    assert replay_certify(smooth, record, ALPHA, n=500).selected == fewer.selected


@pytest.mark.parametrize("name", SCHEDULES)
def test_replayed_decisions_are_the_live_ones(setting, name) -> None:
    smooth, x, record = setting
    schedule = SCHEDULES[name]
    live = decide_radii(smooth, x, RADII, N0, schedule, 64, SEED, INDEX)
    assert replay_decide(smooth, record, RADII, schedule) == live
    label = (record.selected + 1) % 10 if name == "spending" else record.selected
    live_label = decide_label_radii(smooth, x, label, RADII, schedule, 64, SEED, INDEX)
    assert replay_decide_label(smooth, record, label, RADII, schedule) == live_label


def test_replayed_planned_draws_are_the_live_ones(setting) -> None:
    smooth, x, record = setting
    live = certify_planned(smooth, x, N0, N, ALPHA, 0.05, 64, SEED, INDEX, min_draws=40)
    assert replay_planned(smooth, record, ALPHA, 0.05, min_draws=40) == live


def test_a_replay_cannot_read_past_the_record(setting) -> None:
    smooth, _, record = setting
    longer = LookSchedule.geometric(2 * N, ALPHA, first=20)
    with pytest.raises(ValueError, match="record at least the draws"):
        replay_decide(smooth, record, [5.0], longer)


def test_the_counter_counts_prefixes_and_refuses_going_back() -> None:
    counter = RecordedCounter(np.array([0, 2, 2, 1, 2]), 3)
    assert counter.advance(3).tolist() == [1, 0, 2]
    assert counter.advance(5).tolist() == [1, 1, 3]
    with pytest.raises(ValueError, match="cannot advance to 4"):
        counter.advance(4)


@pytest.mark.parametrize(
    ("selection", "match"),
    [
        (np.array([0, 3]), "outside"),
        (np.array([0.0, 1.0]), "integer"),
        (np.zeros((2, 2), int), "1-D"),
    ],
)
def test_a_bad_record_is_refused(selection, match) -> None:
    with pytest.raises(ValueError, match=match):
        DrawRecord(selection, np.array([0, 1]), 3, 0, 0, 4)
