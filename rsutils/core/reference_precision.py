"""Certificates of the float32 model at bfloat16 speed.

A base model run in bfloat16 (:mod:`rsutils.core.inference`) is a different classifier
``f_fast`` from the same model in float32, ``f_ref``; CERTIFY in bfloat16 certifies the
smoothed classifier of ``f_fast``. :class:`ReferenceSmooth` certifies the smoothed
classifier of ``f_ref`` instead, while drawing most of its samples in bfloat16.

For the selected class A, ``p_A(ref) = p_A(fast) - P(f_fast = A, f_ref ≠ A)
+ P(f_fast ≠ A, f_ref = A) >= p_A(fast) - D`` with ``D = P(f_fast = A, f_ref ≠ A)``. So
with CERTIFY's ``n`` bfloat16 draws bounding ``p_A(fast)`` from below at level
``alpha_fast`` and ``m`` paired draws (both models on the same noise) bounding ``D``
from above at level ``alpha_d``, both one-sided Clopper–Pearson,
``p̲_A(ref) = p̲_A(fast) - D̄`` holds with probability at least
``1 - alpha_fast - alpha_d`` (a union bound: the two bounds need not be independent).
``alpha_fast = fast_share · alpha`` and ``alpha_d = alpha - alpha_fast``.

The paired draws come from their own stream (``"reference"`` of
:data:`~rsutils.core.streams.STREAMS`), not from a prefix of CERTIFY's estimation
draws. Either is valid under the union bound, since each bound holds on its own
sample whatever the other does; a separate stream keeps the bfloat16 counts exactly
those of CERTIFY in bfloat16 (same seed, same draws), so that a fast-mode log and this
one share their selection and counts, at the price of ``m`` extra bfloat16 forward
passes (a fraction of the ``m`` float32 ones). When ``p̲_A(fast) < 1/2`` the answer is
ABSTAIN whatever ``D`` is, and the paired draws are skipped (``m = 0`` in the
certificate).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

from rsutils.core.confidence import check_alpha, clopper_pearson_lower, clopper_pearson_upper
from rsutils.core.devices import model_dtype
from rsutils.core.inference import InferenceModel, check_inference_mode
from rsutils.core.noise import NoiseFamily
from rsutils.core.settings import check_count
from rsutils.core.smooth import ABSTAIN, Certificate, Smooth
from rsutils.core.streams import draw_seed
from rsutils.core.validation import DEFAULT_INPUT_RANGE

__all__ = [
    "FAST_MODES",
    "ReferenceBound",
    "ReferenceCertificate",
    "ReferenceSmooth",
    "reference_bound",
    "split_alpha",
]

#: The modes whose counts can certify the float32 model (:mod:`rsutils.core.inference`).
FAST_MODES = ("bf16", "bf16_channels_last")


def split_alpha(alpha: float, fast_share: float) -> tuple[float, float]:
    """``(alpha_fast, alpha_d)``: ``fast_share`` of ``alpha`` for the bound on the fast
    classifier's ``p_A``, the rest for the bound on the disagreement."""
    check_alpha(alpha)
    if isinstance(fast_share, bool) or not 0 < fast_share < 1:
        raise ValueError(
            f"fast_share must lie strictly between 0 and 1 (the share of alpha spent on the "
            f"fast model's counts; 0.5 splits it evenly), got {fast_share!r}"
        )
    alpha_fast = alpha * fast_share
    return alpha_fast, alpha - alpha_fast


@dataclass(frozen=True)
class ReferenceBound:
    """The bounds of :func:`reference_bound`: ``fast_pA_lower`` on the fast classifier's
    ``p_A``, ``d_upper`` on ``P(f_fast = A, f_ref ≠ A)`` and their difference
    ``pA_lower`` (at least 0) on the reference classifier's ``p_A``."""

    fast_pA_lower: float
    d_upper: float
    pA_lower: float


