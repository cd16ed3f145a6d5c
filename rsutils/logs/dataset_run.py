"""The skeleton every dataset run shares: one resumable loop over the inputs a log lacks.

A dataset run (CERTIFY, PREDICT, data-dependent CERTIFY, sequential decisions, planned
draws: :mod:`rsutils.logs.runner`, :mod:`rsutils.sequential.runs`) writes one row
per input into a :class:`~rsutils.logs.resumable.ResumableLog`. Each runner describes
itself as a :class:`DatasetRun` (its columns, its settings and the function that makes
an input's row) and :func:`run_dataset` does the rest:

1. it checks the indices (integers in ``[0, len(data))``), then opens the log, which
   checks its path and, if the log exists, that it was written with the same
   settings. Nothing is written before these checks pass; a runner checks its own
   arguments before it calls :func:`run_dataset`;
2. for every input the log lacks, in the order given, it appends the input's row with
   its ``idx`` and ``time`` (seconds) as soon as it is made, so a killed run resumes
   where it stopped, and shows progress on a bar;
3. it returns the log as the run reads it.

The sidecar records, in this order, what identifies the classifier
(:meth:`~rsutils.core.smoothed.SmoothedClassifier.identity`), the kind of device it ran
on with the rows of its forward passes (:func:`~rsutils.core.inference.device_identity`:
the same model is another base classifier on another kind of device), the dataset and split,
the run's own settings and ``config`` (e.g. the model's checkpoint). A row depends
only on the classifier, these settings and its input's index (the noise of input
``idx`` depends on ``(seed, idx)`` only), so a resumed log equals the log of an
uninterrupted run up to ``time``.

A run whose inputs share work (sigma ascent on a batch of inputs) gives
:class:`InputGroups`: the inputs are then taken in groups, the group's work is done
before their rows, its time is spread evenly over their ``time``, and the bar counts
that work too.
"""

from __future__ import annotations

import operator
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from rsutils.core.environment import describe_environment
from rsutils.core.inference import device_identity
from rsutils.core.settings import check_count
from rsutils.core.smoothed import SmoothedClassifier, check_algorithm
from rsutils.data import Dataset
from rsutils.logs.read import read_log
from rsutils.logs.resumable import ResumableLog
from rsutils.progress import ProgressBar

__all__ = [
    "DatasetRun",
    "InputGroups",
    "answer_columns",
    "check_indices",
    "dataset_settings",
    "run_dataset",
    "select_indices",
]


def select_indices(length: int, skip: int = 1, max_index: int = -1) -> list[int]:
    """Cohen et al.'s ``--skip``/``--max``: every ``skip``-th index below ``max_index``."""
    if skip < 1:
        raise ValueError(f"skip must be >= 1, got {skip}")
    stop = length if max_index < 0 else min(length, max_index)
    return list(range(0, stop, skip))


def check_indices(indices: Iterable[int], length: int) -> list[int]:
    """The indices as ints, each in ``[0, length)``; the first bad one is an error."""
    checked = []
    for position, value in enumerate(indices):
        index = _as_index(value)
        if index is None or not 0 <= index < length:
            raise ValueError(
                f"indices must be integers in [0, {length}) (the dataset has {length} "
                f"inputs); got {value!r} at position {position}"
            )
        checked.append(index)
    return checked


def _as_index(value: Any) -> int | None:
    """``value`` as an int if it is an integer (not a bool), else ``None``."""
    if isinstance(value, bool):
        return None
    try:
        return operator.index(value)
    except TypeError:
        return None


def dataset_settings(data: Dataset) -> dict[str, str]:
    """What a log records of its dataset: its name and split."""
    return {"dataset": data.name, "split": data.split}


def answer_columns(prediction: int, label: int) -> dict[str, int]:
    """Cohen et al.'s ``label``, ``predict`` and ``correct`` (1 if the answer is the label)."""
    return {"label": label, "predict": prediction, "correct": int(prediction == label)}


@dataclass(frozen=True)
class InputGroups:
    """Work that groups of up to ``size`` inputs share, done before their rows.

    ``prepare(group)`` does it for the indices ``group`` (e.g. sigma ascent on them
    together), before the run's row function is called for each of them, in order.
    ``cost`` is that work per input, in the progress bar's unit.
    """

    size: int
    prepare: Callable[[list[int]], None]
    cost: int = 0

    def __post_init__(self) -> None:
        check_count("size", self.size)
        if isinstance(self.cost, bool) or not isinstance(self.cost, int) or self.cost < 0:
            raise ValueError(f"cost must be an integer >= 0, got {self.cost!r}")


