"""The dataset runs: rows, resumption, the checks before anything is written, progress."""

import json
from pathlib import Path
from typing import ClassVar

import pandas as pd
import pytest
import torch

from rsutils import (
    CertifySettings,
    DataDependentSmooth,
    Dataset,
    Gaussian,
    SigmaAscent,
    Smooth,
    certify_dataset,
    certify_dataset_ds,
    predict_dataset,
)
from rsutils.logs.resumable import LogRepairedWarning
from rsutils.logs.runner import (
    CEILING_COLUMNS,
    CERTIFY_COLUMNS,
    PREDICT_COLUMNS,
    ResumableLog,
    ceiling_dataset,
    select_indices,
)

SETTINGS = CertifySettings(n0=10, n=100, alpha=0.01, seed=3, batch_size=50)


@pytest.fixture
def images() -> Dataset:
    x = torch.rand(6, 1, 28, 28, generator=torch.Generator().manual_seed(0))
    return Dataset("fashion-mnist", "test", x, torch.arange(6) % 10, tuple("abcdefghij"))


def test_certify_dataset_rows_are_the_certificates_of_smooth(cnn, images, tmp_path) -> None:
    smooth = Smooth(cnn, 10, Gaussian(0.25))
    log = certify_dataset(smooth, images, [1, 4], tmp_path / "c.tsv", SETTINGS, progress=False)
    assert list(log.columns) == CERTIFY_COLUMNS and list(log["idx"]) == [1, 4]
    cert = smooth.certify(images.images[4], 10, 100, 0.01, batch_size=7, seed=3, index=4)
    row = log.set_index("idx").loc[4]
    assert (row["predict"], row["radius"], row["count"]) == (
        cert.prediction,
        pytest.approx(cert.radius),
        cert.count,
    )
    assert (row["n0"], row["n"], row["alpha"], row["seed"]) == (10, 100, 0.01, 3)


@pytest.mark.parametrize("sigma", [0.05, 1.0])  # mostly at the ceiling, mostly not
def test_a_ceiling_log_says_where_certify_counts_all_n(cnn, images, tmp_path, sigma) -> None:
    smooth = Smooth(cnn, 10, Gaussian(sigma))
    every = range(len(images))
    logs = certify_dataset(smooth, images, every, tmp_path / "c.tsv", SETTINGS, progress=False)
    path = tmp_path / "ceiling.tsv"
    ceiling_dataset(smooth, images, [0, 1], path, SETTINGS, progress=False)
    found = ceiling_dataset(smooth, images, every, path, SETTINGS, progress=False)  # resumed
    assert list(found.columns) == CEILING_COLUMNS and list(found["idx"]) == list(every)
    assert list(found["selected"]) == list(logs["selected"])
    assert list(found["at_ceiling"]) == list((logs["count"] == SETTINGS.n).astype(int))
    assert (found["draws"] <= SETTINGS.n).all() and set(found["seed"]) == {3}


def test_predict_dataset_uses_n_alpha_and_seed(cnn, images, tmp_path) -> None:
    smooth = Smooth(cnn, 10, Gaussian(0.25))
    log = predict_dataset(smooth, images, range(3), tmp_path / "p.tsv", SETTINGS, progress=False)
    assert list(log.columns) == PREDICT_COLUMNS
    assert set(log["n"]) == {100} and set(log["seed"]) == {3}
    expected = smooth.predict(images.images[2], 100, 0.01, seed=3, index=2)
    assert log.set_index("idx").loc[2, "predict"] == expected


def test_a_log_is_extended_not_rewritten(cnn, images, tmp_path) -> None:
    smooth = Smooth(cnn, 10, Gaussian(0.25))
    path = tmp_path / "c.tsv"
    first = certify_dataset(smooth, images, [0, 2], path, SETTINGS, progress=False)
    both = certify_dataset(smooth, images, [0, 2, 5], path, SETTINGS, progress=False)
    pd.testing.assert_frame_equal(both.iloc[:2], first)
    with pytest.raises(ValueError, match=r"different settings \(n\)"):
        certify_dataset(smooth, images, [0], path, SETTINGS.replace(n=200), progress=False)


def test_a_torn_last_line_is_dropped_on_resume(tmp_path) -> None:
    path = tmp_path / "log.tsv"
    with ResumableLog(path, ["idx", "value"], {"run": 1}) as log:
        log.append({"idx": 0, "value": 1.5})
    with open(path, "a") as handle:
        handle.write("1\t2.")  # killed in the middle of a write
    with (
        pytest.warns(LogRepairedWarning, match=r"log\.tsv: cut 4 bytes from line 3 on"),
        ResumableLog(path, ["idx", "value"], {"run": 1}) as reopened,
    ):
        assert reopened.done == {0}
    assert path.read_text() == "idx\tvalue\n0\t1.5\n"


def test_resuming_with_other_settings_is_refused(tmp_path) -> None:
    path = tmp_path / "log.tsv"
    ResumableLog(path, ["idx"], {"n": 1000, "seed": 0}).close()
    with pytest.raises(ValueError, match=r"different settings \(n\).*choose another output file"):
        ResumableLog(path, ["idx"], {"n": 2000, "seed": 0})


