"""The interface every smoothed classifier of rsutils offers to the code that runs it.

:class:`~rsutils.core.smooth.Smooth`, :class:`~rsutils.anisotropic.generated.GeneratedSmooth`
and :class:`~rsutils.ddrs.data_dependent.DataDependentSmooth` all satisfy
:class:`SmoothedClassifier`: CERTIFY and PREDICT with the same arguments, and a
description of what a log records about the classifier (its noise, the scale a row
logs, the threat norm, the base model's inference mode, whether its certificates are
anisotropic regions) and the settings that identify it. The dataset runs
(:mod:`rsutils.logs`) and the command line read these instead of asking which class
they were given, so a new kind of smoothed classifier needs no change there.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import torch

__all__ = [
    "ALGORITHMS",
    "CertifiedAnswer",
    "SmoothedClassifier",
    "check_algorithm",
    "inference_setting",
    "noise_identity",
]

#: The algorithms whose logs record a classifier's identity (:meth:`SmoothedClassifier.identity`).
ALGORITHMS = ("certify", "predict")


class CertifiedAnswer(Protocol):
    """What every CERTIFY answers: a class (or ``ABSTAIN``) and a radius within which the
    classifier that answered is certified to keep it (0.0 when abstaining)."""

    @property
    def prediction(self) -> int: ...

    @property
    def radius(self) -> float: ...


@runtime_checkable
class SmoothedClassifier(Protocol):
    """A smoothed classifier, as the dataset runs and the command line use it.

    ``certify`` and ``predict`` take Cohen et al.'s arguments (the noise of input
    ``index`` depends on ``(seed, index)`` only) and state their guarantees where they
    are implemented. The properties describe what a log records about the classifier;
    :meth:`identity` gives the settings that a log's sidecar records and checks on
    resume. An ``isinstance`` check against this protocol checks that the members
    exist, not their signatures.
    """

    num_classes: int

    @property
    def norm(self) -> str:
        """The threat norm of the certified radius (``"l2"``, ``"l1"``, ...)."""
        ...

    @property
    def inference(self) -> str:
        """The base model's numerical mode (:data:`~rsutils.core.inference.INFERENCE_MODES`)."""
        ...

    @property
    def device(self) -> torch.device:
        """Where the base model runs (and the noise is drawn)."""
        ...

    @property
    def noise_description(self) -> str:
        """The noise as a log records it, enough to tell two noises apart."""
        ...

    @property
    def logged_scale(self) -> float | None:
        """The noise scale every row of a log records, or ``None`` when each input has
        its own (data-dependent noise, whose answers carry it)."""
        ...

    @property
    def anisotropic(self) -> bool:
        """Whether certificates are regions ``‖δ ⊘ sigma‖_p < region_radius``, so that a
        log of them also has ``region_radius`` and ``alm``."""
        ...

    def identity(self, algorithm: str = "certify") -> dict[str, Any]:
        """What determines this classifier's answers in a log of ``algorithm``
        (one of :data:`ALGORITHMS`): the first settings of its sidecar."""
        ...

    def certify(
        self,
        x: torch.Tensor,
        n0: int,
        n: int,
        alpha: float,
        batch_size: int = 1000,
        seed: int | None = None,
        index: int = 0,
    ) -> CertifiedAnswer:
        """CERTIFY at ``x``: a class and a radius, or ``ABSTAIN``."""
        ...

    def predict(
        self,
        x: torch.Tensor,
        n: int,
        alpha: float,
        batch_size: int = 1000,
        seed: int | None = None,
        index: int = 0,
    ) -> int:
        """PREDICT at ``x``: a class, or ``ABSTAIN``."""
        ...


def check_algorithm(algorithm: str) -> str:
    """``algorithm`` if it is one of :data:`ALGORITHMS`, else a ``ValueError``."""
    if algorithm not in ALGORITHMS:
        raise ValueError(f"algorithm must be 'certify' or 'predict', got {algorithm!r}")
    return algorithm


def inference_setting(mode: str) -> dict[str, str]:
    """The inference mode as a log's settings record it: nothing for ``"fp32"`` (so
    fp32 logs keep the settings they always had), else ``{"inference": mode}``."""
    return {} if mode == "fp32" else {"inference": mode}


def noise_identity(noise: str, norm: str, inference: str, algorithm: str) -> dict[str, Any]:
    """The identity of a classifier with one noise described as ``noise``.

    ``{"noise": noise, "norm": norm}`` and the inference mode (:func:`inference_setting`);
    a PREDICT log records no norm, since PREDICT certifies no radius.
    """
    check_algorithm(algorithm)
    recorded: dict[str, Any] = {"noise": noise}
    if algorithm == "certify":
        recorded["norm"] = norm
    return {**recorded, **inference_setting(inference)}
