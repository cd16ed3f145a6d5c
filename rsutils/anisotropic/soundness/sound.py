"""A radius that holds for the deployed classifier, not only for the noise frozen at ``x``.

UCAN's Theorem 7 certifies ``g_x(z) = h_{σ(x)}(z + mu(x))``, the classifier whose noise is
computed once at the certified input ``x`` (``h_σ`` is the smoothed classifier with noise
``σ ⊙ λ·eps``, no offset). The deployed classifier recomputes the noise at the input it
receives: ``G(z) = h_{σ(z)}(z + mu(z))``. Two cases have a sound answer here.

- **Noise that does not depend on the input** (isotropic, pattern-wise, dataset-wise:
  ``depends_on_input`` false). Then ``G = g_x`` for every ``x`` and the certificate's
  region, and its ℓ2 radius ``min(σ)·R`` (the log's ``radius``), hold for ``G``: ``L = 0``.
- **Constant σ and an L-Lipschitz offset** (:class:`ConstantScale`: the
  certification-wise ``mu(x)`` with ``σ ≡ c``). Then ``G(z) = h(z + mu(z))`` with ``h``
  the isotropic smoothed classifier of scale ``c·λ``. CERTIFY at ``x`` bounds ``p_A`` of
  ``h`` at ``w = x + mu(x)``, so (with probability ``1 − α``) ``h`` is constant on the
  ball ``B(w, c·λ·Φ⁻¹(p̲_A))``, whose radius is the log's ``radius`` (``c·R``). Since
  ``‖(x + δ + mu(x + δ)) − w‖ ≤ ‖δ‖ + ‖mu(x + δ) − mu(x)‖ ≤ (1 + L)‖δ‖``, ``G`` is
  constant on ``B(x, c·R/(1 + L))``: the log's ``radius`` divided by ``1 + L``, and its
  ``region_radius`` ``R`` (in units of ``σ``) likewise.

More generally, for σ that does not depend on the input but is anisotropic (spread
``κ = max σ / min σ``) and an L-Lipschitz offset, the ℓ2 radius is ``min(σ)·R/(1 + L)``
and the region ``‖δ ⊘ σ‖ < R/(1 + κL)`` (:func:`sound_log`'s ``sigma_spread``).

Where σ depends on the input (UCAN's certification-wise σ(x + mu(x))), neither argument
applies, and the log's radii certify ``g_x`` only. Súkeník et al. (ICML 2022, "Intriguing
properties of input-dependent randomized smoothing") show that a certificate for such a
classifier needs σ to vary slowly, with a bound on its semi-elasticity (the Lipschitz
constant of ``log σ``) that the curse of dimensionality forces down as the input grows,
and give the corrected radius. Adaptive randomized smoothing (Lyu et al., NeurIPS 2024)
is a sound alternative: it computes the adaptive parameters from a *noisy* query of the
input and accounts for that query and the final one together, composing their
f-differential-privacy (Gaussian DP) guarantees, so that the certificate covers the
whole adaptive pipeline. :func:`deployed_lipschitz` returns ``None`` for such generators.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import torch

from rsutils.anisotropic.generators import (
    CertificationWiseGenerator,
    NoiseGenerator,
    WithoutOffset,
)
from rsutils.anisotropic.soundness.lipschitz import mu_lipschitz_bound

__all__ = ["ConstantScale", "deployed_lipschitz", "deployed_radius", "sound_log"]


class ConstantScale(NoiseGenerator):
    """``generator``'s offset ``mu(x)`` with the constant scale ``sigma ≡ c``.

    The deployed classifier of this noise is ``G(z) = h(z + mu(z))`` with ``h`` the
    isotropic smoothed classifier of scale ``c·λ``, so its certificates carry over to it
    with the radius ``R/(1 + L)`` (module docstring; :func:`deployed_lipschitz`). ``c``
    (a finite number > 0) is ``value``, and a buffer ``c`` too, so that it enters the
    state dict and the generator's fingerprint. ``mu`` still depends on the input
    (``depends_on_input``).
    """

    #: Tells :func:`~rsutils.anisotropic.soundness.lipschitz.mu_lipschitz_bound` that ``mu`` is the
    #: inner generator's.
    keeps_inner_mu = True

    def __init__(self, generator: NoiseGenerator, c: float) -> None:
        super().__init__()
        if not isinstance(generator, NoiseGenerator):
            raise TypeError(f"generator must be a NoiseGenerator, got {generator!r}")
        c = float(c)
        if not (math.isfinite(c) and c > 0):
            raise ValueError(f"c must be a finite number > 0 (the constant sigma), got {c!r}")
        self.inner, self.value = generator, c
        self.kind = f"{generator.kind}-constant-sigma"
        self.depends_on_input = generator.depends_on_input
        self.register_buffer("c", torch.tensor(c))
        self.train(generator.training)

    def settings(self) -> dict[str, object]:
        raise TypeError("a ConstantScale is not saved; save the generator it wraps")

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(mu(x), c)`` for the batch ``x``, each of ``x``'s shape."""
        mu, _ = self.inner(x)
        return mu, torch.full_like(mu, self.value)


