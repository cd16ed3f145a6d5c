"""The sizes the papers state for the claims the book judges, and whether its runs can
test them.

A claim's verdict (:mod:`rsutils.book.audit.measured`) judges a direction and a
relevant size, the margin. Some claims come with a size of their own: Alfarra et al.
state Cohen-DS's gain over Cohen in points of certified accuracy and in ACR, UCAN its
ALM gain as a ratio. A stated size can be tested by
:func:`~rsutils.analysis.verdicts.judge_magnitude` only on the models and data it was
stated for: the gain of a method depends on the dataset, the architecture and the
training as much as on the method, so a size stated for CIFAR-10's ResNets predicts
nothing for a small CNN on Fashion-MNIST. :func:`stated_sizes` lists every stated size
of a judged claim (from the ledger, :mod:`rsutils.book.audit.ledger`, where each is
quoted) with its dataset and :func:`size_testable_here`'s answer for it.
"""

from __future__ import annotations

from importlib.resources import files

import pandas as pd

from rsutils.book.audit.ledger import ledger
from rsutils.book.chapter import BOOK_DATASET

__all__ = ["DATASETS", "size_testable_here", "stated_sizes"]

#: How the tables and prose name each dataset a size is stated for.
DATASETS = {
    "cifar10": "CIFAR-10",
    "imagenet": "ImageNet",
    "mnist": "MNIST",
    BOOK_DATASET: "Fashion-MNIST",
}


def size_testable_here(dataset: str) -> str:
    """``""`` when a size stated for ``dataset`` can be tested on the book's runs (it is
    the book's :data:`~rsutils.book.chapter.BOOK_DATASET`), otherwise why not."""
    if dataset not in DATASETS:
        raise ValueError(f"unknown dataset {dataset!r}: one of {sorted(DATASETS)}")
    return "" if dataset == BOOK_DATASET else f"stated for {DATASETS[dataset]}"


def stated_sizes() -> pd.DataFrame:
    """One row per size a paper states for a claim the book judges: ``claim``, the
    ledger row (``ledger``, its ``quote``, ``value`` and ``unit``), the ``dataset`` it
    is stated for and ``testable here`` (``"yes"``, or ``"no: "`` and
    :func:`size_testable_here`'s reason)."""
    with files("rsutils.book").joinpath("tables", "stated_sizes.csv").open() as handle:
        sizes = pd.read_csv(handle)
    rows = ledger().set_index("id")
    missing = sorted(set(sizes["ledger"]) - set(rows.index))
    if missing:
        raise ValueError(f"stated_sizes.csv names ledger rows that do not exist: {missing}")
    quoted = rows.loc[sizes["ledger"], ["quote", "value", "unit"]].reset_index(drop=True)
    sizes = pd.concat([sizes, quoted], axis=1)
    reasons = sizes["dataset"].map(size_testable_here)
    sizes["testable here"] = [f"no: {reason}" if reason else "yes" for reason in reasons]
    sizes["dataset"] = sizes["dataset"].map(DATASETS)
    return sizes
