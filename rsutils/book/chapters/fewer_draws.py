"""The fewer-draws chapter's comparisons: each procedure beside CERTIFY on the same images.

A CERTIFY log and a run of the other procedure share the seed and the images, and the
other procedure's draws are prefixes of CERTIFY's stream, so the two differ only where
they stop, not by independent noise.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy.stats import norm

from rsutils.analysis.metrics import average_certified_radius, certified_accuracy
from rsutils.core.confidence import (
    clopper_pearson_upper,
    least_expected_draws,
    max_certifiable_pA,
    min_samples_for_radius,
)
from rsutils.core.reference_precision import reference_bound
from rsutils.sequential.coverage import all_hits_draws, certify_probability
from rsutils.sequential.procedure import Test, labelled_tests
from rsutils.sequential.published import PublishedTest
from rsutils.sequential.record import unpack_labels

__all__ = [
    "best_possible_savings",
    "curve_passes",
    "decision_table",
    "disagreement_table",
    "draws_at_p_one",
    "exact_coverage_table",
    "mode_agreement",
    "planned_summary",
    "precision_table",
    "procedure_table",
    "published_tests",
    "radius_floor",
    "reference_ceiling",
    "savings_bound_at",
    "uncertified_share",
]


def decision_table(
    standard: pd.DataFrame, decisions: pd.DataFrame, sigma: float, alpha: float
) -> pd.DataFrame:
    """Per radius: certified accuracy of CERTIFY's log and of the sequential decisions
    (:func:`~rsutils.sequential.decisions.decisions_long`), forward passes per image of
    each, the ratio, and the ``floor`` of one certificate (``n0`` +
    :func:`~rsutils.core.confidence.min_samples_for_radius`)."""
    n0 = int(standard["n0"].iloc[0])
    certify_passes = float((standard["n0"] + standard["n"]).mean())
    rows = []
    for radius, group in decisions.groupby("radius", sort=True):
        passes = float(group["forward_passes"].mean())
        certify_accuracy = float(certified_accuracy(standard, [radius])[0])
        rows.append(
            {
                "radius": radius,
                "r/σ": radius / sigma,
                "CERTIFY acc.": certify_accuracy,
                "sequential acc.": float(group["correct"].mean()),
                "gap (points)": 100 * (float(group["correct"].mean()) - certify_accuracy),
                "CERTIFY passes": certify_passes,
                "sequential passes": passes,
                "fewer by": certify_passes / passes,
                "floor": n0 + min_samples_for_radius(radius / sigma, alpha),
            }
        )
    return pd.DataFrame(rows).set_index("radius")


def planned_summary(
    standard: pd.DataFrame,
    planned: pd.DataFrame,
    radii: Sequence[float],
    *,
    sigma: float,
    radius_loss: float,
) -> dict[str, float]:
    """CERTIFY against CERTIFY with planned draws on the same images (Gaussian noise of
    ``sigma``, planned with ``radius_loss``): forward passes per image and their ratio,
    ACR of each, the largest certified-accuracy gap over ``radii`` (points, planned
    minus CERTIFY) and the largest below the band ``[ceiling - radius_loss, ceiling]``
    (``ceiling = σΦ⁻¹(alpha^(1/n))``, CERTIFY's largest radius), and where the draws
    go: the share of images whose CERTIFY count was all ``n`` draws (at the ceiling) and
    the share of the planned draws they took."""
    certify_passes = standard["n0"] + standard["n"]
    planned_passes = planned["n0"] + planned["n"]
    radii = np.asarray(radii, dtype=float)
    gaps = certified_accuracy(planned, radii) - certified_accuracy(standard, radii)
    n, alpha = int(standard["n"].iloc[0]), float(standard["alpha"].iloc[0])
    ceiling = sigma * float(norm.ppf(max_certifiable_pA(n, alpha)))
    below = gaps[radii < ceiling - radius_loss]
    by_index = standard.set_index("idx")
    all_in_class = (by_index["count"] == by_index["n"]).reindex(planned["idx"])
    at_ceiling = all_in_class.to_numpy(dtype=bool)
    return {
        "CERTIFY passes": float(certify_passes.mean()),
        "planned passes": float(planned_passes.mean()),
        "fewer by": float(certify_passes.mean() / planned_passes.mean()),
        "CERTIFY ACR": average_certified_radius(standard),
        "planned ACR": average_certified_radius(planned),
        "largest gap (points)": float(100 * gaps[np.argmax(np.abs(gaps))]),
        "ceiling": ceiling,
        "largest gap below the band (points)": float(100 * below[np.argmax(np.abs(below))]),
        "images at the ceiling": float(at_ceiling.mean()),
        "their share of planned draws": float(
            planned_passes.to_numpy()[at_ceiling].sum() / planned_passes.sum()
        ),
    }


def radius_floor(
    standard: pd.DataFrame,
    radii: Sequence[float],
    *,
    sigma: float,
    radius_loss: float,
) -> dict[str, float]:
    """The least forward passes per image with which any procedure can match CERTIFY's
    certified-accuracy curve image by image at every radius of ``radii`` below the band
    ``[ceiling - radius_loss, ceiling]`` (Gaussian noise of ``sigma``).

    An image that CERTIFY's log certifies correctly at ``r`` must then be certified at
    the largest radius of ``radii`` at most ``min(r, r*)``, ``r*`` the largest below the
    band; a non-randomised level-``alpha`` test needs at least
    :func:`~rsutils.core.confidence.min_samples_for_radius` draws for that, even with
    every draw in the class, and ``n0`` selection draws come first (the others are
    counted at ``n0``). Returned: ``r*``, the floor there, the share of images CERTIFY
    certifies correctly at ``r*`` or more and the passes per image they force, the floor
    over all images and the most "fewer by" it leaves. A bound, not a procedure: a
    curve allowed to fall some points below CERTIFY's, or a randomised test, can
    spend less.
    """
    n0, n = int(standard["n0"].iloc[0]), int(standard["n"].iloc[0])
    alpha = float(standard["alpha"].iloc[0])
    ceiling = sigma * float(norm.ppf(max_certifiable_pA(n, alpha)))
    grid = np.sort(np.asarray(radii, dtype=float))
    below = grid[grid < ceiling - radius_loss]
    if below.size == 0:
        raise ValueError(
            f"no radius of radii lies below the band [{ceiling - radius_loss:.4g}, "
            f"{ceiling:.4g}]: pass the curve's radii, e.g. np.linspace(0, 4, 161)"
        )
    top = float(below[-1])
    certified = standard["correct"].to_numpy(dtype=bool)
    radius = standard["radius"].to_numpy(dtype=float)
    passes = np.full(len(standard), float(n0))
    for row in np.flatnonzero(certified & (radius >= below[0])):
        needed = below[below <= min(radius[row], top)][-1]
        passes[row] += min_samples_for_radius(needed / sigma, alpha)
    at_top = certified & (radius >= top)
    top_floor = min_samples_for_radius(top / sigma, alpha)
    return {
        "ceiling": ceiling,
        "largest radius below the band": top,
        "floor there (draws)": float(top_floor),
        "images certified there": float(at_top.mean()),
        "their floor (passes per image)": float(n0 + at_top.mean() * top_floor),
        "floor (passes per image)": float(passes.mean()),
        "most fewer by": float((n0 + n) / passes.mean()),
    }


def mode_agreement(reference: pd.DataFrame, fast: pd.DataFrame) -> dict[str, float]:
    """Two CERTIFY logs of the same images in two inference modes: the share of
    images with the same answer, the largest radius difference, accuracy at radius 0
    and seconds per image of each, and the speed-up."""
    a, b = reference.set_index("idx"), fast.set_index("idx").loc[reference["idx"]]
    return {
        "same answer": float((a["predict"] == b["predict"]).mean()),
        "largest radius difference": float((a["radius"] - b["radius"]).abs().max()),
        "accuracy (reference)": float(a["correct"].mean()),
        "accuracy (fast)": float(b["correct"].mean()),
        "seconds per image (reference)": float(a["time"].mean()),
        "seconds per image (fast)": float(b["time"].mean()),
        "faster by": float(a["time"].sum() / b["time"].sum()),
    }


def precision_table(logs: Mapping[str, pd.DataFrame], radii: Sequence[float]) -> pd.DataFrame:
    """Certificates of the same images by several runs (e.g. ``"fp32"``, ``"bf16"`` and
    ``"fp32 from bf16"``: :meth:`~rsutils.book.experiments.Experiments.certify`,
    ``replace(..., inference="fp32").certify`` and
    :meth:`~rsutils.book.experiments.Experiments.certify_reference`), one row each:
    certified accuracy (percent) at each of ``radii``, ACR, seconds per image and how
    many times as fast as the first run (total time)."""
    if not logs:
        raise ValueError("logs must name at least one run")
    first = next(iter(logs.values()))
    order = first["idx"].to_numpy()
    rows = {}
    for name, log in logs.items():
        if sorted(log["idx"]) != sorted(order):
            raise ValueError(f"the log {name!r} holds other images than {next(iter(logs))!r}")
        accuracy = 100 * certified_accuracy(log, radii)
        rows[name] = {
            **{f"acc. % at {r:g}": a for r, a in zip(radii, accuracy, strict=True)},
            "ACR": average_certified_radius(log),
            "s / image": float(log["time"].mean()),
            "faster by": float(first["time"].sum() / log["time"].sum()),
        }
    return pd.DataFrame(rows).T.rename_axis("run")


def procedure_table(
    standard: pd.DataFrame,
    decisions: Mapping[str, pd.DataFrame],
    sigma: float,
    alpha: float,
) -> pd.DataFrame:
    """Several procedures beside CERTIFY, radius by radius, on the same images.

    ``decisions`` maps a procedure's name to its
    :func:`~rsutils.sequential.decisions.decisions_long` table; one row per radius
    (``r/σ``), and per procedure its certified accuracy minus CERTIFY's (``gap``, in
    points) and how many times fewer forward passes per image it spent (``fewer by``),
    beside CERTIFY's accuracy (in percent) and the ``floor`` of one certificate at
    that level (without selection draws).
    """
    columns: dict[tuple[str, str], pd.Series] = {}
    base = None
    for name, long in decisions.items():
        table = decision_table(standard, long, sigma, alpha)
        base = table if base is None else base
        columns[(name, "gap")] = table["gap (points)"]
        columns[(name, "fewer by")] = table["fewer by"]
    if base is None:
        raise ValueError("decisions must name at least one procedure")
    n0 = int(standard["n0"].iloc[0])
    columns[("CERTIFY", "acc. %")] = 100 * base["CERTIFY acc."]
    columns[("floor", "draws")] = base["floor"] - n0
    frame = pd.DataFrame(columns)
    frame.index = base["r/σ"].round(6)
    return frame.rename_axis("r/σ")


def curve_passes(log: pd.DataFrame, radii: Sequence[float]) -> float:
    """Mean forward passes per image for a whole certified-accuracy curve at ``radii``.

    A run over ``radii`` answers all of them from one stream (the log of a
    :class:`~rsutils.sequential.decisions.Decide`, replayed or live), so an image costs its
    selection draws plus the most draws any radius of the curve needed.
    """
    draws = log[[f"draws@{r:g}" for r in radii]].max(axis=1)
    return float((log["n0"] + draws).mean())


def savings_bound_at(log: pd.DataFrame, radii: Sequence[float], n_max: int, n_large: int) -> float:
    """A lower bound on how many times fewer passes than CERTIFY at ``n_large`` draws a
    confidence-sequence run (:class:`~rsutils.sequential.sequence.AnytimeSchedule`) would
    spend for the whole curve at ``radii`` with ``n_max = n_large``, from its run at a
    smaller ``n_max``.

    The sequence's looks and boundaries do not depend on ``n_max`` (only the forced
    stop at the last look does), so an image that stopped before ``n_max`` stops at
    the same draw with a longer stream, and one that reached ``n_max`` spends at most
    ``n_large``. CERTIFY spends ``n0 + n_large`` on every image.
    """
    draws = log[[f"draws@{r:g}" for r in radii]].max(axis=1)
    worst = np.where(draws >= n_max, n_large, draws)
    n0 = log["n0"].to_numpy()
    return float((n0 + n_large).mean() / (n0 + worst).mean())


def draws_at_p_one(
    r_over_sigma: Sequence[float], alpha: float, tests: Mapping[str, Test]
) -> pd.DataFrame:
    """Draws each of ``tests`` (by name) spends to certify ``r`` when every draw is in
    the class (``pA = 1``, Gaussian noise), beside the fixed-``n`` floor: its first
    certifying look, read off its rule
    (:func:`~rsutils.sequential.coverage.all_hits_draws`; 0: not certified within its
    ``n_max`` draws). Randomised tests are left out: what they spend there is the luck
    of their ``u``."""
    rows = {}
    for k in r_over_sigma:
        p0 = float(norm.cdf(k))
        rows[k] = {
            "floor": min_samples_for_radius(k, alpha),
            **{
                name: all_hits_draws(test, p0)
                for name, test in tests.items()
                if not test.randomized
            },
        }
    return pd.DataFrame(rows).T.rename_axis("r/σ")


def published_tests(n_max: int, alpha: float) -> dict[str, Test]:
    """The published designs of :data:`~rsutils.sequential.procedure.TESTS`
    (:class:`~rsutils.sequential.published.PublishedTest`) with at most ``n_max`` draws
    at level ``alpha``, by their labels, in the registry's order."""
    tests = labelled_tests(n_max, alpha)
    return {name: test for name, test in tests.items() if isinstance(test, PublishedTest)}


