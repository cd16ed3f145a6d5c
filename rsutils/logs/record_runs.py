"""Recorded draws over a dataset, and procedures replayed on them, as tables.

:func:`record_dataset` runs :func:`~rsutils.core.record.record_draws` on every input
into a resumable log (one row per input: its label, ``n0``, ``n``, ``dim``, the seed,
and each stream's classes, packed by :func:`pack_labels`); :func:`read_records` turns
the log back into :class:`~rsutils.core.record.DrawRecord` objects. The replays give
the tables of the live dataset runs, computed from the records instead of the model:
:func:`replay_certify_log` CERTIFY's log (:func:`~rsutils.logs.runner.certify_dataset`'s
columns), :func:`replay_decisions` the log of
:func:`~rsutils.logs.sequential_runs.decide_dataset` (or, with ``true_label``, of
:func:`~rsutils.logs.sequential_runs.decide_label_dataset`), without ``time``, so that
:func:`~rsutils.logs.sequential_runs.decisions_long` applies to either.
"""

from __future__ import annotations

import base64
import os
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from rsutils.core.published_sequential import (
    staged_test,
    voracek_betting_test,
    voracek_union_bound_test,
)
from rsutils.core.record import (
    DrawRecord,
    record_draws,
    replay_certify,
    replay_decide,
    replay_decide_label,
    replay_planned,
)
from rsutils.core.sequential import (
    Decision,
    LookSchedule,
    Schedule,
    check_radius,
    threshold_pA,
)
from rsutils.core.sequential_radius import replay_certify_looks
from rsutils.core.settings import CertifySettings
from rsutils.core.smooth import Certificate, Smooth
from rsutils.logs.dataset_run import DatasetRun, InputGroups, answer_columns, run_dataset
from rsutils.logs.runner import certify_columns, certify_row
from rsutils.training.data import Dataset

__all__ = [
    "PUBLISHED",
    "RECORD_COLUMNS",
    "certify_recorded_dataset",
    "live_disagreements",
    "pack_labels",
    "read_record_log",
    "read_records",
    "record_dataset",
    "replay_certify_log",
    "replay_decisions",
    "replay_planned_log",
    "replay_published",
    "replay_radius_looks_log",
    "unpack_labels",
]

#: The columns of a :func:`record_dataset` log.
RECORD_COLUMNS = ["idx", "label", "time", "n0", "n", "dim", "seed", "selection", "estimation"]


def pack_labels(labels: np.ndarray) -> str:
    """Classes as text without tabs: little-endian uint16, zlib, URL-safe base64."""
    values = np.asarray(labels)
    if values.size and (values.min() < 0 or values.max() > np.iinfo(np.uint16).max):
        raise ValueError("can only pack classes in [0, 65535]")
    raw = values.astype("<u2").tobytes()
    return base64.urlsafe_b64encode(zlib.compress(raw, 6)).decode("ascii")


def unpack_labels(text: str) -> np.ndarray:
    """The classes :func:`pack_labels` packed, as int32."""
    raw = zlib.decompress(base64.urlsafe_b64decode(text.encode("ascii")))
    return np.frombuffer(raw, dtype="<u2").astype(np.int32)


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
    records (:func:`~rsutils.core.record.replay_certify`); a row's ``time`` is the
    seconds its recording took. The model runs once for both
    logs, and later procedures replay the record instead of running it again.
    """
    scale = smooth.logged_scale
    records = pd.DataFrame()

    def record(todo: list[int]) -> None:
        nonlocal records
        log = record_dataset(smooth, data, todo, record_path, settings, config=config,
                             progress=progress)  # fmt: skip
        records = log.set_index("idx")

    def row(i: int) -> dict[str, Any]:
        (drawn,) = read_records(records.loc[[i]].reset_index(), smooth.num_classes)
        cert = replay_certify(smooth, drawn, settings.alpha)
        values = certify_row(cert, int(data.labels[i]), scale)
        return {**values, "time": float(records.at[i, "time"])}

    run = DatasetRun(
        "certify", "certify", certify_columns(smooth), settings.identity("certify"), row,
        groups=InputGroups(size=_ALL_AT_ONCE, prepare=record),
    )  # fmt: skip
    return run_dataset(smooth, data, indices, path, run, config=config, progress=False)


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


#: A group size above any run's inputs: the inputs a log lacks are recorded in one go.
_ALL_AT_ONCE = 2**62


def read_records(log: pd.DataFrame, num_classes: int) -> list[DrawRecord]:
    """The :class:`~rsutils.core.record.DrawRecord` of each row of a
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


def replay_certify_log(
    smooth: Smooth, log: pd.DataFrame, alpha: float, n: int | None = None
) -> pd.DataFrame:
    """CERTIFY's log (at ``n`` draws, the record's by default) from a record log."""
    return _certificate_log(smooth, log, lambda record: replay_certify(smooth, record, alpha, n))


