"""Inputs whose data-dependent noise level was set by the ascent's step budget.

Sigma ascent (:func:`~rsutils.ddrs.sigma_ascent.optimize_sigma`) moves each input's
scale by ``lr`` times the gradient of the clamped surrogate radius, ``K`` times. For an
input the base model keeps classifying with probability above ``1 − clamp`` under the
noise, both E_A and E_B sit at their clamps, the surrogate is the scale times a constant
``g`` (its value at unit scale for E_A = 1 − clamp and E_B = clamp: Φ⁻¹(1 − clamp) for
Gaussian noise, 1 − 2·clamp for uniform noise), and every step adds exactly ``lr·g``.
After ``K`` such steps the scale is ``σ0 + K·lr·g`` whatever the input: the level, and
with it the radius CERTIFY then gives, measures the budget ``K`` (and the step and the
clamp), not the input. More steps would have raised it further.

The rule of :func:`at_step_budget`: an input's scale ran to the step budget when it
rose by at least ``K − slack`` full clamped steps, ``σ* ≥ σ0 + (K − slack)·lr·g``
(``slack = 1`` by default: on average its steps were within ``1/K`` of the fastest rise
the clamp allows). A gradient can exceed ``g`` where more noise makes the model *more*
confident (the class it gives to pure noise), so a scale may end slightly above
``σ0 + K·lr·g``; the rule counts those too. The log holds the final scale only (its
``scale`` column), not the path, so "still rising at the last step" is read off the
distance it travelled.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import torch

from rsutils.ddrs.sigma_ascent import SURROGATES, SigmaAscent

__all__ = ["at_step_budget", "budget_reach", "budget_step", "step_budget_table"]


def budget_step(ascent: SigmaAscent) -> float:
    """``lr·g``: how far one ascent step moves the scale of an input whose E_A and E_B
    both sit at their clamps (``g`` = Φ⁻¹(1 − clamp) for Gaussian noise)."""
    surrogate = SURROGATES[ascent.family][1]
    one = torch.ones((), dtype=torch.float64)
    g = surrogate(one, one - ascent.clamp, one * ascent.clamp)
    return float(ascent.lr * g)


def budget_reach(ascent: SigmaAscent) -> float:
    """``σ0 + K·lr·g``: the scale ``K`` clamped steps reach from ``sigma0``."""
    return float(ascent.sigma0 + ascent.iterations * budget_step(ascent))


def at_step_budget(log: pd.DataFrame, ascent: SigmaAscent, *, slack: float = 1.0) -> np.ndarray:
    """Whether each input's scale (the log's ``scale`` column) ran to the step budget:
    ``scale ≥ σ0 + (K − slack)·lr·g`` (the module's rule; a relative tolerance of 1e-6
    absorbs the float32 arithmetic of the ascent's softmax). With ``K = 0`` there is no
    ascent and no input is flagged.

    ``ascent`` must be the one the log was certified with (its ``sigma0``, ``K``, step
    and clamp); ``slack`` is in steps, between 0 and ``K``.
    """
    if "scale" not in log.columns:
        raise ValueError(
            "the log has no 'scale' column; pass a data-dependent log (certify_ds or "
            "python -m rsutils certify --ascent-steps)"
        )
    k = ascent.iterations
    if k > 0 and not 0 <= slack <= k:
        raise ValueError(f"slack must lie between 0 and K = {k} steps, got {slack!r}")
    scale = log["scale"].to_numpy(float)
    if k == 0:
        return np.zeros(len(scale), dtype=bool)
    threshold = ascent.sigma0 + (k - slack) * budget_step(ascent)
    return scale >= threshold * (1 - 1e-6)


def step_budget_table(
    replicates: Sequence[Mapping[str, pd.DataFrame]],
    ascents: Mapping[str, SigmaAscent],
    *,
    slack: float = 1.0,
) -> pd.DataFrame:
    """Per data-dependent method (the keys of ``ascents``) and replicate model, the share
    of inputs at the step budget (:func:`at_step_budget`) and the ACR split between them
    and the rest.

    ``replicates`` holds one ``{name: log}`` per replicate model. Columns: ``at budget``
    (share of the inputs), ``correct at budget`` (share of the inputs that are at the
    budget and correct), ``ACR``, ``ACR from them`` and ``ACR from the rest``. The last
    two are sums over their inputs divided by *all* inputs, so they add up to the ACR:
    ``ACR from the rest`` is the ACR with the budget-bound certificates counted as
    radius 0.
    """
    rows = {}
    for name, ascent in ascents.items():
        for m, logs in enumerate(replicates):
            if name not in logs:
                raise ValueError(f"replicates[{m}] has no log for {name!r}; it has {sorted(logs)}")
            log = logs[name]
            flagged = at_step_budget(log, ascent, slack=slack)
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
