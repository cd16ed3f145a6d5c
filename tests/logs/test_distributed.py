"""Sharded runs: each rank's shard, merged, is the log one process would write."""

from __future__ import annotations

import json
import subprocess
import sys

import pandas as pd
import pytest
import torch

from rsutils.logs.distributed import merge_shards, run_sharded, shard_path
from rsutils.logs.resumable import ResumableLog
from rsutils.models.architectures import build_model
from rsutils.models.checkpoints import save_checkpoint

COLUMNS = ["idx", "label", "predict", "time"]


def write(path, rows, settings=None, environment=None) -> None:
    with ResumableLog(path, COLUMNS, settings or {"n": 10}, environment=environment) as log:
        for idx in rows:
            log.append({"idx": idx, "label": idx % 3, "predict": idx % 3, "time": 0.5})


def test_shards_merge_in_input_order_and_are_removed(tmp_path) -> None:
    out = tmp_path / "log.tsv"
    indices = [0, 20, 40, 60, 80]
    write(shard_path(out, 0, 2), [0, 40, 80], environment={"host": "a"})
    write(shard_path(out, 1, 2), [20, 60], environment={"host": "b"})
    merge_shards(out, 2, indices)
    assert pd.read_csv(out, sep="\t")["idx"].tolist() == indices
    sidecar = json.loads((tmp_path / "log.tsv.json").read_text())
    assert sidecar["n"] == 10 and sidecar["environments"] == [{"host": "a"}, {"host": "b"}]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["log.tsv", "log.tsv.json"]


def test_rows_already_in_the_log_are_kept_and_the_rest_come_from_shards(tmp_path) -> None:
    out = tmp_path / "log.tsv"
    write(out, [0, 7, 20])  # a stopped run, with a row of another --skip (7)
    write(shard_path(out, 0, 2), [40])
    write(shard_path(out, 1, 2), [60])
    merge_shards(out, 2, [0, 20, 40, 60])
    assert pd.read_csv(out, sep="\t")["idx"].tolist() == [0, 7, 20, 40, 60]


def test_shards_of_other_settings_or_missing_inputs_are_refused(tmp_path) -> None:
    out = tmp_path / "log.tsv"
    write(shard_path(out, 0, 2), [0], settings={"n": 10})
    write(shard_path(out, 1, 2), [20], settings={"n": 99})
    with pytest.raises(ValueError, match="different settings"):
        merge_shards(out, 2, [0, 20])
    other = tmp_path / "other.tsv"
    write(shard_path(other, 0, 2), [0])
    with pytest.raises(ValueError, match=r"1 inputs of .* are in no shard"):
        merge_shards(other, 2, [0, 20])


def test_without_torchrun_the_whole_run_is_one_process(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    calls = []
    run_sharded(
        lambda share, path: calls.append((share, path)),
        tmp_path / "x.tsv",
        [1, 2],
        torch.device("cpu"),
    )
    assert calls == [([1, 2], tmp_path / "x.tsv")]


@pytest.mark.slow  # three subprocesses, two of them under torchrun
@pytest.mark.parametrize("command", ["certify", "predict"])
def test_torchrun_with_two_ranks_writes_the_single_process_log(
    command, fake_fashion_mnist, tmp_path
) -> None:
    torch.manual_seed(0)
    checkpoint = tmp_path / "model.pt"
    model = build_model("small_cnn", "fashion-mnist")
    save_checkpoint(model, checkpoint, arch="small_cnn", dataset="fashion-mnist")

    def args(out) -> list[str]:
        return [command, "fashion-mnist", str(checkpoint), "0.25", str(out), "--N", "300",
                "--batch", "128", "--skip", "3", "--stop", "25", "--alpha", "0.01",
                "--data-root", str(fake_fashion_mnist), "--quiet", "--device", "cpu"]  # fmt: skip

    single, sharded = tmp_path / "single.tsv", tmp_path / "sharded.tsv"
    subprocess.run([sys.executable, "-m", "rsutils", *args(single)], check=True)
    torchrun = [sys.executable, "-m", "torch.distributed.run", "--standalone",
                "--nproc_per_node", "2", "-m", "rsutils"]  # fmt: skip
    subprocess.run([*torchrun, *args(sharded)], check=True, capture_output=True)
    one, two = (pd.read_csv(p, sep="\t").drop(columns="time") for p in (single, sharded))
    assert len(one) == 9 and one.equals(two)
    assert sorted(p.name for p in tmp_path.glob("sharded.tsv*")) == [
        "sharded.tsv",
        "sharded.tsv.json",
    ]
    # Started again, the finished run has nothing left to do and leaves the log as it is.
    before = sharded.read_bytes()
    subprocess.run([*torchrun, *args(sharded)], check=True, capture_output=True)
    assert sharded.read_bytes() == before
