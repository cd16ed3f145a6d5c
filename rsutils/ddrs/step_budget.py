"""Inputs whose data-dependent noise level was set by the ascent's step budget.

Sigma ascent (:func:`~rsutils.ddrs.sigma_ascent.optimize_sigma`) moves each input's
scale ``K`` times by ``lr`` times a stochastic gradient of the surrogate radius. Where the
surrogate has a maximum, the scale climbs to it and then jitters around it: its steps
have mean 0. Where it keeps growing with the scale (an input the model classifies the
same way under any noise it meets, e.g. the class it gives to pure noise), the scale is
still climbing when the ``K`` steps run out: its level, and the radius CERTIFY then
gives, measure the budget ``K`` (and the step and the clamp), not the input, and more
steps would have given more.

The rule of :func:`still_rising`: over the last ``window`` steps of its path (default
the last fifth, at least two), an input's scale is still rising when the mean of its
steps exceeds ``z = 3`` standard errors (a one-sided test for upward drift: for ten
independent normal steps without drift, a Student-t with 9 degrees of freedom, it flags
0.75% of paths; a path whose last steps are all equal and positive, as at the clamps,
rises). The
certification log keeps the final scale only, so :func:`ascent_paths` reruns the
ascent with the log's seed and checks that it ends where the log says.

For reference, :func:`budget_step` is the largest step the clamp allows once both
expectations sit at their clamps, ``lr·Φ⁻¹(1 − clamp)`` for Gaussian noise.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import torch

from rsutils.data import Dataset
from rsutils.ddrs.data_dependent import DataDependentSmooth
from rsutils.ddrs.sigma_ascent import SURROGATES, SigmaAscent

__all__ = [
    "RISE_Z",
    "ascent_paths",
    "budget_step",
    "default_window",
    "step_budget_table",
    "still_rising",
]

#: How many standard errors the mean of the last steps must exceed (:func:`still_rising`).
RISE_Z = 3.0


def budget_step(ascent: SigmaAscent) -> float:
    """``lr·g``: how far one ascent step moves the scale of an input whose E_A and E_B
    both sit at their clamps (``g`` = Φ⁻¹(1 − clamp) for Gaussian noise)."""
    surrogate = SURROGATES[ascent.family][1]
    one = torch.ones((), dtype=torch.float64)
    g = surrogate(one, one - ascent.clamp, one * ascent.clamp)
    return float(ascent.lr * g)


def default_window(iterations: int) -> int:
    """The steps :func:`still_rising` reads by default: the last fifth of ``iterations``
    steps, at least 2."""
    return max(2, -(-iterations // 5))


def still_rising(paths: np.ndarray, *, window: int | None = None, z: float = RISE_Z) -> np.ndarray:
    """Whether each path of scales (rows of ``paths``, shape ``(inputs, K + 1)``) is
    still rising at its end: the mean of its last ``window`` steps exceeds ``z``
    standard errors of that mean (the module's rule). ``window`` defaults to a fifth
    of the ``K`` steps, at least 2; paths of fewer than 3 scales cannot tell and are
    not flagged."""
    paths = np.asarray(paths, dtype=float)
    if paths.ndim != 2:
        raise ValueError(f"paths must be (inputs, K + 1), got shape {paths.shape}")
    steps = np.diff(paths, axis=1)
    k = steps.shape[1]
    if k < 2:
        return np.zeros(len(paths), dtype=bool)
    window = default_window(k) if window is None else window
    if not 2 <= window <= k:
        raise ValueError(f"window must lie between 2 and K = {k} steps, got {window!r}")
    last = steps[:, -window:]
    mean = last.mean(axis=1)
    error = last.std(axis=1, ddof=1) / np.sqrt(window)
    return (mean > 0) & (mean > z * error)


def ascent_paths(
    smooth: DataDependentSmooth,
    data: Dataset,
    log: pd.DataFrame,
    seed: int,
    *,
    batch: int = 100,
) -> np.ndarray:
    """The path of scales of every input of a data-dependent ``log``, in its row order.

    Reruns :meth:`~rsutils.ddrs.data_dependent.DataDependentSmooth.ascend` (the same
    model, ascent and ``seed`` as the certification, so the same draws) and checks that
    each path ends at the log's ``scale``; a mismatch means another model, ascent or
    seed, and is refused.
    """
    if "scale" not in log.columns:
        raise ValueError(
            "the log has no 'scale' column; pass a data-dependent log (certify_ds or "
            "python -m rsutils certify --ascent-steps)"
        )
    indices = log["idx"].astype(int).tolist()
    parts = []
    for first in range(0, len(indices), batch):
        group = indices[first : first + batch]
        images = torch.stack([data.images[i] for i in group])
        parts.append(smooth.ascend(images, seed, group).path.numpy())
    paths = np.concatenate(parts) if parts else np.zeros((0, smooth.ascent.iterations + 1))
    logged = log["scale"].to_numpy(float)
    if not np.allclose(paths[:, -1], logged, rtol=1e-5, atol=1e-7):
        raise ValueError(
            "the rerun ascent does not end at the log's scales: certify and rerun with the "
            "same model, ascent settings and seed"
        )
    return paths


def step_budget_table(
    replicates: Sequence[Mapping[str, pd.DataFrame]],
    flags: Mapping[str, Sequence[np.ndarray]],
) -> pd.DataFrame:
    """Per data-dependent method (the keys of ``flags``) and replicate model, the share
    of inputs still rising at the budget and the ACR split between them and the rest.

    ``replicates`` holds one ``{name: log}`` per replicate model; ``flags[name][m]``
    marks the rows of ``replicates[m][name]`` still rising (:func:`still_rising`).
    Columns: ``at budget`` (share of the inputs), ``correct at budget``, ``ACR``, ``ACR
    from them`` and ``ACR from the rest``; the last two are sums over their inputs
    divided by *all* inputs, so they add up to the ACR (``ACR from the rest`` counts
    the budget-bound certificates as radius 0).
    """
    rows = {}
    for name, per_model in flags.items():
        if len(per_model) != len(replicates):
            raise ValueError(
                f"flags[{name!r}] has {len(per_model)} entries, one per replicate needed"
            )
        for m, (logs, flagged) in enumerate(zip(replicates, per_model, strict=True)):
            if name not in logs:
                raise ValueError(f"replicates[{m}] has no log for {name!r}; it has {sorted(logs)}")
            log, flagged = logs[name], np.asarray(flagged, dtype=bool)
            if flagged.shape != (len(log),):
                raise ValueError(f"flags[{name!r}][{m}] must mark each of the {len(log)} rows")
            correct = log["correct"].to_numpy().astype(bool)
            radius = np.where(correct, log["radius"].to_numpy(float), 0.0)
            n = len(log)
            rows[(name, m)] = {
                "at budget": float(flagged.mean()),
                "correct at budget": float((flagged & correct).mean()),
                "ACR": float(radius.sum() / n),
                "ACR from them": float(radius[flagged].sum() / n),
                "ACR from the rest": float(radius[~flagged].sum() / n),
            }
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.index.names = ["method", "replicate"]
    return table
