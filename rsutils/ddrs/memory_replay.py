"""A data-dependent log's memory answers, replayed for a subset of its inputs.

A data-dependent certificate (:func:`~rsutils.ddrs.runs.certify_dataset_ds`) is
CERTIFY's answer at the input's own noise level (``mc_predict``, ``mc_radius``), passed
through a memory of the certificates admitted before it; the memory's answer is the
logged ``predict``, ``radius``, ``correct`` and ``memory``. CERTIFY's part depends only
on the model, the input and the seed, but the memory's part depends on which inputs
came before. The log a run on a subset of the inputs would have written is therefore
the subset's rows with the memory replayed: the same Monte Carlo answers, admitted in
the same order into a fresh memory.
"""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

from rsutils.data import Dataset
from rsutils.logs.dataset_run import answer_columns
from rsutils.memory.balls import CertificateMemory

__all__ = ["replay_memory"]

_NEEDED = ("idx", "label", "mc_predict", "mc_radius")


def replay_memory(
    log: pd.DataFrame,
    data: Dataset,
    *,
    indices: Iterable[int] | None = None,
    norm: str = "l2",
) -> pd.DataFrame:
    """The rows of ``log`` on ``indices`` (default: all), as a data-dependent run on
    those inputs alone would have logged them.

    The rows keep their order and their Monte Carlo columns; each row's ``(mc_predict,
    mc_radius)`` is admitted, in that order, to a fresh in-memory
    :class:`~rsutils.memory.balls.CertificateMemory` with ``data``'s image ``idx``, and
    ``predict``, ``correct``, ``radius`` and ``memory`` become that memory's answer.
    Replaying a whole log reproduces it exactly (up to the memory's file name).
    """
    missing = [c for c in _NEEDED if c not in log.columns]
    if missing:
        raise ValueError(
            f"the log lacks the columns {missing}; pass a log of certify_dataset_ds "
            "(data-dependent certification with a memory)"
        )
    rows = log if indices is None else log[log["idx"].isin(set(indices))]
    rows = rows.reset_index(drop=True).copy()
    answers = []
    with CertificateMemory(None, norm=norm) as memory:
        for idx, label, prediction, radius in rows[list(_NEEDED)].itertuples(index=False):
            answer = memory.admit(data.images[int(idx)], int(prediction), float(radius))
            answers.append(
                {**answer_columns(answer.prediction, int(label)), "radius": answer.radius,
                 "memory": answer.action}
            )  # fmt: skip
    replayed = pd.DataFrame(answers, index=rows.index)
    rows[replayed.columns] = replayed
    return rows
