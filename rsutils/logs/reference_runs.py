"""Certifying the float32 model from bfloat16 counts over a dataset, into a resumable log.

The log is a CERTIFY log (:data:`~rsutils.logs.runner.CERTIFY_COLUMNS`: ``predict``,
``radius`` and ``pA_lower`` are the float32 classifier's, ``selected`` and ``count``
those of CERTIFY in the fast mode, with the same draws) with the paired draws'
columns after it (:data:`REFERENCE_COLUMNS`): ``m``, ``disagreements`` (fast in the
selected class, float32 not), ``differ`` (the two classes differ), ``d_upper`` and
``fast_pA_lower`` (:class:`~rsutils.core.reference_precision.ReferenceCertificate`).
Like every dataset run (:func:`~rsutils.logs.dataset_run.run_dataset`), it resumes
where a killed run stopped, and a resumed log equals an uninterrupted one up to
``time``, which counts both the fast CERTIFY and the paired draws.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from rsutils.core.reference_precision import ReferenceSmooth
from rsutils.core.settings import CertifySettings
from rsutils.data import Dataset
from rsutils.logs.dataset_run import DatasetRun, answer_columns, run_dataset
from rsutils.logs.runner import CERTIFY_COLUMNS

__all__ = ["REFERENCE_COLUMNS", "certify_reference_dataset"]

#: A CERTIFY log's columns, then those of the paired draws.
REFERENCE_COLUMNS = [
    *CERTIFY_COLUMNS,
    "m",
    "disagreements",
    "differ",
    "d_upper",
    "fast_pA_lower",
]


def certify_reference_dataset(
    smooth: ReferenceSmooth,
    data: Dataset,
    indices: Iterable[int],
    path: str | os.PathLike[str],
    settings: CertifySettings,
    *,
    config: Mapping[str, Any] | None = None,
    progress: bool = True,
) -> pd.DataFrame:
    """Certify the float32 model of ``smooth`` on ``data[i]`` for each index, from
    bfloat16 counts (:meth:`~rsutils.core.reference_precision.ReferenceSmooth.certify`),
    into a resumable log with :data:`REFERENCE_COLUMNS`; return the log.

    The sidecar records the fast mode, ``reference_draws`` and ``fast_share``
    (:meth:`~rsutils.core.reference_precision.ReferenceSmooth.identity`), so a log is
    resumed only with the same ones. ``smooth`` must have isotropic noise.
    """
    if not isinstance(smooth, ReferenceSmooth):
        raise TypeError(
            f"smooth must be a ReferenceSmooth, got {type(smooth).__name__}; a Smooth "
            "certifies the model as run, through certify_dataset"
        )
    if smooth.anisotropic:
        raise ValueError("certify_reference_dataset logs isotropic noise; use a noise family")
    s = settings

    def row(i: int) -> dict[str, Any]:
        cert = smooth.certify(data.images[i], s.n0, s.n, s.alpha, s.batch_size, s.seed, i)
        answer = answer_columns(cert.prediction, int(data.labels[i]))
        return {**cert.as_dict(), **answer, "scale": smooth.logged_scale}

    run = DatasetRun(
        "certify-reference", "certify", REFERENCE_COLUMNS, settings.identity("certify"), row
    )
    return run_dataset(smooth, data, indices, path, run, config=config, progress=progress)
