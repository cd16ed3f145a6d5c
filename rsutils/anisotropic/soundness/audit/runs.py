"""The audit runs: one certificate (:func:`audit_certificate`), or a log's (:func:`audit_log`).

A run searches the certified region (:mod:`~rsutils.anisotropic.soundness.audit.boundary`,
:mod:`~rsutils.anisotropic.soundness.audit.attack`), verifies every candidate with fresh draws
(:mod:`~rsutils.anisotropic.soundness.audit.verification`) and returns an
:class:`~rsutils.anisotropic.soundness.audit.records.AuditRecord`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from rsutils.anisotropic.soundness.audit.attack import Region, attack_in_region
from rsutils.anisotropic.soundness.audit.boundary import boundary_points, region_axes
from rsutils.anisotropic.soundness.audit.checks import as_model_input, check_radius
from rsutils.anisotropic.soundness.audit.classifier import DeployedClassifier
from rsutils.anisotropic.soundness.audit.params import FrozenParams, noise_params
from rsutils.anisotropic.soundness.audit.records import AuditPoint, AuditRecord
from rsutils.anisotropic.soundness.audit.settings import (
    ATTACK_LOSSES,
    AuditSettings,
    check_audit_settings,
)
from rsutils.anisotropic.soundness.audit.verification import verify_point
from rsutils.core.streams import stream_generator
from rsutils.core.validation import check_class, check_non_negative

__all__ = ["ATTACK_SEARCHES", "audit_certificate", "audit_log"]

#: The ``search`` a record names the end of each attack by, per loss: ``"attack"`` for
#: the cross-entropy (the name audits had before the margin loss existed).
ATTACK_SEARCHES = {"ce": "attack", "margin": "margin attack"}


def audit_certificate(
    classifier: DeployedClassifier,
    x: torch.Tensor,
    c: int,
    R: float,
    settings: AuditSettings,
    *,
    index: int = 0,
) -> AuditRecord:
    """Search the certified region of ``(x, c, R)`` for points where G is not ``c``.

    The candidates are ``settings.boundary`` random points at ``settings.shrink`` times
    the region's boundary
    (:func:`~rsutils.anisotropic.soundness.audit.boundary.boundary_points`; clamped into
    ``settings.input_range`` if one is given, which only shrinks each ``|δ_i|`` since
    ``x`` is in the box, so they stay inside) and, if ``settings.steps > 0``, the end of
    one projected gradient ascent per loss of ``settings.losses``
    (:func:`~rsutils.anisotropic.soundness.audit.attack.attack_in_region`; loss ``k`` of
    :data:`~rsutils.anisotropic.soundness.audit.settings.ATTACK_LOSSES` draws from the ``attack``
    stream's point ``k``, and is recorded under the search :data:`ATTACK_SEARCHES`
    names). With ``settings.region_scale = (inner, outer)`` the same search runs in the
    shell ``inner·R ≤ ‖δ ⊘ a‖₂ ≤ shrink·outer·R`` instead (a positive control: the
    boundary points at ``shrink·outer·R``, the attacks kept in the shell), and the
    record says so; with ``inner ≥ 1`` its contradictions lie outside the certificate.
    Each candidate is verified with ``settings.n_verify`` fresh draws
    (:func:`~rsutils.anisotropic.soundness.audit.verification.verify_point`) at level
    ``settings.alpha/(number of candidates)``. The same draws, with the frozen ``mu(x)``,
    ``sigma(x)`` (``classifier.frozen_at(x)``, the control ``g_x``), give ``pA_frozen``.
    ``classifier`` is the deployed classifier whose certificate at ``x`` claims class
    ``c`` on the region of ``region_radius`` ``R``; ``x`` is one input. ``R = 0`` claims
    nothing and gives a record without points. ``index`` names the certificate's noise
    streams.

    Guarantee: the record claims a contradiction while G = c on all of its
    candidates with probability at most ``settings.alpha``. The search and verification
    draws are the independent streams ``boundary``, ``attack`` and ``verify`` of
    ``(settings.seed, index)`` (:data:`~rsutils.core.streams.STREAMS`), so the record
    is a function of the arguments, and of the device and library versions.
    """
    _check_classifier(classifier)
    check_audit_settings(settings)
    check_non_negative("index", index)
    R = check_radius(R, positive=False)
    box = settings.input_range
    x = as_model_input(classifier.model, x, "x")
    if box is not None and bool((x < box[0]).any() or (x > box[1]).any()):
        raise ValueError(
            f"x lies outside input_range {box}; audit an input inside it, or search the "
            "whole region with settings.replace(input_range=None)"
        )
    check_class(c, classifier.num_classes)
    run = _Run(classifier, classifier.frozen_at(x), x, int(c), settings, index)
    common = {
        "index": int(index),
        "certified": int(c),
        "R": R,
        "region": "ball" if settings.ball else "ellipsoid",
        "scale": float(classifier.scale),
        "alpha": float(settings.alpha),
        "n_verify": int(settings.n_verify),
        "seed": int(settings.seed),
        "input_range": box,
        "region_scale": settings.region_scale,
    }
    if R == 0.0:
        return AuditRecord(point_alpha=float(settings.alpha), points=(), **common)
    searches, deltas = run.candidates(R)
    point_alpha = float(settings.alpha) / len(searches)
    points = run.verify(searches, deltas, R, point_alpha)
    return AuditRecord(point_alpha=point_alpha, points=points, **common)


def audit_log(
    classifier: DeployedClassifier,
    images: torch.Tensor,
    log: pd.DataFrame,
    settings: AuditSettings,
    *,
    freeze: bool = False,
    limit: int | None = None,
) -> list[AuditRecord]:
    """:func:`audit_certificate` for the correct certificates of a log with ``R > 0``.

    ``images[idx]`` is the input of each row and ``classifier`` the deployed classifier
    whose certificates the log holds, ``(predict, region_radius)``. ``freeze`` audits
    ``g_x`` (``classifier.frozen_at(x)``) instead of the deployed G. The first ``limit``
    such rows in ``idx`` order are audited (all of them with ``None``), each with its
    ``idx`` as ``index`` and with ``settings``.
    """
    _check_classifier(classifier)
    check_audit_settings(settings)
    if limit is not None:
        check_non_negative("limit", limit)
    rows = log[(log["correct"] == 1) & (log["region_radius"] > 0)].sort_values("idx")
    records = []
    for row in rows.head(limit).itertuples():
        x = images[int(row.idx)]
        audited = classifier.frozen_at(x) if freeze else classifier
        claim = (x, int(row.predict), float(row.region_radius), settings)
        records.append(audit_certificate(audited, *claim, index=int(row.idx)))
    return records


def _check_classifier(classifier: object) -> None:
    if not isinstance(classifier, DeployedClassifier):
        raise TypeError(
            "audit a DeployedClassifier(model, params, scale, num_classes) (or "
            f"DeployedClassifier.of(generated_smooth)), got {type(classifier).__name__}"
        )


@dataclass(frozen=True, eq=False)
class _Run:
    """What the audit of one certificate shares between its search and its verification:
    the deployed classifier and its control ``g_x`` (frozen at ``x``)."""

    classifier: DeployedClassifier
    control: DeployedClassifier
    x: torch.Tensor
    c: int
    settings: AuditSettings
    index: int

    @property
    def frozen(self) -> FrozenParams:
        """``mu(x)`` and ``sigma(x)``, the control's parameters."""
        return self.control.params  # type: ignore[return-value]

    def stream(self, name: str, point: int = 0) -> torch.Generator:
        """The audit's noise stream ``name`` of this certificate, for its point ``point``."""
        return stream_generator(self.settings.seed, self.index, name, point, device=self.x.device)

    def candidates(self, R: float) -> tuple[list[str], torch.Tensor]:
        """The search's name and the perturbation δ of every candidate, boundary points first."""
        s, x, box = self.settings, self.x, self.settings.input_range
        candidates, searches = [], []
        if s.boundary > 0:
            generator = self.stream("boundary")
            outer = R if s.region_scale is None else s.region_scale[1] * R
            deltas = boundary_points(
                self.frozen.sigma, outer, s.boundary, generator, shrink=s.shrink, ball=s.ball
            )
            if box is not None:
                deltas = torch.minimum(torch.maximum(deltas, box[0] - x), box[1] - x)
            candidates.append(deltas)
            searches += ["boundary"] * s.boundary
        for loss in s.losses if s.steps > 0 else ():
            region = Region(x.unsqueeze(0), self.c, self.frozen.sigma.unsqueeze(0), R)
            generator = self.stream("attack", ATTACK_LOSSES.index(loss))
            delta = attack_in_region(self.classifier, region, s, generator=generator, loss=loss)
            candidates.append(delta)
            searches.append(ATTACK_SEARCHES[loss])
        return searches, torch.cat(candidates)

    def verify(
        self, searches: list[str], deltas: torch.Tensor, R: float, point_alpha: float
    ) -> tuple[AuditPoint, ...]:
        """Every candidate verified at level ``point_alpha``, with its diagnostics."""
        box = self.settings.input_range
        zs = self.x + deltas if box is None else (self.x + deltas).clamp(*box)
        diagnostics = self._diagnostics(deltas, zs, R)
        return tuple(
            self._point(j, search, delta, z, point_alpha, diagnostics)
            for j, (search, delta, z) in enumerate(zip(searches, deltas, zs, strict=True))
        )

    def _diagnostics(
        self, deltas: torch.Tensor, zs: torch.Tensor, R: float
    ) -> dict[str, np.ndarray]:
        """Per candidate: how far mu and sigma move, ‖δ‖₂ and the fraction of the region."""
        control = self.frozen
        with torch.inference_mode():
            mu_z, sigma_z = noise_params(self.classifier.params, zs)
            axes = region_axes(control.sigma.unsqueeze(0), self.settings.ball)
            sigma_change = (sigma_z - control.sigma).flatten(1).abs().amax(dim=1)
            return {
                "mu_shift": (mu_z - control.mu).flatten(1).norm(dim=1).cpu().numpy(),
                "sigma_change": sigma_change.cpu().numpy(),
                "delta_norm": deltas.flatten(1).norm(dim=1).cpu().numpy(),
                "fraction": (deltas / axes).flatten(1).norm(dim=1).cpu().numpy() / R,
            }

    def _point(
        self,
        j: int,
        search: str,
        delta: torch.Tensor,
        z: torch.Tensor,
        point_alpha: float,
        diagnostics: dict[str, np.ndarray],
    ) -> AuditPoint:
        """Candidate ``j`` verified under G, and counted under g_x on the same draws."""
        n, batch_size = self.settings.n_verify, self.settings.batch_size
        verdict = verify_point(
            self.classifier, z, self.c, n=n, alpha=point_alpha,
            generator=self.stream("verify", j), batch_size=batch_size,
        )  # fmt: skip
        frozen_counts = self.control.counts(
            z, n, generator=self.stream("verify", j), batch_size=batch_size
        )
        delta_norm = diagnostics["delta_norm"][j]
        mu_shift = diagnostics["mu_shift"][j]
        return AuditPoint(
            search=search,
            delta=delta.detach().cpu().numpy(),
            delta_norm=float(delta_norm),
            region_fraction=float(diagnostics["fraction"][j]),
            verdict=verdict,
            pA_deployed=verdict.pA_hat,
            pA_frozen=float(frozen_counts[self.c]) / self.settings.n_verify,
            mu_ratio=float(mu_shift / delta_norm) if delta_norm > 0 else float("nan"),
            sigma_change=float(diagnostics["sigma_change"][j]),
        )