@dataclass(frozen=True)
class DatasetRun:
    """What one kind of dataset run fills into :func:`run_dataset`.

    ``name`` labels the progress bar; ``algorithm`` (``"certify"`` or ``"predict"``)
    selects the classifier's identity in the sidecar; ``columns`` are the log's;
    ``settings`` are the run's own settings, recorded after the dataset's; ``row(idx)``
    makes the row of input ``idx``: every column but ``idx`` and ``time``, which the
    skeleton adds (a row that gives its own ``time`` keeps it: a row replayed from
    recorded draws states the seconds the recording took). ``read`` reads the
    finished log. ``groups`` is work that inputs share (see :class:`InputGroups`).
    The bar counts ``row_cost`` of ``unit`` per row (and ``groups.cost`` per input of
    a group); it is a :class:`~rsutils.progress.ProgressBar`, so a run with its bar off
    still reports to the side channel of ``book/run_notebooks.py``.
    """

    name: str
    algorithm: str
    columns: Sequence[str]
    settings: Mapping[str, Any]
    row: Callable[[int], Mapping[str, Any]]
    read: Callable[[Path], pd.DataFrame] = read_log
    groups: InputGroups | None = None
    row_cost: int = 1
    unit: str = "input"

    def __post_init__(self) -> None:
        check_algorithm(self.algorithm)
        check_count("row_cost", self.row_cost)
        missing = sorted({"idx", "time"} - set(self.columns))
        if missing:
            raise ValueError(f"the columns of a dataset run must include {missing}")


def run_dataset(
    classifier: SmoothedClassifier,
    data: Dataset,
    indices: Iterable[int],
    path: str | os.PathLike[str],
    run: DatasetRun,
    *,
    config: Mapping[str, Any] | None = None,
    progress: bool = True,
) -> pd.DataFrame:
    """Append ``run``'s row of every input of ``data[indices]`` that the log at ``path``
    lacks; return the log (see the module's text for the order of the checks, the
    settings recorded and what a resumed log equals)."""
    indices = check_indices(indices, len(data))
    recorded = {
        **classifier.identity(run.algorithm),
        **device_identity(classifier.device),
        **dataset_settings(data),
        **run.settings,
        **(config or {}),
    }
    environment = describe_environment(classifier.device)
    with ResumableLog(path, run.columns, recorded, environment=environment) as log:
        todo = [i for i in indices if i not in log.done]
        with _progress_bar(run, len(todo), log.path.name, progress) as bar:
            for group in _groups(todo, run.groups):
                _append_group(log, run, group, bar)
        return run.read(log.path)


def _groups(todo: list[int], groups: InputGroups | None) -> Iterator[list[int]]:
    """``todo`` in groups of ``groups.size`` (all of it as one without groups)."""
    size = len(todo) if groups is None else groups.size
    for start in range(0, len(todo), max(size, 1)):
        yield todo[start : start + size]


def _append_group(log: ResumableLog, run: DatasetRun, group: list[int], bar: ProgressBar) -> None:
    """The group's shared work, then each input's row, timed, appended to ``log``."""
    shared = 0.0
    if run.groups is not None:
        began = time.perf_counter()
        run.groups.prepare(group)
        shared = (time.perf_counter() - began) / len(group)
        if run.groups.cost:
            bar.update(run.groups.cost * len(group))
    for i in group:
        began = time.perf_counter()
        values = run.row(i)
        seconds = round(shared + time.perf_counter() - began, 4)
        log.append({"time": seconds, **values, "idx": i})
        bar.update(run.row_cost)


def _progress_bar(run: DatasetRun, inputs: int, log_name: str, progress: bool) -> ProgressBar:
    """A bar over the work of ``inputs`` inputs, named after the run and its log."""
    per_input = run.row_cost + (run.groups.cost if run.groups is not None else 0)
    return ProgressBar(
        total=inputs * per_input,
        disable=not progress,
        desc=f"{run.name} {log_name}",
        unit=run.unit,
        unit_scale=run.row_cost > 1,
    )
