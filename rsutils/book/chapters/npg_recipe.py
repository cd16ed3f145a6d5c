"""Chapter 06's recipe sensitivity: does ``sigma`` run to its bound in each run?

The runs are those of :class:`~rsutils.book.recipe_grid.RecipeGrid`, UCAN's training
recipe varied one factor at a time. Each run's history of ``sigma``
(:func:`~rsutils.book.trained.npg_history`) shows whether ``sigma`` runs to its
bound: :func:`saturation` is the share of ``sigma`` at the bound at the end of
training, and a run *saturates* when that share is at least
:data:`SATURATED_SHARE`. :func:`recipe_table` lists the runs with their shares,
:func:`run_names` names those that saturate (or not), and :func:`plot_histories`
draws ``sigma``'s quantiles against the step, one panel per run.

Why ``sigma`` saturates: :func:`pull_table` says which way the cross-entropy alone
pushes ``sigma`` at the start of training
(:func:`~rsutils.anisotropic.saturation.ce_sigma_gradient`), and :func:`head_table`
what the runs of the head grid (:class:`~rsutils.book.recipe_grid.HeadGrid`) learned:
whether ``sigma`` saturates, whether it learned a shape, and the share of the head's
input on its flat part (:func:`~rsutils.anisotropic.saturation.absorbed_share`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import pandas as pd
import torch
from matplotlib.figure import Figure

from rsutils.anisotropic.generators import NoiseGenerator, sigma_bound, sigma_from_raw
from rsutils.anisotropic.saturation import SHAPE_RATIO, SigmaGradient, absorbed_share
from rsutils.anisotropic.training import NPGConfig
from rsutils.book.recipe_grid import KIND_NAMES, HeadRun, RecipeRun, effective_gamma

__all__ = [
    "PULL_Z",
    "SATURATED_SHARE",
    "bounded_heads_on_flat_part",
    "head_names",
    "head_table",
    "plot_histories",
    "pull_table",
    "recipe_table",
    "run_names",
    "saturation",
]

#: A run saturates when at least this share of ``sigma`` lies within 1% of its bound
#: ``floor + gamma`` at the end of training ("most pixels").
SATURATED_SHARE = 0.5

#: The cross-entropy pushes ``sigma`` one way when the mean level derivative lies more
#: than this many standard errors from 0 (:func:`pull_table`).
PULL_Z = 3.0


def saturation(history: pd.DataFrame, *, tail: float = 0.1) -> float:
    """The share of ``sigma`` within 1% of its bound at the end of a training history
    (:func:`~rsutils.book.trained.npg_history`): the mean of ``at_bound`` over the
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


def pull_table(gradients: Mapping[str, SigmaGradient], *, z: float = PULL_Z) -> pd.DataFrame:
    """One row per measured generator: the mean ``d CE / d t`` of scaling every ``sigma_i``
    by ``t`` (:func:`~rsutils.anisotropic.saturation.ce_sigma_gradient`), its standard
    error over the draws, the draws, the shares of pixels whose own gradient lies
    beyond ±2 standard errors, and ``the cross-entropy asks for``: ``"less noise"``
    when the mean lies more than ``z`` standard errors above 0, ``"more noise"`` below,
    ``"undecided"`` between."""
    rows = {}
    for name, gradient in gradients.items():
        score = gradient.mean / gradient.standard_error
        asks = "less noise" if score > z else "more noise" if score < -z else "undecided"
        shares = gradient.pixel_shares()
        rows[name] = {
            "dCE/dt": gradient.mean,
            "s.e.": gradient.standard_error,
            "draws": gradient.draws,
            "pixels asking more": shares["more noise"],
            "pixels asking less": shares["less noise"],
            "the cross-entropy asks for": asks,
        }
    return pd.DataFrame(rows).T.astype(
        {c: float for c in ("dCE/dt", "s.e.", "pixels asking more", "pixels asking less")}
        | {"draws": int}
    )


@torch.no_grad()
def head_table(
    runs: Sequence[HeadRun], generators: Mapping[NPGConfig, NoiseGenerator], images: torch.Tensor
) -> pd.DataFrame:
    """One row per run of the head grid, indexed by (objective, head, optimiser), from its
    trained generator on ``images``: the head's output before any budget (its share
    within 1% of the upper bound ``floor + gamma`` and within ``gamma/100`` of the
    floor; NaN for the unbounded ``"log"`` head), the share of the head's input on its
    flat part (:func:`~rsutils.anisotropic.saturation.absorbed_share`), the noise used
    (``sigma`` after the budget: its minimum, maximum and geometric mean per input,
    averaged, and ``max/min``, the ratio of the largest to the smallest scale per input,
    averaged), then ``diverged`` (some ``sigma`` not finite, as an unbounded head
    whose steps overshoot can end), ``saturates`` (the share at the upper bound at
    least :data:`SATURATED_SHARE`) and ``has a shape`` (``max/min`` above
    :data:`~rsutils.anisotropic.saturation.SHAPE_RATIO`, and finite)."""
    rows = []
    for run in runs:
        generator = generators[run.config]
        raw = generator.raw_sigma(images)  # type: ignore[operator]
        head = sigma_from_raw(raw, run.head, generator.gamma, generator.floor)  # type: ignore[arg-type]
        bound = sigma_bound(generator)
        upper = lower = math.nan
        if bound is not None:
            floor, gamma = float(generator.floor), float(generator.gamma)  # type: ignore[arg-type]
            upper = float((head >= 0.99 * bound).double().mean())
            lower = float((head <= floor + 0.01 * gamma).double().mean())
        sigma = generator(images)[1].flatten(1).double()
        low, high = sigma.min(dim=1).values, sigma.max(dim=1).values
        rows.append(
            {
                "diverged": not bool(torch.isfinite(sigma).all() and (sigma > 0).all()),
                "objective": run.objective,
                "head": run.head,
                "optimiser": run.optimiser,
                "at upper bound": upper,
                "at floor": lower,
                "flat head": absorbed_share(generator, images),
                "min σ": float(low.mean()),
                "max σ": float(high.mean()),
                "geometric mean σ": float(sigma.log().mean(dim=1).exp().mean()),
                "max/min": float((high / low).mean()),
            }
        )
    table = pd.DataFrame(rows).set_index(["objective", "head", "optimiser"])
    table["diverged"] = table.pop("diverged")
    table["saturates"] = table["at upper bound"] >= SATURATED_SHARE
    table["has a shape"] = (table["max/min"] > SHAPE_RATIO) & ~table["diverged"]
    return table


def head_names(table: pd.DataFrame, column: str, value: bool) -> str:
    """The runs of :func:`head_table` whose ``column`` (``"saturates"`` or ``"has a
    shape"``) is ``value``, as ``"objective, head, optimiser"`` joined by semicolons;
    ``"none"`` if there are none."""
    rows = table.index[table[column] == value]
    return "; ".join(", ".join(row) for row in rows) or "none"


def bounded_heads_on_flat_part(table: pd.DataFrame, optimiser: str) -> bool:
    """Whether every bounded head of :func:`head_table` (one with an upper bound, so not
    the ``"log"`` head) trained with ``optimiser`` ends with at least
    :data:`SATURATED_SHARE` of its pre-activations on its flat part, where further steps
    barely move ``sigma``. Raises :class:`ValueError` when ``table`` has no such run."""
    runs = table[table.index.get_level_values("optimiser") == optimiser]
    bounded = runs[runs["at upper bound"].notna()]
    if bounded.empty:
        raise ValueError(f"the head table has no bounded head trained with {optimiser!r}")
    return bool((bounded["flat head"] >= SATURATED_SHARE).all())
