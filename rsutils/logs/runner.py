"""Certifying and predicting over a dataset into resumable TSV logs.

The log has Cohen et al.'s columns first (``idx label predict radius correct time``,
without ``radius`` for prediction logs) and ours after them; it is a
:class:`~rsutils.logs.resumable.ResumableLog` (one writer at a time, checked against
its settings). Restarting a killed run with the same configuration skips the inputs
already in the log and appends the rest, so the final file equals that of an
uninterrupted run (up to the ``time`` column): the noise for each input depends only
on ``(seed, idx)``. Every argument is checked before the log is created.
"""

from __future__ import annotations

import operator
import os
import time
from collections.abc import Callable, Iterable, Mapping
from functools import partial
from pathlib import Path
from typing import Any

import pandas as pd
import torch
from tqdm.auto import tqdm

from rsutils.anisotropic.generated import GeneratedSmooth
from rsutils.core.devices import model_device
from rsutils.core.environment import describe_environment
from rsutils.core.settings import CertifySettings, check_count
from rsutils.core.smooth import Smooth
from rsutils.ddrs.data_dependent import DataDependentSmooth
from rsutils.ddrs.sigma_ascent import SigmaAscent
from rsutils.logs.analysis import read_log
from rsutils.logs.resumable import ResumableLog
from rsutils.training.data import Dataset

__all__ = [
    "ANISOTROPIC_COLUMNS",
    "CERTIFY_COLUMNS",
    "DS_COLUMNS",
    "PREDICT_COLUMNS",
    "ResumableLog",
    "certify_dataset",
    "certify_dataset_ds",
    "predict_dataset",
    "select_indices",
]

CERTIFY_COLUMNS = (
    "idx label predict radius correct time selected count n0 n alpha pA_lower scale seed".split()
)
PREDICT_COLUMNS = "idx label predict correct time n alpha scale seed".split()
#: Columns of data-dependent certification logs. There ``scale`` is each input's own
#: sigma*, ``predict`` and ``radius`` are the memory's answer, ``mc_predict`` and
#: ``mc_radius`` are CERTIFY's, and ``memory`` says what the memory did.
DS_COLUMNS = [*CERTIFY_COLUMNS, "mc_predict", "mc_radius", "memory"]
#: Columns of certification logs with anisotropic noise. There ``radius`` is the ℓp
#: radius ``min(sigma)·R``, ``region_radius`` the R of the region
#: ``‖δ ⊘ sigma‖_p < R`` and ``alm`` UCAN's ALM ``(∏ sigma_i)^(1/d)·R``.
ANISOTROPIC_COLUMNS = [*CERTIFY_COLUMNS, "region_radius", "alm"]


def select_indices(length: int, skip: int = 1, max_index: int = -1) -> list[int]:
    """Cohen et al.'s ``--skip``/``--max``: every ``skip``-th index below ``max_index``."""
    if skip < 1:
        raise ValueError(f"skip must be >= 1, got {skip}")
    stop = length if max_index < 0 else min(length, max_index)
    return list(range(0, stop, skip))


def _check_indices(indices: Iterable[int], length: int) -> list[int]:
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


def _run(
    open_log: Callable[[], ResumableLog],
    indices: list[int],
    row: Callable[[int], dict[str, Any]],
    desc: str,
    progress: bool,
    read: Callable[[Path], pd.DataFrame] = read_log,
) -> pd.DataFrame:
    """Append ``row(i)`` (timed) to the log ``open_log()`` for every index it lacks;
    return the log as ``read`` reads it."""
    with open_log() as log:
        todo = [i for i in indices if i not in log.done]
        for i in tqdm(todo, disable=not progress, desc=f"{desc} {log.path.name}"):
            start = time.perf_counter()
            values = row(i)
            log.append({**values, "idx": i, "time": round(time.perf_counter() - start, 4)})
        return read(log.path)


