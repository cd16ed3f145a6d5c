"""Sequential and input-specific CERTIFY over a dataset, into resumable logs.

:func:`decide_dataset` runs :func:`~rsutils.core.sequential.decide_radii` on every
input: one row per input, with ``certified@r`` and ``draws@r`` for each radius ``r``
asked (:func:`decisions_long` turns them into one row per input and radius).
:func:`decide_label_dataset`, for evaluation on a labelled test set, runs
:func:`~rsutils.core.evaluation.decide_label_radii` on each input's true label: the same
columns, with ``n0 = 0`` and ``selected`` the label, so the same analyses apply.
:func:`certify_planned_dataset` runs
:func:`~rsutils.core.sample_size.certify_planned`; its log has CERTIFY's columns, with
each input's own ``n``, so every analysis of CERTIFY logs applies to it;
:func:`certify_looks_dataset` runs :func:`~rsutils.core.sequential_radius.certify_looks`
into the same columns plus the stopping ``look`` and its level ``alpha_spent``. The logs are
:class:`~rsutils.logs.resumable.ResumableLog` files (killed runs resume where they
stopped) and record the settings that determine their rows; both are
:func:`~rsutils.logs.dataset_run.run_dataset`'s loop with their own columns and rows.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

from rsutils.core.anytime import AnytimeSchedule
from rsutils.core.evaluation import decide_label_radii
from rsutils.core.sample_size import certify_planned, check_radius_loss
from rsutils.core.sequential import Decision, LookSchedule, Schedule, check_radius, decide_radii
from rsutils.core.sequential_radius import Judge, certify_looks, check_looks
from rsutils.core.settings import CertifySettings, check_count
from rsutils.core.smooth import Smooth
from rsutils.logs.dataset_run import DatasetRun, answer_columns, run_dataset
from rsutils.logs.runner import CERTIFY_COLUMNS
from rsutils.training.data import Dataset

__all__ = [
    "certify_looks_dataset",
    "certify_planned_dataset",
    "decide_dataset",
    "decide_label_dataset",
    "decision_columns",
    "decisions_long",
    "read_decisions",
    "schedule_identity",
]


def decision_columns(radii: Sequence[float], randomized: bool = False) -> list[str]:
    """The columns of a :func:`decide_dataset` log for these radii (with ``u``, the
    randomisation each input's decisions hold at, for a randomised schedule)."""
    per_radius = [f"{what}@{r:g}" for r in radii for what in ("certified", "draws")]
    return ["idx", "label", "selected", "time", "n0", *per_radius, *(["u"] * randomized), "seed"]


def decide_dataset(
    smooth: Smooth,
    data: Dataset,
    indices: Iterable[int],
    path: str | os.PathLike[str],
    settings: CertifySettings,
    schedule: Schedule,
    radii: Sequence[float],
    *,
    config: Mapping[str, Any] | None = None,
    progress: bool = True,
) -> pd.DataFrame:
    """Sequential decisions at each of ``radii`` for each input (see the module's text).

    ``settings`` give ``n0``, ``seed`` and ``batch_size``; ``schedule`` the looks and
    levels (its ``n_max`` and ``alpha`` replace ``settings.n`` and ``settings.alpha``).
    """
    radii = _distinct_radii(radii)
    check_count("n0", settings.n0)
    recorded = {"n0": settings.n0, **_schedule_settings(settings, schedule, radii)}

    def row(i: int) -> dict[str, Any]:
        s = settings
        decisions = decide_radii(
            smooth, data.images[i], radii, s.n0, schedule, s.batch_size, s.seed, index=i
        )
        return _decision_row(int(data.labels[i]), decisions, radii, s.n0, s.seed)

    columns = decision_columns(radii, _randomized(schedule))
    run = DatasetRun("decide", "certify", columns, recorded, row, read=read_decisions)
    return run_dataset(smooth, data, indices, path, run, config=config, progress=progress)


def decide_label_dataset(
    smooth: Smooth,
    data: Dataset,
    indices: Iterable[int],
    path: str | os.PathLike[str],
    settings: CertifySettings,
    schedule: Schedule,
    radii: Sequence[float],
    *,
    config: Mapping[str, Any] | None = None,
    progress: bool = True,
) -> pd.DataFrame:
    """Evaluation only: is each input's true label certified at each of ``radii``?

    :func:`~rsutils.core.evaluation.decide_label_radii` on ``data``'s labels, into a log
    with :func:`decide_dataset`'s columns (``n0 = 0``, ``selected`` = the label), so
    :func:`decisions_long` gives its certified accuracy (``correct``) and forward passes.
    ``settings`` give ``seed`` and ``batch_size`` (its ``n0`` is not used); the draws are
    prefixes of those of :func:`decide_dataset` with the same seed. A deployed
    classifier has no label: this measures certified accuracy, it does not certify.
    """
    radii = _distinct_radii(radii)
    recorded = {"n0": 0, "tested": "true label", **_schedule_settings(settings, schedule, radii)}

    def row(i: int) -> dict[str, Any]:
        s, label = settings, int(data.labels[i])
        decisions = decide_label_radii(
            smooth, data.images[i], label, radii, schedule, s.batch_size, s.seed, index=i
        )
        return _decision_row(label, decisions, radii, 0, s.seed)

    columns = decision_columns(radii, _randomized(schedule))
    run = DatasetRun("decide (true label)", "certify", columns, recorded, row, read=read_decisions)
    return run_dataset(smooth, data, indices, path, run, config=config, progress=progress)


def _distinct_radii(radii: Sequence[float]) -> list[float]:
    radii = [check_radius(r) for r in radii]
    if len({f"{r:g}" for r in radii}) != len(radii):
        raise ValueError(f"the radii must differ (as printed with :g), got {radii}")
    return radii


def _schedule_settings(
    settings: CertifySettings, schedule: Schedule, radii: list[float]
) -> dict[str, Any]:
    """What determines the rows: the seed, the schedule (:func:`schedule_identity`) and
    the radii."""
    return {"seed": settings.seed, **schedule_identity(schedule), "radii": radii}


def schedule_identity(schedule: Schedule) -> dict[str, Any]:
    """What a log records of the test a schedule runs: a spending schedule's looks and
    levels (and whether it is randomised, only when it is, so the settings of earlier
    logs are unchanged), or a confidence sequence's looks, level, sidedness and prior."""
    if isinstance(schedule, AnytimeSchedule):
        test = {"test": "confidence sequence", "looks": list(schedule.looks)}
        test |= {"alpha": schedule.alpha, "one_sided": schedule.one_sided}
        return test | {"prior": list(schedule.prior)}
    test = {"looks": list(schedule.looks), "alphas": list(schedule.alphas)}
    return test | ({"randomized": True} if _randomized(schedule) else {})


def _randomized(schedule: Schedule) -> bool:
    return bool(getattr(schedule, "randomized", False))


def _decision_row(
    label: int, decisions: Sequence[Decision], radii: Sequence[float], n0: int, seed: int
) -> dict[str, Any]:
    values: dict[str, Any] = {"label": label, "n0": n0, "seed": seed}
    values["selected"] = decisions[0].selected if decisions else -1
    for r, decision in zip(radii, decisions, strict=True):
        values[f"certified@{r:g}"] = int(decision.certified)
        values[f"draws@{r:g}"] = decision.draws
    if decisions and decisions[0].u is not None:
        values["u"] = decisions[0].u
    return values


def read_decisions(path: str | os.PathLike[str]) -> pd.DataFrame:
    """A :func:`decide_dataset` log as a DataFrame (one row per input)."""
    return pd.read_csv(path, sep="\t")


def decisions_long(log: pd.DataFrame, radii: Sequence[float]) -> pd.DataFrame:
    """One row per input and radius: ``idx``, ``radius``, ``certified``, ``correct``
    (certified with the true label) and ``forward_passes`` (``n0`` + draws)."""
    parts = []
    for r in radii:
        certified = log[f"certified@{r:g}"].astype(bool)
        parts.append(
            pd.DataFrame(
                {
                    "idx": log["idx"],
                    "radius": float(r),
                    "certified": certified,
                    "correct": certified & (log["selected"] == log["label"]),
                    "forward_passes": log["n0"] + log[f"draws@{r:g}"],
                }
            )
        )
    return pd.concat(parts, ignore_index=True)


def certify_planned_dataset(
    smooth: Smooth,
    data: Dataset,
    indices: Iterable[int],
    path: str | os.PathLike[str],
    settings: CertifySettings,
    radius_loss: float,
    *,
    min_draws: int = 100,
    config: Mapping[str, Any] | None = None,
    progress: bool = True,
) -> pd.DataFrame:
    """:func:`~rsutils.core.sample_size.certify_planned` on each input, with at most
    ``settings.n`` draws; the log's ``n`` is each input's own number of draws."""
    check_radius_loss(radius_loss)
    check_count("min_draws", min_draws)
    recorded = {
        **settings.identity("certify"),
        "radius_loss": float(radius_loss),
        "min_draws": min_draws,
    }
    scale = smooth.logged_scale

    def row(i: int) -> dict[str, Any]:
        s = settings
        cert = certify_planned(
            smooth, data.images[i], s.n0, s.n, s.alpha, radius_loss, s.batch_size, s.seed, i,
            min_draws=min_draws,
        )  # fmt: skip
        label = int(data.labels[i])
        return {**cert.as_dict(), **answer_columns(cert.prediction, label), "scale": scale}

    run = DatasetRun("certify (planned)", "certify", CERTIFY_COLUMNS, recorded, row)
    return run_dataset(smooth, data, indices, path, run, config=config, progress=progress)


def certify_looks_dataset(
    smooth: Smooth,
    data: Dataset,
    indices: Iterable[int],
    path: str | os.PathLike[str],
    settings: CertifySettings,
    schedule: LookSchedule,
    radius_loss: float,
    *,
    judge: Judge = "estimate",
    gamma: float = 0.05,
    keep_best: bool = False,
    config: Mapping[str, Any] | None = None,
    progress: bool = True,
) -> pd.DataFrame:
    """:func:`~rsutils.core.sequential_radius.certify_looks` on each input, ``schedule``
    ending at ``settings.n`` with levels summing to ``settings.alpha``. The log has
    CERTIFY's columns (``n`` each input's draws, ``alpha`` the procedure's level,
    ``pA_lower`` the bound at the stopping look's level) and ``look``, ``alpha_spent``:
    recertify a row at ``alpha_spent``, not ``alpha``."""
    check_looks(schedule, radius_loss, judge, gamma)
    if schedule.n_max != settings.n or not math.isclose(schedule.alpha, settings.alpha):
        raise ValueError(
            f"the schedule must end at settings.n = {settings.n} and spend settings.alpha = "
            f"{settings.alpha}, got n_max = {schedule.n_max} and alpha = {schedule.alpha}"
        )
    recorded = {
        **settings.identity("certify"),
        "looks": list(schedule.looks),
        "alphas": list(schedule.alphas),
        "radius_loss": float(radius_loss),
        "judge": judge,
        "gamma": float(gamma),
        "keep_best": bool(keep_best),
    }
    scale = smooth.logged_scale

    def row(i: int) -> dict[str, Any]:
        s = settings
        answer = certify_looks(
            smooth, data.images[i], s.n0, schedule, radius_loss, s.batch_size, s.seed, i,
            judge=judge, gamma=gamma, keep_best=keep_best,
        )  # fmt: skip
        label = int(data.labels[i])
        columns = answer_columns(answer.prediction, label)
        return {**answer.as_dict(), **columns, "scale": scale}

    columns = [*CERTIFY_COLUMNS, "look", "alpha_spent"]
    run = DatasetRun("certify (looks)", "certify", columns, recorded, row)
    return run_dataset(smooth, data, indices, path, run, config=config, progress=progress)
