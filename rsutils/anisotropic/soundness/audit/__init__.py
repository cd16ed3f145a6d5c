"""Auditing certification-wise anisotropic certificates against the deployed classifier.

UCAN's certification-wise noise computes, for each input, an offset ``mu(x)`` and a
per-dimension scale ``sigma(x) > 0`` with a generator network, and smooths with
``x + mu(x) + sigma(x) ⊙ λε``, ``ε ~ N(0, I)``. CERTIFY at ``x`` returns a class ``c``
and ``R = λΦ⁻¹(pA_lower)``, and the claimed region is
``E_x = {x + δ : ‖δ ⊘ sigma(x)‖₂ < R}`` (UCAN Theorem 7).

Theorem 7 is correct for the classifier ``g_x`` whose ``mu`` and ``sigma`` are *frozen*
at their values at ``x`` (:func:`~rsutils.anisotropic.soundness.audit.params.frozen`). A deployed
system only sees ``z = x + δ`` and computes ``mu(z)``, ``sigma(z)``: it is

    ``G(z) = argmax_k P(f(z + mu(z) + sigma(z) ⊙ λε) = k)``,

and nothing makes ``G(x + δ) = c`` inside ``E_x``.
:func:`~rsutils.anisotropic.soundness.audit.runs.audit_certificate` looks for points of ``E_x``
where ``G`` is, with confidence ``1 − alpha``, another class: random points near the
region's boundary (:func:`~rsutils.anisotropic.soundness.audit.boundary.boundary_points`) and a
projected gradient ascent through both the base model and the generator
(:func:`~rsutils.anisotropic.soundness.audit.attack.attack_in_region`, on the noisy cross-entropy
or the noisy logit margin). Every candidate is checked
by a fresh Monte Carlo sample and a Clopper–Pearson bound
(:func:`~rsutils.anisotropic.soundness.audit.verification.verify_point`); a search only proposes
points, it never decides. How the region is searched and each candidate verified is one
:class:`~rsutils.anisotropic.soundness.audit.settings.AuditSettings`. Its ``region_scale`` turns
the audit into a positive control: the same search in a shell outside the certificate
(e.g. between 1.5R and 2R), where a sound certificate allows contradictions, measures
whether the search finds them when they exist.

Everything here works below :class:`~rsutils.core.smooth.Smooth`: there is no input
range check unless ``input_range`` is set (inputs need not be pixels; the tests use
2-D inputs). With ``input_range=None`` the audit searches the whole region the
certificate claims, which is what Theorem 7 states; set ``input_range=(0, 1)`` for
images to search only inputs that a deployed ``Smooth`` (which refuses inputs
outside its range) would classify.

The classifier audited is one object,
:class:`~rsutils.anisotropic.soundness.audit.classifier.DeployedClassifier`: the base
``model``, the noise-parameter function ``params(z) -> (mu, sigma)``, the noise's λ and
the number of classes (``DeployedClassifier.of(smooth)`` for a
:class:`~rsutils.anisotropic.generated.GeneratedSmooth`). ``params`` maps a batch ``z`` of
shape ``(B, *shape)`` to two tensors of that shape and must be differentiable in ``z``
for the attack (an ``nn.Module`` or any callable). The base ``model`` maps
``(B, *shape)`` to logits ``(B, K)`` and is in eval mode. Everything runs on the model's
device and in its floating-point type.

The package has one module per part of the audit:
:mod:`~rsutils.anisotropic.soundness.audit.classifier` (the deployed classifier and its
frozen control ``g_x``), :mod:`~rsutils.anisotropic.soundness.audit.params`
(the noise parameters, checked, and frozen),
:mod:`~rsutils.anisotropic.soundness.audit.boundary`
(the region and random points near its boundary), :mod:`~rsutils.anisotropic.soundness.audit.attack`
(the gradient ascent), :mod:`~rsutils.anisotropic.soundness.audit.verification` (the test at one
point), :mod:`~rsutils.anisotropic.soundness.audit.records` (records, their summary and
serialisation), :mod:`~rsutils.anisotropic.soundness.audit.settings` and
:mod:`~rsutils.anisotropic.soundness.audit.runs`, with the shared input checks in
:mod:`~rsutils.anisotropic.soundness.audit.checks`. Every public name is importable from here.
"""

from rsutils.anisotropic.soundness.audit.attack import Region, attack_in_region, attack_objective
from rsutils.anisotropic.soundness.audit.boundary import boundary_points, region_axes
from rsutils.anisotropic.soundness.audit.classifier import DeployedClassifier
from rsutils.anisotropic.soundness.audit.params import (
    FrozenParams,
    NoiseParams,
    frozen,
    noise_params,
)
from rsutils.anisotropic.soundness.audit.records import (
    POINT_COLUMNS,
    AuditPoint,
    AuditRecord,
    AuditSummary,
    record_from_dict,
    record_to_dict,
    summarize_audits,
)
from rsutils.anisotropic.soundness.audit.runs import ATTACK_SEARCHES, audit_certificate, audit_log
from rsutils.anisotropic.soundness.audit.settings import (
    ATTACK_LOSSES,
    AuditSettings,
    check_audit_settings,
)
from rsutils.anisotropic.soundness.audit.verification import (
    PointVerdict,
    Verdict,
    classify_counts,
    verify_point,
)

__all__ = [
    "ATTACK_LOSSES",
    "ATTACK_SEARCHES",
    "POINT_COLUMNS",
    "AuditPoint",
    "AuditRecord",
    "AuditSettings",
    "AuditSummary",
    "DeployedClassifier",
    "FrozenParams",
    "NoiseParams",
    "PointVerdict",
    "Region",
    "Verdict",
    "attack_in_region",
    "attack_objective",
    "audit_certificate",
    "audit_log",
    "boundary_points",
    "check_audit_settings",
    "classify_counts",
    "frozen",
    "noise_params",
    "record_from_dict",
    "record_to_dict",
    "region_axes",
    "summarize_audits",
    "verify_point",
]
