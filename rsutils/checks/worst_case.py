"""Worst-case classifiers (Neyman–Pearson): a numerical check of any certificate.

A certificate says: whatever the base classifier ``f``, if ``P(f(x + ε) = A) ≥ pA``
then ``P(f(x + δ + ε) = A) > 1/2`` for every ``δ`` in the region. For one ``δ`` the
classifier that hurts most puts class ``A`` where the likelihood ratio
``r(z) = p(z − δ)/p(z)`` is smallest (Neyman–Pearson lemma), so the exact worst case is

    ``min_f P(f(x + δ + ε) = A) = E_p[r(z)·1{z ∈ A*}]``, ``A*`` = the ``pA``-mass of
    lowest ``r`` (with a fraction of the level set at the threshold).

:func:`worst_case_pA` estimates it by Monte Carlo from draws of the noise, using only
its log-density, so it checks any row of the radius registry in low dimension without
trusting the row's derivation: a valid certificate keeps the value above 1/2 inside
its radius; a tight one reaches 1/2 at the boundary.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from rsutils.core.noise import NoiseFamily
from rsutils.core.streams import derived_seed, stream_generator
from rsutils.geometry.norms import norm_order

__all__ = [
    "WorstCase",
    "boundary_directions",
    "verdict",
    "worst_case_on_boundary",
    "worst_case_pA",
]


@dataclass(frozen=True)
class WorstCase:
    """The worst-case probability of the certified class after a shift, with its error."""

    pA_shifted: float
    stderr: float


def worst_case_pA(
    noise: NoiseFamily,
    delta: np.ndarray,
    pA: float,
    *,
    draws: int = 200_000,
    seed: int = 0,
    case: int = 0,
    part: int = 1,
) -> WorstCase:
    """Smallest ``P(f(x + δ + ε) = A)`` over all ``f`` with ``P(f(x + ε) = A) = pA``.

    ``delta`` is a flat perturbation of dimension ``d``; the noise is drawn in ``R^d``
    from the ``worst-case`` stream of ``(seed, case, part)``
    (:data:`~rsutils.core.streams.STREAMS`). The estimate sorts the likelihood ratios of
    ``draws`` noise draws and integrates the smallest ``pA``-fraction (the last one
    partially); ``stderr`` is the Monte Carlo standard error of that integral.
    """
    if not 0.0 < pA < 1.0:
        raise ValueError(f"pA must lie in (0, 1), got {pA}")
    delta = np.asarray(delta, dtype=float).reshape(-1)
    generator = stream_generator(seed, case, "worst-case", part)
    z = noise.sample((draws, delta.size), generator, dtype=torch.float64).numpy()
    with np.errstate(invalid="ignore", over="ignore"):
        log_ratio = noise.log_density(z - delta) - noise.log_density(z)
    ratio = np.exp(np.sort(log_ratio))
    mass = pA * draws  # draws that class A holds
    whole = int(np.floor(mass))
    weights = np.zeros(draws)
    weights[:whole] = 1.0
    if whole < draws:
        weights[whole] = mass - whole
    contribution = ratio * weights
    estimate = float(contribution.sum() / draws)
    stderr = float(contribution.std() / np.sqrt(draws))
    return WorstCase(estimate, stderr)


def boundary_directions(
    norm: str, dim: int, extra: int = 2, seed: int = 0, case: int = 0
) -> np.ndarray:
    """Unit-``norm`` directions on which to test a certificate (rows, shape ``(k, dim)``).

    An axis (a vertex of the ℓ1 ball), the diagonal (a vertex of the ℓ∞ ball) and
    ``extra`` random directions (part 0 of the ``worst-case`` stream of ``(seed,
    case)``); certificates of product and ℓ∞-radial noises are tightest along the first
    two.
    """
    rng = np.random.default_rng(derived_seed(seed, case, "worst-case", 0))
    rows = [np.eye(dim)[0], np.ones(dim), *rng.standard_normal((extra, dim))]
    p = norm_order(norm)
    return np.stack([r / np.linalg.norm(r, ord=p) for r in rows])


def worst_case_on_boundary(
    noise: NoiseFamily,
    norm: str,
    pA: float,
    radius: float,
    *,
    dim: int,
    scale_by: np.ndarray | None = None,
    draws: int = 200_000,
    seed: int = 0,
    case: int = 0,
) -> WorstCase:
    """The smallest worst-case ``pA`` over :func:`boundary_directions` at ``radius``.

    With ``scale_by`` (an anisotropic sigma), the perturbations are
    ``sigma ⊙ (radius·u)``: the boundary of the region ``‖δ ⊘ sigma‖ < radius``. The
    directions and each direction's noise come from the ``worst-case`` stream of
    ``(seed, case)``: pass each checked rule its own ``case``.

    Nine parameters: the certificate checked (noise, norm, ``pA``, radius,
    ``dim``, an anisotropic ``scale_by``) and the Monte Carlo check's own three (draws, seed,
    case).
    """
    results = []
    for k, u in enumerate(boundary_directions(norm, dim, seed=seed, case=case)):
        delta = radius * u if scale_by is None else scale_by * radius * u
        found = worst_case_pA(noise, delta, pA, draws=draws, seed=seed, case=case, part=k + 1)
        results.append(found)
    return min(results, key=lambda r: r.pA_shifted)


def verdict(result: WorstCase, sigmas: float = 4.0) -> str:
    """``"tight"``, ``"valid (slack)"`` or ``"fails"``: the boundary worst case against 1/2.

    Within ``sigmas`` standard errors of 1/2 the certificate is tight there; above,
    it holds with room to spare; below, a classifier breaks it.
    """
    gap = result.pA_shifted - 0.5
    if abs(gap) <= sigmas * result.stderr:
        return "tight"
    return "valid (slack)" if gap > 0 else "fails"
