"""Reading certification logs: Cohen et al.'s format and this library's.

A log is a tab-separated file with one row per test input, in the format of Cohen et
al.'s ``certify.py`` (``idx label predict radius correct time``) or of
``python -m rsutils certify`` (the same columns, then ours). Prediction logs have no
``radius`` column; the logs of ``certify --procedure decide`` have ``certified@R`` and
``draws@R`` columns instead (:func:`~rsutils.logs.read.read_rows` reads any of them).

Every writer of these logs ends each row with a newline, so a last line without one
whose fields are too few, or in a log of this library's (which has a ``<log>.json``
sidecar), was cut by a run that stopped while writing it: the complete rows are read
and that line is skipped with a :class:`CutRowWarning` that names it and the fix.
"""

from __future__ import annotations

import io
import os
import warnings
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

__all__ = ["CutRowWarning", "check_numbers", "read_log", "read_rows"]

_REQUIRED = ("idx", "label", "predict", "correct")


class CutRowWarning(UserWarning):
    """A log's last line was cut by a run that stopped while writing it, and skipped
    (the command line shows it as a notice); the rows before it are read."""


def read_rows(path: str | os.PathLike[str]) -> pd.DataFrame:
    """The complete rows of a log with any columns (its first line names them), with
    ``time``, if present, in seconds (Cohen et al. write ``H:MM:SS.ffffff`` for ImageNet
    and plain seconds for CIFAR-10; both are accepted).

    A last line cut by a stopped run is skipped with a :class:`CutRowWarning`. A missing
    file is a ``FileNotFoundError``, and a file that is no tab-separated text, or whose
    ``time`` holds other values, a one-line ``ValueError`` naming the file.
    """
    name = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(
            f"no log at {name!r}; check the path (a log is the outfile of "
            "`python -m rsutils certify` or `predict`, or a log of Cohen et al.'s)"
        )
    data = Path(path).read_bytes()
    complete = _complete_part(Path(path), data)
    try:
        rows = pd.read_csv(io.BytesIO(data[:complete]), sep="\t")
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as error:
        reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise ValueError(
            f"{name!r} is not a certification log (a tab-separated text file whose first line "
            f"names its columns): {reason}"
        ) from None
    if complete < len(data):
        warnings.warn(_cut_message(name, data, complete, len(rows)), CutRowWarning, stacklevel=2)
    if "time" in rows.columns:
        rows["time"] = _seconds(rows["time"], name)
    return rows


def read_log(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read a certification or prediction log into a DataFrame
    (:func:`~rsutils.logs.read.read_rows`), refusing one without the columns ``idx label
    predict correct``."""
    df = read_rows(path)
    missing = [c for c in _REQUIRED if c not in df.columns]
    if missing:
        decided = any(str(column).startswith("certified@") for column in df.columns)
        hint = " (a log of certify --procedure decide: read it with read_rows)" if decided else ""
        raise ValueError(
            f"{os.fspath(path)!r} is not a certification log: columns {missing} are missing "
            f"(expected tab-separated columns {' '.join(_REQUIRED)} radius time){hint}"
        )
    return df


def check_numbers(rows: pd.DataFrame, columns: Sequence[str], name: str) -> None:
    """Refuse, in one line naming the log ``name``, the row and the value, a value of
    ``columns`` that is missing or not a number."""
    for column in columns:
        values = pd.to_numeric(rows[column], errors="coerce")
        bad = values.isna().to_numpy()
        if bad.any():
            row = int(bad.nonzero()[0][0])
            found = rows[column].iloc[row]
            what = "nothing" if pd.isna(found) else repr(found)
            raise ValueError(
                f"{name!r} row {row + 1}: the column {column} holds {what}, not a number; "
                "correct or delete that line"
            )


def _complete_part(path: Path, data: bytes) -> int:
    """How many bytes of ``data`` hold the header and the complete rows: all of it
    unless its last line lacks its newline and has fewer fields than the header, or
    belongs to a log with a sidecar (whose writer ends every row with a newline)."""
    end = data.rfind(b"\n") + 1
    if end == len(data) or end == 0:
        return len(data)  # complete, or a header alone
    width = data.split(b"\n", 1)[0].count(b"\t") + 1
    fields = data[end:].count(b"\t") + 1
    sidecar = path.with_name(path.name + ".json").exists()
    return end if fields < width or sidecar else len(data)


def _cut_message(name: str, data: bytes, complete: int, rows: int) -> str:
    width = data.split(b"\n", 1)[0].count(b"\t") + 1
    fields = data[complete:].count(b"\t") + 1
    line = data[:complete].count(b"\n") + 1
    return (
        f"{name}: line {line} is cut ({fields} of {width} fields, no newline), the unfinished "
        f"write of a run that stopped; read the {rows} complete rows without it. To finish "
        "the log, run the command that wrote it again (it cuts that line and computes its "
        "input again), or delete the line"
    )


def _seconds(column: pd.Series, name: str) -> pd.Series:
    if pd.api.types.is_numeric_dtype(column):
        return column.astype(float)
    numbers = pd.to_numeric(column, errors="coerce")
    durations = pd.to_timedelta(column.where(numbers.isna()), errors="coerce")
    seconds = numbers.fillna(durations.dt.total_seconds())
    bad = seconds.isna() & column.notna()
    if bad.any():
        row = int(bad.to_numpy().nonzero()[0][0])
        raise ValueError(
            f"{name!r}: the column time holds {column.iloc[row]!r} (row {row + 1}), neither "
            "seconds nor H:MM:SS.ffffff"
        )
    return seconds
