"""Any procedure over a dataset: live into a resumable log, or replayed on recorded draws.

:func:`run_procedure` runs a :class:`~rsutils.sequential.procedure.Procedure` live on
every input into a :class:`~rsutils.logs.resumable.ResumableLog` (a killed run resumes
where it stopped), with the procedure's columns and, in its settings, the procedure's
name and :meth:`~rsutils.sequential.procedure.Procedure.identity`; it is
:func:`~rsutils.logs.dataset_run.run_dataset`'s loop.

:func:`record_dataset` keeps the class of every draw CERTIFY classifies for each input
(:func:`~rsutils.sequential.record.record_draws`) in a resumable log, and
:func:`replay_log` runs any procedure on those records: the log :func:`run_procedure`
writes, row for row, but ``time`` and ``scale`` (tested), computed from the records
instead of the model. :func:`certify_recorded_dataset` writes CERTIFY's log while it
records, so that the model runs once for CERTIFY and for every procedure compared with
it later.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

from rsutils.core.settings import CertifySettings, check_count
from rsutils.core.smooth import Smooth
from rsutils.data import Dataset
from rsutils.logs.dataset_run import DatasetRun, InputGroups, run_dataset
from rsutils.logs.read import read_log
from rsutils.logs.runner import certify_columns, certify_row
from rsutils.sequential.certify import Certify
from rsutils.sequential.procedure import Procedure, procedure_identity, replay, settle
from rsutils.sequential.record import (
    DrawRecord,
    pack_labels,
    record_draws,
    unpack_labels,
)

__all__ = [
    "RECORD_COLUMNS",
    "certify_recorded_dataset",
    "live_disagreements",
    "read_procedure_log",
    "read_records",
    "record_dataset",
    "replay_log",
    "run_procedure",
]

#: The columns of a :func:`record_dataset` log.
RECORD_COLUMNS = ["idx", "label", "time", "n0", "n", "dim", "seed", "selection", "estimation"]


def run_procedure(
    smooth: Smooth,
    data: Dataset,
    indices: Iterable[int],
    path: str | os.PathLike[str],
    procedure: Procedure,
    settings: CertifySettings,
    *,
    config: Mapping[str, Any] | None = None,
    progress: bool = True,
) -> pd.DataFrame:
    """``procedure`` live on each input of ``data[indices]``, into the resumable log at
    ``path``; returns the log.

    ``settings`` give the ``n0`` selection draws (read only if the procedure selects),
    the ``seed`` and the ``batch_size``; the procedure's ``n_max`` and ``alpha`` replace
    ``settings.n`` and ``settings.alpha``. Input ``i``'s draws are CERTIFY's for
    ``(seed, i)``, so a row depends on the classifier, the procedure, ``n0``, the seed
    and the index only (what the log records and checks on resume).
    """
    check_count("n0", settings.n0)
    n0 = settings.n0 if procedure.selects else 0
    recorded = {"n0": n0, "seed": settings.seed, **procedure_identity(procedure)}
    scale = {"scale": smooth.logged_scale} if "scale" in procedure.columns() else {}

    def row(i: int) -> dict[str, Any]:
        label = int(data.labels[i])
        answer = settle(
            procedure, smooth, data.images[i], n0=n0, batch_size=settings.batch_size,
            seed=settings.seed, index=i, label=label,
        )  # fmt: skip
        return {**procedure.row(answer, label), **scale}

    run = DatasetRun(
        procedure.name, "certify", procedure.columns(), recorded, row, read=read_procedure_log
    )
    return run_dataset(smooth, data, indices, path, run, config=config, progress=progress)


def read_procedure_log(path: str | os.PathLike[str]) -> pd.DataFrame:
    """A procedure's log as a DataFrame, one row per input (a log of certificates as
    :func:`~rsutils.logs.read.read_log` reads it)."""
    log = pd.read_csv(path, sep="\t")
    return read_log(path) if "predict" in log.columns else log


def replay_log(smooth: Smooth, records: pd.DataFrame, procedure: Procedure) -> pd.DataFrame:
    """``procedure`` on every input of a :func:`record_dataset` log: the rows of
    :func:`run_procedure`'s log with the same seed but ``time`` and ``scale``, each
    input's ``idx`` first."""
    rows = []
    for record, label in _records(smooth, records):
        answer = replay(procedure, smooth, record, label=label)
        rows.append({"idx": record.index, **procedure.row(answer, label)})
    return pd.DataFrame(rows)


