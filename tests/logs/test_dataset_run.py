"""The skeleton of every dataset run: checks first, then one resumable, timed loop."""

from __future__ import annotations

import json
from typing import Any

import pytest
import torch

from rsutils import Dataset, DatasetRun, Gaussian, InputGroups, Smooth, run_dataset
from rsutils.logs import dataset_run
from rsutils.logs.dataset_run import answer_columns, check_indices


@pytest.fixture
def data() -> Dataset:
    x = torch.rand(5, 1, 28, 28, generator=torch.Generator().manual_seed(0))
    return Dataset("fashion-mnist", "test", x, torch.arange(5), tuple("abcde"))


def label_run(data: Dataset, **fields: Any) -> DatasetRun:
    """A run whose row is the input's label and answer 0 (no Monte Carlo)."""

    def row(i: int) -> dict[str, Any]:
        return answer_columns(0, int(data.labels[i]))

    columns = ["idx", "label", "predict", "correct", "time"]
    return DatasetRun("labels", "predict", columns, {"what": "labels"}, row, **fields)


def test_the_sidecar_records_classifier_dataset_run_and_config_in_that_order(
    cnn, data, tmp_path
) -> None:
    smooth = Smooth(cnn, 10, Gaussian(0.25))
    path = tmp_path / "l.tsv"
    log = run_dataset(smooth, data, [3, 1], path, label_run(data), config={"m": 1}, progress=False)
    assert list(log["idx"]) == [3, 1] and list(log["correct"]) == [0, 0]
    recorded = json.loads((tmp_path / "l.tsv.json").read_text())
    assert list(recorded) == [
        "noise", "device", "rows", "dataset", "split", "what", "m", "environments"
    ]  # fmt: skip
    run, config = label_run(data), {"m": 1}
    resumed = run_dataset(smooth, data, [3, 1, 0], path, run, config=config, progress=False)
    assert list(resumed["idx"]) == [3, 1, 0] and list(resumed["correct"]) == [0, 0, 1]


def test_groups_are_prepared_before_their_rows_and_counted_on_the_bar(
    cnn, data, tmp_path, monkeypatch
) -> None:
    events: list[tuple[str, object]] = []
    bars: list[dict[str, Any]] = []

    class Bar:
        def __init__(self, **kwargs: Any) -> None:
            bars.append(kwargs)

        def __enter__(self) -> Bar:
            return self

        def __exit__(self, *exc: object) -> None:
            pass

        def update(self, n: int) -> None:
            events.append(("bar", n))

    monkeypatch.setattr(dataset_run, "ProgressBar", Bar)
    run = label_run(data)

    def row(i: int) -> dict[str, Any]:
        events.append(("row", i))
        return run.row(i)

    groups = InputGroups(2, lambda group: events.append(("group", list(group))), cost=10)
    grouped = DatasetRun("g", "predict", run.columns, {}, row, groups=groups, row_cost=3, unit="d")
    smooth = Smooth(cnn, 10, Gaussian(0.25))
    run_dataset(smooth, data, [4, 0, 2], tmp_path / "g.tsv", grouped)
    assert events == [
        ("group", [4, 0]), ("bar", 20), ("row", 4), ("bar", 3), ("row", 0), ("bar", 3),
        ("group", [2]), ("bar", 10), ("row", 2), ("bar", 3),
    ]  # fmt: skip
    (bar,) = bars
    assert (bar["total"], bar["unit"], bar["unit_scale"]) == (3 * 13, "d", True)
    assert bar["desc"] == "g g.tsv"


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda row: InputGroups(0, print), r"size must be a positive integer, got 0"),
        (lambda row: InputGroups(2, print, cost=-1), r"cost must be an integer >= 0"),
        (lambda row: DatasetRun("x", "decide", ["idx", "time"], {}, row), r"algorithm must be"),
        (lambda row: DatasetRun("x", "predict", ["idx"], {}, row), r"must include \['time'\]"),
        (
            lambda row: DatasetRun("x", "predict", ["idx", "time"], {}, row, row_cost=0),
            r"row_cost must be a positive integer",
        ),
    ],
    ids=["group-size", "group-cost", "algorithm", "columns", "row-cost"],
)
def test_a_malformed_run_is_refused_when_it_is_described(build, message) -> None:
    with pytest.raises(ValueError, match=message):
        build(lambda i: {})


def test_bad_indices_are_refused_before_the_log_is_created(cnn, data, tmp_path) -> None:
    smooth = Smooth(cnn, 10, Gaussian(0.25))
    with pytest.raises(ValueError, match=r"got 5 at position 1"):
        run_dataset(smooth, data, [0, 5], tmp_path / "l.tsv", label_run(data))
    assert list(tmp_path.iterdir()) == []
    assert check_indices(iter([2, 0]), 5) == [2, 0]
