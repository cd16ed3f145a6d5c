"""Certifying and predicting over a dataset into resumable TSV logs.

The log has Cohen et al.'s columns first (``idx label predict radius correct time``,
without ``radius`` for prediction logs) and ours after them; it is a
:class:`~rsutils.logs.resumable.ResumableLog` (one writer at a time, checked against
its settings). Restarting a killed run with the same configuration skips the inputs
already in the log and appends the rest, so the final file equals that of an
uninterrupted run (up to the ``time`` column): the noise for each input depends only
on ``(seed, idx)``. Every argument is checked before the log is created. The loop
itself is :func:`~rsutils.logs.dataset_run.run_dataset`'s; each runner here gives its
columns, settings and rows, and takes any
:class:`~rsutils.core.smoothed.SmoothedClassifier` that fits it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from rsutils.core.ceiling import reaches_ceiling
from rsutils.core.settings import CertifySettings
from rsutils.core.smooth import Certificate, Smooth
from rsutils.core.smoothed import SmoothedClassifier
from rsutils.data import Dataset
from rsutils.logs.dataset_run import DatasetRun, answer_columns, run_dataset, select_indices
from rsutils.logs.read import read_rows
from rsutils.logs.resumable import ResumableLog

__all__ = [
    "ANISOTROPIC_COLUMNS",
    "CEILING_COLUMNS",
    "CERTIFY_COLUMNS",
    "PREDICT_COLUMNS",
    "ResumableLog",
    "ceiling_dataset",
    "certify_args",
    "certify_columns",
    "certify_dataset",
    "certify_row",
    "predict_dataset",
    "select_indices",
]

#: The columns of a CERTIFY log, Cohen et al.'s first, then the certificate's and settings.
CERTIFY_COLUMNS = (
    "idx label predict radius correct time selected count n0 n alpha pA_lower scale seed".split()
)
#: The columns of a PREDICT log, Cohen et al.'s first, then the settings.
PREDICT_COLUMNS = "idx label predict correct time n alpha scale seed".split()
#: The columns of a ceiling log (:func:`ceiling_dataset`): CERTIFY's selected class, whether
#: its estimate sits at the ceiling, the estimation draws looked at, and the settings.
CEILING_COLUMNS = "idx label selected at_ceiling draws time n0 n scale seed".split()
#: Columns of certification logs with anisotropic noise. There ``radius`` is the ℓp
#: radius ``min(sigma)·R``, ``region_radius`` the R of the region
#: ``‖δ ⊘ sigma‖_p < R`` and ``alm`` UCAN's ALM ``(∏ sigma_i)^(1/d)·R``.
ANISOTROPIC_COLUMNS = [*CERTIFY_COLUMNS, "region_radius", "alm"]


def certify_columns(smooth: SmoothedClassifier) -> list[str]:
    """The columns of a CERTIFY log of ``smooth``: :data:`ANISOTROPIC_COLUMNS` when its
    certificates are anisotropic regions, else :data:`CERTIFY_COLUMNS`."""
    return list(ANISOTROPIC_COLUMNS if smooth.anisotropic else CERTIFY_COLUMNS)


def certify_row(cert: Certificate, label: int, scale: float) -> dict[str, Any]:
    """A CERTIFY log's row of one input (all but ``idx`` and ``time``): the certificate,
    the answer against ``label`` and the noise ``scale``."""
    return {**cert.as_dict(), **answer_columns(cert.prediction, label), "scale": scale}


def certify_dataset(
    smooth: SmoothedClassifier,
    data: Dataset,
    indices: Iterable[int],
    path: str | os.PathLike[str],
    settings: CertifySettings,
    *,
    config: Mapping[str, Any] | None = None,
    progress: bool = True,
) -> pd.DataFrame:
    """Run CERTIFY on ``data[i]`` for each index into a resumable log; return the log.

    ``smooth`` has one noise scale, which every row records, and answers with
    :class:`~rsutils.core.smooth.Certificate` objects:
    :class:`~rsutils.core.smooth.Smooth`, or
    :class:`~rsutils.anisotropic.generated.GeneratedSmooth`
    (data-dependent noise goes through :func:`~rsutils.ddrs.runs.certify_dataset_ds`). When its
    certificates are anisotropic regions the log also has ``region_radius`` and ``alm``
    (:data:`ANISOTROPIC_COLUMNS`). ``config`` adds what identifies the model (e.g. its
    checkpoint) to the settings that the log records and checks on resume.
    """
    scale = _one_scale(smooth, "certify_dataset")

    def row(i: int) -> dict[str, Any]:
        cert = smooth.certify(data.images[i], *certify_args(settings), index=i)
        return certify_row(cert, int(data.labels[i]), scale)

    run = DatasetRun(
        "certify", "certify", certify_columns(smooth), settings.identity("certify"), row
    )
    return run_dataset(smooth, data, indices, path, run, config=config, progress=progress)


def predict_dataset(
    smooth: SmoothedClassifier,
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
    ``smooth`` has one noise scale, which every row records.
    """
    scale = _one_scale(smooth, "predict_dataset")

    def row(i: int) -> dict[str, Any]:
        s = settings
        prediction = smooth.predict(data.images[i], s.n, s.alpha, s.batch_size, s.seed, i)
        return {
            **answer_columns(prediction, int(data.labels[i])),
            "scale": scale,
            **settings.identity("predict"),
        }

    run = DatasetRun("predict", "predict", PREDICT_COLUMNS, settings.identity("predict"), row)
    return run_dataset(smooth, data, indices, path, run, config=config, progress=progress)


