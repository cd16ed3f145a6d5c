"""The audit's records: one per certificate, one point per candidate, and their summary.

Records serialise to plain containers and tensors (:func:`record_to_dict`), which
``torch.load(weights_only=True)`` reads back (:func:`record_from_dict`): the book caches
them that way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields

import numpy as np
import pandas as pd
import torch
from scipy.stats import binomtest

from rsutils.anisotropic.soundness.audit.verification import PointVerdict

__all__ = [
    "POINT_COLUMNS",
    "AuditPoint",
    "AuditRecord",
    "AuditSummary",
    "record_from_dict",
    "record_to_dict",
    "summarize_audits",
]


@dataclass(frozen=True, eq=False)
class AuditPoint:
    """One candidate ``z = x + δ`` of an audit, its verdict and diagnostics.

    ``search`` is ``"boundary"``, ``"attack"`` (the ascent on the noisy
    cross-entropy) or ``"margin attack"`` (on the noisy logit margin). ``region_fraction`` is
    ``‖δ ⊘ a‖₂/R`` (``a`` the region's axes, < 1 inside). ``verdict`` is G's verdict
    at ``z``. ``pA_deployed`` and ``pA_frozen`` are the fractions of draws in class
    ``c`` under G and under the frozen ``g_x``, on the same draws. ``mu_ratio`` is
    ``‖mu(z) − mu(x)‖₂/‖δ‖₂`` (NaN if δ = 0), ``sigma_change`` is
    ``‖sigma(z) − sigma(x)‖_∞``. ``delta`` is the perturbation (a NumPy array).
    """

    search: str
    delta: np.ndarray
    delta_norm: float
    region_fraction: float
    verdict: PointVerdict
    pA_deployed: float
    pA_frozen: float
    mu_ratio: float
    sigma_change: float

    def row(self) -> dict[str, object]:
        """The point's scalars, for a table (the columns of ``POINT_COLUMNS``)."""
        return {
            "search": self.search,
            "delta_norm": self.delta_norm,
            "region_fraction": self.region_fraction,
            "verdict": self.verdict.verdict,
            "top": self.verdict.top,
            "top_lower": self.verdict.top_lower,
            "pA_deployed": self.pA_deployed,
            "pA_frozen": self.pA_frozen,
            "mu_ratio": self.mu_ratio,
            "sigma_change": self.sigma_change,
        }


#: The columns of :meth:`AuditPoint.row`.
POINT_COLUMNS = (
    "search",
    "delta_norm",
    "region_fraction",
    "verdict",
    "top",
    "top_lower",
    "pA_deployed",
    "pA_frozen",
    "mu_ratio",
    "sigma_change",
)


@dataclass(frozen=True, eq=False)
class AuditRecord:
    """The audit of one certificate (class ``certified``, region radius ``R``).

    ``region`` is ``"ellipsoid"`` or ``"ball"``. ``alpha`` is the family-wise level:
    each of the ``len(points)`` points is verified at ``point_alpha = alpha/len(points)``.
    So the record claims a false contradiction with probability at most ``alpha``.

    ``region_scale`` is ``None`` for an audit of the certified region, or the
    ``(inner, outer)`` multiples of ``R`` of the shell a positive control searched
    (:class:`~rsutils.anisotropic.soundness.audit.settings.AuditSettings`): then a
    contradiction lies outside the certificate (for ``inner ≥ 1``) and shows the
    search's power, not a wrong certificate. Records cached before the field existed
    read back with ``None``, which is what they searched.
    """

    index: int
    certified: int
    R: float
    region: str
    scale: float
    alpha: float
    point_alpha: float
    n_verify: int
    seed: int
    input_range: tuple[float, float] | None
    points: tuple[AuditPoint, ...]
    region_scale: tuple[float, float] | None = None

    @property
    def contradictions(self) -> int:
        return sum(p.verdict.verdict == "contradiction" for p in self.points)

    @property
    def contradicted(self) -> bool:
        """Whether some point of the region is, with confidence, another class under G."""
        return self.contradictions > 0

    def rows(self) -> list[dict[str, object]]:
        """One row per point, with the record's settings."""
        common = {"index": self.index, "region": self.region, "certified": self.certified}
        return [{**common, "R": self.R, **p.row()} for p in self.points]


@dataclass(frozen=True, eq=False)
class AuditSummary:
    """A table of audits and the rate of contradicted images.

    ``table`` has one row per (image, region, search). ``images`` counts the distinct
    image indices and ``contradicted`` those with at least one contradiction in any of
    their records. ``rate`` is their ratio, and ``[low, high]`` its exact two-sided
    Clopper–Pearson interval at ``confidence``.
    """

    table: pd.DataFrame
    images: int
    contradicted: int
    rate: float
    low: float
    high: float
    confidence: float

    def row(self) -> dict[str, object]:
        """The summary as one table row (images, contradicted, rate and interval)."""
        return {
            "images": self.images,
            "with a contradiction": self.contradicted,
            "rate": round(self.rate, 3),
            f"{self.confidence:.0%} interval": f"[{self.low:.2f}, {self.high:.2f}]",
        }

    def by_search(self) -> pd.DataFrame:
        """Which search found what: one row per ``search`` of ``table``.

        ``images`` counts the images the search ran on, ``with a contradiction`` those
        where it found one, and ``rate``, ``low``, ``high`` their ratio and its exact
        Clopper–Pearson interval at ``confidence``. Searches of one image share
        its contradictions' level, so the rows are not independent, and an image found
        by two searches counts in both.
        """
        found = self.table.assign(found=self.table["contradictions"] > 0)
        per_image = found.groupby(["search", "index"])["found"].any()
        rows = {}
        for search, hits in per_image.groupby(level="search"):
            images, contradicted = int(hits.size), int(hits.sum())
            interval = binomtest(contradicted, images).proportion_ci(
                self.confidence, method="exact"
            )
            rows[search] = {
                "images": images,
                "with a contradiction": contradicted,
                "rate": contradicted / images,
                "low": float(interval.low),
                "high": float(interval.high),
            }
        columns = ["images", "with a contradiction", "rate", "low", "high"]
        return pd.DataFrame.from_dict(rows, orient="index", columns=columns)


def summarize_audits(records: Sequence[AuditRecord], confidence: float = 0.95) -> AuditSummary:
    """One row per (image, region, search), and the rate of images with a contradiction.

    Pass the records of certified images only: a record without points (``R = 0``)
    counts as an image without a contradiction. The interval is
    ``scipy.stats.binomtest(...).proportion_ci(method="exact")``. It
    covers the rate of images whose audit finds a contradiction; that rate is a lower
    bound on the rate of certificates that are wrong about G, since a search can miss.
    """
    records = list(records)
    if not records:
        raise ValueError("summarize_audits needs at least one AuditRecord")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence!r}")
    keys = ["index", "region", "search", "certified", "R"]
    rows = [row for record in records for row in record.rows()]
    points = pd.DataFrame(rows, columns=[*keys, *POINT_COLUMNS[1:]])
    verdicts = points["verdict"]
    table = (
        points.assign(
            contradictions=(verdicts == "contradiction").astype(int),
            agrees=(verdicts == "agrees").astype(int),
            ambiguous=(verdicts == "ambiguous").astype(int),
        )
        .groupby(keys, sort=True)
        .agg(
            points=("verdict", "size"),
            contradictions=("contradictions", "sum"),
            agrees=("agrees", "sum"),
            ambiguous=("ambiguous", "sum"),
            min_pA_deployed=("pA_deployed", "min"),
            min_pA_frozen=("pA_frozen", "min"),
            max_mu_ratio=("mu_ratio", "max"),
            max_sigma_change=("sigma_change", "max"),
        )
        .reset_index()
    )
    by_image: dict[int, bool] = {}
    for record in records:
        by_image[record.index] = by_image.get(record.index, False) or record.contradicted
    images, contradicted = len(by_image), sum(by_image.values())
    interval = binomtest(contradicted, images).proportion_ci(confidence, method="exact")
    return AuditSummary(
        table=table,
        images=images,
        contradicted=contradicted,
        rate=contradicted / images,
        low=float(interval.low),
        high=float(interval.high),
        confidence=float(confidence),
    )


