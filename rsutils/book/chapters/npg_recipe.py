"""Chapter 06's recipe sensitivity: does ``sigma`` run to its bound in each run?

The runs are those of :class:`~rsutils.book.recipe_grid.RecipeGrid`, UCAN's training
recipe varied one factor at a time. Each run's history of ``sigma``
(:func:`~rsutils.book.experiments.npg_history`) shows whether ``sigma`` runs to its
bound: :func:`saturation` is the share of ``sigma`` at the bound at the end of
training, and a run *saturates* when that share is at least
:data:`SATURATED_SHARE`. :func:`recipe_table` lists the runs with their shares,
:func:`run_names` names those that saturate (or not), and :func:`plot_histories`
draws ``sigma``'s quantiles against the step, one panel per run.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.figure import Figure

from rsutils.anisotropic.training import NPGConfig
from rsutils.book.recipe_grid import KIND_NAMES, RecipeRun, effective_gamma

__all__ = ["SATURATED_SHARE", "plot_histories", "recipe_table", "run_names", "saturation"]

#: A run saturates when at least this share of ``sigma`` lies within 1% of its bound
#: ``floor + gamma`` at the end of training ("most pixels").
SATURATED_SHARE = 0.5


def saturation(history: pd.DataFrame, *, tail: float = 0.1) -> float:
    """The share of ``sigma`` within 1% of its bound at the end of a training history
    (:func:`~rsutils.book.experiments.npg_history`): the mean of ``at_bound`` over the
    last ``tail`` of the steps (at least one), so that a certification-wise run is not
    judged on one batch."""
    if not 0 < tail <= 1:
        raise ValueError(f"tail must be in (0, 1], got {tail!r}")
    last = max(1, math.ceil(tail * len(history)))
    return float(history["at_bound"].iloc[-last:].mean())


def recipe_table(
    runs: Sequence[RecipeRun], histories: Mapping[NPGConfig, pd.DataFrame]
) -> pd.DataFrame:
    """One row per run, indexed by (generator, factor, value): its :func:`saturation`
    (``share at bound``), ``sigma``'s minimum, median and maximum at the last step,
    and ``saturates`` (the share at least :data:`SATURATED_SHARE`)."""
    rows = []
    for run in runs:
        history = histories[run.config]
        last = history.iloc[-1]
        rows.append(
            {
                "generator": KIND_NAMES[run.kind],
                "factor": run.factor,
                "value": run.value,
                "share at bound": saturation(history),
                **{f"last {q} σ": float(last[f"sigma_{q}"]) for q in ("min", "median", "max")},
            }
        )
    table = pd.DataFrame(rows).set_index(["generator", "factor", "value"])
    table["saturates"] = table["share at bound"] >= SATURATED_SHARE
    return table


def run_names(runs: Sequence[RecipeRun], table: pd.DataFrame, *, saturates: bool) -> str:
    """The runs whose ``saturates`` in ``table`` (:func:`recipe_table`) is
    ``saturates``, as ``"generator: value"`` joined by commas, the recipe named once
    (``"generator: the recipe"``); ``"none"`` if there are none."""
    names = []
    for run in runs:
        kind = KIND_NAMES[run.kind]
        if bool(table.loc[(kind, run.factor, run.value), "saturates"]) == saturates:
            names.append(f"{kind}: {'the recipe' if run.recipe else run.value}")
    return ", ".join(dict.fromkeys(names)) or "none"


def plot_histories(
    runs: Sequence[RecipeRun], histories: Mapping[NPGConfig, pd.DataFrame]
) -> Figure:
    """``sigma``'s maximum, median and minimum against the step, one panel per run:
    a row per (generator, factor), its values across, the bound ``gamma`` dotted and
    the recipe's panel marked in every row."""
    rows = list(dict.fromkeys((run.kind, run.factor) for run in runs))
    panels = {row: [run for run in runs if (run.kind, run.factor) == row] for row in rows}
    width = max(len(cells) for cells in panels.values())
    fig, axes = plt.subplots(
        len(rows), width, figsize=(3 * width, 2.3 * len(rows)), sharex=True, squeeze=False
    )
    for ax in axes.flat:
        ax.set_visible(False)
    for i, (kind, factor) in enumerate(rows):
        for ax, run in zip(axes[i], panels[(kind, factor)], strict=False):
            history = histories[run.config]
            ax.set_visible(True)
            for quantile in ("max", "median", "min"):
                ax.plot(history["step"], history[f"sigma_{quantile}"], label=quantile)
            ax.axhline(effective_gamma(run.config), color="grey", linestyle=":")
            mark = " (recipe)" if run.recipe else ""
            ax.set_title(f"{KIND_NAMES[kind]}: {run.value}{mark}", fontsize=9)
        axes[i, 0].set_ylabel("σ")
    axes[0, 0].legend(fontsize=8)
    fig.supxlabel("training step")
    fig.tight_layout()
    return fig