def ceiling_dataset(
    smooth: Smooth,
    data: Dataset,
    indices: Iterable[int],
    path: str | os.PathLike[str],
    settings: CertifySettings,
    *,
    config: Mapping[str, Any] | None = None,
    progress: bool = True,
) -> pd.DataFrame:
    """For each ``data[i]``, whether :func:`certify_dataset` with these settings would
    put the certificate at its ceiling (all ``n`` estimation draws in the selected
    class), into a resumable log (:data:`CEILING_COLUMNS`); return the log.

    Exact, and cheaper than certifying: each input stops at its first draw of another
    class (:func:`~rsutils.core.ceiling.reaches_ceiling`); ``draws`` says how many
    estimation draws that took. ``alpha`` plays no part (the ceiling's place depends on
    it, whether a run sits there does not).
    """
    scale = _one_scale(smooth, "ceiling_dataset")
    s = settings

    def row(i: int) -> dict[str, Any]:
        found = reaches_ceiling(
            smooth, data.images[i], s.n0, s.n, seed=s.seed, index=i, batch_size=s.batch_size
        )
        return {
            "label": int(data.labels[i]), "selected": found.selected,
            "at_ceiling": int(found.at_ceiling), "draws": found.draws,
            "n0": s.n0, "n": s.n, "scale": scale, "seed": s.seed,
        }  # fmt: skip

    identity = {k: v for k, v in settings.identity("certify").items() if k != "alpha"}
    run = DatasetRun("ceiling", "certify", CEILING_COLUMNS, identity, row, read=read_rows)
    return run_dataset(smooth, data, indices, path, run, config=config, progress=progress)


def certify_args(settings: CertifySettings) -> tuple[int, int, float, int, int]:
    """``(n0, n, alpha, batch_size, seed)``: CERTIFY's positional arguments."""
    return settings.n0, settings.n, settings.alpha, settings.batch_size, settings.seed


def _one_scale(smooth: SmoothedClassifier, runner: str) -> float:
    """The scale every row of ``runner``'s log records; refused when each input has its own."""
    scale = smooth.logged_scale
    if scale is None:
        raise ValueError(
            f"{runner} logs one noise scale, but {type(smooth).__name__} chooses one per "
            "input; certify it with certify_dataset_ds"
        )
    return scale