def replay_planned_log(
    smooth: Smooth, log: pd.DataFrame, alpha: float, radius_loss: float
) -> pd.DataFrame:
    """The log of :func:`~rsutils.logs.sequential_runs.certify_planned_dataset`
    (``n_max`` the record's ``n``) from a record log."""
    return _certificate_log(
        smooth, log, lambda record: replay_planned(smooth, record, alpha, radius_loss)
    )


def _certificate_log(
    smooth: Smooth, log: pd.DataFrame, answer: Callable[[DrawRecord], Certificate]
) -> pd.DataFrame:
    """CERTIFY's columns, one row per recorded input, from its certificate ``answer``."""
    rows = []
    for record, label in _records(smooth, log):
        cert = answer(record)
        rows.append(
            {"idx": record.index, **cert.as_dict(), **answer_columns(cert.prediction, label)}
        )
    return pd.DataFrame(rows)


def replay_radius_looks_log(
    smooth: Smooth, log: pd.DataFrame, schedule: LookSchedule, radius_loss: float
) -> pd.DataFrame:
    """The log of :func:`~rsutils.core.sequential_radius.certify_looks` (each input
    stopping at its own look, ``n`` the draws it read) from a record log; CERTIFY's
    columns with ``look`` and ``alpha_spent``."""
    rows = []
    for record, label in _records(smooth, log):
        answer = replay_certify_looks(smooth, record, schedule, radius_loss)
        cert = answer.certificate
        rows.append(
            {
                "idx": record.index, **cert.as_dict(), **answer_columns(cert.prediction, label),
                "look": answer.look, "alpha_spent": answer.alpha_spent,
            }
        )  # fmt: skip
    return pd.DataFrame(rows)


def replay_decisions(
    smooth: Smooth,
    log: pd.DataFrame,
    radii: Sequence[float],
    schedule: Schedule,
    *,
    true_label: bool = False,
) -> pd.DataFrame:
    """Sequential decisions at ``radii`` for every recorded input: the selected class
    (:func:`~rsutils.core.sequential.decide_radii`) or, with ``true_label``, the
    input's label (:func:`~rsutils.core.evaluation.decide_label_radii`, evaluation
    only); the columns of :func:`~rsutils.logs.sequential_runs.decide_dataset` but
    ``time``, and ``u`` for a randomised schedule."""
    radii = [check_radius(r) for r in radii]
    rows = []
    for record, label in _records(smooth, log):
        if true_label:
            decisions = replay_decide_label(smooth, record, label, radii, schedule)
        else:
            decisions = replay_decide(smooth, record, radii, schedule)
        rows.append({"idx": record.index, **_decision_row(label, decisions, radii)})
    return pd.DataFrame(rows)


#: The published designs :func:`replay_published` replays, by name.
PUBLISHED = {
    "horvath-staged": staged_test,
    "voracek-betting": voracek_betting_test,
    "voracek-union-bound": voracek_union_bound_test,
}


def replay_published(
    smooth: Smooth, log: pd.DataFrame, radii: Sequence[float], design: str, alpha: float
) -> pd.DataFrame:
    """A published sequential design (:mod:`rsutils.core.published_sequential`) asking
    whether each recorded input's true label is certified at each of ``radii``, on the
    label's hits among the recorded estimation draws (evaluation: no selection draws);
    the columns of :func:`replay_decisions`. Each radius is its own test of ``pA > p0``
    with ``p0`` the least probability that certifies it
    (:func:`~rsutils.core.sequential.threshold_pA`)."""
    if design not in PUBLISHED:
        raise ValueError(f"design must be one of {sorted(PUBLISHED)}, got {design!r}")
    radii = [check_radius(r) for r in radii]
    test = PUBLISHED[design]
    rows = []
    for record, label in _records(smooth, log):
        hits = record.estimation == label
        values: dict[str, Any] = {"idx": record.index, "label": label, "selected": label, "n0": 0}
        for r in radii:
            p0 = threshold_pA(smooth, r, record.dim)
            answer = test(hits, p0, alpha) if p0 < 1 else None
            values[f"certified@{r:g}"] = int(answer is not None and answer.certified)
            values[f"draws@{r:g}"] = answer.draws if answer is not None else 0
        values["seed"] = record.seed
        rows.append(values)
    return pd.DataFrame(rows)


def _decision_row(
    label: int, decisions: Sequence[Decision], radii: Sequence[float]
) -> dict[str, Any]:
    first = decisions[0]
    values: dict[str, Any] = {"label": label, "selected": first.selected, "n0": first.n0}
    for r, decision in zip(radii, decisions, strict=True):
        values[f"certified@{r:g}"] = int(decision.certified)
        values[f"draws@{r:g}"] = decision.draws
    values["seed"] = first.seed
    if first.u is not None:
        values["u"] = first.u
    return values


def _records(smooth: Smooth, log: pd.DataFrame) -> list[tuple[DrawRecord, int]]:
    records = read_records(log, smooth.num_classes)
    return list(zip(records, log["label"].astype(int), strict=True))


def read_record_log(path: str | os.PathLike[str]) -> pd.DataFrame:
    """A :func:`record_dataset` log as a DataFrame (one row per input)."""
    return pd.read_csv(path, sep="\t")
