"""CERTIFY itself as a procedure: ``n`` estimation draws, every input alike.

:class:`Certify` is Cohen et al.'s CERTIFY (:meth:`~rsutils.core.smooth.Smooth.certify`)
written against :class:`~rsutils.sequential.draws.Draws`, so that it replays on
recorded draws (at the record's ``n`` or fewer) beside the procedures that spend fewer,
and its log is a CERTIFY log (:func:`certificate_columns`). Its answers are
:meth:`~rsutils.core.smooth.Smooth.certify`'s with the same ``n0``, ``seed`` and
``index`` (tested), so its guarantee is CERTIFY's (Proposition 2).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, ClassVar

from rsutils.core.confidence import check_alpha
from rsutils.core.settings import check_count
from rsutils.core.smooth import Certificate, Smooth
from rsutils.logs.dataset_run import answer_columns
from rsutils.logs.runner import CERTIFY_COLUMNS
from rsutils.sequential.draws import Draws
from rsutils.sequential.procedure import Option, register

__all__ = ["Certify", "certificate", "certificate_columns", "certificate_row"]


def certificate(
    smooth: Smooth, draws: Draws, count: int, n: int, *, selected: int, alpha: float
) -> Certificate:
    """:meth:`~rsutils.core.smooth.Smooth.certificate` for ``count`` of ``n`` of ``draws``'
    estimation draws in class ``selected``, at level ``alpha``, with the draws' ``n0``,
    ``seed``, ``index`` and ``dim``. The answer is a function of the noise, the norm and
    these numbers, and the same counts come back across inputs, so it is remembered
    (up to ``REMEMBERED`` answers)."""
    key = (smooth.noise, smooth.norm, count, n, selected, draws.n0, alpha, draws.dim)
    cert = _REMEMBERED.get(key)
    if cert is None:
        if len(_REMEMBERED) >= REMEMBERED:
            _REMEMBERED.clear()
        cert = smooth.certificate(
            count, n, selected, n0=draws.n0, alpha=alpha, seed=0, index=0, dim=draws.dim
        )
        _REMEMBERED[key] = cert
    return replace(cert, seed=draws.seed, index=draws.index)


#: How many answers :func:`certificate` remembers before it starts afresh.
REMEMBERED = 65536
_REMEMBERED: dict[tuple[Any, ...], Certificate] = {}


def certificate_columns() -> list[str]:
    """The columns of a log of certificates (CERTIFY's)."""
    return list(CERTIFY_COLUMNS)


def certificate_row(cert: Certificate, label: int) -> dict[str, Any]:
    """A certificate's row of a CERTIFY log for an input of true ``label``, without
    ``idx``, ``time`` and ``scale`` (which the run adds): the certificate, and Cohen
    et al.'s ``label``, ``predict`` and ``correct`` (1 if the answer is the label)."""
    return {**cert.as_dict(), **answer_columns(cert.prediction, label)}


@register
@dataclass(frozen=True)
class Certify:
    """CERTIFY with ``n`` estimation draws at level ``alpha`` (see the module)."""

    name: ClassVar[str] = "certify"
    options: ClassVar[tuple[Option, ...]] = ()
    selects: ClassVar[bool] = True

    n: int
    alpha: float

    def __post_init__(self) -> None:
        check_count("n", self.n)
        check_alpha(self.alpha)

    @classmethod
    def from_options(cls, n_max: int, alpha: float) -> Certify:
        return cls(n_max, alpha)

    @property
    def n_max(self) -> int:
        return self.n

    def settle(self, smooth: Smooth, draws: Draws) -> Certificate:
        selected = draws.selected
        count = draws.count(selected, self.n)
        return certificate(smooth, draws, count, self.n, selected=selected, alpha=self.alpha)

    def identity(self) -> dict[str, Any]:
        return {"n": self.n, "alpha": self.alpha}

    def columns(self) -> list[str]:
        return certificate_columns()

    def row(self, answer: Certificate, label: int) -> dict[str, Any]:
        return certificate_row(answer, label)
