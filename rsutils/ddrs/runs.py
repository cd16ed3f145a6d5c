"""Data-dependent CERTIFY over a dataset (DDRS "Cohen-DS"), into a resumable log.

:func:`certify_dataset_ds` runs sigma ascent on groups of inputs, then CERTIFY at each
input's own scale, then admission to the certificate memory, in
:func:`~rsutils.logs.dataset_run.run_dataset`'s resumable loop. Its log has CERTIFY's
columns and :data:`DS_COLUMNS`' own.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd
import torch

from rsutils.core.settings import CertifySettings, check_count
from rsutils.data import Dataset
from rsutils.ddrs.data_dependent import DataDependentSmooth
from rsutils.ddrs.sigma_ascent import SigmaAscent
from rsutils.logs.dataset_run import DatasetRun, InputGroups, answer_columns, run_dataset
from rsutils.logs.runner import CERTIFY_COLUMNS, certify_args

__all__ = ["ASCENT_DRAW_COST", "DS_COLUMNS", "certify_dataset_ds", "ds_work"]

#: Columns of data-dependent certification logs. There ``scale`` is each input's own
#: sigma*, ``predict`` and ``radius`` are the memory's answer, ``mc_predict`` and
#: ``mc_radius`` are CERTIFY's, and ``memory`` says what the memory did.
DS_COLUMNS = [*CERTIFY_COLUMNS, "mc_predict", "mc_radius", "memory"]


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
    certificates of the data-dependent classifier (see :mod:`rsutils.memory`).
    The progress bar counts forward passes (:func:`ds_work`).

    Nine parameters: the seven of every dataset runner (classifier, data,
    indices, path, settings, ``config``, ``progress``) and this runner's two (the ascent's
    grouping, the memory's key prefix).
    """
    check_count("ascent_batch", ascent_batch)
    memory = smooth.memory
    recorded = {
        **settings.identity("certify"),
        "memory": None if memory is None else getattr(memory.path, "name", "(in RAM)"),
        "key_prefix": key_prefix,
    }
    rows = _AscentThenCertify(smooth, data, settings, key_prefix)
    ascent_work, certify_work = ds_work(smooth.ascent, settings)
    run = DatasetRun(
        "certify-ds",
        "certify",
        DS_COLUMNS,
        recorded,
        rows.row,
        groups=InputGroups(ascent_batch, rows.ascend, cost=ascent_work),
        row_cost=certify_work,
        unit="draw",
    )
    return run_dataset(smooth, data, indices, path, run, config=config, progress=progress)


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


class _AscentThenCertify:
    """The rows of a data-dependent log: sigma ascent for a group of inputs together
    (:meth:`ascend`), then each input's row at the scale found (:meth:`row`)."""

    def __init__(
        self, smooth: DataDependentSmooth, data: Dataset, settings: CertifySettings, key_prefix: str
    ) -> None:
        self.smooth, self.data, self.settings, self.key_prefix = smooth, data, settings, key_prefix
        self.scales: dict[int, float] = {}

    def ascend(self, group: list[int]) -> None:
        images = torch.stack([self.data.images[i] for i in group])
        scales = self.smooth.scales(images, self.settings.seed, group)
        self.scales.update(zip(group, scales, strict=True))

    def row(self, i: int) -> dict[str, Any]:
        """One row of a data-dependent log (without ``idx`` and ``time``)."""
        scale, key = self.scales.pop(i), f"{self.key_prefix}{i}"
        x = self.data.images[i]
        args = certify_args(self.settings)
        answer = self.smooth.certify(x, *args, index=i, scale=scale, key=key)
        cert = answer.certificate
        return {
            **cert.as_dict(),
            **answer_columns(answer.prediction, int(self.data.labels[i])),
            "radius": answer.radius,
            "scale": scale,
            "mc_predict": cert.prediction,
            "mc_radius": cert.radius,
            "memory": answer.action,
        }
