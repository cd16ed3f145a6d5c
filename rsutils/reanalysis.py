"""Re-analysis of Cohen et al.'s released logs against their published tables.

Each function returns the published rows (:func:`rsutils.published.cohen2019_published`)
with the value recomputed from the released per-image logs beside them.
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd

from rsutils.analysis import certified_accuracy, read_log
from rsutils.published import cohen2019_published
from rsutils.reference import cohen2019_certify_log, cohen2019_predict_log
from rsutils.smooth import ABSTAIN

__all__ = ["reanalyse_certify_table", "reanalyse_predict_table"]

_DATASET = {1: "imagenet", 3: "cifar10"}


def reanalyse_certify_table(
    table: int, *, root: str | os.PathLike[str] | None = None, download: bool = False
) -> pd.DataFrame:
    """Table 1 (ImageNet) or 3 (CIFAR-10): certified accuracy recomputed from the logs.

    Adds ``recomputed`` (the approximate certified accuracy of the log certified and
    trained at the row's sigma), ``images`` (rows in that log) and ``standard_error``
    (of a proportion equal to the published value estimated from that many images,
    at least one image's worth).
    """
    if table not in _DATASET:
        raise ValueError(f"Cohen et al.'s certification tables are 1 and 3, not {table}")
    rows = cohen2019_published().query("table == @table").reset_index(drop=True)
    logs = {
        sigma: read_log(
            cohen2019_certify_log(
                _DATASET[table], f"{sigma:.2f}", f"{sigma:.2f}", root=root, download=download
            )
        )
        for sigma in rows["sigma"].unique()
    }
    rows["recomputed"] = [
        float(certified_accuracy(logs[r.sigma], r.radius)[0]) for r in rows.itertuples()
    ]
    rows["images"] = [len(logs[s]) for s in rows["sigma"]]
    rows["standard_error"] = np.maximum(
        np.sqrt(rows["value"] * (1 - rows["value"]) / rows["images"]), 1 / rows["images"]
    )
    return rows


def reanalyse_predict_table(
    *, root: str | os.PathLike[str] | None = None, download: bool = False
) -> pd.DataFrame:
    """Table 4 (ImageNet PREDICT, sigma = 0.25): accuracy and abstention rate recomputed."""
    rows = cohen2019_published().query("table == 4 and quantity != 'seconds_per_prediction'")
    rows = rows.reset_index(drop=True).astype({"n": int})
    logs = {n: read_log(cohen2019_predict_log(n, root=root, download=download)) for n in rows["n"]}
    measures = {
        "predict_accuracy": lambda log: log["correct"].mean(),
        "abstention_rate": lambda log: (log["predict"] == ABSTAIN).mean(),
    }
    rows["recomputed"] = [float(measures[r.quantity](logs[r.n])) for r in rows.itertuples()]
    return rows
