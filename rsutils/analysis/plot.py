"""Certified accuracy against radius, drawn for ``python -m rsutils analyze --plot``.

The one figure the library draws, and the only module outside the book that uses
matplotlib: it imports it when it draws, never on import, so the library certifies,
reads and analyses logs without it. ``pip install matplotlib`` is all a plot needs (the
book's extra, ``pip install 'rsutils[book]'``, has it too); :func:`require_matplotlib`
says so in one line where it is missing.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from rsutils.analysis.metrics import certified_accuracy, certified_accuracy_interval

__all__ = [
    "MISSING_MATPLOTLIB",
    "PLOT_FORMATS",
    "check_plot_path",
    "plot_certified_accuracy",
    "require_matplotlib",
]

#: The file types a plot is written as, by the path's extension.
PLOT_FORMATS = (".png", ".svg", ".pdf")

#: What a plot asks for where matplotlib is not installed.
MISSING_MATPLOTLIB = (
    "plotting needs matplotlib, which is not installed: pip install matplotlib "
    "(or pip install 'rsutils[book]', which has it)"
)

#: Metadata that would make two drawings of the same curves differ (the date).
_NO_DATE = {".svg": {"Date": None}, ".pdf": {"CreationDate": None}, ".png": {}}


def check_plot_path(path: str | os.PathLike[str]) -> Path:
    """``path`` as a :class:`~pathlib.Path`, once its extension is one of
    :data:`PLOT_FORMATS` and its folder exists: checked before anything is computed."""
    path = Path(path)
    if path.suffix.lower() not in PLOT_FORMATS:
        raise ValueError(
            f"cannot plot to {os.fspath(path)!r}: name a {', '.join(PLOT_FORMATS)} file"
        )
    if path.is_dir():
        raise ValueError(f"the plot {os.fspath(path)!r} is a folder; name a file in it")
    folder = path.parent
    if not folder.is_dir():
        raise ValueError(
            f"cannot write the plot {os.fspath(path)!r}: no folder {os.fspath(folder)!r}"
        )
    return path


def require_matplotlib() -> None:
    """Raise ``ModuleNotFoundError`` with :data:`MISSING_MATPLOTLIB` unless matplotlib
    can be imported."""
    try:
        import matplotlib  # noqa: F401
    except ImportError as error:
        raise ModuleNotFoundError(MISSING_MATPLOTLIB, name="matplotlib") from error


def plot_certified_accuracy(
    logs: Mapping[str, pd.DataFrame],
    path: str | os.PathLike[str],
    *,
    radii: Sequence[float] = (),
    confidence: float = 0.95,
) -> Path:
    """Write the certified accuracy of each log against the radius to ``path``.

    Each log is a step curve from radius 0 to just past the largest radius certified;
    at each of ``radii`` a marker shows its value with the Clopper–Pearson
    ``confidence`` interval over the test images
    (:func:`~rsutils.analysis.metrics.certified_accuracy_interval`). The file type is the
    extension's (:data:`PLOT_FORMATS`); the file holds no date, so the same logs give
    the same SVG or PDF. Returns the path written.
    """
    path = check_plot_path(path)
    require_matplotlib()
    import matplotlib

    with matplotlib.rc_context({"svg.hashsalt": "rsutils"}):  # the SVG's ids, seeded
        _draw(logs, path, radii, confidence)
    return path


def _draw(
    logs: Mapping[str, pd.DataFrame], path: Path, radii: Sequence[float], confidence: float
) -> None:
    from matplotlib.figure import Figure

    figure = Figure(figsize=(6.0, 4.0), layout="constrained")
    axes = figure.subplots()
    grid = np.linspace(0.0, _right_end(logs, radii), 801)
    for name, log in logs.items():
        (line,) = axes.plot(grid, certified_accuracy(log, grid), label=name, drawstyle="steps-post")
        if len(radii):
            low, high = certified_accuracy_interval(log, radii, confidence=confidence)
            value = certified_accuracy(log, radii)
            errors = np.vstack([value - low, high - value])
            axes.errorbar(radii, value, yerr=errors, fmt="o", color=line.get_color(), ms=3)
    axes.set(xlabel="radius", ylabel="certified accuracy", ylim=(0.0, 1.0), xlim=(0, grid[-1]))
    axes.grid(alpha=0.3)
    axes.legend(frameon=False)
    figure.savefig(path, metadata=_NO_DATE[path.suffix.lower()])


def _right_end(logs: Mapping[str, pd.DataFrame], radii: Sequence[float]) -> float:
    """A little past the largest radius certified correct, or the largest of ``radii``."""
    certified = [0.0, *map(float, radii)]
    for log in logs.values():
        radius = log["radius"].to_numpy(dtype=float) * log["correct"].to_numpy(dtype=float)
        certified += map(float, radius[np.isfinite(radius)])
    top = max(certified)
    return 1.05 * top if top > 0 else 1.0
