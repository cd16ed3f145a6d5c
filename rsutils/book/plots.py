"""Seaborn figures in the papers' style (certified accuracy against radius)."""

from __future__ import annotations

from collections.abc import Mapping

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.axes import Axes
from numpy.typing import ArrayLike

__all__ = ["plot_curves", "setup_style"]


def setup_style() -> None:
    """One consistent look for every figure and table of the book: tables show their
    text whole instead of cutting it at 50 characters, and numbers to four decimals
    (pandas switches a column to scientific notation when it holds smaller values)."""
    sns.set_theme(context="notebook", style="whitegrid", palette="colorblind")
    plt.rcParams["figure.dpi"] = 110
    pd.set_option("display.max_colwidth", None)
    pd.set_option("display.precision", 4)


def plot_curves(
    curves: Mapping[str, ArrayLike],
    x: ArrayLike,
    *,
    ax: Axes | None = None,
    xlabel: str = "ℓ2 radius",
    ylabel: str = "certified accuracy",
    dashes: Mapping[str, bool] | None = None,
    bands: Mapping[str, tuple[ArrayLike, ArrayLike]] | None = None,
) -> Axes:
    """Plot named curves sharing the grid ``x`` (e.g. one per sigma, plus an envelope).

    ``dashes`` marks which curves are drawn dashed; ``bands`` shades ``(low, high)``
    around the named curves in their colour (e.g. Clopper–Pearson intervals).
    """
    frame = pd.DataFrame(
        [
            {"x": xi, "value": yi, "curve": name}
            for name, ys in curves.items()
            for xi, yi in zip(np.asarray(x), np.asarray(ys), strict=True)
        ]
    )
    ax = ax or plt.subplots(figsize=(6.4, 4))[1]
    dash_map = {name: (4, 2) if (dashes or {}).get(name) else "" for name in curves}
    sns.lineplot(frame, x="x", y="value", hue="curve", style="curve", dashes=dash_map, ax=ax)
    colours = dict(zip(curves, sns.color_palette(n_colors=len(curves)), strict=True))
    for name, (low, high) in (bands or {}).items():
        ax.fill_between(np.asarray(x), low, high, color=colours[name], alpha=0.15, linewidth=0)
    ax.set(xlabel=xlabel, ylabel=ylabel)
    ax.legend(title=None)
    return ax