def deployed_lipschitz(generator: NoiseGenerator, input_size: tuple[int, int]) -> float | None:
    """The ``L`` for which ``R/(1 + L)`` holds for the deployed classifier, or ``None``.

    0 when neither ``mu`` nor ``sigma`` depends on the input (``depends_on_input``
    false) or when ``mu ≡ 0`` and ``sigma`` is constant; the upper bound
    :func:`~rsutils.anisotropic.soundness.lipschitz.mu_lipschitz_bound` for a
    :class:`ConstantScale`; ``None`` when ``sigma`` depends on the input
    (certification-wise, with or without ``mu``), where no radius of this kind is known.
    """
    if isinstance(generator, ConstantScale):
        return mu_lipschitz_bound(generator, input_size).value
    if not generator.depends_on_input:
        return 0.0
    if isinstance(generator, CertificationWiseGenerator | WithoutOffset):
        return None
    raise TypeError(
        f"no deployed radius is known for {type(generator).__name__}; wrap the generator "
        "in ConstantScale(generator, c) to make sigma constant"
    )


def deployed_radius(radius: np.ndarray | float, lipschitz: float) -> np.ndarray:
    """``radius / (1 + lipschitz)``: the ℓ2 radius sound for the deployed classifier.

    ``radius`` is the log's ``radius`` (``min(σ)·R``, in input units) of a certificate
    of noise with input-independent σ; ``lipschitz`` an upper bound on the Lipschitz
    constant of ``mu`` (0 if ``mu`` does not depend on the input).
    """
    lipschitz = _check_lipschitz(lipschitz)
    return np.asarray(radius, dtype=np.float64) / (1.0 + lipschitz)


def sound_log(log: pd.DataFrame, lipschitz: float, *, sigma_spread: float = 1.0) -> pd.DataFrame:
    """A copy of a certification log whose radii hold for the deployed classifier.

    ``radius`` becomes ``radius / (1 + L)``; ``region_radius`` and ``alm`` (when
    present) become ``/(1 + κL)`` with ``κ = sigma_spread = max σ / min σ`` (1 for
    :class:`ConstantScale`). The log must come from noise whose σ does not depend on
    the input and whose ``mu`` is ``lipschitz``-Lipschitz (:func:`deployed_lipschitz`);
    with ``L = 0`` it is returned unchanged. Abstentions keep their radius 0, so
    :func:`~rsutils.analysis.metrics.certified_accuracy` and the ACR read the copy as they
    read any log.
    """
    lipschitz = _check_lipschitz(lipschitz)
    if not (math.isfinite(sigma_spread) and sigma_spread >= 1.0):
        raise ValueError(f"sigma_spread is max σ / min σ ≥ 1, got {sigma_spread!r}")
    if "radius" not in log.columns:
        raise ValueError("the log has no 'radius' column; pass a certification log")
    out = log.copy()
    out["radius"] = deployed_radius(log["radius"].to_numpy(), lipschitz)
    for column in ("region_radius", "alm"):
        if column in out.columns:
            out[column] = log[column].to_numpy(np.float64) / (1.0 + sigma_spread * lipschitz)
    return out


def _check_lipschitz(lipschitz: float | None) -> float:
    if lipschitz is None:
        raise ValueError(
            "no sound radius is known for this noise (sigma depends on the input); "
            "certify with ConstantScale(generator, c) instead"
        )
    value = float(lipschitz)
    if not (math.isfinite(value) and value >= 0):
        raise ValueError(f"the Lipschitz constant must be a finite number ≥ 0, got {lipschitz!r}")
    return value