def record_to_dict(record: AuditRecord) -> dict[str, object]:
    """``record`` as plain containers and tensors (``torch.load(weights_only=True)`` reads it)."""
    values = {f.name: getattr(record, f.name) for f in fields(record) if f.name != "points"}
    values["input_range"] = None if record.input_range is None else list(record.input_range)
    shell = record.region_scale
    values["region_scale"] = None if shell is None else list(shell)
    values["points"] = [
        {
            **{f.name: getattr(p, f.name) for f in fields(p) if f.name not in ("delta", "verdict")},
            "delta": torch.from_numpy(np.ascontiguousarray(p.delta)),
            "verdict": {**asdict(p.verdict), "counts": list(p.verdict.counts)},
        }
        for p in record.points
    ]
    return values


def record_from_dict(values: dict[str, object]) -> AuditRecord:
    """The inverse of :func:`record_to_dict`."""
    points = tuple(
        AuditPoint(
            **{
                **point,
                "delta": point["delta"].numpy(),
                "verdict": PointVerdict(
                    **{**point["verdict"], "counts": tuple(point["verdict"]["counts"])}
                ),
            }
        )
        for point in values["points"]  # type: ignore[union-attr]
    )
    box, shell = values["input_range"], values.get("region_scale")
    return AuditRecord(
        **{
            **values,
            "input_range": None if box is None else tuple(box),  # type: ignore[arg-type]
            "region_scale": None if shell is None else tuple(shell),  # type: ignore[arg-type]
            "points": points,
        }
    )
