"""What the logs of ``certify --procedure decide`` say: certified accuracy at their radii.

A decision log (:class:`~rsutils.sequential.decisions.Decide`'s: ``idx label selected
time n0``, then ``certified@R`` and ``draws@R`` for each radius R asked, ``u`` for a
randomised test, and ``seed``) answers "is this input certified at R?" at the radii it
asked, and nowhere else: it has no radius per input, hence no ACR and no curve between
its radii. :func:`decision_table` gives per log the number of inputs, the certified
accuracy at each of its radii (the share of inputs certified at R with their true label,
:func:`~rsutils.sequential.decisions.decisions_long`) with its Clopper–Pearson interval
over the test images, the mean draws per input at each radius and for the whole pass
(``n0`` and the most draws any radius read: what the run cost), and the run time;
the analysis report writes it as text for ``python -m rsutils analyze``
(:func:`~rsutils.analysis.report.shown_decisions`).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd
from scipy.stats import binomtest

from rsutils.core.confidence import check_alpha
from rsutils.logs.read import check_numbers, read_rows
from rsutils.sequential.decisions import decisions_long

__all__ = [
    "checked_decision_log",
    "decision_radii",
    "decision_table",
    "is_decision_log",
    "read_decision_log",
]

#: The columns every decision log has, besides its radii's.
_NEEDED = ("idx", "label", "selected", "n0")
_CERTIFIED = re.compile(r"certified@(.+)")


def is_decision_log(columns: Iterable[str]) -> bool:
    """Whether a log with these columns is a decision log (it has ``certified@R``)."""
    return any(_CERTIFIED.fullmatch(str(column)) for column in columns)


def decision_radii(log: pd.DataFrame) -> list[float]:
    """The radii a decision log asked, in the order of its columns."""
    found = (_CERTIFIED.fullmatch(str(column)) for column in log.columns)
    return [float(match.group(1)) for match in found if match]


def read_decision_log(path: str | os.PathLike[str]) -> pd.DataFrame:
    """A decision log's rows (:func:`~rsutils.logs.read.read_rows`), once they can be
    analysed (:func:`checked_decision_log`)."""
    return checked_decision_log(read_rows(path), os.fspath(path))


def checked_decision_log(log: pd.DataFrame, name: str) -> pd.DataFrame:
    """``log``, the rows of the decision log ``name``, refused in one line naming the
    file without the columns of one, without rows, with a value that is not a number
    (naming its row), or with an image twice."""
    radii = decision_radii(log)
    needed = [*_NEEDED, *(f"draws@{r:g}" for r in radii)]
    missing = [column for column in needed if column not in log.columns]
    if not radii or missing:
        raise ValueError(
            f"{name!r} is not a decision log of certify --procedure decide: it lacks the "
            f"columns {missing or ['certified@R']}"
        )
    if log.empty:
        raise ValueError(f"{name!r} holds no rows: decide at least one input into it")
    check_numbers(log, [*needed, *(f"certified@{r:g}" for r in radii)], name)
    if log["idx"].duplicated().any():
        raise ValueError(f"{name!r} holds an idx twice; keep one row per test image")
    return log


def decision_table(logs: Mapping[str, pd.DataFrame], *, confidence: float = 0.95) -> pd.DataFrame:
    """One row per log: ``inputs``, then for each radius r that any log asked
    ``accuracy at r``, ``low at r``, ``high at r`` (the certified accuracy and its
    Clopper–Pearson ``confidence`` interval over the log's inputs) and ``draws at r``
    (the mean of ``n0`` plus the draws read at r), NaN where the log did not ask r;
    ``draws`` (the mean of ``n0`` plus the most draws any radius read), ``time (s)``
    and ``time per input (s)`` (NaN without a ``time`` column)."""
    check_alpha(1 - confidence)
    radii = sorted({r for log in logs.values() for r in decision_radii(log)})
    rows = {name: _decision_row(log, radii, confidence) for name, log in logs.items()}
    return pd.DataFrame.from_dict(rows, orient="index")


def _decision_row(log: pd.DataFrame, radii: list[float], confidence: float) -> dict[str, float]:
    asked = decision_radii(log)
    long = decisions_long(log, asked)
    row: dict[str, float] = {"inputs": len(log)}
    for r in radii:
        at = long[long["radius"] == r] if r in asked else None
        value = low = high = draws = math.nan
        if at is not None:
            count = int(at["correct"].sum())
            interval = binomtest(count, len(at)).proportion_ci(confidence, method="exact")
            value, low, high = count / len(at), interval.low, interval.high
            draws = float(at["forward_passes"].mean())
        row |= {f"accuracy at {r:g}": value, f"low at {r:g}": low, f"high at {r:g}": high}
        row[f"draws at {r:g}"] = draws
    most = np.max([log[f"draws@{r:g}"].to_numpy() for r in asked], axis=0)
    row["draws"] = float((log["n0"].to_numpy() + most).mean())
    total = float(log["time"].sum()) if "time" in log.columns else math.nan
    return row | {"time (s)": total, "time per input (s)": total / len(log)}