def reference_bound(
    count: int, n: int, disagreements: int, m: int, alpha: float, fast_share: float = 0.5
) -> ReferenceBound:
    """A lower bound on the reference classifier's ``p_A`` from the fast one's counts.

    ``count`` of ``n`` fast draws fell in A; on ``m`` paired draws, ``disagreements``
    had the fast classifier in A and the reference one not. With ``(alpha_fast,
    alpha_d) = split_alpha(alpha, fast_share)``: ``fast_pA_lower`` is the one-sided
    Clopper–Pearson lower bound of ``count/n`` at ``alpha_fast``, ``d_upper`` the upper
    bound of ``disagreements/m`` at ``alpha_d`` (1 when ``m = 0``), and
    ``pA_lower = max(0, fast_pA_lower - d_upper)``.

    Guarantee: if each sample is i.i.d. given A, then with probability at least
    ``1 - alpha`` the reference classifier's ``p_A`` is at least ``pA_lower``.
    """
    alpha_fast, alpha_d = split_alpha(alpha, fast_share)
    if isinstance(m, bool) or not isinstance(m, int | np.integer) or m < 0:
        raise ValueError(f"m must be a non-negative integer (the paired draws), got {m!r}")
    if not 0 <= disagreements <= m:
        raise ValueError(f"need 0 <= disagreements <= m, got {disagreements} of {m}")
    fast = float(clopper_pearson_lower(count, n, alpha_fast))
    d_upper = float(clopper_pearson_upper(disagreements, m, alpha_d)) if m else 1.0
    return ReferenceBound(fast, d_upper, max(0.0, fast - d_upper))


@dataclass(frozen=True, kw_only=True)
class ReferenceCertificate(Certificate):
    """The outcome of :meth:`ReferenceSmooth.certify` for one input: a
    :class:`~rsutils.core.smooth.Certificate` (``prediction``, ``radius`` and
    ``pA_lower`` are the float32 classifier's; ``selected`` and ``count`` the fast
    CERTIFY's; ``alpha`` the whole level), with the paired draws: ``m`` of them
    (0 when skipped), ``disagreements`` (fast in ``selected``, reference not),
    ``differ`` (the two classes differ), ``d_upper`` and ``fast_pA_lower``
    (:class:`ReferenceBound`) and ``fast_share`` of ``alpha``.
    """

    m: int
    disagreements: int
    differ: int
    d_upper: float
    fast_pA_lower: float
    fast_share: float