def record_dataset(
    smooth: Smooth,
    data: Dataset,
    indices: Iterable[int],
    path: str | os.PathLike[str],
    settings: CertifySettings,
    *,
    config: Mapping[str, Any] | None = None,
    progress: bool = True,
) -> pd.DataFrame:
    """Record CERTIFY's draws (``settings``' ``n0``, ``n``, ``seed``, batch size) of
    each input into a resumable log at ``path``; a killed run resumes where it stopped.
    The classes of the draws of input ``i`` are those CERTIFY classifies for it with the
    same seed, so every replay compares procedures on CERTIFY's own draws."""
    recorded = {**settings.identity("certify"), "recorded": "classes of every draw"}

    def row(i: int) -> dict[str, Any]:
        s = settings
        record = record_draws(smooth, data.images[i], s.n0, s.n, s.batch_size, s.seed, index=i)
        return {
            "label": int(data.labels[i]),
            "n0": s.n0,
            "n": s.n,
            "dim": record.dim,
            "seed": s.seed,
            "selection": pack_labels(record.selection),
            "estimation": pack_labels(record.estimation),
        }

    run = DatasetRun(
        "record", "certify", RECORD_COLUMNS, recorded, row,
        read=read_record_log, row_cost=settings.n0 + settings.n, unit="draw",
    )  # fmt: skip
    return run_dataset(smooth, data, indices, path, run, config=config, progress=progress)


def certify_recorded_dataset(
    smooth: Smooth,
    data: Dataset,
    indices: Iterable[int],
    path: str | os.PathLike[str],
    record_path: str | os.PathLike[str],
    settings: CertifySettings,
    *,
    config: Mapping[str, Any] | None = None,
    progress: bool = True,
) -> pd.DataFrame:
    """CERTIFY over ``data[indices]`` into the resumable log at ``path`` (the log
    :func:`~rsutils.logs.runner.certify_dataset` writes, same columns and settings),
    keeping every draw's class in the record log at ``record_path``.

    Once the CERTIFY log is opened (its path and settings checked), the inputs it lacks
    are recorded (:func:`record_dataset`, resumable), then CERTIFY is replayed on their
    records (:class:`~rsutils.sequential.certify.Certify`); a row's ``time`` is the
    seconds its recording took. The model runs once for both logs, and later procedures
    replay the record instead of running it again.
    """
    scale = smooth.logged_scale
    certify = Certify(settings.n, settings.alpha)
    records = pd.DataFrame()

    def record(todo: list[int]) -> None:
        nonlocal records
        log = record_dataset(smooth, data, todo, record_path, settings, config=config,
                             progress=progress)  # fmt: skip
        records = log.set_index("idx")

    def row(i: int) -> dict[str, Any]:
        (drawn,) = read_records(records.loc[[i]].reset_index(), smooth.num_classes)
        cert = replay(certify, smooth, drawn)
        values = certify_row(cert, int(data.labels[i]), scale)
        return {**values, "time": float(records.at[i, "time"])}

    run = DatasetRun(
        "certify", "certify", certify_columns(smooth), settings.identity("certify"), row,
        groups=InputGroups(size=_ALL_AT_ONCE, prepare=record),
    )  # fmt: skip
    return run_dataset(smooth, data, indices, path, run, config=config, progress=False)


#: A group size above any run's inputs: the inputs a log lacks are recorded in one go.
_ALL_AT_ONCE = 2**62


def live_disagreements(
    smooth: Smooth,
    data: Dataset,
    log: pd.DataFrame,
    settings: CertifySettings,
    indices: Sequence[int],
) -> list[int]:
    """The inputs among ``indices`` whose row of the CERTIFY ``log`` (made by
    :func:`certify_recorded_dataset`) differs from CERTIFY run live now, the model on
    the same seeded draws: selected class, count or prediction. Empty when the record is
    what CERTIFY draws."""
    rows = log.set_index("idx")
    wrong = []
    for i in indices:
        s = settings
        live = smooth.certify(data.images[i], s.n0, s.n, s.alpha, s.batch_size, s.seed, i)
        row = rows.loc[i]
        logged = (int(row["selected"]), int(row["count"]), int(row["predict"]))
        if logged != (live.selected, live.count, live.prediction):
            wrong.append(int(i))
    return wrong


def read_records(log: pd.DataFrame, num_classes: int) -> list[DrawRecord]:
    """The :class:`~rsutils.sequential.record.DrawRecord` of each row of a
    :func:`record_dataset` log, in the log's order."""
    return [
        DrawRecord(
            unpack_labels(row.selection),
            unpack_labels(row.estimation),
            num_classes,
            int(row.seed),
            int(row.idx),
            int(row.dim),
        )
        for row in log.itertuples(index=False)
    ]


def read_record_log(path: str | os.PathLike[str]) -> pd.DataFrame:
    """A :func:`record_dataset` log as a DataFrame (one row per input)."""
    return pd.read_csv(path, sep="\t")


def _records(smooth: Smooth, log: pd.DataFrame) -> list[tuple[DrawRecord, int]]:
    records = read_records(log, smooth.num_classes)
    return list(zip(records, log["label"].astype(int), strict=True))
