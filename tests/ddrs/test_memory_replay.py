"""Replaying a data-dependent log's memory for a subset of its inputs."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import torch

from rsutils import (
    CertificateMemory,
    CertifySettings,
    DataDependentSmooth,
    Dataset,
    SigmaAscent,
    certify_dataset_ds,
)
from rsutils.ddrs.memory_replay import replay_memory

SETTINGS = CertifySettings(n0=20, n=200, alpha=0.01, seed=5, batch_size=64)
ANSWERS = ["predict", "correct", "radius", "memory"]


def images(count: int = 6) -> Dataset:
    x = torch.rand(count, 1, 28, 28, generator=torch.Generator().manual_seed(0))
    return Dataset("fashion-mnist", "test", x, torch.arange(count) % 10, tuple("abcdefghij"))


def synthetic_log(data: Dataset) -> pd.DataFrame:
    """Inputs 0 and 1 are the same image with different classes and radius 1: the second
    gets the first's class while the first is stored, and its own when it comes alone."""
    data.images[1] = data.images[0]
    return pd.DataFrame(
        {
            "idx": [0, 1, 2],
            "label": [0, 1, 2],
            "mc_predict": [0, 1, 2],
            "mc_radius": [1.0, 1.0, 0.5],
            "scale": [0.3, 0.4, 0.5],
        }
    )


def test_an_input_answered_by_a_stored_neighbour_answers_itself_without_it() -> None:
    data = images()
    log = synthetic_log(data)
    whole = replay_memory(log, data)
    assert whole["memory"].tolist()[:2] == ["kept", "adopted"]
    assert whole["predict"].tolist() == [0, 0, 2] and whole["correct"].tolist() == [1, 0, 1]
    alone = replay_memory(log, data, indices=[1, 2])
    assert alone["idx"].tolist() == [1, 2] and alone["memory"].tolist() == ["kept", "kept"]
    assert alone["radius"].tolist() == [1.0, 0.5] and alone["correct"].tolist() == [1, 1]
    assert alone["scale"].tolist() == [0.4, 0.5]  # the Monte Carlo columns stay


@pytest.mark.slow  # sigma ascent on every input of a dataset, twice
def test_the_replayed_subset_is_the_log_of_a_run_on_the_subset(cnn, tmp_path: Path) -> None:
    data, ascent = images(8), SigmaAscent(sigma0=0.3, iterations=2, lr=0.05, draws=2)

    def run(indices, name: str) -> pd.DataFrame:
        with CertificateMemory(tmp_path / f"{name}.sqlite") as memory:
            smooth = DataDependentSmooth(cnn, 10, ascent, memory)
            log = certify_dataset_ds(
                smooth, data, indices, tmp_path / f"{name}.tsv", SETTINGS, progress=False
            )
        return log.drop(columns="time")

    whole, subset = run(range(8), "whole"), run([1, 4, 6, 7], "subset")
    pd.testing.assert_frame_equal(replay_memory(whole, data), whole)
    pd.testing.assert_frame_equal(replay_memory(whole, data, indices=[1, 4, 6, 7]), subset)


def test_a_log_without_monte_carlo_answers_is_refused() -> None:
    with pytest.raises(ValueError, match="certify_dataset_ds"):
        replay_memory(pd.DataFrame({"idx": [0], "label": [0], "predict": [0]}), images())