def exact_coverage_table(
    tests: Mapping[str, Test], r_over_sigma: Sequence[float], alpha: float
) -> pd.DataFrame:
    """Per test (rows) and radius (columns, ``r/σ``, Gaussian noise): the exact
    probability that it certifies the radius when ``pA = Φ(r/σ)``, the least ``pA``
    that certifies it, so that every certificate is false
    (:func:`~rsutils.sequential.coverage.certify_probability`), in units of ``alpha``:
    at most 1 is the guarantee."""
    rows = {
        name: {
            k: certify_probability(test, float(norm.cdf(k)), claimed_alpha=alpha).probability
            / alpha
            for k in r_over_sigma
        }
        for name, test in tests.items()
    }
    return pd.DataFrame(rows).T.rename_axis(index="test", columns="r/σ")


def best_possible_savings(
    standard: pd.DataFrame,
    records: pd.DataFrame,
    r_over_sigma: Sequence[float],
    sigma: float,
    alpha: float,
) -> pd.Series:
    """Per radius, the most any level-``alpha`` test of the true label could save
    against CERTIFY while certifying every image CERTIFY certifies there (a reasoned
    estimate, not a measurement).

    Each such image must be certified, which costs on average at least
    :func:`~rsutils.core.confidence.least_expected_draws` at its ``p``; the images are
    charged that with ``p`` estimated by their share of label draws in the record
    (``records``, a :func:`~rsutils.sequential.runs.record_dataset` log), every
    other image nothing. CERTIFY's cost ``n0 + n`` over the mean of these charges is
    how many times fewer passes the best such test could spend.
    """
    n0, n = int(records["n0"].iloc[0]), int(records["n"].iloc[0])
    shares = np.array(
        [
            np.count_nonzero(unpack_labels(row.estimation) == row.label) / n
            for row in records.itertuples(index=False)
        ]
    )
    by_index = standard.set_index("idx").loc[records["idx"]]
    saving = {}
    for k in r_over_sigma:
        certified = (by_index["correct"] == 1).to_numpy() & (
            by_index["radius"] >= k * sigma
        ).to_numpy()
        p0 = max(0.5, float(norm.cdf(k)))
        charge = np.where(
            certified, least_expected_draws(np.where(certified, shares, 1.0), p0, alpha), 0.0
        )
        saving[k] = (n0 + n) / max(float(charge.mean()), 1.0)
    return pd.Series(saving, name="best possible").rename_axis("r/σ")