def test_select_indices_mirrors_cohens_skip_and_max() -> None:
    assert select_indices(10, skip=3) == [0, 3, 6, 9]
    assert select_indices(10, skip=3, max_index=7) == [0, 3, 6]
    with pytest.raises(ValueError, match=r"skip must be >= 1"):
        select_indices(10, skip=0)


class _RecordingBar:
    """Stands in for the progress bar: records the total and every update."""

    made: ClassVar[list["_RecordingBar"]] = []

    def __init__(self, *args, total: int = 0, **kwargs) -> None:
        self.total, self.updates = total, []
        _RecordingBar.made.append(self)

    def __enter__(self) -> "_RecordingBar":
        return self

    def __exit__(self, *exc) -> None:
        pass

    def update(self, n: int = 1) -> None:
        self.updates.append(n)


def test_the_data_dependent_progress_bar_counts_the_ascent_too(
    cnn, images, tmp_path, monkeypatch
) -> None:
    """The ascent of a group advances the bar before its first row, by its share of the work."""
    from rsutils.ddrs import runs as runner
    from rsutils.logs import dataset_run

    monkeypatch.setattr(dataset_run, "ProgressBar", _RecordingBar)
    ascent = SigmaAscent(sigma0=0.25, iterations=3, draws=2)
    smooth = DataDependentSmooth(cnn, 10, ascent)
    runner.certify_dataset_ds(
        smooth, images, range(5), tmp_path / "ds.tsv", SETTINGS, ascent_batch=3
    )
    (bar,) = _RecordingBar.made
    ascent_work = (3 + 1) * 2 * runner.ASCENT_DRAW_COST
    certify_work = SETTINGS.n0 + SETTINGS.n
    assert runner.ds_work(ascent, SETTINGS) == (ascent_work, certify_work)
    group_of_3, group_of_2 = (
        [3 * ascent_work] + [certify_work] * 3,
        [2 * ascent_work] + [certify_work] * 2,
    )
    assert bar.updates == group_of_3 + group_of_2
    assert bar.total == sum(bar.updates) == 5 * (ascent_work + certify_work)


def run(kind: str, cnn, images: Dataset, indices, path: Path) -> None:
    """One dataset run of ``kind`` (certify, predict or ds), quiet."""
    if kind == "ds":
        smooth = DataDependentSmooth(cnn, 10, SigmaAscent(0.3, 0))
        certify_dataset_ds(smooth, images, indices, path, SETTINGS, progress=False)
    else:
        function = certify_dataset if kind == "certify" else predict_dataset
        function(Smooth(cnn, 10, Gaussian(0.25)), images, indices, path, SETTINGS, progress=False)


@pytest.mark.parametrize("kind", ["certify", "predict", "ds"])
@pytest.mark.parametrize(
    ("indices", "message"),
    [
        ([0, 6], r"indices must be integers in \[0, 6\) .*got 6 at position 1"),
        (range(2, -2, -3), r"got -1 at position 1"),
        ([1.0], r"got 1\.0 at position 0"),
        ([True], r"got True at position 0"),
        ([0], r"out is a directory"),
    ],
    ids=["too-big", "negative", "float", "bool", "directory"],
)
def test_a_rejected_run_writes_nothing(cnn, images, tmp_path, kind, indices, message) -> None:
    (tmp_path / "out").mkdir()
    path = tmp_path / ("out" if message == r"out is a directory" else "log.tsv")
    with pytest.raises(ValueError, match=message):
        run(kind, cnn, images, indices, path)
    assert [p.name for p in tmp_path.iterdir()] == ["out"]
    assert not any((tmp_path / "out").iterdir())


def test_a_dataset_log_records_torch_the_device_and_the_threads(cnn, images, tmp_path) -> None:
    from rsutils.core.environment import describe_environment

    certify_dataset(Smooth(cnn, 10, Gaussian(0.25)), images, [0], tmp_path / "c.tsv", SETTINGS)
    recorded = json.loads((tmp_path / "c.tsv.json").read_text())
    assert recorded["environments"] == [describe_environment("cpu")]


def test_a_quiet_run_names_its_log_and_counts_its_inputs_in_the_side_channel(
    cnn, images, tmp_path, monkeypatch
) -> None:
    """With the bar off (as in the book), the side channel says which log and how far."""
    from rsutils.progress import PROGRESS_FILE

    monkeypatch.setenv(PROGRESS_FILE, str(tmp_path / "progress.log"))
    smooth = Smooth(cnn, 10, Gaussian(0.25))
    certify_dataset(smooth, images, [0, 2, 5], tmp_path / "c.tsv", SETTINGS, progress=False)
    lines = (tmp_path / "progress.log").read_text().splitlines()
    assert lines[0].startswith("certify c.tsv | 0 of 3 inputs | 00:0")
    assert lines[-1].startswith("certify c.tsv | 3 of 3 inputs | ")
    assert lines[-1].endswith(" elapsed | done")
