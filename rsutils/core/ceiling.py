"""Whether CERTIFY's estimate sits at its ceiling, found without drawing all ``n``.

With ``n`` estimation draws at level ``alpha``, CERTIFY's ``pA_lower`` is at most
``alpha^(1/n)``, reached when every draw falls in the selected class; the radius is
then a property of ``n``, not of the input (:mod:`rsutils.analysis.ceilings`). Whether
a run sits there is decided by the first draw of another class: :func:`reaches_ceiling`
draws CERTIFY's own two streams, the ``n0`` selection draws and then the estimation
draws in order, and stops at the first draw that misses the selected class. Its
answer is exact, not an estimate: for every ``alpha``,
``reaches_ceiling(smooth, x, n0, n, seed=s, index=i).at_ceiling`` equals
``smooth.certify(x, n0, n, alpha, seed=s, index=i).count == n``, since both read the
same draws (:meth:`~rsutils.core.smooth.Smooth.prefix_counter`). An input far from
the ceiling costs a few hundred draws instead of ``n``; one at the ceiling costs
the whole ``n``, as CERTIFY does.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from rsutils.core.inference import fixed_rows
from rsutils.core.settings import check_count
from rsutils.core.smooth import Smooth

__all__ = ["CeilingCheck", "reaches_ceiling"]


@dataclass(frozen=True)
class CeilingCheck:
    """What :func:`reaches_ceiling` found: CERTIFY's ``selected`` class, whether all
    ``n`` estimation draws fall in it (``at_ceiling``), and the estimation ``draws``
    it looked at to know (``n`` when at the ceiling)."""

    selected: int
    at_ceiling: bool
    draws: int


def reaches_ceiling(
    smooth: Smooth,
    x: torch.Tensor,
    n0: int,
    n: int,
    *,
    seed: int,
    index: int = 0,
    batch_size: int = 1000,
    step: int | None = None,
) -> CeilingCheck:
    """Whether ``smooth.certify(x, n0, n, alpha, batch_size, seed, index)`` would count
    all ``n`` estimation draws in its selected class, for any ``alpha`` (see the
    module's text): the same selection, then the estimation stream ``step`` draws at a
    time (default :func:`~rsutils.core.inference.fixed_rows`, one forward pass), up to
    the first draw of another class."""
    step = fixed_rows(smooth.device) if step is None else step
    for name, value in (("n0", n0), ("n", n), ("step", step)):
        check_count(name, value)
    selection = smooth.sample_counts(x, n0, batch_size, seed=seed, index=index, phase="select")
    selected = int(np.argmax(selection))
    counter = smooth.prefix_counter(x, n, batch_size, seed=seed, index=index, phase="estimate")
    drawn = 0
    while drawn < n:
        drawn = min(n, drawn + step)
        if int(counter.advance(drawn)[selected]) < drawn:
            return CeilingCheck(selected, False, drawn)
    return CeilingCheck(selected, True, n)
