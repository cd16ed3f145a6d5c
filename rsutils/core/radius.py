"""The radius registry: certified radii for each (noise family, threat norm) pair.

Every rule is a vectorised function of the lower confidence bound ``pA_lower`` on the
top-class probability, the upper bound ``pB_upper`` on the runner-up (defaulting to
``1 - pA_lower``, the binary reduction used by Cohen et al.'s CERTIFY), the noise
scale and, where needed, the input dimension ``d``. Values are meaningful where
``pA_lower > pB_upper``; elsewhere they are zero or negative, i.e. no certificate.

Derivations (``pB`` defaults to ``1 - pA``):

* Gaussian, ℓ2 — Cohen et al. (2019), Theorem 1: ``σ/2·(Φ⁻¹(pA) − Φ⁻¹(pB))``.
* Gaussian, ℓ1 — ``‖δ‖₂ ≤ ‖δ‖₁``, so the ℓ2 radius is also an ℓ1 radius.
* Gaussian, ℓ∞ — ``‖δ‖₂ ≤ √d‖δ‖∞``, so the ℓ2 radius divided by ``√d``.
* Laplace, ℓ1 — Teng et al. (2020): ``max(λ/2·log(pA/pB), −λ·log(1 − pA + pB))``,
  which is ``−λ·log(2(1 − pA))`` when ``pB = 1 − pA``.
* Uniform cube, ℓ1 — the total variation between the cube and its shift by δ is at
  most ``‖δ‖₁/(2λ)``; requiring ``pA − TV > pB + TV`` gives ``λ·(pA − pB)``.
* Uniform cube, ℓ∞ — the same argument with ``TV = 1 − (1 − ‖δ‖∞/(2λ))^d`` gives
  ``2λ(1 − (1 − (pA − pB)/2)^(1/d))``.
* Exponential-ℓ∞ (density ∝ ``e^{−‖z‖∞/λ}``), ℓ1 — a mixture of uniform cubes of
  half-width ``r ~ Gamma(d + 1, λ)``; total variation is jointly convex, so
  ``TV ≤ E[‖δ‖₁/(2r)] = ‖δ‖₁/(2dλ)``, and the cube argument gives ``dλ(pA − pB)``
  (Yang et al., 2020: ``2dλ(pA − 1/2)``).
* Exponential-ℓ∞, ℓ∞ — the density ratio ``p(z − δ)/p(z)`` lies in ``[e^{−t}, e^{t}]``
  with ``t = ‖δ‖∞/λ``; the argument behind the Laplace rule uses nothing else, so the
  same formula holds with ``‖δ‖∞`` in place of ``‖δ‖₁``.
* Power law ``∝ (1 + ‖z‖∞/λ)^{−a}``, ℓ1 — a mixture of cubes with
  ``r/λ ~ BetaPrime(d + 1, a − d)``, ``E[1/r] = (a − d)/(dλ)``, hence
  ``dλ/(a − d)·(pA − pB)``; it needs ``a > d``.

Asking for a pair with no rule is an error that lists the pairs that exist.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy.stats import norm as _std_normal

__all__ = ["RadiusRule", "certified_radius", "get_rule", "register", "rules"]

Formula = Callable[..., np.ndarray]  # (pA, pB, scale, dim, **params) -> radius


@dataclass(frozen=True)
class RadiusRule:
    """One row of the registry."""

    family: str
    norm: str
    formula: Formula
    latex: str  # the binary-case formula, for rendered tables
    source: str  # bibliography key of the result it implements
    needs_dim: bool = False
    params: tuple[str, ...] = ()  # family parameters besides the scale (e.g. "a")


_REGISTRY: dict[tuple[str, str], RadiusRule] = {}


def register(rule: RadiusRule) -> RadiusRule:
    """Add ``rule`` to the registry (later issues add families this way)."""
    _REGISTRY[(rule.family, rule.norm)] = rule
    return rule


def rules() -> list[RadiusRule]:
    """All registered rules, in registration order."""
    return list(_REGISTRY.values())


def get_rule(family: str, norm: str) -> RadiusRule:
    """The rule for ``(family, norm)``; a clear error when there is none."""
    try:
        return _REGISTRY[(family, norm)]
    except KeyError:
        known = ", ".join(f"{f}/{n}" for f, n in _REGISTRY)
        raise ValueError(
            f"no certified radius is known for {family!r} noise against the {norm!r} norm; "
            f"choose one of the supported family/norm pairs: {known}"
        ) from None


def certified_radius(
    family: str,
    norm: str,
    pA_lower: ArrayLike,
    pB_upper: ArrayLike | None = None,
    *,
    scale: float,
    dim: int | None = None,
    **params: float,
) -> np.ndarray:
    """Certified radius of ``family`` noise with ``scale`` against ``norm``.

    Returns an array broadcast from ``pA_lower`` and ``pB_upper``. ``params`` are the
    family's other parameters, when its rule needs them (``a`` for the power law).
    """
    rule = get_rule(family, norm)
    pA = np.asarray(pA_lower, dtype=float)
    pB = 1.0 - pA if pB_upper is None else np.asarray(pB_upper, dtype=float)
    for name, p in (("pA_lower", pA), ("pB_upper", pB)):
        if np.any(~((p >= 0) & (p <= 1))):
            raise ValueError(f"{name} must lie in [0, 1] (it is a probability), got {p}")
    if rule.needs_dim and (dim is None or int(dim) < 1):
        raise ValueError(
            f"the {family}/{norm} radius depends on the input dimension; pass dim=x.numel()"
        )
    missing = [name for name in rule.params if name not in params]
    extra = sorted(set(params) - set(rule.params))
    if missing or extra:
        raise ValueError(
            f"the {family}/{norm} radius takes the parameters {list(rule.params)}; "
            f"missing {missing}, unexpected {extra}"
        )
    with np.errstate(divide="ignore", invalid="ignore"):
        return rule.formula(pA, pB, float(scale), None if dim is None else int(dim), **params)


def _gaussian_l2(pA: np.ndarray, pB: np.ndarray, s: float, d: int | None) -> np.ndarray:
    return s / 2 * (_std_normal.ppf(pA) - _std_normal.ppf(pB))


def _gaussian_linf(pA: np.ndarray, pB: np.ndarray, s: float, d: int | None) -> np.ndarray:
    assert d is not None
    return _gaussian_l2(pA, pB, s, d) / np.sqrt(d)


def _laplace_l1(pA: np.ndarray, pB: np.ndarray, s: float, d: int | None) -> np.ndarray:
    return np.maximum(s / 2 * np.log(pA / pB), -s * np.log1p(pB - pA))


def _uniform_l1(pA: np.ndarray, pB: np.ndarray, s: float, d: int | None) -> np.ndarray:
    return s * (pA - pB)


def _uniform_linf(pA: np.ndarray, pB: np.ndarray, s: float, d: int | None) -> np.ndarray:
    assert d is not None
    # 1 - (1 - m)^(1/d) computed as -expm1(log1p(-m)/d): exact for tiny margins, large d.
    margin = (pA - pB) / 2
    return 2 * s * -np.expm1(np.log1p(-margin) / d)


def _exp_linf_l1(pA: np.ndarray, pB: np.ndarray, s: float, d: int | None) -> np.ndarray:
    assert d is not None
    return d * s * (pA - pB)


def _power_law_l1(
    pA: np.ndarray, pB: np.ndarray, s: float, d: int | None, *, a: float
) -> np.ndarray:
    assert d is not None
    if not a > d:
        raise ValueError(
            f"the power law is a distribution only for a > d; got a={a:g}, d={d}: "
            f"pass e.g. a={d + 2}"
        )
    return d * s / (a - d) * (pA - pB)


register(
    RadiusRule(
        "gaussian", "l2", _gaussian_l2, r"\lambda\,\Phi^{-1}(\underline{p_A})", "cohen2019certified"
    )
)
register(
    RadiusRule(
        "gaussian", "l1", _gaussian_l2, r"\lambda\,\Phi^{-1}(\underline{p_A})", "yang2020randomized"
    )
)
register(
    RadiusRule(
        "gaussian",
        "linf",
        _gaussian_linf,
        r"\lambda\,\Phi^{-1}(\underline{p_A})/\sqrt{d}",
        "yang2020randomized",
        needs_dim=True,
    )
)
register(
    RadiusRule("laplace", "l1", _laplace_l1, r"-\lambda\log(2(1-\underline{p_A}))", "teng2020ell")
)
register(
    RadiusRule(
        "uniform", "l1", _uniform_l1, r"2\lambda(\underline{p_A}-\tfrac12)", "yang2020randomized"
    )
)
register(
    RadiusRule(
        "uniform",
        "linf",
        _uniform_linf,
        r"2\lambda\bigl(1-(\tfrac32-\underline{p_A})^{1/d}\bigr)",
        "yang2020randomized",
        needs_dim=True,
    )
)
register(
    RadiusRule(
        "exp_linf",
        "l1",
        _exp_linf_l1,
        r"2d\lambda(\underline{p_A}-\tfrac12)",
        "yang2020randomized",
        needs_dim=True,
    )
)
register(
    RadiusRule(
        "exp_linf",
        "linf",
        _laplace_l1,
        r"-\lambda\log(2(1-\underline{p_A}))",
        "yang2020randomized",
    )
)
register(
    RadiusRule(
        "power_law",
        "l1",
        _power_law_l1,
        r"\frac{2d\lambda}{a-d}(\underline{p_A}-\tfrac12)",
        "yang2020randomized",
        needs_dim=True,
        params=("a",),
    )
)
