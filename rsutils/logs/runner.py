"""Certifying and predicting over a dataset into resumable TSV logs.

The log has Cohen et al.'s columns first (``idx label predict radius correct time``,
without ``radius`` for prediction logs) and ours after them. Each row is written and
flushed to disk as soon as its input is done; a sidecar ``<log>.json`` records the
run's configuration. Restarting a killed run with the same configuration drops a
torn last line, skips the inputs already in the log and appends the rest, so the
final file equals that of an uninterrupted run (up to the ``time`` column): the noise
for each input depends only on ``(seed, idx)``.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import torch
from tqdm.auto import tqdm

from rsutils.anisotropic.noise import Anisotropic
from rsutils.cache import atomic_write_bytes
from rsutils.core.settings import CertifySettings
from rsutils.core.smooth import Smooth
from rsutils.ddrs.data_dependent import DataDependentSmooth
from rsutils.logs.analysis import read_log
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


class ResumableLog:
    """An append-only TSV log that survives being killed.

    ``config`` is everything that determines the rows; reopening a log written with
    another configuration is an error rather than a silent mix of two runs.
    """

    def __init__(
        self, path: str | os.PathLike[str], columns: Sequence[str], config: Mapping[str, Any]
    ):
        self.path = Path(path)
        self.columns = list(columns)
        self.sidecar = self.path.with_name(self.path.name + ".json")
        config = json.loads(json.dumps(dict(config), default=str))
        if self.sidecar.exists() and self.path.exists():
            previous = json.loads(self.sidecar.read_text())
            changed = sorted(
                k for k in set(previous) | set(config) if previous.get(k) != config.get(k)
            )
            if changed:
                raise ValueError(
                    f"{self.path} was written by a run with different settings "
                    f"({', '.join(changed)}); pass the same settings to resume it, "
                    "or choose another output file"
                )
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_bytes(self.sidecar, json.dumps(config, indent=2).encode())
        if not self.path.exists():
            atomic_write_bytes(self.path, ("\t".join(self.columns) + "\n").encode())
        self._drop_torn_line()
        self.done = self._completed_indices()

    def _drop_torn_line(self) -> None:
        data = self.path.read_bytes()
        if not data.endswith(b"\n"):
            with open(self.path, "r+b") as handle:
                handle.truncate(data.rfind(b"\n") + 1)

    def _completed_indices(self) -> set[int]:
        with open(self.path) as handle:
            header = handle.readline().rstrip("\n").split("\t")
            if header != self.columns:
                raise ValueError(f"{self.path} has columns {header}, expected {self.columns}")
            return {int(line.split("\t", 1)[0]) for line in handle if line.strip()}

    def append(self, row: Mapping[str, Any]) -> None:
        """Write one row and force it to disk."""
        line = "\t".join(_format(row[c]) for c in self.columns) + "\n"
        with open(self.path, "a") as handle:
            handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())
        self.done.add(int(row["idx"]))


def _format(value: Any) -> str:
    return repr(value) if isinstance(value, float) else str(value)


def _run(
    log: ResumableLog,
    indices: Iterable[int],
    row: Callable[[int], dict[str, Any]],
    desc: str,
    progress: bool,
) -> pd.DataFrame:
    """Append ``row(i)`` (timed) to ``log`` for every index it does not hold yet."""
    todo = [i for i in indices if i not in log.done]
    for i in tqdm(todo, disable=not progress, desc=desc):
        start = time.perf_counter()
        values = row(i)
        log.append({**values, "idx": i, "time": round(time.perf_counter() - start, 4)})
    return read_log(log.path)


def certify_dataset(
    smooth: Smooth,
    data: Dataset,
    indices: Iterable[int],
    path: str | os.PathLike[str],
    settings: CertifySettings,
    *,
    config: Mapping[str, Any] | None = None,
    progress: bool = True,
) -> pd.DataFrame:
    """Run CERTIFY on ``data[i]`` for each index into a resumable log; return the log.

    With anisotropic noise the log also has ``region_radius`` and ``alm``
    (:data:`ANISOTROPIC_COLUMNS`). ``config`` adds what identifies the model (e.g. its
    checkpoint) to the settings that the log records and checks on resume.
    """
    recorded = {
        "noise": repr(smooth.noise),
        "norm": smooth.norm,
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
            "scale": smooth.noise.scale,
        }

    anisotropic = isinstance(smooth.noise, Anisotropic)
    columns = ANISOTROPIC_COLUMNS if anisotropic else CERTIFY_COLUMNS
    log = ResumableLog(path, columns, recorded)
    return _run(log, indices, row, f"certify {Path(path).name}", progress)


def predict_dataset(
    smooth: Smooth,
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
    recorded = {
        "noise": repr(smooth.noise),
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
            "scale": smooth.noise.scale,
            **settings.identity("predict"),
        }

    log = ResumableLog(path, PREDICT_COLUMNS, recorded)
    return _run(log, indices, row, f"predict {Path(path).name}", progress)


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
    memory = smooth.memory
    recorded = {
        "method": "ds",
        "ascent": smooth.ascent.as_dict(),
        **_data_settings(data),
        **settings.identity("certify"),
        "memory": None if memory is None else getattr(memory.path, "name", "(in RAM)"),
        "key_prefix": key_prefix,
        **(config or {}),
    }
    log = ResumableLog(path, DS_COLUMNS, recorded)
    todo = [i for i in indices if i not in log.done]
    bar = tqdm(total=len(todo), disable=not progress, desc=f"certify-ds {Path(path).name}")
    for start in range(0, len(todo), ascent_batch):
        group = todo[start : start + ascent_batch]
        began = time.perf_counter()
        scales = smooth.scales(torch.stack([data.images[i] for i in group]), settings.seed, group)
        ascent_time = (time.perf_counter() - began) / len(group)
        for i, scale in zip(group, scales, strict=True):
            began = time.perf_counter()
            row = _ds_row(smooth, data, i, scale, settings, key=f"{key_prefix}{i}")
            log.append({**row, "time": round(ascent_time + time.perf_counter() - began, 4)})
            bar.update()
    bar.close()
    return read_log(log.path)


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


def _data_settings(data: Dataset) -> dict[str, str]:
    return {"dataset": data.name, "split": data.split}
