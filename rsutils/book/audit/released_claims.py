"""Cohen et al.'s σ trade-off judged on their own released logs, the paper's scale.

The book judges Cohen et al.'s trade-off ("σ controls the robustness/accuracy
trade-off") on its retrained Fashion-MNIST models
(:func:`~rsutils.book.audit.measured.tradeoff_comparisons`). The authors released the
per-image CERTIFY logs of the models the paper reports (ResNet-110 on CIFAR-10, σ ∈
{0.12, 0.25, 0.5, 1}; ResNet-50 on ImageNet, σ ∈ {0.25, 0.5, 1}; n = 100,000 draws), so
the same verdict rule can be applied to them without a GPU:

- :func:`released_fixed_sigma_logs`: per dataset, the test logs of the models certified
  at the σ they were trained at, on the images every one of them certified (the released
  ImageNet log at σ = 0.25 stops after 427 of the 500 images), with the settings the
  comparisons read (σ, the stated n and α);
- :func:`released_tradeoff_comparisons`: each σ against the next smaller on each
  dataset, the same comparisons as on the book's models (accuracy at radius 0, and at
  every radius of the smaller σ's grid below its ceiling), all steps of both datasets
  one family (Holm);
- the claim's verdict from them is the book's own rule,
  :func:`~rsutils.book.audit.measured.tradeoff_verdict`, applied to that table;
- :func:`tradeoff_steps` and :func:`steps_evidence`: one row per step up in σ (the cost
  at radius 0, whether it gains below the smaller σ's ceiling), and that in words;
- :func:`largest_certificate`: the largest released certificate in units of its σ.

There is one released model per σ, so each interval is over the shared images only (a
paired one-sample t interval,
:func:`~rsutils.analysis.differences.replicated_difference` with one replicate): it
says what the paper's models do on the paper's test images, not what retraining would
do. The grid of radii uses the stated level α = 0.001; the level the logs imply (0.01,
chapter 07a) moves the ceiling from 3.81σ to 3.91σ, which leaves the grid of steps of
σ/2 below it unchanged (0, σ/2, …, 3.5σ).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import pandas as pd

from rsutils.analysis.margins import Margins
from rsutils.analysis.verdicts import holm_family
from rsutils.book.audit.measured import ACCURACY_AT_0, tradeoff_comparisons
from rsutils.book.audit.released_alpha import STATED_ALPHA
from rsutils.book.papers.released import COHEN2019_CERTIFY_LOGS, cohen2019_certify_log
from rsutils.logs.read import read_log

__all__ = [
    "RELEASED_N",
    "largest_certificate",
    "released_fixed_sigma_logs",
    "released_name",
    "released_tradeoff_comparisons",
    "steps_evidence",
    "tradeoff_steps",
]

#: The draws Cohen et al. state for every CERTIFY log they released (the level is
#: :data:`~rsutils.book.audit.released_alpha.STATED_ALPHA`).
RELEASED_N = 100_000


def released_name(dataset: str, sigma: float) -> str:
    """The name a released model's log goes by in the comparisons:
    ``released_name("cifar10", 0.5)`` → ``"cifar10, σ = 0.5"``."""
    return f"{dataset}, σ = {sigma:g}"


def released_fixed_sigma_logs(
    dataset: str, *, root: str | os.PathLike[str] | None = None, download: bool = False
) -> dict[str, pd.DataFrame]:
    """The released test logs of ``dataset`` (``"cifar10"`` or ``"imagenet"``) certified
    at the σ their model was trained at, by :func:`released_name`, in the order of growing
    σ, each restricted to the images (``idx``) that all of them certified and given the
    columns ``scale`` (σ), ``n`` and ``alpha`` (:data:`RELEASED_N`,
    :data:`~rsutils.book.audit.released_alpha.STATED_ALPHA`) that the book's comparisons read."""
    chosen = sorted(
        (float(trained), trained)
        for name, trained, split, certified in COHEN2019_CERTIFY_LOGS
        if name == dataset and split == "test" and trained == certified
    )
    if not chosen:
        raise ValueError(f"Cohen et al. released logs for imagenet and cifar10, not {dataset!r}")
    logs = {
        released_name(dataset, sigma): read_log(
            cohen2019_certify_log(dataset, text, text, root=root, download=download)
        ).assign(scale=sigma, n=RELEASED_N, alpha=STATED_ALPHA)
        for sigma, text in chosen
    }
    shared = set.intersection(*(set(log["idx"]) for log in logs.values()))
    return {
        name: log[log["idx"].isin(shared)].sort_values("idx").reset_index(drop=True)
        for name, log in logs.items()
    }


