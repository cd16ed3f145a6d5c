"""Comparisons decided by construction, which a claim's verdict must not rest on.

A comparison tests a claim only if its outcome could have gone either way. Two ways
the book's comparisons can be decided before any classifier is trained:

- a **ceiling**: a certificate cannot exceed σ·Φ⁻¹(α^(1/n)) (for the deployed
  certification-wise classifier, whose radius holds only shrunk, the sound radius at
  that R). When
  even that ceiling, reached on every image (:func:`attainable_acr`), stays more than
  the margin below a control's measured ACR, the method "falls" by construction
  (:func:`ceiling_decides`, :func:`ceiling_reason`);
- a **shapeless σ**: the ALM exceeds the inscribed radius by exactly σ's shape (a
  geometric mean over a minimum), so for a σ of one level (a generator saturated at
  its bound) the ALM's gain over the radius is 0 whatever the classifier does
  (:func:`shape_reason`).

Each check returns the reason as a sentence (``""`` when the comparison is open), and
:func:`unless_decided` turns a verdict resting on a decided comparison into
:attr:`~rsutils.book.audit.verdicts.ClaimVerdict.NOT_TESTABLE`, the reason printed
beside it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy.stats import norm

from rsutils.analysis.metrics import average_certified_radius
from rsutils.anisotropic.saturation import SHAPE_RATIO
from rsutils.anisotropic.soundness.local import CEILING
from rsutils.book.audit.verdicts import ClaimVerdict
from rsutils.core.confidence import max_certifiable_pA

__all__ = [
    "attainable_acr",
    "ceiling_decides",
    "ceiling_reason",
    "shape_reason",
    "unless_decided",
]

#: One ``{name: log}`` dictionary per replicate model.
Replicates = Sequence[Mapping[str, pd.DataFrame]]


def attainable_acr(log: pd.DataFrame, column: str = "radius") -> float:
    """The largest ACR (by ``column``, the radius or the ALM) that ``log``'s certificate
    can give any classifier: every image correct, certified with all ``n`` draws in its
    class (``pA_lower = α^(1/n)``).

    A certificate of ``log`` is its image's scale times Φ⁻¹(``pA_lower``) (for
    Gaussian noise σ, for a sound log σ/(1 + L)); the scale is read from the certified
    rows as ``column / Φ⁻¹(pA_lower)`` and the largest one taken. Exact for a scale
    that does not depend on the input (a fixed σ, the deployed σ ≡ c); for one that
    does, the bound holds for the scales the log's images show. ``nan`` when no row
    is certified (no scale to read). A log that states each image's largest radius
    (the column :data:`~rsutils.anisotropic.soundness.local.CEILING` of
    :func:`~rsutils.anisotropic.soundness.local.local_sound_log`, whose radius is
    not a scale times Φ⁻¹) gives their mean, for the radius and the ALM alike.
    """
    if CEILING in log.columns:
        return float(log[CEILING].mean())
    missing = {column, "pA_lower", "n", "alpha"} - set(log.columns)
    if missing:
        raise ValueError(f"the log lacks {sorted(missing)}: pass a CERTIFY log of rsutils")
    certified = log[(log["pA_lower"] > 0.5) & (log[column] > 0)]
    if certified.empty:
        return float("nan")
    scales = certified[column].to_numpy(np.float64) / norm.ppf(certified["pA_lower"])
    top = max_certifiable_pA(int(log["n"].max()), float(log["alpha"].iloc[0]))
    return float(scales.max() * norm.ppf(top))


def ceiling_decides(
    replicates: Replicates, method: str, control: str, *, column: str, margin: float
) -> bool:
    """Whether ``method`` falls short of ``control`` by construction, by the ACR.

    True when on every replicate even :func:`attainable_acr` of ``method`` (every
    image at its certificate's ceiling) stays more than ``margin`` below the ACR that
    ``control`` measured: then "falls" is decided by the certificate, whatever the
    classifier does, and a verdict resting on it is "not testable here". False when
    some replicate's ceiling leaves room for the comparison to go either way.
    """
    for logs in replicates:
        ceiling = attainable_acr(logs[method], column)
        control_acr = average_certified_radius(logs[control], column=column)
        if not ceiling + margin < control_acr:
            return False
    return True


def ceiling_reason(
    replicates: Replicates,
    method: str,
    controls: Sequence[str],
    *,
    columns: Sequence[str] = ("radius",),
    margin: float,
) -> str:
    """Why comparisons of ``method`` against ``controls`` are decided by its ceiling,
    or ``""`` when none is.

    A comparison (a control, by the ACR of a column) is decided when
    :func:`ceiling_decides`: then "falls" is forced, a claim that ``method`` beats
    every control cannot hold whatever the classifier does, and its verdict is
    :func:`unless_decided` "not testable here". The reason names the ceiling (the
    largest :func:`attainable_acr` over the replicates and columns) and the controls.
    """
    decided = [
        (control, column)
        for control in controls
        for column in columns
        if ceiling_decides(replicates, method, control, column=column, margin=margin)
    ]
    if not decided:
        return ""
    top = max(attainable_acr(logs[method], c) for logs in replicates for c in columns)
    names = ", ".join(dict.fromkeys(control for control, _ in decided))
    return (
        f"{method} cannot reach an ACR above {top:.3g} (every image at its "
        f"certificate's ceiling), more than the margin ({margin:g}) below what "
        f"{names} measured: {len(decided)} of {len(controls) * len(columns)} "
        "comparisons fall by construction"
    )


def shape_reason(replicates: Replicates, name: str, ratio: float = SHAPE_RATIO) -> str:
    """Why a claim about ``name``'s ALM beyond its radius cannot be tested, or ``""``.

    The ALM of a certificate is its σ's geometric mean times Φ⁻¹(``pA_lower``), the
    radius its smallest σ times the same: the ALM exceeds the radius by exactly the
    σ's shape. When on every replicate no certified image has ``alm / radius`` above
    ``ratio`` (:data:`~rsutils.anisotropic.saturation.SHAPE_RATIO`: σ is one level, as
    it is when it saturates at its bound), the ALM's excess over the radius is decided
    by construction, not by the classifier. A log that certifies no image shows no
    shape either: its reason says so.
    """
    largest = None
    for logs in replicates:
        log = logs[name]
        certified = log[log["radius"] > 0]
        if not certified.empty:
            ratios = certified["alm"].to_numpy(np.float64) / certified["radius"].to_numpy()
            largest = max(largest or 0.0, float(ratios.max()))
    if largest is None:
        return f"{name} certified no image on any model: its σ's shape cannot be read"
    if largest > ratio:
        return ""
    return (
        f"{name}'s σ has no shape: on no certified image of any model does its ALM "
        f"exceed its radius by more than {largest - 1:.2%} (a shape is over "
        f"{ratio - 1:.0%}), so its ALM's gain over the radius is 0 by construction"
    )


def unless_decided(reason: str, verdict: ClaimVerdict) -> ClaimVerdict:
    """``verdict``, or "not testable here" when ``reason`` (of :func:`ceiling_reason`,
    :func:`shape_reason`) says its comparison is decided by construction."""
    return ClaimVerdict.NOT_TESTABLE if reason else verdict