def certify_dataset(
    smooth: Smooth | GeneratedSmooth,
    data: Dataset,
    indices: Iterable[int],
    path: str | os.PathLike[str],
    settings: CertifySettings,
    *,
    config: Mapping[str, Any] | None = None,
    progress: bool = True,
) -> pd.DataFrame:
    """Run CERTIFY on ``data[i]`` for each index into a resumable log; return the log.

    With anisotropic noise, or noise from a generator
    (:class:`~rsutils.anisotropic.generated.GeneratedSmooth`), the log also has
    ``region_radius`` and ``alm`` (:data:`ANISOTROPIC_COLUMNS`). ``config`` adds what
    identifies the model (e.g. its checkpoint) to the settings that the log records and
    checks on resume.
    """
    indices = _check_indices(indices, len(data))
    recorded = {
        "noise": _noise_description(smooth),
        "norm": smooth.norm,
        **_inference(smooth),
        **_data_settings(data),
        **settings.identity("certify"),
        **(config or {}),
    }

    def row(i: int) -> dict[str, Any]:
        cert = smooth.certify(data.images[i], *_certify_args(settings), index=i)
        label = int(data.labels[i])
        return {
            **cert.as_dict(),
            "label": label,
            "predict": cert.prediction,
            "correct": int(cert.prediction == label),
            "scale": _scale(smooth),
        }

    columns = ANISOTROPIC_COLUMNS if smooth.anisotropic else CERTIFY_COLUMNS
    environment = describe_environment(smooth.device)
    open_log = partial(ResumableLog, path, columns, recorded, environment=environment)
    return _run(open_log, indices, row, "certify", progress)


def predict_dataset(
    smooth: Smooth | GeneratedSmooth,
    data: Dataset,
    indices: Iterable[int],
    path: str | os.PathLike[str],
    settings: CertifySettings,
    *,
    config: Mapping[str, Any] | None = None,
    progress: bool = True,
) -> pd.DataFrame:
    """Run PREDICT on ``data[i]`` for each index into a resumable log; return the log.

    PREDICT uses ``settings.n``, ``alpha``, ``seed`` and ``batch_size`` (not ``n0``).
    """
    indices = _check_indices(indices, len(data))
    recorded = {
        "noise": _noise_description(smooth),
        **_inference(smooth),
        **_data_settings(data),
        **settings.identity("predict"),
        **(config or {}),
    }

    def row(i: int) -> dict[str, Any]:
        s = settings
        prediction = smooth.predict(data.images[i], s.n, s.alpha, s.batch_size, s.seed, i)
        label = int(data.labels[i])
        return {
            "label": label,
            "predict": prediction,
            "correct": int(prediction == label),
            "scale": _scale(smooth),
            **settings.identity("predict"),
        }

    environment = describe_environment(smooth.device)
    open_log = partial(ResumableLog, path, PREDICT_COLUMNS, recorded, environment=environment)
    return _run(open_log, indices, row, "predict", progress)


def certify_dataset_ds(
    smooth: DataDependentSmooth,
    data: Dataset,
    indices: Iterable[int],
    path: str | os.PathLike[str],
    settings: CertifySettings,
    *,
    ascent_batch: int = 100,
    key_prefix: str = "",
    config: Mapping[str, Any] | None = None,
    progress: bool = True,
) -> pd.DataFrame:
    """Data-dependent certification (DDRS "Cohen-DS") into a resumable log.

    For each input: sigma ascent from ``smooth.ascent.sigma0`` (inputs in groups of
    ``ascent_batch``, each with its own noise stream, so the result does not depend on
    the grouping), CERTIFY with the noise at the scale found, then admission to the
    smooth's memory (its answer is the logged ``predict``/``radius``; the memory is
    keyed by ``key_prefix`` and the index, so a resumed run gets the same answers).
    Without a memory the log holds CERTIFY's answers, which are not sound
    certificates of the data-dependent classifier (see :mod:`rsutils.ddrs.memory`).
    """
    indices = _check_indices(indices, len(data))
    check_count("ascent_batch", ascent_batch)
    memory = smooth.memory
    recorded = {
        "method": "ds",
        "ascent": smooth.ascent.as_dict(),
        **_inference(smooth),
        **_data_settings(data),
        **settings.identity("certify"),
        "memory": None if memory is None else getattr(memory.path, "name", "(in RAM)"),
        "key_prefix": key_prefix,
        **(config or {}),
    }
    environment = describe_environment(model_device(smooth.model))
    with ResumableLog(path, DS_COLUMNS, recorded, environment=environment) as log:
        todo = [i for i in indices if i not in log.done]
        work = ds_work(smooth.ascent, settings)
        desc = f"certify-ds {Path(path).name}"
        bar = tqdm(
            total=len(todo) * sum(work),
            disable=not progress,
            desc=desc,
            unit="draw",
            unit_scale=True,
        )
        with bar:
            for start in range(0, len(todo), ascent_batch):
                group = todo[start : start + ascent_batch]
                _ds_group(smooth, data, group, settings, key_prefix, log, (bar, work))
        return read_log(log.path)


