"""CERTIFY with an input-specific number of draws: what radius do ``n_max`` draws give?

CERTIFY's radius grows with the draws ``n`` only as fast as the Clopper–Pearson bound
tightens, and how fast that is depends on ``pA``: near ``pA = 1/2`` a few hundred draws
lose little, while at ``pA = 1`` the radius is the ceiling ``σ·Φ⁻¹(alpha^(1/n))`` and
keeps growing with ``n``. Following Chen et al.'s input-specific sampling (AAAI 2022),
:class:`PlannedDraws` lets CERTIFY's ``n0`` selection draws also estimate ``pA``
(``p̂ = count / n0``), and takes the fewest draws ``n(x) <= n_max`` whose expected
radius at ``p̂`` is within ``radius_loss`` of the radius ``n_max`` draws would give
(:meth:`PlannedDraws.planned_draws`). ``n(x)`` estimation draws then certify at the full
``alpha``.

Guarantee: that of CERTIFY (Cohen et al., Proposition 2) at level ``alpha``. The number
``n(x)`` depends on the selection draws only, which are independent of the estimation
draws, so given ``n(x)`` the bound is an ordinary Clopper–Pearson bound from ``n(x)``
independent draws. The radius loss is a plan, not a guarantee: when ``p̂`` misjudges
``pA`` the certificate may lose more, never become invalid.
"""

from __future__ import annotations

import functools
import numbers
from dataclasses import dataclass
from typing import Any, ClassVar

from rsutils.core.confidence import check_alpha, clopper_pearson_lower
from rsutils.core.noise import NoiseFamily
from rsutils.core.settings import check_count
from rsutils.core.smooth import Certificate, Smooth
from rsutils.sequential.certify import certificate, certificate_columns, certificate_row
from rsutils.sequential.draws import Draws
from rsutils.sequential.procedure import Option, register

__all__ = ["RADIUS_LOSS", "PlannedDraws", "check_radius_loss", "expected_radius"]


def expected_radius(
    noise: NoiseFamily, norm: str, count: float, n: int, alpha: float, dim: int
) -> float:
    """CERTIFY's radius in ``norm`` with ``noise`` if ``count`` of ``n`` draws fell in
    class A (0 if it would abstain); ``count`` need not be a whole number."""
    lower = float(clopper_pearson_lower(count, n, alpha))
    if lower < 0.5:
        return 0.0
    return float(noise.radius(lower, norm=norm, dim=dim))


@functools.lru_cache(maxsize=65536)
def _draws_for(
    procedure: PlannedDraws, noise: NoiseFamily, norm: str, p_hat: float, dim: int
) -> int:
    return procedure.planned_draws(noise, norm, p_hat, dim)


#: The command-line option of the procedures that stop when more draws add little radius.
RADIUS_LOSS = Option(
    "radius_loss",
    "stop when more draws would add at most about L of radius",
    takes="number",
    metavar="L",
)


def check_radius_loss(radius_loss: object) -> float:
    """``radius_loss`` as a float if it is a number >= 0, else a ``ValueError``."""
    if isinstance(radius_loss, bool) or not isinstance(radius_loss, numbers.Real):
        raise ValueError(f"radius_loss must be a number >= 0 (e.g. 0.05), got {radius_loss!r}")
    if not radius_loss >= 0:
        raise ValueError(f"radius_loss must be a number >= 0 (e.g. 0.05), got {radius_loss!r}")
    return float(radius_loss)


@register
@dataclass(frozen=True)
class PlannedDraws:
    """CERTIFY with ``n(x)`` estimation draws, planned from the selection draws, at
    most ``n_max``, at least ``min_draws`` (see the module's text).

    The selection draws and the estimation stream are CERTIFY's with ``n = n_max``; the
    estimation uses its first ``n(x)`` draws, and the certificate records ``n = n(x)``.

    Guarantee: if the answer is a class, then with probability at least ``1 - alpha``
    over the noise the smoothed classifier predicts it everywhere within ``radius``.
    """

    name: ClassVar[str] = "planned"
    #: Options of the command line (``certify --procedure planned``).
    options: ClassVar[tuple[Option, ...]] = (RADIUS_LOSS,)
    #: It reads CERTIFY's selection draws.
    selects: ClassVar[bool] = True

    n_max: int
    alpha: float
    radius_loss: float
    min_draws: int = 100

    def __post_init__(self) -> None:
        check_count("n_max", self.n_max)
        check_count("min_draws", self.min_draws)
        check_alpha(self.alpha)
        object.__setattr__(self, "radius_loss", check_radius_loss(self.radius_loss))

    @classmethod
    def from_options(cls, n_max: int, alpha: float, *, radius_loss: float) -> PlannedDraws:
        return cls(n_max, alpha, radius_loss)

    def draws_for(self, smooth: Smooth, p_hat: float, dim: int) -> int:
        """:meth:`planned_draws` for ``smooth``'s noise and norm (see there)."""
        return _draws_for(self, smooth.noise, smooth.norm, float(p_hat), dim)

    def planned_draws(self, noise: NoiseFamily, norm: str, p_hat: float, dim: int) -> int:
        """The fewest draws in ``[min_draws, n_max]`` whose :func:`expected_radius` at
        ``p_hat`` is within ``radius_loss`` of that of ``n_max`` draws.

        The expected radius grows with ``n`` at a fixed ``p``, so the answer is found by
        bisection.
        """
        if not 0 <= p_hat <= 1:
            raise ValueError(f"p_hat must be a proportion in [0, 1], got {p_hat!r}")
        n_max, alpha = self.n_max, self.alpha

        def radius(n: int) -> float:
            return expected_radius(noise, norm, p_hat * n, n, alpha, dim)

        low = min(self.min_draws, n_max)
        target = radius(n_max) - self.radius_loss
        if radius(low) >= target:
            return low
        high = n_max  # meets the target; low does not
        while high - low > 1:
            middle = (low + high) // 2
            if radius(middle) >= target:
                high = middle
            else:
                low = middle
        return high

    def settle(self, smooth: Smooth, draws: Draws) -> Certificate:
        selected = draws.selected
        p_hat = float(draws.selection[selected]) / draws.n0
        n = _draws_for(self, smooth.noise, smooth.norm, p_hat, draws.dim)
        count = draws.count(selected, n)
        return certificate(smooth, draws, count, n, selected=selected, alpha=self.alpha)

    def identity(self) -> dict[str, Any]:
        return {
            "n": self.n_max, "alpha": self.alpha,
            "radius_loss": self.radius_loss, "min_draws": self.min_draws,
        }  # fmt: skip

    def columns(self) -> list[str]:
        return certificate_columns()

    def row(self, answer: Certificate, label: int) -> dict[str, Any]:
        return certificate_row(answer, label)