def released_tradeoff_comparisons(
    logs: Mapping[str, Mapping[str, pd.DataFrame]],
    *,
    margin: float | Margins | None = None,
    seed: int = 0,
) -> pd.DataFrame:
    """:func:`~rsutils.book.audit.measured.tradeoff_comparisons` on the released models of
    each dataset of ``logs`` (``{dataset: released_fixed_sigma_logs(dataset)}``), one
    replicate each, with a ``dataset`` column; the rows of every dataset are one family
    (Holm over all of them), since together they answer one claim."""
    tables = [
        tradeoff_comparisons([by_sigma], list(by_sigma), margin=margin, seed=seed).assign(
            dataset=dataset
        )
        for dataset, by_sigma in logs.items()
    ]
    if not tables:
        raise ValueError("logs holds no dataset: pass {dataset: released_fixed_sigma_logs(...)}")
    return holm_family(pd.concat(tables))


def tradeoff_steps(table: pd.DataFrame) -> pd.DataFrame:
    """One row per step up in σ of ``table`` (:func:`released_tradeoff_comparisons`, or
    the book's :func:`~rsutils.book.audit.measured.tradeoff_comparisons`), indexed
    ``"larger vs smaller"``: ``cost at r = 0`` (the verdict on the accuracy at radius 0)
    and ``change at r = 0``; ``rises below the smaller σ's ceiling`` (some radius of
    the grid rises) and ``largest rise there`` (the largest mean difference on the
    grid); ``images`` compared."""
    rows = {}
    for (larger, smaller), step in table.groupby(level=["method", "against"], sort=False):
        measured = step.index.get_level_values("measured by")
        cost, reach = step[measured == ACCURACY_AT_0].iloc[0], step[measured != ACCURACY_AT_0]
        rows[f"{larger} vs {smaller}"] = {
            "cost at r = 0": cost["verdict"],
            "change at r = 0": cost["gain"],
            "rises below the smaller σ's ceiling": any(v.rises for v in reach["verdict"]),
            "largest rise there": reach["gain"].max(),
            "images": cost["images"],
        }
    steps = pd.DataFrame.from_dict(rows, orient="index")
    steps.index.name = "step"
    return steps


def steps_evidence(steps: pd.DataFrame, comparisons: int) -> str:
    """What :func:`tradeoff_steps`' rows show, in words: how many steps lose accuracy at
    radius 0, how many rise below the smaller σ's ceiling (and which do not), and the
    number of ``comparisons`` in the family."""
    rises = steps["rises below the smaller σ's ceiling"]
    costs = sum(v.falls for v in steps["cost at r = 0"])
    flat = ", ".join(steps.index[~rises]) or "none"
    return (
        f"{costs} of {len(steps)} steps lose accuracy at r = 0; {int(rises.sum())} of "
        f"{len(steps)} rise below the smaller σ's ceiling (not: {flat}); "
        f"{comparisons} comparisons, one family"
    )


def largest_certificate(logs: Mapping[str, Mapping[str, pd.DataFrame]]) -> float:
    """The largest certified radius of any log of ``logs`` (as
    :func:`released_tradeoff_comparisons` takes them), in units of that log's σ."""
    return max(
        float(log["radius"].max() / log["scale"].iloc[0])
        for by_sigma in logs.values()
        for log in by_sigma.values()
    )
