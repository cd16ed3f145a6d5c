"""Levels and curves over independently trained replicate models.

A comparison in the book rests on several replicate models per setting (see
:class:`~rsutils.book.scales.ReplicateScale`): ``replicates`` is then a sequence of
``{method name: certification log}``, one dictionary per replicate model, every log of
one replicate on the same test images. These helpers show what the replicates measure
(levels, curves and their spread over the models, and how many certificates sit at the
CERTIFY ceiling); the intervals of a *difference* between two methods, over the images and
the retraining, come from :func:`~rsutils.analysis.differences.replicated_comparisons`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from rsutils.analysis.ceilings import ceiling_radii, ceiling_share
from rsutils.analysis.metrics import average_certified_radius, certified_accuracy

__all__ = ["ceiling_columns", "replicate_curves", "replicate_levels"]

Replicates = Sequence[Mapping[str, pd.DataFrame]]


def _check(replicates: Replicates) -> None:
    if not replicates:
        raise ValueError("replicates is empty: pass one {method: log} dict per replicate model")
    names = set(replicates[0])
    if any(set(logs) != names for logs in replicates):
        raise ValueError("every replicate must hold the same methods; certify each for every seed")


def _mean_share(shares: list[float]) -> float:
    """The mean of the replicates' ceiling shares that exist (a replicate without a
    correct certificate has none); NaN when no replicate has one."""
    finite = [share for share in shares if np.isfinite(share)]
    return float(np.mean(finite)) if finite else float("nan")


def replicate_levels(
    replicates: Replicates, radii: ArrayLike, *, measures: Mapping[str, str] | None = None
) -> pd.DataFrame:
    """Certified accuracy at ``radii`` and ACR of every method, over the replicates.

    One row per (method, measure) (``measures`` maps a display name to a log column,
    default ``{"radius": "radius"}``): the certified accuracy at each radius and the ACR,
    averaged over the replicate models; ``ACR min`` and ``ACR max`` over the models; and
    ``at ceiling``, the share of correct certificates whose draws all agreed
    (:func:`~rsutils.analysis.ceilings.ceiling_share`), averaged over the models.
    """
    _check(replicates)
    measures = measures or {"radius": "radius"}
    radii = np.asarray(radii, dtype=float)
    rows = {}
    for name in replicates[0]:
        for measure, column in measures.items():
            logs = [logs[name] for logs in replicates]
            accuracy = np.mean([certified_accuracy(log, radii, column=column) for log in logs], 0)
            acrs = [average_certified_radius(log, column=column) for log in logs]
            rows[(name, measure)] = {
                **{f"r = {r:g}": a for r, a in zip(radii, accuracy, strict=True)},
                "ACR": float(np.mean(acrs)),
                "ACR min": float(np.min(acrs)),
                "ACR max": float(np.max(acrs)),
                "at ceiling": _mean_share([ceiling_share(log) for log in logs]),
            }
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.index.names = ["method", "measured by"]
    return table


def replicate_curves(
    replicates: Replicates, grid: ArrayLike, names: Iterable[str], *, column: str = "radius"
) -> tuple[dict[str, np.ndarray], dict[str, tuple[np.ndarray, np.ndarray]], dict[str, float]]:
    """The certified-accuracy curves of ``names`` on ``grid``, for a figure.

    Returns ``(curves, bands, ceilings)``: the mean curve over the replicate models, the
    band from the lowest to the highest replicate curve at each radius, and the median
    over all certified inputs of every replicate of the input's CERTIFY ceiling
    (:func:`~rsutils.analysis.ceilings.ceiling_radii`), beyond which no certificate of the
    method can reach at the logs' ``n``.
    """
    _check(replicates)
    curves, bands, ceilings = {}, {}, {}
    for name in names:
        each = np.array(
            [certified_accuracy(logs[name], grid, column=column) for logs in replicates]
        )
        curves[name] = each.mean(axis=0)
        bands[name] = (each.min(axis=0), each.max(axis=0))
        tops = np.concatenate([ceiling_radii(logs[name], column=column) for logs in replicates])
        ceilings[name] = float(np.nanmedian(tops)) if np.isfinite(tops).any() else float("nan")
    return curves, bands, ceilings


def ceiling_columns(replicates: Replicates, pairs: Iterable[tuple[str, str]]) -> pd.DataFrame:
    """For each (method, control) pair, the share of each side's correct certificates at
    the CERTIFY ceiling, averaged over the replicates.

    A difference between two methods of which one has most of its correct certificates
    at its ceiling is, at least in part, a difference of ceilings (of noise level and
    ``n``), not of the methods.
    """
    _check(replicates)
    rows = {}
    for method, control in pairs:
        rows[(method, control)] = {
            side: _mean_share([ceiling_share(logs[name]) for logs in replicates])
            for side, name in (("method at ceiling", method), ("control at ceiling", control))
        }
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.index.names = ["method", "against"]
    return table
