"""Chapter 06's recipe sensitivity: UCAN's training recipe varied one factor at a time.

Around the chapter's recipe (variance weight ``w = 1``, the generator's ``gamma``,
Adam at ``1e-2`` for the generator, one noise draw per step), :class:`RecipeGrid`
changes one factor at a time: the weight ``w`` of the variance term, the bound
``gamma``, the generator's optimiser (UCAN's paper: Adam ``1e-2``; UCAN's code: SGD
``1e-3`` with momentum, stepping the dataset-wise generator once every 20 batches) and
the noise draws per step. Each run's history of ``sigma``
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
from dataclasses import dataclass, replace

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.figure import Figure

from rsutils.anisotropic.training import NPGConfig

__all__ = [
    "CODE_ACCUMULATE",
    "KIND_NAMES",
    "RECIPE_GRID",
    "SATURATED_SHARE",
    "RecipeGrid",
    "RecipeRun",
    "effective_gamma",
    "plot_histories",
    "recipe_table",
    "run_names",
    "saturation",
]

#: The display name of each learned generator.
KIND_NAMES = {"dataset": "dataset-wise", "certification": "certification-wise"}

#: How many batches UCAN's code sums before each generator step, 20 for the dataset-wise
#: generator (``train_dataset_noise.py``), 1 for the certification-wise one.
CODE_ACCUMULATE = {"dataset": 20, "certification": 1}

#: A run saturates when at least this share of ``sigma`` lies within 1% of its bound
#: ``floor + gamma`` at the end of training ("most pixels").
SATURATED_SHARE = 0.5

#: The generator's optimisers of the grid, by display name: (optimiser, learning rate,
#: whether it sums the gradients of UCAN's code's batches before a step).
_OPTIMISERS = {
    "Adam 1e-2": ("adam", 1e-2, False),
    "Adam 1e-3": ("adam", 1e-3, False),
    "SGD 1e-3": ("sgd", 1e-3, True),
}


def effective_gamma(config: NPGConfig) -> float:
    """The bound ``gamma`` a generator of ``config`` uses (its default when ``None``:
    2 for the dataset-wise generator, 1 for the certification-wise one)."""
    if config.gamma is not None:
        return config.gamma
    return 2.0 if config.method == "dataset" else 1.0


@dataclass(frozen=True)
class RecipeRun:
    """One run of the grid: the generator ``kind``, the ``factor`` changed and its
    ``value`` (display strings), the run's ``config``, and whether it is the recipe
    itself (each factor's row holds the recipe at its own value)."""

    kind: str
    factor: str
    value: str
    config: NPGConfig
    recipe: bool


@dataclass(frozen=True)
class RecipeGrid:
    """The values of each factor; :meth:`runs` changes one at a time."""

    #: The weight ``w`` of the variance term.
    variance_weights: tuple[float, ...] = (0.0, 0.1, 1.0, 5.0)
    #: The bound ``gamma`` of ``sigma`` (a fresh generator starts at ``gamma / 2``).
    gammas: tuple[float, ...] = (1.0, 2.0, 4.0)
    #: The generator's optimisers (names of UCAN's paper and code).
    optimisers: tuple[str, ...] = tuple(_OPTIMISERS)
    #: Noise draws per training step.
    draws: tuple[int, ...] = (1, 5)

    def __post_init__(self) -> None:
        unknown = set(self.optimisers) - set(_OPTIMISERS)
        if unknown:
            raise ValueError(
                f"unknown optimisers {sorted(unknown)}; choose from {list(_OPTIMISERS)}"
            )

    def runs(self, recipe: NPGConfig) -> list[RecipeRun]:
        """Every factor's values around ``recipe`` (a dataset- or certification-wise
        configuration), one factor at a time, in the order of the fields; a value
        equal to the recipe's gives the recipe's own configuration."""
        if recipe.method not in KIND_NAMES:
            raise ValueError(
                f"the recipe grid varies a learned generator: method 'dataset' or "
                f"'certification', not {recipe.method!r}"
            )
        kind, gamma = recipe.method, effective_gamma(recipe)
        changes: list[tuple[str, str, dict[str, object]]] = []
        for w in self.variance_weights:
            changes.append(("variance weight w", f"w = {w:g}", {"variance_weight": w}))
        for g in self.gammas:
            value = recipe.gamma if math.isclose(g, gamma) else g
            changes.append(("bound γ", f"γ = {g:g}", {"gamma": value}))
        for name in self.optimisers:
            optimiser, lr, code = _OPTIMISERS[name]
            accumulate = CODE_ACCUMULATE[kind] if code else 1
            label = f"{name}, every {accumulate}" if accumulate > 1 else name
            step = {"generator_optimiser": optimiser, "generator_lr": lr}
            changes.append(("optimiser", label, {**step, "accumulate": accumulate}))
        for d in self.draws:
            changes.append(("draws per step", f"{d} draw{'s' if d > 1 else ''}", {"draws": d}))
        runs = []
        for factor, value, change in changes:
            config = replace(recipe, **change)  # type: ignore[arg-type]
            runs.append(RecipeRun(kind, factor, value, config, config == recipe))
        return runs


#: The grid of chapter 06 (issue 22's values).
RECIPE_GRID = RecipeGrid()


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
