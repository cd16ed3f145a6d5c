"""The logs of ``certify --procedure decide`` in ``analyze``: certified accuracy at
their radii with intervals and draws per input, counted by hand."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from scipy.stats import binomtest

from rsutils.analysis.decision_logs import (
    decision_radii,
    decision_table,
    is_decision_log,
    read_decision_log,
)
from rsutils.analysis.report import common_images, read_logs, report
from rsutils.sequential.decisions import decision_columns

#: Four inputs asked at 0.25 and 0.5 after 10 selection draws: certified with the label
#: at both; at 0.25 only; certified with a wrong class; certified nowhere.
ROWS = [
    (0, 1, 1, 0.5, 10, 1, 32, 1, 64, 0),
    (1, 2, 2, 0.5, 10, 1, 32, 0, 128, 0),
    (2, 3, 4, 0.5, 10, 1, 64, 1, 64, 0),
    (3, 4, 4, 0.5, 10, 0, 128, 0, 32, 0),
]


def decided(path: Path, rows=ROWS) -> Path:
    pd.DataFrame(rows, columns=decision_columns([0.25, 0.5])).to_csv(path, sep="\t", index=False)
    return path


def test_a_decision_log_is_told_apart_by_its_columns(tmp_path: Path) -> None:
    log = read_decision_log(decided(tmp_path / "decide.tsv"))
    assert is_decision_log(log.columns) and decision_radii(log) == [0.25, 0.5]
    assert not is_decision_log(["idx", "label", "predict", "radius", "correct"])


def test_the_table_matches_counts_by_hand(tmp_path: Path) -> None:
    log = read_decision_log(decided(tmp_path / "decide.tsv"))
    row = decision_table({"d": log}, confidence=0.9).loc["d"]
    assert row["inputs"] == 4
    assert (row["accuracy at 0.25"], row["accuracy at 0.5"]) == (0.5, 0.25)
    exact = binomtest(2, 4).proportion_ci(0.9, method="exact")
    assert (row["low at 0.25"], row["high at 0.25"]) == pytest.approx((exact.low, exact.high))
    assert row["draws at 0.25"] == (42 + 42 + 74 + 138) / 4  # n0 + the draws read at 0.25
    assert row["draws at 0.5"] == (74 + 138 + 74 + 42) / 4
    assert row["draws"] == (74 + 138 + 74 + 138) / 4  # n0 + the most any radius read
    assert (row["time (s)"], row["time per input (s)"]) == (2.0, 0.5)


def test_the_report_shows_decision_logs_after_the_certification_logs(tmp_path: Path) -> None:
    certify = tmp_path / "certify.tsv"
    certify.write_text("idx\tlabel\tpredict\tradius\tcorrect\ttime\n0\t1\t1\t0.4\t1\t1.0\n")
    other = decided(tmp_path / "other.tsv", [(*ROWS[0][:5], 1, 32, 1, 64, 0)])
    logs = read_logs([certify, decided(tmp_path / "decide.tsv"), other])
    text = report(logs, [0.25])
    summary, decisions = text.strip().split("\n\n")
    assert "certify.tsv" in summary and "decide.tsv" not in summary
    assert "Decision logs (certify --procedure decide)" in decisions
    lines = {line.split("  ")[0]: line for line in decisions.splitlines()}
    assert "0.500 [0.068, 0.932]" in lines["accuracy at r = 0.25"]
    assert lines["draws per input at r = 0.5"].split()[-2:] == ["82", "74"]


def test_a_decision_log_without_its_draws_or_rows_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "d.tsv"
    decided(path)
    table = pd.read_csv(path, sep="\t").drop(columns="draws@0.5")
    table.to_csv(path, sep="\t", index=False)
    with pytest.raises(ValueError, match=r"d.tsv' is not a decision log .*\['draws@0.5'\]"):
        read_decision_log(path)
    decided(path, [])
    with pytest.raises(ValueError, match=r"d.tsv' holds no rows"):
        read_decision_log(path)


def test_common_images_keeps_the_images_every_log_holds(tmp_path: Path) -> None:
    full = read_decision_log(decided(tmp_path / "full.tsv"))
    logs = {"full": full, "part": full.iloc[1:3]}
    shared = common_images(logs)
    assert [list(log["idx"]) for log in shared.values()] == [[1, 2], [1, 2]]
    with pytest.raises(ValueError, match=r"share no image, so they cannot be compared"):
        common_images({"a": full.iloc[:1], "b": full.iloc[1:]})
