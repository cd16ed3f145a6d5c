"""What ``n`` draws at level ``alpha`` allow a table to print, per noise family and norm.

CERTIFY's one-sided Clopper–Pearson bound never exceeds ``alpha^(1/n)`` (all ``n``
draws in the top class, :func:`~rsutils.core.confidence.max_certifiable_pA`), so no
certificate exceeds the radius rule of its noise family and threat norm
(:func:`~rsutils.core.radius.certified_radius`) at that ``pA``, times the largest scale
the noise may have: ``λ·γ`` for anisotropic noise whose multipliers ``σ_i`` stay below
``γ`` (both the inscribed radius ``min σ_i·R`` and the ALM ``(∏σ_i)^(1/d)·R`` are at most
``γ·R``). At Cohen et al.'s ``n = 100,000`` and ``alpha = 0.001``, with unit variance:

- Gaussian, ℓ2 and ℓ1 (Table I: the ℓ2 radius is an ℓ1 radius): ``Φ⁻¹(alpha^(1/n))``,
  3.81;
- Gaussian, ℓ∞: the same over ``√d`` (0.069 on CIFAR10, 17.5/255);
- uniform noise on ``[−λ, λ]^d`` against ℓ1 (Yang et al.): ``2λ(pA − 1/2)`` with
  ``λ = √3`` for unit variance, 1.73;
- Laplace noise against ℓ1 (Teng et al.): ``−λ·log(2(1 − pA))`` with ``λ = 1/√2``,
  6.28.

Each row's noise is stated in its table's JSON (``noise``: family, the base noise's
standard deviation ``std``, null where the paper does not state it, and ``γ``), read
by :func:`row_noise`. :func:`bound_cells` then says, for every printed cell, whether
it lies beyond the bound (and so must be 0), the ``pA`` it needs at that scale, how
many of the ``n`` draws may miss the top class for CERTIFY to reach it, and the ``n``
or ``alpha`` it would need with every draw right; :func:`bound_summary` counts the
findings per row, and :func:`can_fire` says whether a bound can flag anything on a
table's printed radii at all.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
import pandas as pd
from scipy.optimize import brentq

from rsutils.book.audit.verdicts import LedgerVerdict
from rsutils.book.papers.published import PublishedTable
from rsutils.core.confidence import check_alpha, clopper_pearson_lower, max_certifiable_pA
from rsutils.core.radius import certified_radius

__all__ = [
    "NEAR_CERTAIN",
    "bound_cells",
    "bound_summary",
    "can_fire",
    "certifiable_bound",
    "misses_allowed",
    "required_pA",
    "row_noise",
    "scale_for_std",
]

#: A cell is flagged as needing a near-certain ``pA`` when CERTIFY must bound ``pA``
#: from below by at least this (at most one noisy draw in a thousand off the class).
NEAR_CERTAIN = 0.999

#: ``scale / std`` per family: the scale parameter of the registry's radius rule that
#: gives noise of standard deviation 1 per coordinate.
_SCALE_PER_STD = {"gaussian": 1.0, "laplace": 1 / math.sqrt(2), "uniform": math.sqrt(3)}


def scale_for_std(family: str, std: float) -> float:
    """The scale ``λ`` of ``family`` whose coordinates have standard deviation ``std``.

    Gaussian: ``λ = std`` (the registry's Gaussian scale is the standard deviation);
    Laplace with density ``∝ e^{−|z|/λ}`` (variance ``2λ²``): ``λ = std/√2``; uniform on
    ``[−λ, λ]`` (variance ``λ²/3``): ``λ = √3·std``. This is how Yang et al. and UCAN
    (§VI-C) compare families "with variance 1".
    """
    if family not in _SCALE_PER_STD:
        raise ValueError(
            f"no variance convention for {family!r} noise; choose one of {sorted(_SCALE_PER_STD)}"
        )
    if not std > 0:
        raise ValueError(f"std must be a positive standard deviation, got {std!r}")
    return _SCALE_PER_STD[family] * float(std)


def certifiable_bound(
    family: str, norm: str, scale: float, *, n: int, alpha: float, dim: int | None = None
) -> float:
    """The largest radius CERTIFY can give with ``n`` draws at ``alpha``: the radius
    rule of ``family``/``norm`` at ``pA = alpha^(1/n)`` (``pB = 1 − pA``), ``scale``
    being the largest scale the noise may have (``λ·γ``)."""
    top = max_certifiable_pA(n, alpha)
    return float(certified_radius(family, norm, top, scale=scale, dim=dim))


def required_pA(
    family: str, norm: str, radius: float, scale: float, *, dim: int | None = None
) -> float:
    """The ``pA`` lower bound the radius rule needs to reach ``radius`` at ``scale``.

    The inverse of :func:`~rsutils.core.radius.certified_radius` in ``pA`` (binary case,
    ``pB = 1 − pA``), found by root finding on the registry's rule, so that every family
    uses the formula the library certifies with: ``Φ(r/σ)`` for Gaussian ℓ2,
    ``1/2 + r/(2λ)`` for uniform ℓ1, ``1 − e^{−r/λ}/2`` for Laplace ℓ1. It is 1/2 at
    radius 0, and ``inf`` where no ``pA ≤ 1`` reaches the radius (a uniform certificate
    never exceeds ``λ``).
    """
    if radius < 0:
        raise ValueError(f"radius must be >= 0, got {radius!r}")
    if radius == 0:
        return 0.5

    def gap(p: float) -> float:
        return float(certified_radius(family, norm, p, scale=scale, dim=dim)) - radius

    top = 1.0 - 1e-15
    if gap(top) < 0:
        return math.inf
    return float(brentq(gap, 0.5, top, xtol=1e-15, rtol=4 * np.finfo(float).eps))


def misses_allowed(pA: float, n: int, alpha: float) -> int:
    """How many of ``n`` draws may miss the top class for CERTIFY's bound to reach ``pA``.

    The largest ``k`` with ``clopper_pearson_lower(n − k, n, alpha) ≥ pA``, or −1 where
    even ``k = 0`` falls short (``pA > alpha^(1/n)``).
    """
    check_alpha(alpha)
    if not float(clopper_pearson_lower(n, n, alpha)) >= pA:
        return -1
    low, high = 0, n  # the bound falls as k grows: bisect for the last k that reaches pA
    while low < high:
        mid = (low + high + 1) // 2
        if float(clopper_pearson_lower(n - mid, n, alpha)) >= pA:
            low = mid
        else:
            high = mid - 1
    return low


def row_noise(table: PublishedTable) -> pd.DataFrame:
    """The noise each certified-accuracy row of ``table`` may have used, from its JSON.

    Columns: ``row``, ``family`` (None where the paper does not say), ``std``, ``gamma``,
    ``scale`` (``λ(std)·γ``, :func:`scale_for_std`; NaN where ``std`` is not stated) and
    ``why`` (the stated basis).
    """
    block = table.meta.get("noise")
    if not isinstance(block, dict):
        raise ValueError(
            f"{table.name} states no noise: add a 'noise' block to its JSON with, per row, "
            "family, std (null if unknown), gamma and why"
        )
    kinds = np.array(table.kinds)
    found = []
    for label in table.data["row"][kinds == "certified_accuracy"]:
        if label not in block["rows"]:
            raise ValueError(f"{table.name}: the noise block has no entry for row {label!r}")
        entry = block["rows"][label]
        family, std, gamma = entry["family"], entry["std"], float(entry["gamma"])
        known = family is not None and std is not None
        scale = scale_for_std(family, std) * gamma if known else np.nan
        found.append({"row": label, "family": family, "std": std, "gamma": gamma,
                      "scale": scale, "why": entry["why"]})  # fmt: skip
    return pd.DataFrame(found)


def _settings(table: PublishedTable, n: int | None, alpha: float | None) -> tuple[int, float]:
    block = table.meta.get("noise", {})
    return int(n or block.get("n", 100_000)), float(alpha or block.get("alpha", 0.001))


def bound_cells(
    table: PublishedTable,
    *,
    n: int | None = None,
    alpha: float | None = None,
    near_certain: float = NEAR_CERTAIN,
) -> pd.DataFrame:
    """Every printed certified accuracy of ``table`` against what ``n`` and ``alpha`` allow.

    ``n`` and ``alpha`` default to the table's stated ones (its JSON ``noise`` block).
    One row per cell: ``table``, ``row``, ``family``, ``radius`` (printed header) and
    ``r`` (its value), ``printed``, ``bound`` (:func:`certifiable_bound` at the row's
    scale, NaN where the scale is not stated), ``pA needed`` (:func:`required_pA` at that
    scale; ``inf`` where no ``pA`` reaches it), ``misses allowed`` (of the ``n`` draws,
    :func:`misses_allowed`; −1 where none can reach it), ``draws needed`` (the fewest
    draws, all right, that reach it at ``alpha``: ``⌈ln alpha / ln pA⌉``), ``α needed``
    (the least level at which ``n`` draws, all right, reach it: ``pA^n``), ``scale
    share`` (the share of the row's largest scale the cell needs even with every draw
    right: for a radius row, ``min σ_i/γ`` at least this; for an ALM row, the geometric
    mean), ``std needed`` (the least standard deviation of the base noise, with
    ``γ = 1``, that can certify the radius at all) and ``verdict``: ``forced 0`` (beyond
    the bound and printed 0), ``beyond the bound`` (a positive value no certificate can
    give), ``near-certain pA`` (positive, needing ``pA ≥ near_certain``), ``within the
    bound``, ``scale not stated``, ``noise not stated`` or ``not printed``.
    """
    n, alpha = _settings(table, n, alpha)
    dim = table.meta.get("noise", {}).get("dim")
    norm, noise = str(table.meta["norm"]), row_noise(table).set_index("row")
    rows = table.data.set_index("row")
    found = []
    for label, entry in noise.iterrows():
        family = entry["family"] if isinstance(entry["family"], str) else None
        scale = float(entry["scale"])
        unit = np.nan if family is None else _unit_bound(family, norm, n, alpha, dim)
        for header, r in zip(table.data.columns[1:], table.radii, strict=True):
            printed = float(rows.loc[label, header])
            cell = {"table": table.name, "row": label, "family": family, "radius": header,
                    "r": float(r), "printed": printed, "std needed": r / unit}  # fmt: skip
            cell |= _against_scale(family, norm, float(r), scale, n, alpha, dim)
            cell["verdict"] = _bound_verdict(cell, family, near_certain)
            found.append(cell)
    return pd.DataFrame(found)


def _unit_bound(family: str, norm: str, n: int, alpha: float, dim: int | None) -> float:
    scale = scale_for_std(family, 1.0)
    return certifiable_bound(family, norm, scale, n=n, alpha=alpha, dim=dim)


def _against_scale(
    family: str | None, norm: str, r: float, scale: float, n: int, alpha: float, dim: int | None
) -> dict[str, float]:
    if family is None or np.isnan(scale):
        keys = ("bound", "pA needed", "misses allowed", "draws needed", "α needed")
        return dict.fromkeys((*keys, "scale share"), np.nan)
    bound = certifiable_bound(family, norm, scale, n=n, alpha=alpha, dim=dim)
    pA = required_pA(family, norm, r, scale, dim=dim)
    possible = pA < 1
    return {
        "bound": bound,
        "pA needed": pA,
        "misses allowed": float(misses_allowed(pA, n, alpha)) if possible else -1.0,
        "draws needed": float(math.ceil(math.log(alpha) / math.log(pA))) if possible else np.inf,
        "α needed": float(np.exp(n * math.log(pA))) if possible else np.inf,
        "scale share": r / bound,
    }


def _bound_verdict(cell: dict, family: str | None, near_certain: float) -> str:
    if np.isnan(cell["printed"]):
        return LedgerVerdict.NOT_PRINTED
    if family is None:
        return "noise not stated"
    if np.isnan(cell["bound"]):
        return "scale not stated"
    if cell["r"] > cell["bound"]:
        return "forced 0" if cell["printed"] == 0 else "beyond the bound"
    if cell["printed"] > 0 and cell["pA needed"] >= near_certain:
        return "near-certain pA"
    return "within the bound"


def bound_summary(
    tables: Iterable[PublishedTable],
    *,
    n: int | None = None,
    alpha: float | None = None,
    near_certain: float = NEAR_CERTAIN,
) -> pd.DataFrame:
    """Per table and row: the bound and what it finds (from :func:`bound_cells`).

    Columns: ``table``, ``row``, ``family``, ``bound`` (NaN where the scale is not
    stated), ``largest radius`` (printed), ``can fire`` (a printed radius lies beyond
    the bound), ``forced 0``, ``beyond the bound``, ``near-certain pA`` (counts of
    cells) and ``std needed`` (for the row's largest positive printed radius: the least
    standard deviation that could certify it).
    """
    found = []
    for table in tables:
        cells = bound_cells(table, n=n, alpha=alpha, near_certain=near_certain)
        for label, row in cells.groupby("row", sort=False):
            positive = row[row["printed"] > 0]
            found.append(
                {
                    "table": table.name,
                    "row": label,
                    "family": row["family"].iloc[0],
                    "bound": float(row["bound"].iloc[0]),
                    "largest radius": float(row["r"].max()),
                    "can fire": bool((row["r"] > row["bound"]).any()),
                    **{v: int((row["verdict"] == v).sum()) for v in _COUNTED},
                    "std needed": float(positive["std needed"].max()) if len(positive) else 0.0,
                }
            )
    return pd.DataFrame(found)


_COUNTED = ("forced 0", "beyond the bound", "near-certain pA")


def can_fire(
    table: PublishedTable,
    *,
    scale: float,
    family: str = "gaussian",
    n: int = 100_000,
    alpha: float = 0.001,
    dim: int | None = None,
) -> bool:
    """Whether a bound at ``scale`` can flag anything on ``table``'s printed radii.

    A ceiling check (such as :func:`~rsutils.book.audit.table_audit.ceiling_check`, Gaussian
    ℓ2) flags only cells at radii beyond :func:`certifiable_bound`; when the largest
    printed radius is within it, the check returns nothing whatever the printed values,
    and its silence says nothing about the table.
    """
    bound = certifiable_bound(family, str(table.meta["norm"]), scale, n=n, alpha=alpha, dim=dim)
    return bool(table.radii.max() > bound)