#: A draw of sigma ascent costs a forward and a backward pass to the input (no weight
#: gradients): about two forwards (1.7 measured for the small CNN on CPU, 800 draws).
ASCENT_DRAW_COST = 2


def ds_work(ascent: SigmaAscent, settings: CertifySettings) -> tuple[int, int]:
    """The work of one input of :func:`certify_dataset_ds`, in forward passes of one draw.

    ``(sigma ascent, CERTIFY)``: the progress bar advances by the first when a group's
    ascent ends and by the second with each row, so that it moves during the ascent
    and its ETA weighs both phases.
    """
    ascent_draws = (ascent.iterations + 1) * ascent.draws * ASCENT_DRAW_COST
    return ascent_draws, settings.n0 + settings.n


def _ds_group(
    smooth: DataDependentSmooth,
    data: Dataset,
    group: list[int],
    settings: CertifySettings,
    key_prefix: str,
    log: ResumableLog,
    progress: tuple[tqdm, tuple[int, int]],
) -> None:
    """Sigma ascent for ``group`` together, then each input's row, timed, into ``log``."""
    bar, (ascent_work, certify_work) = progress
    began = time.perf_counter()
    scales = smooth.scales(torch.stack([data.images[i] for i in group]), settings.seed, group)
    ascent_time = (time.perf_counter() - began) / len(group)
    bar.update(ascent_work * len(group))
    for i, scale in zip(group, scales, strict=True):
        began = time.perf_counter()
        row = _ds_row(smooth, data, i, scale, settings, key=f"{key_prefix}{i}")
        log.append({**row, "time": round(ascent_time + time.perf_counter() - began, 4)})
        bar.update(certify_work)


def _ds_row(
    smooth: DataDependentSmooth,
    data: Dataset,
    i: int,
    scale: float,
    settings: CertifySettings,
    key: str,
) -> dict[str, Any]:
    """One row of a data-dependent log (without its time)."""
    x = data.images[i]
    answer = smooth.certify(x, *_certify_args(settings), index=i, scale=scale, key=key)
    cert, label = answer.certificate, int(data.labels[i])
    return {
        **cert.as_dict(),
        "idx": i,
        "label": label,
        "predict": answer.prediction,
        "radius": answer.radius,
        "correct": int(answer.prediction == label),
        "scale": scale,
        "mc_predict": cert.prediction,
        "mc_radius": cert.radius,
        "memory": answer.action,
    }


def _certify_args(settings: CertifySettings) -> tuple[int, int, float, int, int]:
    """``(n0, n, alpha, batch_size, seed)``: CERTIFY's positional arguments."""
    return settings.n0, settings.n, settings.alpha, settings.batch_size, settings.seed


def _noise_description(smooth: Smooth | GeneratedSmooth) -> str:
    return smooth.noise_description


def _inference(smooth: Smooth | GeneratedSmooth | DataDependentSmooth) -> dict[str, str]:
    """The base model's mode, recorded (and checked on resume) unless it is plain fp32,
    so that fp32 logs keep the settings they always had."""
    mode = getattr(smooth, "inference", "fp32")
    return {} if mode == "fp32" else {"inference": mode}


def _scale(smooth: Smooth | GeneratedSmooth) -> float:
    """The logged ``scale``: the base family's (``λ``) when a generator makes the noise."""
    return smooth.logged_scale


def _data_settings(data: Dataset) -> dict[str, str]:
    return {"dataset": data.name, "split": data.split}
