"""The papers' published numbers, as data with provenance (never typed into prose)."""

from __future__ import annotations

from importlib.resources import files

import pandas as pd

__all__ = ["cohen2019_published"]


def cohen2019_published() -> pd.DataFrame:
    """Cohen et al.'s Tables 1, 3 and 4 as long-format rows (one number per row).

    Columns: ``table, dataset, quantity, sigma, radius, n, value, source``.
    """
    with files("rsutils.book").joinpath("tables", "cohen2019_published.csv").open() as handle:
        return pd.read_csv(handle)
