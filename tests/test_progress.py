"""The progress bar's side channel: plain lines, rate-limited, even when the bar is off."""

from __future__ import annotations

import pytest

from rsutils import progress
from rsutils.progress import PROGRESS_FILE, ProgressBar, progress_line


class FakeClock:
    """A clock that moves only when told to."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch) -> FakeClock:
    fake = FakeClock()
    monkeypatch.setattr(progress, "_clock", fake)
    return fake


@pytest.fixture
def channel(tmp_path, monkeypatch):
    path = tmp_path / "progress.log"
    monkeypatch.setenv(PROGRESS_FILE, str(path))
    return path


def lines(path) -> list[str]:
    return path.read_text().splitlines()


def test_a_line_says_what_runs_how_far_and_how_long_is_left() -> None:
    assert progress_line("train cnn", 30, 120, 60.0) == (
        "train cnn | step 30 of 120 | 01:00 elapsed | 03:00 remaining"
    )
    assert progress_line("certify a.tsv", 3, 10, 5.0, unit="image") == (
        "certify a.tsv | 3 of 10 images | 00:05 elapsed | 00:11 remaining"
    )
    assert progress_line("ds", 1_500_000, 4_000_000, 3600.0, unit="draw", unit_scale=True) == (
        "ds | 1.50M of 4.00M draws | 1:00:00 elapsed | 1:40:00 remaining"
    )
    assert progress_line("x", 0, 10, 1.0) == "x | step 0 of 10 | 00:01 elapsed | ? remaining"
    assert progress_line(None, 7, None, 2.0) == "progress | step 7 | 00:02 elapsed | ? remaining"
    assert progress_line("x", 10, 10, 9.0, done=True) == "x | step 10 of 10 | 00:09 elapsed | done"


def test_a_disabled_bar_still_reports_its_start_and_its_end(channel, clock, capsys) -> None:
    with ProgressBar(total=4, desc="train", disable=True) as bar:
        for _ in range(4):
            clock.now += 1
            bar.update()
    assert lines(channel) == [
        "train | step 0 of 4 | 00:00 elapsed | ? remaining",
        "train | step 4 of 4 | 00:04 elapsed | done",
    ]
    assert capsys.readouterr() == ("", "")  # nothing shown: the bar is off


def test_lines_come_at_most_every_report_interval(channel, clock) -> None:
    bar = ProgressBar(total=100, desc="loop", disable=True, report_every=10)
    for _ in range(100):
        clock.now += 0.75  # a line every 14 steps (10.5 s)
        bar.update()
    bar.close()
    bar.close()  # closing twice writes no second last line
    counts = [int(line.split(" | ")[1].split()[1]) for line in lines(channel)]
    assert counts == [0, 14, 28, 42, 56, 70, 84, 98, 100]
    assert lines(channel)[-1].endswith("| done")
    assert lines(channel)[2] == "loop | step 28 of 100 | 00:21 elapsed | 00:54 remaining"


def test_iterating_counts_each_item_once_its_body_ran_and_closes_at_the_end(channel, clock) -> None:
    seen = []
    for item in ProgressBar(["a", "b", "c"], desc="walk", disable=True, report_every=0):
        seen.append(item)
        clock.now += 2
    assert seen == ["a", "b", "c"]
    assert [line.split(" | ")[1] for line in lines(channel)] == [
        "step 0 of 3", "step 1 of 3", "step 2 of 3", "step 3 of 3", "step 3 of 3",
    ]  # fmt: skip
    assert lines(channel)[-1] == "walk | step 3 of 3 | 00:06 elapsed | done"


def test_a_renamed_bar_reports_its_new_name(channel, clock) -> None:
    bar = ProgressBar(total=2, desc="epoch 1", disable=True, report_every=0)
    bar.update()
    bar.set_description("epoch 2")
    bar.set_postfix(loss="0.1")  # shown on the bar only
    bar.update()
    bar.close()
    assert [line.split(" | ")[0] for line in lines(channel)] == [
        "epoch 1", "epoch 1", "epoch 2", "epoch 2",
    ]  # fmt: skip


def test_a_shown_bar_is_tqdms_and_the_side_channel_gets_the_same_count(channel, capsys) -> None:
    with ProgressBar(range(3), desc="shown", file=None) as bar:
        assert list(bar) == [0, 1, 2]
        assert bar.format_dict["n"] == 3  # tqdm's own attributes pass through
    assert "shown: 100%" in capsys.readouterr().err
    assert lines(channel)[-1].startswith("shown | step 3 of 3 |")


def test_without_the_variable_nothing_is_written(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv(PROGRESS_FILE, raising=False)
    monkeypatch.chdir(tmp_path)
    with ProgressBar(total=2, disable=True) as bar:
        bar.update(2)
    assert bar.n == 2 and list(tmp_path.iterdir()) == []


def test_a_side_channel_that_cannot_be_written_is_dropped(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv(PROGRESS_FILE, str(tmp_path))  # a folder: open(..., "a") fails
    with ProgressBar(total=3, disable=True, report_every=0) as bar:
        bar.update(3)
    assert bar.n == 3 and list(tmp_path.iterdir()) == []