class ReferenceSmooth:
    """The float32 model's smoothed classifier, certified from bfloat16 counts.

    ``model`` is the base model as trained, in float32 (not an
    :class:`~rsutils.core.inference.InferenceModel`); CERTIFY's ``n0 + n`` draws run it
    in ``fast`` (one of :data:`FAST_MODES`) and ``draws`` paired draws run it in both
    ``fast`` and float32 (see the module's text). ``fast_share`` of ``alpha`` goes to the
    fast counts, the rest to the disagreement. The other arguments are
    :class:`~rsutils.core.smooth.Smooth`'s.
    """

    def __init__(
        self,
        model: nn.Module,
        num_classes: int,
        noise: NoiseFamily,
        *,
        draws: int,
        fast: str = "bf16_channels_last",
        fast_share: float = 0.5,
        norm: str | None = None,
        input_range: tuple[float, float] | None = DEFAULT_INPUT_RANGE,
    ) -> None:
        _check_reference_model(model)
        if check_inference_mode(fast) not in FAST_MODES:
            raise ValueError(
                f"fast must be a bfloat16 mode ({', '.join(FAST_MODES)}), got {fast!r}; a "
                "float32 mode certifies the float32 model directly: use Smooth"
            )
        check_count("draws", draws)
        split_alpha(0.5, fast_share)  # fail now, not after sampling
        self.draws, self.fast_share = int(draws), float(fast_share)
        self.fast, self.reference = (
            Smooth(model, num_classes, noise, norm=norm, input_range=input_range, inference=mode)
            for mode in (fast, "fp32")
        )
        self.num_classes, self.norm, self.noise = num_classes, self.fast.norm, noise

    @property
    def inference(self) -> str:
        """The mode CERTIFY's draws run in (the fast one)."""
        return self.fast.inference

    @property
    def device(self) -> torch.device:
        return self.fast.device

    @property
    def noise_description(self) -> str:
        return self.fast.noise_description

    @property
    def logged_scale(self) -> float:
        return self.fast.logged_scale

    @property
    def anisotropic(self) -> bool:
        return self.fast.anisotropic

    def identity(self, algorithm: str = "certify") -> dict[str, Any]:
        """The fast classifier's identity, then what makes the answers the float32 one's:
        ``certifies`` (``"fp32"``), ``reference_draws`` and ``fast_share``."""
        extra = {"certifies": "fp32", "reference_draws": self.draws, "fast_share": self.fast_share}
        return {**self.fast.identity(algorithm), **extra}

    def certify(
        self,
        x: torch.Tensor,
        n0: int,
        n: int,
        alpha: float,
        batch_size: int = 1000,
        seed: int | None = None,
        index: int = 0,
    ) -> ReferenceCertificate:
        """CERTIFY of the float32 model's smoothed classifier from bfloat16 counts.

        Runs CERTIFY in the fast mode at ``alpha_fast`` (the same draws as
        ``Smooth(model, ..., inference=fast).certify`` with this seed and index), then,
        unless that bound is below 1/2, the paired draws; the answer is the class with
        the registry's radius at :func:`reference_bound`'s ``pA_lower``, or ABSTAIN
        below 1/2.

        Guarantee: if the answer is a class, then with probability at least
        ``1 - alpha`` over the noise, the smoothed classifier of the model run in float32
        predicts it everywhere within ``radius`` of ``x`` (Cohen et al., Proposition 2,
        at a lower bound on the float32 ``p_A`` that holds with that probability).
        """
        check_alpha(alpha)
        seed = draw_seed() if seed is None else seed
        alpha_fast, _ = split_alpha(alpha, self.fast_share)
        fast = self.fast.certify(x, n0, n, alpha_fast, batch_size, seed, index)
        if fast.abstained:
            return self._certificate(fast, alpha, 0, 0, 0, x)
        fast_labels, reference_labels = self.paired_labels(
            x, self.draws, batch_size, seed=seed, index=index
        )
        in_a = fast_labels == fast.selected
        disagreements = int(np.count_nonzero(in_a & (reference_labels != fast.selected)))
        differ = int(np.count_nonzero(fast_labels != reference_labels))
        return self._certificate(fast, alpha, self.draws, disagreements, differ, x)

    def paired_labels(
        self, x: torch.Tensor, num: int, batch_size: int = 1000, *, seed: int, index: int = 0
    ) -> tuple[np.ndarray, np.ndarray]:
        """The class of each of ``num`` draws of the ``"reference"`` stream of
        ``(seed, index)``, by the fast model and by the float32 one, on the same noise."""
        check_count("num", num)
        return tuple(
            _stream_labels(smooth, x, num, batch_size, seed, index)
            for smooth in (self.fast, self.reference)
        )

    def predict(
        self,
        x: torch.Tensor,
        n: int,
        alpha: float,
        batch_size: int = 1000,
        seed: int | None = None,
        index: int = 0,
    ) -> int:
        """PREDICT of the float32 model's smoothed classifier, with its own draws in
        float32 (:meth:`~rsutils.core.smooth.Smooth.predict`; no fast path)."""
        return self.reference.predict(x, n, alpha, batch_size, seed, index)

    def _certificate(
        self,
        fast: Certificate,
        alpha: float,
        m: int,
        disagreements: int,
        differ: int,
        x: torch.Tensor,
    ) -> ReferenceCertificate:
        bound = reference_bound(fast.count, fast.n, disagreements, m, alpha, self.fast_share)
        common = {
            "pA_lower": bound.pA_lower,
            "selected": fast.selected,
            "count": fast.count,
            "n": fast.n,
            "n0": fast.n0,
            "alpha": alpha,
            "norm": self.norm,
            "seed": fast.seed,
            "index": fast.index,
            "m": m,
            "disagreements": disagreements,
            "differ": differ,
            "d_upper": bound.d_upper,
            "fast_pA_lower": bound.fast_pA_lower,
            "fast_share": self.fast_share,
        }
        if bound.pA_lower < 0.5:
            return ReferenceCertificate(prediction=ABSTAIN, radius=0.0, **common)
        noise, norm, dim, p = self.noise, self.norm, x.numel(), bound.pA_lower
        return ReferenceCertificate(
            prediction=fast.selected,
            radius=float(noise.radius(p, norm=norm, dim=dim)),
            region_radius=float(noise.region_radius(p, norm=norm, dim=dim)),
            alm=float(noise.alm(p, norm=norm, dim=dim)),
            **common,
        )


def _stream_labels(
    smooth: Smooth, x: torch.Tensor, num: int, batch_size: int, seed: int, index: int
) -> np.ndarray:
    """The class ``smooth``'s base model gives each of ``num`` draws of the reference
    stream."""
    counter = smooth.prefix_counter(
        x, num, batch_size, seed=seed, index=index, phase="reference", keep_labels=True
    )
    counter.advance(num)
    return counter.labels()


def _check_reference_model(model: nn.Module) -> None:
    """Refuse a model that is not the float32 model as trained."""
    if isinstance(model, InferenceModel):
        raise ValueError(
            f"model is already wrapped to run in {model.mode!r}; pass the model as trained "
            "(float32): ReferenceSmooth runs it in the fast mode and in float32 itself"
        )
    if isinstance(model, nn.Module) and model_dtype(model) != torch.float32:
        raise ValueError(
            f"the reference model must be float32, got weights in {model_dtype(model)}; "
            "pass model.float() (the certificates are about the float32 model)"
        )
