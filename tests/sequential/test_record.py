"""Recorded draws (rsutils.sequential.record): CERTIFY's own draws, kept and read back."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import rsutils as rs
from rsutils.sequential import Certify, LookSchedule, replay
from rsutils.sequential.record import DrawRecord, RecordedCounter, pack_labels, unpack_labels

N0, N, ALPHA, SEED, INDEX = 30, 1200, 0.01, 5, 3


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
    assert replay(Certify(N, ALPHA), smooth, record) == live
    fewer = smooth.certify(x, N0, 500, ALPHA, seed=SEED, index=INDEX)
    assert replay(Certify(500, ALPHA), smooth, record).count <= fewer.n
    assert replay(Certify(500, ALPHA), smooth, record).selected == fewer.selected


def test_a_replay_cannot_read_past_the_record(setting) -> None:
    smooth, _, record = setting
    longer = rs.Decide(LookSchedule.geometric(2 * N, ALPHA, first=20), (5.0,))
    with pytest.raises(ValueError, match="record at least the draws"):
        replay(longer, smooth, record)


def test_the_counter_counts_prefixes_and_refuses_going_back() -> None:
    counter = RecordedCounter(np.array([0, 2, 2, 1, 2]), 3)
    assert counter.advance(3).tolist() == [1, 0, 2]
    assert counter.labels().tolist() == [0, 2, 2]
    assert counter.advance(5).tolist() == [1, 1, 3]
    with pytest.raises(ValueError, match="cannot advance to 4"):
        counter.advance(4)


def test_the_draws_of_a_record_select_as_certify_or_test_a_label(setting) -> None:
    _, _, record = setting
    draws = record.draws()
    assert draws.n0 == N0 and draws.selected == record.selected
    given = record.draws(selects=False, label=7)
    assert given.n0 == 0 and given.true_label == 7
    with pytest.raises(ValueError, match="selection draws"):
        _ = given.selected
    with pytest.raises(ValueError, match="label=int"):
        _ = record.draws().true_label
    assert given.hits(7, 50).tolist() == (record.estimation[:50] == 7).astype(int).tolist()


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


def test_labels_pack_and_unpack() -> None:
    labels = np.array([0, 9, 9, 65535, 3])
    assert np.array_equal(unpack_labels(pack_labels(labels)), labels)
    assert "\t" not in pack_labels(np.zeros(10_000, dtype=int))
    with pytest.raises(ValueError, match="65535"):
        pack_labels(np.array([70_000]))
