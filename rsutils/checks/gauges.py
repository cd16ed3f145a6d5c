"""An independent oracle for the separation of two axis-aligned super-ellipsoids.

Two regions ``{z : ‖z ⊘ a‖_p < 1}`` and ``{z : ‖(z − delta) ⊘ b‖_p < 1}`` (semi-axes
``a`` and ``b``) intersect exactly when ``min_z max(‖z ⊘ a‖_p, ‖(z − delta) ⊘ b‖_p) < 1``.
For ``p = 1`` and ``p = ∞`` that minimum is a linear program, solved here by scipy's
HiGHS, with no code in common with :mod:`rsutils.geometry.separation`, which the tests
check against it.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import linprog

__all__ = ["lp_gauge"]


def lp_gauge(delta: np.ndarray, a: np.ndarray, b: np.ndarray, p: float) -> float:
    """``min_z max(‖z⊘a‖_p, ‖(z − delta)⊘b‖_p)`` by linear programming (p = 1 or ∞).

    Variables ``z`` (d), the bound ``τ`` and ``u``, ``v`` (d each) for the absolute
    values of the two scaled differences; the constraints are multiplied out
    (``|z_j − c_j| ≤ axes_j·u_j``) so that tiny semi-axes keep the problem well
    conditioned.
    """
    if p not in (1, np.inf):
        raise ValueError(f"the linear program covers p = 1 and p = inf, got {p}")
    d = len(delta)
    n = 3 * d + 1
    cost = np.zeros(n)
    cost[d] = 1.0
    rows, rhs = [], []
    for axes, centre, offset in ((a, np.zeros(d), d + 1), (b, delta, 2 * d + 1)):
        for j in range(d):
            for sign in (1.0, -1.0):
                row = np.zeros(n)
                row[j], row[offset + j] = sign, -axes[j]
                rows.append(row)
                rhs.append(sign * centre[j])
        blocks = [np.arange(offset, offset + d)] if p == 1 else [[offset + j] for j in range(d)]
        for block in blocks:
            row = np.zeros(n)
            row[block], row[d] = 1.0, -1.0
            rows.append(row)
            rhs.append(0.0)
    result = linprog(cost, A_ub=np.array(rows), b_ub=np.array(rhs), bounds=[(None, None)] * n)
    if not result.success:
        raise RuntimeError(f"the separation LP failed: {result.message}")
    return float(result.fun)
