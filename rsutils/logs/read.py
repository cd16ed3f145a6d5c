"""Reading certification logs: Cohen et al.'s format and this library's.

A log is a tab-separated file with one row per test input, in the format of Cohen et
al.'s ``certify.py`` (``idx label predict radius correct time``) or of
``python -m rsutils certify`` (the same columns, then ours). Prediction logs have no
``radius`` column.
"""

from __future__ import annotations

import os

import pandas as pd

__all__ = ["read_log"]

_REQUIRED = ("idx", "label", "predict", "correct")


def read_log(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read a certification or prediction log into a DataFrame.

    ``time`` is converted to seconds (Cohen et al. write ``H:MM:SS.ffffff`` for
    ImageNet and plain seconds for CIFAR-10; both are accepted).
    """
    if not os.path.exists(path):
        raise FileNotFoundError(
            f"no log at {os.fspath(path)!r}; run `python -m rsutils certify ...` to create one, "
            "or set RSUTILS_REFERENCE to the folder of the papers' released logs"
        )
    df = pd.read_csv(path, sep="\t")
    missing = [c for c in _REQUIRED if c not in df.columns]
    if missing:
        raise ValueError(
            f"{os.fspath(path)!r} is not a certification log: columns {missing} are missing "
            f"(expected tab-separated columns {' '.join(_REQUIRED)} radius time)"
        )
    if "time" in df.columns:
        df["time"] = _seconds(df["time"])
    return df


def _seconds(column: pd.Series) -> pd.Series:
    if pd.api.types.is_numeric_dtype(column):
        return column.astype(float)
    return pd.to_timedelta(column).dt.total_seconds()
