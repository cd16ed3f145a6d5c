"""The threat norms, by name: one vocabulary for every region and certificate.

A norm is named ``"l1"``, ``"l2"`` or ``"linf"`` everywhere in rsutils: in the radius
registry, in certificates, in the certificate memory's balls and in the
super-ellipsoids of anisotropic certificates.
"""

from __future__ import annotations

import numpy as np

__all__ = ["NORM_ORDERS", "norm_order"]

#: Threat-norm names → the exponent p of ‖·‖_p.
NORM_ORDERS = {"l1": 1.0, "l2": 2.0, "linf": np.inf}


def norm_order(norm: str | float) -> float:
    """The exponent ``p`` of ``norm`` (``"l1"``, ``"l2"``, ``"linf"`` or a number > 0)."""
    if isinstance(norm, str):
        try:
            return NORM_ORDERS[norm]
        except KeyError:
            raise ValueError(
                f"unknown norm {norm!r}; choose one of {sorted(NORM_ORDERS)}"
            ) from None
    p = float(norm)
    if not p > 0:
        raise ValueError(f"the exponent p of a norm must be > 0, got {norm!r}")
    return p
