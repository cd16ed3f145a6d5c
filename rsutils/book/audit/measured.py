"""This book's measured rows beside the papers' tables, and verdicts on their claims.

:func:`measured_table` lays out certification logs like a published table (the same
radius columns, units and, where the paper prints them, improvement rows), so that the
audit rules of :mod:`rsutils.book.audit.table_audit` run on our numbers exactly as on
theirs. The other functions turn the book's replicated comparisons
(:func:`rsutils.analysis.differences.replicated_comparisons`: intervals over replicate
models and images, each judged by :func:`rsutils.analysis.verdicts.judge`: a
:class:`~rsutils.analysis.verdicts.Verdict` that rises, falls, is equivalent within ±m or
is undecided) into a verdict on one qualitative claim each
(:func:`rsutils.book.papers.published.qualitative_claims`), a
:class:`~rsutils.book.audit.verdicts.ClaimVerdict`: "holds", "does not hold", "not
resolved at this scale" or "not testable here" (:mod:`rsutils.book.audit.decided`: a
comparison decided by construction, whatever the classifier does). The comparisons behind one
claim are one family (Holm's correction, :func:`~rsutils.analysis.verdicts.holm_family`).

- :func:`overall_verdict` and :func:`claim_verdict`: a claim that a method beats others
  (every comparison must go the claimed way);
- :func:`tradeoff_comparisons` and :func:`tradeoff_verdict`: Cohen et al.'s σ
  trade-off;
- :func:`alm_beyond_radius` and :func:`alm_claim_verdict`: how much a method's ACR
  measured by ALM exceeds its ACR measured by the inscribed radius (UCAN's "modest by
  radius, significant by ALM");
- :func:`about`: whether a stated round number ("about 10⁵") has the right order of
  magnitude.

A verdict never rests on one model's interval over the images alone unless the rows
say so (``models`` = 1): the chapters pass the replicate models' comparisons.
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd
from scipy.stats import norm

from rsutils.analysis.differences import replicated_comparisons
from rsutils.analysis.margins import Margins
from rsutils.analysis.metrics import certified_accuracy
from rsutils.analysis.verdicts import Direction, Verdict, holm_family
from rsutils.book.audit.verdicts import ClaimVerdict
from rsutils.book.papers.published import PublishedTable, full_scale
from rsutils.core.confidence import max_certifiable_pA

__all__ = [
    "ACCURACY_AT_0",
    "ALMOST_ALL",
    "GRID_STEP",
    "PREVAILING",
    "REACH",
    "about",
    "all_of",
    "alm_beyond_radius",
    "alm_claim_verdict",
    "claim_verdict",
    "crossing_verdict",
    "curve_comparisons",
    "curve_verdict",
    "evidence_text",
    "gain_text",
    "measured_table",
    "overall_verdict",
    "radii_below_ceiling",
    "tradeoff_comparisons",
    "tradeoff_verdict",
    "verdict_counts",
]

#: The measured-by label of :func:`tradeoff_comparisons`' accuracy rows.
ACCURACY_AT_0 = "accuracy at r = 0"

#: The prefix of the measured-by label of :func:`tradeoff_comparisons`' rows at the radii
#: where both σ can certify.
REACH = "reach: "

#: Rows to judge: a :func:`~rsutils.analysis.differences.replicated_comparisons` table, or
#: :class:`~rsutils.analysis.verdicts.Verdict` values (or rows with a ``verdict``).
Rows = pd.DataFrame | Iterable[Verdict] | Iterable[Mapping[str, object]]

#: One ``{name: log}`` dictionary per replicate model.
Replicates = Sequence[Mapping[str, pd.DataFrame]]


def measured_table(
    like: PublishedTable,
    rows: Mapping[str, tuple[pd.DataFrame, str]],
    *,
    name: str,
    dataset: str,
    scale: str,
) -> PublishedTable:
    """Our logs laid out as ``like``: its radius headers, units and row kinds.

    ``rows`` maps a row label to ``(log, column)``, the column being ``"radius"`` or
    ``"alm"``. When ``like`` prints improvement rows, each row labelled ``"Ours …"``
    gets one under it, computed as the paper defines it: relative percent over the
    best row not labelled "Ours" in the column (empty where that best is 0).
    Accuracies are in ``like``'s unit, to one decimal more than a paper prints.
    """
    top = full_scale(like)
    digits = 1 if top == 100 else 3
    headers = list(like.data.columns[1:])
    records, kinds = [], []
    for label, (log, column) in rows.items():
        values = certified_accuracy(log, like.radii, column=column) * top
        records.append({"row": label, **dict(zip(headers, np.round(values, digits), strict=True))})
        kinds.append("certified_accuracy")
    data = pd.DataFrame(records, columns=["row", *headers])
    if "improvement" in like.kinds:
        data, kinds = _with_improvements(data, headers)
    meta = {
        "paper": "this book (measured)",
        "seed": "none: measured by the book",
        "table": f"{like.meta['table']}, our rows",
        "caption": f"Our certified accuracy in the layout of {like.name}",
        "dataset": dataset,
        "norm": like.meta["norm"],
        "columns": like.meta["columns"],
        "row_kinds": kinds,
        "units": like.meta["units"],
        "scale": scale,
    }
    return PublishedTable(name, data, meta)


def _with_improvements(data: pd.DataFrame, headers: list[str]) -> tuple[pd.DataFrame, list[str]]:
    ours = data["row"].str.startswith("Ours")
    best = data.loc[~ours, headers].max()
    records, kinds = [], []
    for _, row in data.iterrows():
        records.append(row.to_dict())
        kinds.append("certified_accuracy")
        if row["row"].startswith("Ours"):
            gain = (row[headers].astype(float) - best) / best.where(best > 0) * 100
            records.append({"row": "Improvement over the Best Baseline (%)", **gain.round(1)})
            kinds.append("improvement")
    return pd.DataFrame(records, columns=data.columns), kinds


def _verdicts(rows: Rows) -> list[Verdict]:
    """The verdicts of ``rows``: a table's ``verdict`` column, or verdict values, each a
    tested :class:`~rsutils.analysis.verdicts.Verdict`."""
    if isinstance(rows, pd.DataFrame):
        if "verdict" not in rows.columns:
            raise ValueError(
                "the table has no 'verdict' column: pass the rows of "
                "rsutils.analysis.differences.replicated_comparisons"
            )
        verdicts = list(rows["verdict"])
    else:
        verdicts = [v if isinstance(v, Verdict | str) else v["verdict"] for v in rows]
    if not verdicts:
        raise ValueError("no comparisons to judge the claim by")
    unknown = [v for v in verdicts if not isinstance(v, Verdict) or not v.tested]
    if unknown:
        raise ValueError(
            f"{[str(v) for v in unknown]} are not verdicts of a test by "
            "rsutils.analysis.verdicts.judge: judge the comparisons with it (a verdict "
            "read back as text: Verdict.parse)"
        )
    return verdicts


def _each_alone(rows: Rows) -> list[Verdict]:
    """The verdicts of ``rows`` each judged on its own p-values (no correction), for a
    conclusion that needs every comparison (an intersection–union test: each at level
    α keeps the whole at α); verdict values that carry no p-values are taken as they
    are."""
    if isinstance(rows, pd.DataFrame) and "p" in rows.columns:
        return _verdicts(holm_family(rows, adjust=False))
    return _verdicts(rows)


def _against(verdict: Verdict, expected: Direction) -> bool:
    """Whether ``verdict`` excludes a change of the margin's size in the ``expected``
    direction: it goes the other way, it is equivalent within its margin, or it goes
    the ``expected`` way by less than the margin (a real change, shown smaller than
    the smallest one that matters)."""
    return verdict.within_margin or verdict.direction not in (None, expected)


def _supports(verdict: Verdict, expected: Direction) -> bool:
    """Whether ``verdict`` shows a change in the ``expected`` direction that may be as
    large as the margin (its interval excludes 0, and does not exclude m)."""
    return verdict.direction is expected and not verdict.within_margin


def claim_verdict(rows: Rows, expected: Direction = Direction.RISES) -> ClaimVerdict:
    """A claim that every comparison of ``rows`` goes the ``expected`` way.

    ``rows`` are verdicts of :func:`~rsutils.analysis.verdicts.judge` (a table of
    :func:`~rsutils.analysis.differences.replicated_comparisons`, or its
    :class:`~rsutils.analysis.verdicts.Verdict` values), ``expected`` a
    :class:`~rsutils.analysis.verdicts.Direction`; the claimed effect is a change of at
    least the comparison's margin m (the smallest that matters). Holds when every
    comparison goes the expected way and none is shown smaller than m; does not hold
    when the data exclude the claimed effect for any comparison: it goes the other way,
    is "equivalent within ±m" (no change that can be told from 0, and none that
    matters) or goes the expected way "within ±m" (a real change, smaller than the one
    that matters); otherwise (some undecided, none against) not resolved at this scale.

    The correction follows the error each conclusion can make. "Does not hold" follows
    from any one comparison, so it reads the family's Holm-adjusted verdicts (the
    table's ``verdict``); "holds" needs every one, an intersection–union test whose
    error is at most α when each comparison is tested at α alone (Berger, 1982), so it
    reads each row judged on its own p-values.
    """
    if expected not in tuple(Direction):
        raise ValueError(f"expected must be Direction.RISES or FALLS, got {expected!r}")
    expected = Direction(expected)
    if any(_against(v, expected) for v in _verdicts(rows)):
        return ClaimVerdict.DOES_NOT_HOLD
    if all(_supports(v, expected) for v in _each_alone(rows)):
        return ClaimVerdict.HOLDS
    return ClaimVerdict.NOT_RESOLVED


def overall_verdict(rows: Rows) -> ClaimVerdict:
    """One verdict on "A beats B" from its comparisons (:func:`claim_verdict` with
    ``"rises"``): holds when every comparison rises, does not hold when any falls or is
    equivalent within the margin, otherwise not resolved at this scale."""
    return claim_verdict(rows, Direction.RISES)


#: The claim verdicts :func:`all_of` combines, the one that prevails first: a part that
#: does not hold sinks the claim; a part that cannot be tested here leaves the whole
#: untestable, however the others come out.
PREVAILING = (
    ClaimVerdict.DOES_NOT_HOLD,
    ClaimVerdict.NOT_TESTABLE,
    ClaimVerdict.NOT_RESOLVED,
    ClaimVerdict.HOLDS,
)


def all_of(*verdicts: ClaimVerdict) -> ClaimVerdict:
    """The verdict on a claim made of parts: does not hold when any part does not, not
    testable here when any part is not (and none fails), not resolved when any part is
    not, otherwise holds. A verdict that :data:`PREVAILING` does not rank is refused."""
    if not verdicts:
        raise ValueError("no parts to judge the claim by")
    unknown = [v for v in verdicts if not isinstance(v, ClaimVerdict) or v not in PREVAILING]
    if unknown:
        raise ValueError(
            f"{[str(v) for v in unknown]} are not claim verdicts that all_of ranks "
            f"({', '.join(map(str, PREVAILING))}): pass ClaimVerdict members"
        )
    return next(verdict for verdict in PREVAILING if verdict in verdicts)


#: The step of the radius grids of :func:`radii_below_ceiling`, in units of the log's σ.
GRID_STEP = 0.5


def radii_below_ceiling(log: pd.DataFrame, step: float = GRID_STEP) -> np.ndarray:
    """The radii ``0, step·σ, 2·step·σ, …`` strictly below the CERTIFY ceiling
    σ·Φ⁻¹(α^(1/n)) of ``log`` (its ``scale``, ``n`` and ``alpha``): the radii its
    certificates can reach, so that a comparison there is not decided by construction."""
    ceiling, sigma = _ceiling(log), float(log["scale"].max())
    radii = np.arange(0.0, ceiling, step * sigma)
    return radii[radii < ceiling]


def tradeoff_comparisons(
    replicates: Replicates,
    names: Sequence[str],
    *,
    margin: float | Margins | None = None,
    seed: int = 0,
) -> pd.DataFrame:
    """Cohen et al.'s trade-off over replicate models: each σ against the next smaller.

    ``names`` are the fixed-σ logs of every replicate in order of growing σ. For each
    neighbouring pair (larger σ against smaller),
    :func:`~rsutils.analysis.differences.replicated_comparisons` of the certified
    accuracy at radius 0 (:data:`ACCURACY_AT_0`; the trade's cost, expected to fall)
    and, for the trade's gain, at every radius of :func:`radii_below_ceiling` of the
    smaller σ beyond 0 (measured-by labels ``"reach: r = …"``): where both σ can
    certify, so that a rise is a property of the models, not of the smaller σ's
    ceiling (beyond it the smaller σ certifies nothing, by construction). All rows are
    one family (:func:`~rsutils.analysis.verdicts.holm_family`).
    """
    if len(names) < 2:
        raise ValueError("names must list at least two fixed-σ logs, in order of growing σ")
    tables = []
    for smaller, larger in itertools.pairwise(names):
        grid = radii_below_ceiling(replicates[0][smaller])[1:]
        measures = {ACCURACY_AT_0: ("radius", 0.0)}
        measures |= {f"{REACH}r = {r:.2f}": ("radius", float(r)) for r in grid}
        tables.append(
            replicated_comparisons(
                replicates, [(larger, smaller)], measures=measures, margin=margin, seed=seed
            )
        )
    return holm_family(pd.concat(tables))


def _ceiling(log: pd.DataFrame) -> float:
    missing = {"scale", "n", "alpha"} - set(log.columns)
    if missing:
        raise ValueError(f"the log lacks {sorted(missing)}: pass CERTIFY logs of rsutils")
    top = max_certifiable_pA(int(log["n"].max()), float(log["alpha"].iloc[0]))
    return float(log["scale"].max() * norm.ppf(top))


def crossing_verdict(rows: Rows) -> ClaimVerdict:
    """A claim that a method is above its control *somewhere* on a grid of radii:
    holds when any comparison rises by an interval that does not exclude the margin,
    does not hold when every one falls, is equivalent within its margin or rises by
    less than it, otherwise not resolved at this scale. "Holds" follows from any one
    comparison, so it reads the family's Holm-adjusted verdicts; "does not hold" needs
    every one (an intersection–union test), so it reads each row on its own p-values
    (as :func:`claim_verdict`, the other way round)."""
    if any(_supports(v, Direction.RISES) for v in _verdicts(rows)):
        return ClaimVerdict.HOLDS
    if all(_against(v, Direction.RISES) for v in _each_alone(rows)):
        return ClaimVerdict.DOES_NOT_HOLD
    return ClaimVerdict.NOT_RESOLVED


def tradeoff_verdict(table: pd.DataFrame) -> ClaimVerdict:
    """Cohen et al.'s trade-off from :func:`tradeoff_comparisons`: holds when, at every
    step up in σ, accuracy at radius 0 falls and the larger σ rises above the smaller
    at some radius both can certify (:func:`all_of` of :func:`claim_verdict` and of
    :func:`crossing_verdict` per step)."""
    measured = table.index.get_level_values("measured by")
    accuracy, reach = measured == ACCURACY_AT_0, measured.str.startswith(REACH)
    if not accuracy.any() or not reach.any():
        raise ValueError("the table lacks accuracy or reach rows: pass tradeoff_comparisons")
    steps = table[reach].groupby(level=["method", "against"], sort=False)
    crossings = [crossing_verdict(rows) for _, rows in steps]
    return all_of(claim_verdict(table[accuracy], Direction.FALLS), *crossings)


#: The share of a grid of radii that "almost all radii" stands for in a claim judged
#: curve-wise (:func:`curve_verdict`), fixed before any comparison: four radii in five.
ALMOST_ALL = 0.8


def curve_comparisons(
    replicates: Replicates,
    pairs: Sequence[tuple[str, str]],
    *,
    margin: float | Margins | None = None,
    seed: int = 0,
) -> pd.DataFrame:
    """Each (method, control) pair compared curve-wise: the certified accuracy at every
    radius of :func:`radii_below_ceiling` of the control (0, σ/2, σ, … below its
    ceiling, where a rise is not decided by the control certifying nothing), by
    :func:`~rsutils.analysis.differences.replicated_comparisons`. Measured-by labels
    ``"r = …"``; all rows one family (:func:`~rsutils.analysis.verdicts.holm_family`).
    """
    tables = []
    for method, control in pairs:
        grid = radii_below_ceiling(replicates[0][control])
        measures = {f"r = {r:.2f}": ("radius", float(r)) for r in grid}
        tables.append(
            replicated_comparisons(
                replicates, [(method, control)], measures=measures, margin=margin, seed=seed
            )
        )
    return holm_family(pd.concat(tables))


def curve_verdict(table: pd.DataFrame, share: float = ALMOST_ALL) -> ClaimVerdict:
    """ "Superior across almost all radii, for every control", from
    :func:`curve_comparisons`: holds when, for every pair, the method rises (by an
    interval that does not exclude the margin) at no fewer than ``share`` of the
    radii; does not hold when, for some pair, more than ``1 − share`` of them fall,
    are equivalent within the margin or rise by less than it (then fewer than
    ``share`` can rise); otherwise not resolved at this scale. Both conclusions read
    the family's Holm-adjusted verdicts: each rests on several comparisons but on
    neither one of them nor all, so the stricter reading is kept."""
    if not 0.0 < share <= 1.0:
        raise ValueError(f"share must lie in (0, 1], got {share!r}")
    verdicts = []
    for _, rows in table.groupby(level=["method", "against"], sort=False):
        said = _verdicts(rows)
        rising = np.mean([_supports(v, Direction.RISES) for v in said])
        against = np.mean([_against(v, Direction.RISES) for v in said])
        tie = 1e-12  # shares are ratios of small counts: compare them up to rounding
        if 1.0 - against < share - tie:
            verdicts.append(ClaimVerdict.DOES_NOT_HOLD)
        else:
            held = rising >= share - tie
            verdicts.append(ClaimVerdict.HOLDS if held else ClaimVerdict.NOT_RESOLVED)
    return all_of(*verdicts)


def alm_beyond_radius(
    replicates: Replicates, name: str, *, margin: float | Margins | None = None, seed: int = 0
) -> pd.DataFrame:
    """ACR measured by ALM minus ACR measured by the inscribed radius, same certificates.

    For the logs ``name`` of every replicate: one row of
    :func:`~rsutils.analysis.differences.replicated_comparisons`, index
    ``(f"{name} by ALM", f"{name} by radius", "ACR")``, its interval over the replicate
    models and images. Against an isotropic control (whose ALM equals its radius) this
    is exactly how much more ``name`` gains by ALM than by radius.
    """
    by_alm, by_radius = f"{name} by ALM", f"{name} by radius"
    paired = [
        {by_alm: logs[name].assign(radius=logs[name]["alm"]), by_radius: logs[name]}
        for logs in replicates
    ]
    return replicated_comparisons(
        paired, [(by_alm, by_radius)], measures={"ACR": "radius"}, margin=margin, seed=seed
    )


def alm_claim_verdict(radius_gain: Rows, alm_beyond: pd.DataFrame) -> ClaimVerdict:
    """UCAN's "modest by radius but significant by ALM", from replicated comparisons.

    ``radius_gain``: the method against isotropic noise by radius; ``alm_beyond``: its
    :func:`alm_beyond_radius`, which must be judged with a margin (without one a
    difference of rounding, 1e-16 from a σ constant up to float error, would read as a
    rise). Does not hold when the radius gain falls, or ALM's excess over the radius
    falls, is equivalent within the margin or rises by less than it ("significantly"
    states a size: a boost shown smaller than the margin is not one); holds when the
    excess rises; otherwise not resolved at this scale.
    """
    if "margin" not in alm_beyond.columns or alm_beyond["margin"].isna().any():
        raise ValueError(
            "alm_beyond was judged without a margin: pass margin=MARGINS to "
            "alm_beyond_radius, or a difference of rounding reads as a boost"
        )
    if any(v.falls for v in _verdicts(radius_gain)):
        return ClaimVerdict.DOES_NOT_HOLD
    return claim_verdict(alm_beyond, Direction.RISES)


def about(stated: float, actual: float) -> ClaimVerdict:
    """Whether "about ``stated``" fits ``actual``: within half a decade of it."""
    if stated <= 0 or actual <= 0:
        raise ValueError("an order of magnitude needs two positive numbers")
    fits = abs(np.log10(actual / stated)) < 0.5
    return ClaimVerdict.HOLDS if fits else ClaimVerdict.DOES_NOT_HOLD


def gain_text(row: Mapping[str, float]) -> str:
    """A difference with its interval, ``+0.258 [0.153, 0.362]``, from a row of
    :func:`~rsutils.analysis.differences.replicated_comparisons` (``gain``, ``low``, ``high``)."""
    return f"{row['gain']:+.3f} [{row['low']:.3f}, {row['high']:.3f}]"


def _label(index: Hashable) -> str:
    if isinstance(index, tuple) and len(index) == 3:
        method, against, measure = index
        return f"{method} − {against}, {measure}"
    return " · ".join(map(str, index)) if isinstance(index, tuple) else str(index)


def evidence_text(rows: pd.DataFrame, *, labels: Mapping[Hashable, str] | None = None) -> str:
    """Replicated comparisons in one line:
    ``label +0.1 [0.05, 0.2] (per model +0.08 +0.12 +0.10) rises; …``.

    Each row of a :func:`~rsutils.analysis.differences.replicated_comparisons` table, labelled
    ``labels[index]`` (by default ``"method − against, measure"``), with its gain, its
    interval, each replicate's own difference (where the table has ``per model``) and
    its verdict.
    """
    labels = labels or {}
    return "; ".join(
        f"{labels.get(index, _label(index))} {gain_text(row)}{_per_model(row)} {row['verdict']}"
        for index, row in rows.iterrows()
    )


def _per_model(row: pd.Series) -> str:
    each = row.get("per model")
    return f" (per model {each})" if isinstance(each, str) and each else ""


def verdict_counts(rows: Rows) -> str:
    """How many comparisons rise, fall, are equivalent within the margin or are
    undecided: ``"of 4 comparisons, 1 rises, 0 falls, 2 equivalent within ±0.05,
    1 undecided"`` (one count per margin that occurs; a margin is stated even at 0;
    a sign within a margin counted apart, where it occurs; each kind in the order of
    its text)."""
    verdicts = _verdicts(rows)
    within = sorted({v for v in verdicts if v.direction and v.within_margin}, key=str)
    equivalent = sorted({v for v in verdicts if v.equivalent}, key=str)
    kinds = [Verdict(Direction.RISES), Verdict(Direction.FALLS), *within, *equivalent, Verdict()]
    if not equivalent and isinstance(rows, pd.DataFrame):
        margins = rows["margin"].dropna().unique() if "margin" in rows.columns else []
        stated = [Verdict(margin=float(m), within_margin=True) for m in sorted(margins)]
        kinds[2 + len(within) : 2 + len(within)] = stated
    counts = [f"{verdicts.count(v)} {v}" for v in kinds]
    return f"of {len(verdicts)} comparisons, " + ", ".join(counts)
