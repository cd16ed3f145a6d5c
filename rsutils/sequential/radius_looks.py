"""What radius do ``n_max`` draws give? Sequential looks at the radius itself.

:class:`~rsutils.sequential.planned.PlannedDraws` fixes the number of estimation draws
from the ``n0`` selection draws; :class:`RadiusLooks` instead looks at CERTIFY's
estimation stream after ``n_1 < … < n_K = n_max`` draws (a
:class:`~rsutils.sequential.spending.LookSchedule`) and stops at the first look where
the radius cannot grow by more than ``radius_loss`` by going on to ``n_max``: look ``k``
certifies CERTIFY's radius ``r_k`` from its count at level ``alpha_k`` and stops when
``r_k >= R(p) - radius_loss``, with ``R(p)`` the radius ``n_max`` draws give at the
schedule's level ``alpha`` if a fraction ``p`` of them falls in the class
(:func:`~rsutils.sequential.planned.expected_radius`) and ``p`` judged from the look's
count: its proportion (``judge="estimate"``) or its Clopper–Pearson upper bound at
level ``gamma`` (``judge="upper"``, more draws, less loss). The last look always stops.
An abstention stops early only when ``R(p)`` is an abstention too.

Guarantee (alpha spending, as :class:`~rsutils.sequential.spending.LookSchedule`): the
levels sum to ``alpha``, so with probability at least ``1 - alpha`` *no* look's lower
bound exceeds the true ``pA``, whatever the stopping rule (the union bound over looks).
Hence if the answer is a class, with probability at least ``1 - alpha`` over the noise
the smoothed classifier predicts it everywhere within ``radius``: CERTIFY's guarantee
(Cohen et al., Proposition 2). With ``keep_best`` the answer is the largest radius of
the looks read, valid by the same union bound. ``radius_loss`` is a plan, not a
guarantee: ``p`` may misjudge ``pA``, and the split of ``alpha`` costs radius too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from rsutils.core.confidence import check_alpha, clopper_pearson_lower, clopper_pearson_upper
from rsutils.core.smooth import Certificate, Smooth
from rsutils.sequential.certify import certificate, certificate_columns, certificate_row
from rsutils.sequential.draws import Draws
from rsutils.sequential.planned import RADIUS_LOSS, check_radius_loss, expected_radius
from rsutils.sequential.procedure import Option, register
from rsutils.sequential.spending import LookSchedule

__all__ = ["RadiusLooks", "StoppedCertificate"]

Judge = Literal["estimate", "upper"]


@dataclass(frozen=True)
class StoppedCertificate:
    """The answer of :class:`RadiusLooks` for one input.

    ``certificate`` is CERTIFY's answer from the ``certificate.n`` draws of the
    stopping ``look`` (1-based), its bound at level ``alpha_spent``
    (``certificate.alpha``); ``alpha`` is the procedure's failure probability, the
    schedule's (the level of the guarantee).
    """

    certificate: Certificate
    look: int
    alpha: float
    alpha_spent: float

    @property
    def prediction(self) -> int:
        return self.certificate.prediction

    @property
    def radius(self) -> float:
        return self.certificate.radius

    @property
    def forward_passes(self) -> int:
        """Noisy copies the base model classified, selection and estimation draws."""
        return self.certificate.n0 + self.certificate.n

    def as_dict(self) -> dict[str, object]:
        return {
            **self.certificate.as_dict(),
            "look": self.look,
            "alpha": self.alpha,
            "alpha_spent": self.alpha_spent,
        }


@register
@dataclass(frozen=True)
class RadiusLooks:
    """CERTIFY with sequential looks at the radius (see the module's text).

    The ``n0`` selection draws and the estimation stream are CERTIFY's with
    ``n = schedule.n_max``; the looks read its prefixes.

    Guarantee: if the answer is a class, then with probability at least
    ``1 - schedule.alpha`` over the noise the smoothed classifier predicts it
    everywhere within ``radius`` of ``x``.
    """

    name: ClassVar[str] = "radius-looks"
    #: Options of the command line (``certify --procedure radius-looks``).
    options: ClassVar[tuple[Option, ...]] = (RADIUS_LOSS,)
    selects: ClassVar[bool] = True

    schedule: LookSchedule
    radius_loss: float
    judge: Judge = "estimate"
    gamma: float = 0.05
    keep_best: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.schedule, LookSchedule) or self.schedule.randomized:
            raise ValueError(
                "looks at the radius use Clopper-Pearson bounds at a LookSchedule's looks; "
                f"pass a LookSchedule with randomized=False, got {self.schedule!r}"
            )
        object.__setattr__(self, "radius_loss", check_radius_loss(self.radius_loss))
        if self.judge not in ("estimate", "upper"):
            raise ValueError(f"judge must be 'estimate' or 'upper', got {self.judge!r}")
        check_alpha(self.gamma)

    @classmethod
    def from_options(cls, n_max: int, alpha: float, *, radius_loss: float) -> RadiusLooks:
        """Looks after 100, 200, 400, … and ``n_max`` draws, half of ``alpha`` at the last."""
        return cls(LookSchedule.geometric(n_max, alpha, first=100), radius_loss)

    @property
    def n_max(self) -> int:
        return self.schedule.n_max

    @property
    def alpha(self) -> float:
        return self.schedule.alpha

    def settle(self, smooth: Smooth, draws: Draws) -> StoppedCertificate:
        """The looks at class ``selected``'s count; the counter is advanced only to the
        stopping look."""
        selected, schedule = draws.selected, self.schedule
        last = len(schedule.looks)
        best: tuple[Certificate, int, float] | None = None
        for look, (n, level) in enumerate(zip(schedule.looks, schedule.alphas, strict=True), 1):
            count = draws.count(selected, n)
            cert = certificate(smooth, draws, count, n, selected=selected, alpha=level)
            if best is None or not self.keep_best or _better(cert, best[0]):
                best = (cert, look, level)
            if look == last or self._settled(smooth, cert, draws.dim):
                break
        assert best is not None
        cert, look, level = best
        return StoppedCertificate(cert, look, schedule.alpha, level)

    def _settled(self, smooth: Smooth, cert: Certificate, dim: int) -> bool:
        """Whether ``n_max`` draws would give at most ``radius_loss`` more radius, judged
        from the look's count."""
        if self.judge == "estimate":
            p = cert.count / cert.n
        else:
            p = float(clopper_pearson_upper(cert.count, cert.n, self.gamma))
        n_max, alpha = self.schedule.n_max, self.schedule.alpha
        if cert.abstained:  # stop only if n_max draws would abstain too
            return float(clopper_pearson_lower(p * n_max, n_max, alpha)) < 0.5
        target = expected_radius(smooth.noise, smooth.norm, p * n_max, n_max, alpha, dim)
        return cert.radius >= target - self.radius_loss

    def identity(self) -> dict[str, Any]:
        return {
            "n": self.n_max, "alpha": self.alpha,
            "looks": list(self.schedule.looks), "alphas": list(self.schedule.alphas),
            "radius_loss": self.radius_loss, "judge": self.judge,
            "gamma": self.gamma, "keep_best": self.keep_best,
        }  # fmt: skip

    def columns(self) -> list[str]:
        return [*certificate_columns(), "look", "alpha_spent"]

    def row(self, answer: StoppedCertificate, label: int) -> dict[str, Any]:
        cert_row = certificate_row(answer.certificate, label)
        return {**cert_row, "alpha": answer.alpha, "look": answer.look,
                "alpha_spent": answer.alpha_spent}  # fmt: skip


def _better(cert: Certificate, other: Certificate) -> bool:
    if other.abstained:
        return not cert.abstained
    return not cert.abstained and cert.radius > other.radius
