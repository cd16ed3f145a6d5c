"""The settings of a soundness audit, as one object.

:func:`~rsutils.anisotropic.soundness.audit.runs.audit_certificate`,
:func:`~rsutils.anisotropic.soundness.audit.runs.audit_log` and the book's cached audits take an
:class:`AuditSettings` whole, as certification takes a
:class:`~rsutils.core.settings.CertifySettings`, instead of passing the search's and the
verification's numbers from function to function.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np

from rsutils.core.confidence import check_alpha
from rsutils.core.settings import check_count
from rsutils.core.validation import check_input_range, check_non_negative

__all__ = [
    "ATTACK_LOSSES",
    "AuditSettings",
    "check_audit_settings",
    "check_region_scale",
    "check_shrink",
]

#: The attack's objectives, in the order of their ``point`` sub-key of the ``attack``
#: stream: ``"ce"``, the noisy cross-entropy of the certified class, and ``"margin"``,
#: the noisy logit margin (see
#: :func:`~rsutils.anisotropic.soundness.audit.attack.attack_objective`).
ATTACK_LOSSES = ("ce", "margin")


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

    ``losses`` names the attack's objectives
    (:data:`ATTACK_LOSSES`): one ascent per name,
    each from its own ``attack`` stream, ``"ce"`` on the noisy cross-entropy (recorded
    as the search ``"attack"``) and ``"margin"`` on the noisy logit margin (recorded as
    ``"margin attack"``), whose gradient does not vanish where the logits saturate.

    ``region_scale`` ``(inner, outer)`` turns the audit into a positive control of the
    search: instead of the certified region it searches the shell
    ``inner·R ≤ ‖δ ⊘ a‖₂ ≤ shrink·outer·R`` (boundary points at ``shrink·outer·R``, the
    attack projected into the shell; see
    :func:`~rsutils.anisotropic.soundness.audit.attack.attack_in_region`). With ``inner ≥ 1``
    the shell lies outside the certificate, so a contradiction found there refutes
    nothing: it shows that the search finds contradictions where they exist. ``None``
    (the default) searches the certified region.

    The noise's scale λ and the number of classes are not settings: they belong to the
    smoothed classifier whose certificate is audited, and are passed with it.

    ``batch_size`` (noisy copies per forward pass when verifying) changes the speed,
    never the records, so it is not part of :meth:`identity`; ``losses`` and
    ``region_scale`` are, but only when they differ from their defaults, so that the
    audits cached before they existed keep their keys. The settings are checked when
    they are made: a bad value is a ``ValueError`` that says what to pass.
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
    losses: tuple[str, ...] = ("ce",)
    region_scale: tuple[float, float] | None = None

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
        object.__setattr__(self, "losses", _check_losses(self.losses))
        scale = check_region_scale(self.region_scale, self.shrink)
        object.__setattr__(self, "region_scale", scale)

    def identity(self) -> dict[str, object]:
        """The settings that determine the records, for cache keys: all but
        ``batch_size``, and ``losses`` and ``region_scale`` only when they are not
        their defaults (the keys of the audits made before they existed)."""
        values = asdict(self)
        del values["batch_size"]
        for name, default in _LATER_DEFAULTS.items():
            if values[name] == default:
                del values[name]
        return values

    def replace(self, **changes: Any) -> AuditSettings:
        """A copy with some fields changed (checked like the original)."""
        return replace(self, **changes)


#: Fields added after audits were first cached, with the defaults that keep their keys.
_LATER_DEFAULTS: dict[str, object] = {"losses": ("ce",), "region_scale": None}


def _check_losses(losses: object) -> tuple[str, ...]:
    """``losses`` as a tuple of distinct names of ``ATTACK_LOSSES``, at least one."""
    if isinstance(losses, str) or not isinstance(losses, tuple | list):
        raise ValueError(
            f"losses must be a tuple of names from {ATTACK_LOSSES}, e.g. ('ce', 'margin'), "
            f"got {losses!r}"
        )
    names = tuple(losses)
    unknown = [name for name in names if name not in ATTACK_LOSSES]
    if not names or unknown or len(set(names)) != len(names):
        raise ValueError(
            f"losses must name distinct attack losses from {ATTACK_LOSSES}, at least one "
            f"(e.g. ('ce', 'margin')), got {losses!r}"
        )
    return names


def check_shrink(shrink: float) -> None:
    """Refuse a ``shrink`` outside ``(0, 1)``: the search must stay strictly inside."""
    try:
        value = float(shrink)
    except (TypeError, ValueError):
        raise ValueError(f"shrink must be a number in (0, 1), e.g. 0.99, got {shrink!r}") from None
    if not 0.0 < value < 1.0:
        raise ValueError(f"shrink must lie in (0, 1) to stay strictly inside, got {shrink!r}")


def check_region_scale(value: object, shrink: float) -> tuple[float, float] | None:
    """``None``, or ``(inner, outer)`` as floats with ``0 ≤ inner < shrink·outer``.

    The multiples of a certificate's ``R`` between which a positive control searches
    (see :class:`AuditSettings`): the shell must hold points (``inner`` below the
    outermost radius searched, ``shrink·outer·R``).
    """
    if value is None:
        return None
    message = (
        "region_scale must be None (the certified region) or (inner, outer) multiples "
        "of R with 0 <= inner < shrink*outer, e.g. (1.5, 2.0) for the shell outside the "
        f"certificate; got {value!r}"
    )
    if isinstance(value, str | bytes):
        raise ValueError(message)
    try:
        inner, outer = (float(v) for v in value)  # type: ignore[attr-defined]
    except (TypeError, ValueError):
        raise ValueError(message) from None
    if not (np.isfinite(inner) and np.isfinite(outer) and 0.0 <= inner < float(shrink) * outer):
        raise ValueError(message)
    return inner, outer


def check_audit_settings(settings: object) -> AuditSettings:
    """``settings`` itself if it is an :class:`AuditSettings`; a ``TypeError`` naming the
    fix otherwise (a dict of settings is the likely mistake)."""
    if not isinstance(settings, AuditSettings):
        raise TypeError(
            f"settings must be an AuditSettings, e.g. AuditSettings(alpha=0.001, "
            f"n_verify=10_000), got {type(settings).__name__}"
        )
    return settings
