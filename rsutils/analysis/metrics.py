"""Certification logs turned into the papers' curves and tables.

A log (:func:`~rsutils.logs.read.read_log`) has one row per test input; certified
accuracy at a radius, its confidence interval, the average certified radius (ACR),
their differences between two logs of the same inputs, and a log recertified at
another level come from its ``correct``, ``radius``, ``count`` and ``n`` columns.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy.stats import binom, binomtest, bootstrap

from rsutils.analysis.verdicts import Verdict, judge
from rsutils.core.confidence import check_alpha, clopper_pearson_lower
from rsutils.core.noise import NoiseFamily
from rsutils.core.smooth import ABSTAIN
from rsutils.core.streams import derived_seed

__all__ = [
    "ACRDifference",
    "accuracy_table",
    "acr_comparisons",
    "acr_difference",
    "average_certified_radius",
    "best_accuracy_table",
    "certified_accuracy",
    "certified_accuracy_interval",
    "certified_accuracy_lower_bound",
    "envelope",
    "recertify",
]


def certified_accuracy(df: pd.DataFrame, radii: ArrayLike, *, column: str = "radius") -> np.ndarray:
    """Approximate certified accuracy: the fraction of rows correct with radius ≥ r.

    This is Cohen et al.'s "approximate certified test accuracy"; an abstention counts
    as wrong. Returns one value per radius. ``column`` measures each certificate
    another way (e.g. ``"alm"``, UCAN's accuracy "w.r.t. ALM", which is not a
    guarantee at that radius: see :mod:`rsutils.geometry.superellipsoid`).
    """
    radii = np.atleast_1d(np.asarray(radii, dtype=float))
    correct = df["correct"].to_numpy().astype(bool)
    radius = df[column].to_numpy(dtype=float)
    return (correct[None, :] & (radius[None, :] >= radii[:, None])).mean(axis=1)


def certified_accuracy_interval(
    df: pd.DataFrame, radii: ArrayLike, *, column: str = "radius", confidence: float = 0.95
) -> tuple[np.ndarray, np.ndarray]:
    """Clopper–Pearson interval of the certified accuracy at each radius, over the images.

    The sampling error of measuring on ``len(df)`` test images (the certificates taken
    as given): two curves whose intervals overlap are not told apart by these images.
    ``scipy.stats.binomtest(...).proportion_ci(method="exact")`` per radius.
    """
    check_alpha(1 - confidence)
    m = len(df)
    counts = np.rint(certified_accuracy(df, radii, column=column) * m).astype(int)
    bounds = [binomtest(int(k), m).proportion_ci(confidence, method="exact") for k in counts]
    return np.array([b.low for b in bounds]), np.array([b.high for b in bounds])


def certified_accuracy_lower_bound(
    df: pd.DataFrame, radii: ArrayLike, alpha: float, rho: float = 0.001
) -> np.ndarray:
    """A lower bound on the true certified accuracy holding with probability 1 − rho.

    Each of the m certificates is wrong with probability at most ``alpha``,
    independently across inputs (independent noise per input), so the number of wrong
    ones is stochastically dominated by Binomial(m, alpha). Subtracting its
    ``1 - rho`` quantile (``scipy.stats.binom.ppf``) from the count behind the
    approximate certified accuracy gives the bound. Cohen et al.'s analysis code
    bounds the same count with Bernstein's inequality instead; the exact quantile is
    the smallest value any valid tail bound for Binomial(m, alpha) can give.
    """
    check_alpha(alpha)
    check_alpha(rho)
    m = len(df)
    slack = binom.ppf(1 - rho, m, alpha) / m
    return np.maximum(certified_accuracy(df, radii) - slack, 0.0)


def average_certified_radius(df: pd.DataFrame, *, column: str = "radius") -> float:
    """ACR: the mean certified radius, counting wrong answers and abstentions as 0.

    ``column`` averages another measure of the certificates (e.g. ``"alm"``).
    """
    return float((df[column].to_numpy(dtype=float) * df["correct"].to_numpy()).mean())


@dataclass(frozen=True)
class ACRDifference:
    """ACR(b) − ACR(a) on the same inputs, with a bootstrap confidence interval.

    The interval is over the choice of test inputs only (the inputs are resampled in
    pairs); it says nothing about how the numbers move with another trained model.
    """

    difference: float
    low: float
    high: float
    confidence: float

    @property
    def verdict(self) -> Verdict:
        """The book's verdict rule (:func:`~rsutils.analysis.verdicts.judge`) on this
        interval over the inputs alone: a :class:`~rsutils.analysis.verdicts.Verdict`
        that rises, falls or is undecided.

        One model's interval says nothing about retraining: a verdict the book states
        comes from :func:`~rsutils.analysis.differences.replicated_comparisons`.
        """
        return judge(self.low, self.high)


def acr_difference(
    a: pd.DataFrame,
    b: pd.DataFrame,
    *,
    confidence: float = 0.95,
    seed: int = 0,
    column: str = "radius",
) -> ACRDifference:
    """How much the ACR of log ``b`` exceeds that of log ``a`` on the same inputs.

    The two logs must hold the same ``idx`` values. The interval is scipy's paired
    BCa bootstrap (9,999 resamples, seeded) of the mean per-input difference of
    certified radii (0 for wrong answers and abstentions), measured by ``column``
    (``"alm"`` for UCAN's ALM).
    """
    if sorted(a["idx"]) != sorted(b["idx"]):
        raise ValueError("the two logs must certify the same inputs (the same idx values)")
    a, b = a.sort_values("idx"), b.sort_values("idx")
    per_input = _radii(b, column) - _radii(a, column)
    if np.ptp(per_input) == 0:  # every input moved by the same amount: nothing to resample
        value = float(per_input[0])
        return ACRDifference(value, value, value, confidence)
    result = bootstrap(
        (per_input,),
        np.mean,
        confidence_level=confidence,
        n_resamples=9_999,
        method="BCa",
        rng=np.random.default_rng(derived_seed(seed, 0, "bootstrap")),
    )
    low, high = result.confidence_interval
    return ACRDifference(float(per_input.mean()), float(low), float(high), confidence)


def acr_comparisons(
    logs: Mapping[str, pd.DataFrame],
    pairs: Iterable[tuple[str, str]],
    *,
    measures: Mapping[str, str] | None = None,
    seed: int = 0,
) -> pd.DataFrame:
    """:func:`acr_difference` of ``logs[method]`` against ``logs[control]`` for each pair.

    One row per (method, control, measure): ``measures`` maps a display name to a log
    column (default ``{"radius": "radius"}``; add ``"ALM": "alm"`` for anisotropic
    logs). Columns ``ACR gain``, ``low``, ``high`` (the 95% interval) and ``verdict``.
    """
    measures = measures or {"radius": "radius"}
    rows = {}
    for method, control in pairs:
        for name, column in measures.items():
            found = acr_difference(logs[control], logs[method], column=column, seed=seed)
            rows[(method, control, name)] = {
                "ACR gain": found.difference,
                "low": found.low,
                "high": found.high,
                "verdict": found.verdict,
            }
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.index.names = ["method", "against", "measured by"]
    return table


def _radii(df: pd.DataFrame, column: str = "radius") -> np.ndarray:
    return df[column].to_numpy(dtype=float) * df["correct"].to_numpy()


def envelope(curves: Mapping[str, ArrayLike]) -> np.ndarray:
    """Pointwise maximum of certified-accuracy curves on a common radius grid."""
    return np.max(np.vstack([np.asarray(c, dtype=float) for c in curves.values()]), axis=0)


def accuracy_table(
    logs: Mapping[str, pd.DataFrame], radii: Iterable[float], *, acr: bool = True
) -> pd.DataFrame:
    """Certified accuracy per log (rows) and radius (columns), the papers' layout.

    With ``acr=True`` an ``ACR`` column is appended.
    """
    radii = list(radii)
    rows = {name: certified_accuracy(df, radii) for name, df in logs.items()}
    table = pd.DataFrame.from_dict(rows, orient="index", columns=[f"r = {r:g}" for r in radii])
    if acr:
        table["ACR"] = [average_certified_radius(df) for df in logs.values()]
    return table


def best_accuracy_table(
    methods: Mapping[str, Mapping[object, pd.DataFrame]], radii: Iterable[float]
) -> pd.DataFrame:
    """Per method, the best certified accuracy per radius over its logs, and best ACR.

    The layout of DDRS's tables: ``methods`` maps a method name to its logs (e.g. one
    per training sigma); each cell is the maximum over those logs (the envelope), as
    the papers report it.
    """
    radii = list(radii)
    rows = {
        name: accuracy_table(logs, radii).max(axis=0)
        for name, logs in methods.items()
        if len(logs) > 0
    }
    return pd.DataFrame.from_dict(rows, orient="index")


def recertify(
    df: pd.DataFrame,
    alpha: float,
    noise: NoiseFamily,
    *,
    norm: str | None = None,
    dim: int | None = None,
) -> pd.DataFrame:
    """The certificates a log would hold at another ``alpha``, without new sampling.

    Needs our extra columns ``selected``, ``count`` and ``n``: CERTIFY's counts do not
    depend on ``alpha``, only the Clopper–Pearson bound and the radius do. Logs of
    anisotropic noise get their ``region_radius`` and ``alm`` recomputed too.
    """
    missing = [c for c in ("selected", "count", "n") if c not in df.columns]
    if missing:
        raise ValueError(
            f"recertify needs the columns {missing}, which only rsutils logs have "
            "(Cohen et al.'s logs keep the radius but not the counts)"
        )
    pA_lower = clopper_pearson_lower(df["count"].to_numpy(), df["n"].to_numpy(), alpha)
    certified = pA_lower >= 0.5
    radius = np.where(certified, noise.radius(np.clip(pA_lower, 0.5, 1.0), norm=norm, dim=dim), 0.0)
    predict = np.where(certified, df["selected"].to_numpy(), ABSTAIN)
    out = df.copy()
    out["pA_lower"], out["radius"], out["predict"] = pA_lower, radius, predict
    for column, measure in (("region_radius", noise.region_radius), ("alm", noise.alm)):
        if column in out.columns:
            bounded = np.clip(pA_lower, 0.5, 1.0)
            out[column] = np.where(certified, measure(bounded, norm=norm, dim=dim), 0.0)
    out["correct"] = (predict == df["label"].to_numpy()).astype(int)
    out["alpha"] = alpha
    return out
