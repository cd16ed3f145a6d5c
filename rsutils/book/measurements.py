"""Measurements too long for a book build, committed as tables and read by the chapters.

Each table is written by a script under ``book/`` (its docstring says how to rerun it)
and lives in ``rsutils/book/tables/``:

- ``thread_spread*.csv`` (``book/measure_thread_spread.py``): chapter 01's headline
  numbers with base models trained on one and on two threads (fp32 training);
- ``bf16_training*.csv`` (``book/measure_bf16_training.py``): the book's base models
  trained in fp32 and in bf16 from the same seeds, with their per-image certificates.
"""

from __future__ import annotations

from importlib.resources import files

import pandas as pd

__all__ = ["bf16_training", "bf16_training_models", "thread_spread"]


def _read(name: str, **options: object) -> pd.DataFrame:
    with files("rsutils.book").joinpath("tables", name).open(encoding="utf-8") as handle:
        return pd.read_csv(handle, **options)


def thread_spread() -> pd.DataFrame:
    """Headline numbers per run (``cohen-<σ>``, ``ds-0.25``) and training thread count:
    columns ``"<measure>, 1 thread"`` and ``"<measure>, 2 threads"``."""
    return _read("thread_spread.csv", index_col="run")


def bf16_training_models() -> pd.DataFrame:
    """Per base model (σ, seed, precision): clean accuracy and accuracy under one draw of
    its training noise on the whole test split."""
    return _read("bf16_training_models.csv")


def bf16_training() -> list[dict[str, pd.DataFrame]]:
    """The per-image certificates of the fp32 and bf16 base models, as replicates.

    One ``{"fp32, σ = <σ>": log, "bf16, σ = <σ>": log, ...}`` per seed, each log with
    ``idx``, ``label``, ``predict``, ``correct``, ``radius`` and ``pA_lower`` on the same
    test images: the shape :func:`~rsutils.analysis.differences.replicated_comparisons` takes.
    """
    table = _read("bf16_training.csv")
    replicates = []
    for _, rows in table.groupby("seed", sort=False):
        replicates.append(
            {
                f"{precision}, σ = {sigma:g}": log.drop(columns=["sigma", "seed", "precision"])
                .sort_values("idx")
                .reset_index(drop=True)
                for (precision, sigma), log in rows.groupby(["precision", "sigma"], sort=False)
            }
        )
    return replicates