def uncertified_share(standard: pd.DataFrame, long: pd.DataFrame, radius: float) -> float:
    """The share of a procedure's forward passes at ``radius`` (its
    :func:`~rsutils.sequential.decisions.decisions_long` table) spent on images whose
    true label CERTIFY's log does not certify there: what deciding "not certified"
    cost, which Wald's bound (:func:`best_possible_savings`) does not charge."""
    at = long[np.isclose(long["radius"], radius)].set_index("idx")
    by_index = standard.set_index("idx").loc[at.index]
    certified = (by_index["correct"] == 1) & (by_index["radius"] >= radius)
    passes = at["forward_passes"]
    return float(passes[~certified.to_numpy()].sum() / passes.sum())


def disagreement_table(logs: Mapping[str, pd.DataFrame], alpha: float) -> pd.DataFrame:
    """How often a paired draw's class differed between the float32 and the fast model,
    from logs of :meth:`~rsutils.book.experiments.Experiments.certify_reference` (one
    row each): the paired draws, the share whose classes ``differ`` at all and the
    share that ``disagree`` against the selected class (fast in it, float32 not: what
    the certificate charges), each with its one-sided Clopper–Pearson upper bound at
    ``alpha`` over all the draws pooled (a bound on the rate averaged over the images)."""
    rows = {}
    for name, log in logs.items():
        m = int(log["m"].sum())
        differ, disagree = int(log["differ"].sum()), int(log["disagreements"].sum())
        rows[name] = {
            "paired draws": m,
            "differ %": 100 * differ / m,
            "differ, upper %": 100 * float(clopper_pearson_upper(differ, m, alpha)),
            "disagree %": 100 * disagree / m,
            "disagree, upper %": 100 * float(clopper_pearson_upper(disagree, m, alpha)),
        }
    return pd.DataFrame(rows).T.rename_axis("run")


def reference_ceiling(sigma: float, n: int, m: int, alpha: float, fast_share: float = 0.5) -> float:
    """The largest radius the float32-from-fast certificate can give with ``n`` fast
    draws and ``m`` paired ones: every draw in the class and no disagreement
    (:func:`~rsutils.core.reference_precision.reference_bound`), against CERTIFY's
    ``σΦ⁻¹(α^{1/n})``; 0 when that bound is not above 1/2."""
    bound = reference_bound(n, n, 0, m, alpha, fast_share).pA_lower
    return float(sigma * norm.ppf(bound)) if bound > 0.5 else 0.0
