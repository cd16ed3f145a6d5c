"""The settings of a soundness audit, as one object.

:func:`~rsutils.anisotropic.audit.runs.audit_certificate`,
:func:`~rsutils.anisotropic.audit.runs.audit_log` and the book's cached audits take an
:class:`AuditSettings` whole, as certification takes a
:class:`~rsutils.core.settings.CertifySettings`, instead of passing the search's and the
verification's numbers from function to function.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np

from rsutils.anisotropic.audit.checks import check_non_negative, check_shrink
from rsutils.core.confidence import check_alpha
from rsutils.core.settings import check_count
from rsutils.core.validation import check_input_range

__all__ = ["AuditSettings", "check_audit_settings"]


@dataclass(frozen=True)
class AuditSettings:
    """How one certificate's region is searched and how each candidate is verified.

    The search: ``boundary`` random points at ``shrink`` times the region's boundary and,
    if ``steps > 0``, one projected gradient ascent of ``steps`` steps with ``draws``
    noise draws per step; ``ball`` searches the ℓ2 ball inside the region (the
    certificate's ``radius``) instead of the ellipsoid; ``input_range`` ``(low, high)``
    keeps every candidate in that box (what a deployed
    :class:`~rsutils.core.smooth.Smooth` accepts), ``None`` searches the whole region
    Theorem 7 claims. The verification: each candidate gets ``n_verify`` fresh draws, and
    a record claims a false contradiction with probability at most ``alpha``. ``seed``
    seeds the audit's noise streams (``boundary``, ``attack``, ``verify`` of
    :data:`~rsutils.core.streams.STREAMS`), with the certificate's index.

    The noise's scale λ and the number of classes are not settings: they belong to the
    smoothed classifier whose certificate is audited, and are passed with it.

    ``batch_size`` (noisy copies per forward pass when verifying) changes the speed,
    never the records, so it is not part of :meth:`identity`. The settings are checked
    when they are made: a bad value is a ``ValueError`` that says what to pass.
    """

    alpha: float = 0.001
    n_verify: int = 10_000
    boundary: int = 16
    steps: int = 20
    draws: int = 8
    seed: int = 0
    shrink: float = 0.99
    ball: bool = False
    input_range: tuple[float, float] | None = None
    batch_size: int = 1000

    def __post_init__(self) -> None:
        if isinstance(self.alpha, bool) or not isinstance(self.alpha, int | float | np.number):
            raise ValueError(f"alpha must be a number in (0, 1), e.g. 0.001, got {self.alpha!r}")
        check_alpha(self.alpha)
        for name in ("n_verify", "draws", "batch_size"):
            check_count(name, getattr(self, name))
        for name in ("boundary", "steps", "seed"):
            check_non_negative(name, getattr(self, name))
        if self.boundary + self.steps == 0:
            raise ValueError(
                "boundary = steps = 0 searches no point, so the audit could find nothing; "
                "ask for boundary points (boundary=16) or an attack (steps=20)"
            )
        check_shrink(self.shrink)
        if not isinstance(self.ball, bool):
            raise ValueError(
                f"ball must be True (the l2 ball inside the region) or False (the "
                f"ellipsoid), got {self.ball!r}"
            )
        object.__setattr__(self, "input_range", check_input_range(self.input_range))

    def identity(self) -> dict[str, object]:
        """The settings that determine the records (all but ``batch_size``), for cache keys."""
        values = asdict(self)
        del values["batch_size"]
        return values

    def replace(self, **changes: Any) -> AuditSettings:
        """A copy with some fields changed (checked like the original)."""
        return replace(self, **changes)


def check_audit_settings(settings: object) -> AuditSettings:
    """``settings`` itself if it is an :class:`AuditSettings`; a ``TypeError`` naming the
    fix otherwise (a dict of settings is the likely mistake)."""
    if not isinstance(settings, AuditSettings):
        raise TypeError(
            f"settings must be an AuditSettings, e.g. AuditSettings(alpha=0.001, "
            f"n_verify=10_000), got {type(settings).__name__}"
        )
    return settings
