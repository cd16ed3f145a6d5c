"""Reading logs: a last line cut by a stopped run is skipped with a notice that names it
and the fix; a log's bad values are named by their row."""

from __future__ import annotations

import warnings
from pathlib import Path

import pandas as pd
import pytest

from rsutils.logs.read import CutRowWarning, check_numbers, read_log, read_rows

HEADER = "idx\tlabel\tpredict\tradius\tcorrect\ttime\n"
ROWS = "0\t1\t1\t0.5\t1\t2.0\n1\t2\t2\t0.75\t1\t3.0\n"


def write(path: Path, text: str, sidecar: bool = False) -> Path:
    path.write_text(text)
    if sidecar:  # as `certify` writes its logs
        path.with_name(path.name + ".json").write_text("{}")
    return path


def test_a_line_cut_inside_radius_is_skipped_with_a_notice_naming_it(tmp_path: Path) -> None:
    path = write(tmp_path / "log.tsv", HEADER + ROWS + "2\t3\t3\t0.1")
    with pytest.warns(CutRowWarning) as caught:
        log = read_log(path)
    assert list(log["idx"]) == [0, 1] and log["radius"].tolist() == [0.5, 0.75]
    message = str(caught[0].message)
    assert "log.tsv: line 4 is cut (4 of 6 fields, no newline)" in message
    assert "read the 2 complete rows" in message and "run the command that wrote it" in message
    assert "delete the line" in message and "\n" not in message


@pytest.mark.parametrize("sidecar", [True, False], ids=["rsutils-log", "foreign-log"])
def test_a_last_line_with_every_field_is_cut_only_in_a_log_of_rsutils(
    tmp_path: Path, sidecar: bool
) -> None:
    """Every row of rsutils ends with its newline, so a line without one was cut, even
    inside its last field; a foreign file may just lack the final newline."""
    path = write(tmp_path / "log.tsv", HEADER + ROWS + "2\t3\t3\t0.1\t1\t4", sidecar)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        log = read_log(path)
    assert len(log) == (2 if sidecar else 3)
    assert [w.category for w in caught] == ([CutRowWarning] if sidecar else [])


def test_complete_logs_read_without_a_notice(tmp_path: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(read_log(write(tmp_path / "a.tsv", HEADER + ROWS))) == 2
        assert read_log(write(tmp_path / "b.tsv", HEADER.rstrip("\n"))).empty


def test_a_missing_log_names_the_path_to_check(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"no log at '.*nowhere.tsv'; check the path") as e:
        read_log(tmp_path / "nowhere.tsv")
    assert "RSUTILS_REFERENCE" not in str(e.value)


def test_a_decision_log_is_read_by_read_rows(tmp_path: Path) -> None:
    header = "idx\tlabel\tselected\ttime\tn0\tcertified@0.5\tdraws@0.5\tseed\n"
    text = header + "0\t1\t1\t0.2\t10\t1\t32\t0\n"
    path = write(tmp_path / "decide.tsv", text)
    with pytest.raises(ValueError, match=r"a log of certify --procedure decide: read it with"):
        read_log(path)
    assert read_rows(path)["certified@0.5"].tolist() == [1]


def test_a_time_that_is_no_duration_is_named_by_its_row(tmp_path: Path) -> None:
    path = write(tmp_path / "log.tsv", HEADER + ROWS.replace("3.0", "soon"))
    with pytest.raises(ValueError, match=r"the column time holds 'soon' \(row 2\), neither"):
        read_log(path)


def test_a_value_that_is_not_a_number_is_named_by_its_row() -> None:
    rows = pd.DataFrame({"radius": ["0.5", "0.2", "abc"], "correct": [1, None, 1]})
    with pytest.raises(ValueError, match=r"'x.tsv' row 3: the column radius holds 'abc', not a"):
        check_numbers(rows, ["radius"], "x.tsv")
    with pytest.raises(ValueError, match=r"row 2: the column correct holds nothing, not a num"):
        check_numbers(rows, ["correct"], "x.tsv")
