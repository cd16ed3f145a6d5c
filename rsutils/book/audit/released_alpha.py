"""Which level α the certificates of each of Cohen et al.'s released logs imply.

Cohen et al. state ``n = 100,000`` draws at ``α = 0.001``. Their logs keep each
certificate's radius to three significant digits (:mod:`rsutils.analysis.printed`), not
``n`` or ``α``; two tests, both at the stated ``n``, read the level back from them, log
by log, each against the stated level and the next one up (``α = 0.01``):

1. **The ceilings.** With every draw in the top class (``k = n``) the certificate is the
   ceiling ``σΦ⁻¹(α^(1/n))``, the most ``n`` draws certify at ``α``: 3.81σ at 0.001,
   3.91σ at 0.01. Inputs on which every draw agrees are common, and their certificates
   all print as the ceiling of the level the log was run at. A certificate is *at* a
   ceiling when its printed radius is within half a printed unit of it (prints as it),
   *above* it when every value the printed radius stands for exceeds it. The rule
   (:func:`ceiling_verdict`):

   - ``"α = 0.01"``: some certificate above the 0.001 ceiling and none above the 0.01
     one (they reach the 0.01 ceiling, which 0.001 cannot give);
   - ``"α = 0.001"``: none above the 0.001 ceiling and at least one at it (a log run at
     0.01 would have put the inputs whose draws all agreed at its own, higher ceiling);
   - ``"neither"``: some certificate above even the 0.01 ceiling;
   - ``"undecidable"``: none at or above the 0.001 ceiling: every certificate lies below
     both ceilings, where they say nothing of the level.

   At ``σ = 0.5`` the printed 0.001 ceiling (1.91) is also what ``α = 0.01`` prints
   for ``k = n − 1``: a certificate at that ceiling alone does not tell the levels
   apart, which is why the rule for 0.001 asks for none above it.

2. **The printed radii.** Every certificate, not only the largest, pins its count ``k``
   to the counts whose certificate prints as its radius at the level tried
   (:func:`~rsutils.analysis.printed.count_range`); where no count prints as it, that level
   cannot have produced it. Near the ceilings and near radius 0 the certificates of
   consecutive counts lie further apart than a printed unit, so many printed radii fit
   one level only. The rule (:func:`radii_verdict`) is the same in form:
   ``"α = 0.001"`` when some certificates fit no count at 0.01 and all fit one at
   0.001, ``"α = 0.01"`` the reverse, ``"neither"`` when both levels are ruled out,
   ``"undecidable"`` when neither is.

Each verdict (an :class:`~rsutils.book.audit.verdicts.AlphaVerdict`, whose text is the
one quoted above) says what the log is consistent with at the stated ``n``, not how it was
run: a certificate above the 0.001 ceiling also fits more draws at 0.001
(:func:`~rsutils.book.papers.released.reanalyse_released_certify`'s ``draws it needs``).
:func:`released_alpha_evidence` applies both tests to every released log.

3. **More draws at the stated level.** For a log whose ceilings say ``"α = 0.01"``, the
   other reading is ``α = 0.001`` with more draws ``n′``: the inputs whose draws all
   agreed would then print at the 0.001 ceiling of ``n′``, so only the ``n′`` whose
   ceiling prints as the log's largest certificate can have put them there
   (:func:`draws_matching_ceiling`). :func:`more_draws_evidence` tries every such ``n′``
   against every printed radius (:func:`~rsutils.analysis.printed.fits_some_count`): the
   reading is ruled out when no ``n′`` gives every printed radius a count.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

import numpy as np
import pandas as pd
from scipy.stats import norm

from rsutils.analysis.printed import count_range, fits_some_count, half_printed_unit
from rsutils.book.audit.verdicts import AlphaVerdict
from rsutils.book.papers.released import COHEN2019_CERTIFY_LOGS, cohen2019_certify_log
from rsutils.core.confidence import max_certifiable_pA
from rsutils.core.smooth import ABSTAIN
from rsutils.logs.read import read_log

__all__ = [
    "ALTERNATIVE_ALPHA",
    "DATASET_NAMES",
    "STATED_ALPHA",
    "TOP_RADII",
    "alpha_evidence",
    "ceiling_verdict",
    "draws_matching_ceiling",
    "log_label",
    "more_draws_evidence",
    "more_draws_table",
    "radii_verdict",
    "released_alpha_evidence",
]

#: The level Cohen et al. state, and the next one up that the tests weigh it against.
STATED_ALPHA, ALTERNATIVE_ALPHA = 0.001, 0.01


def ceiling_verdict(
    at_stated: int,
    above_stated: int,
    above_alternative: int,
    *,
    stated: float = STATED_ALPHA,
    alternative: float = ALTERNATIVE_ALPHA,
) -> AlphaVerdict:
    """The ceilings' verdict (rule 1 of the module docstring) from a log's counts of
    certificates at and above the ``stated`` level's ceiling and above the
    ``alternative`` one's: the member naming either level
    (:meth:`~rsutils.book.audit.verdicts.AlphaVerdict.at_level`: ``"α = 0.001"``,
    ``"α = 0.01"``), ``"neither"`` or ``"undecidable"``."""
    if min(at_stated, above_stated, above_alternative) < 0:
        raise ValueError("counts of certificates cannot be negative; pass the log's counts")
    if above_alternative > 0:
        return AlphaVerdict.NEITHER
    if above_stated > 0:
        return AlphaVerdict.at_level(alternative)
    return AlphaVerdict.at_level(stated) if at_stated > 0 else AlphaVerdict.UNDECIDABLE


def radii_verdict(
    unprintable_stated: int,
    unprintable_alternative: int,
    *,
    stated: float = STATED_ALPHA,
    alternative: float = ALTERNATIVE_ALPHA,
) -> AlphaVerdict:
    """The printed radii's verdict (rule 2 of the module docstring) from a log's
    counts of certificates whose printed radius no count gives at the ``stated`` and
    at the ``alternative`` level."""
    if min(unprintable_stated, unprintable_alternative) < 0:
        raise ValueError("counts of certificates cannot be negative; pass the log's counts")
    if unprintable_stated and unprintable_alternative:
        return AlphaVerdict.NEITHER
    if unprintable_stated:
        return AlphaVerdict.at_level(alternative)
    if unprintable_alternative:
        return AlphaVerdict.at_level(stated)
    return AlphaVerdict.UNDECIDABLE


def alpha_evidence(
    log: pd.DataFrame,
    sigma: float,
    *,
    n: int = 100_000,
    stated: float = STATED_ALPHA,
    alternative: float = ALTERNATIVE_ALPHA,
) -> dict[str, object]:
    """Both tests of the module docstring on one log certified at ``sigma``.

    ``log`` has Cohen et al.'s columns ``predict`` and ``radius`` (as printed); its
    certificates are the rows that do not abstain. Returns ``certificates``; per level
    ``a`` (``stated`` and ``alternative``, keys written ``f"{a:g}"``) ``at a ceiling``,
    ``above a ceiling`` (both with ``n`` draws) and ``no count at a`` (certificates
    whose printed radius no count of ``n`` draws gives at ``a``); ``ceilings say``
    (:func:`ceiling_verdict`), ``radii say`` (:func:`radii_verdict`) and ``implied
    α``: the ceilings' verdict where it decides, else the radii's, and
    ``"conflicting"`` where the two decide differently (each an
    :class:`~rsutils.book.audit.verdicts.AlphaVerdict`).
    """
    if not {"predict", "radius"} <= set(log.columns):
        raise ValueError(
            f"the log has columns {list(log.columns)}; it needs 'predict' and 'radius' "
            "(read it with rsutils.read_log)"
        )
    answered = log["predict"].to_numpy() != ABSTAIN
    radius = log["radius"].to_numpy(dtype=float)[answered]
    half = half_printed_unit(radius)
    row: dict[str, object] = {"certificates": int(answered.sum())}
    for alpha in (stated, alternative):
        ceiling = sigma * float(norm.ppf(max_certifiable_pA(n, alpha)))
        row[f"at {alpha:g} ceiling"] = int((np.abs(radius - ceiling) <= half).sum())
        row[f"above {alpha:g} ceiling"] = int((radius - half > ceiling).sum())
    for alpha in (stated, alternative):
        least, greatest = count_range(radius, sigma, n, alpha)
        row[f"no count at {alpha:g}"] = int((greatest < least).sum())
    by_ceilings = ceiling_verdict(
        row[f"at {stated:g} ceiling"],
        row[f"above {stated:g} ceiling"],
        row[f"above {alternative:g} ceiling"],
        stated=stated,
        alternative=alternative,
    )
    by_radii = radii_verdict(
        row[f"no count at {stated:g}"], row[f"no count at {alternative:g}"],
        stated=stated, alternative=alternative,
    )  # fmt: skip
    row["ceilings say"], row["radii say"] = by_ceilings, by_radii
    undecidable = AlphaVerdict.UNDECIDABLE
    if by_ceilings is undecidable or by_radii in (undecidable, by_ceilings):
        row["implied α"] = by_radii if by_ceilings is undecidable else by_ceilings
    else:
        row["implied α"] = AlphaVerdict.CONFLICTING
    return row


def draws_matching_ceiling(largest: float, sigma: float, alpha: float) -> range:
    """The numbers of draws ``n′`` whose ceiling ``sigma·Φ⁻¹(alpha^(1/n′))`` at level
    ``alpha`` prints as ``largest`` (lies within half its printed unit): the ceiling
    rises with ``n′``, so they are one range, empty when no ``n′`` fits."""
    half = float(half_printed_unit(np.array([largest]))[0])
    low, high = (norm.cdf((largest + side * half) / sigma) for side in (-1, 1))
    first = int(np.ceil(np.log(alpha) / np.log(low))) if low < 1 else 1
    last = int(np.floor(np.log(alpha) / np.log(high))) if high < 1 else 10**12
    return range(max(first, 1), last + 1)


#: How many of a log's largest printed radii :func:`more_draws_evidence` tries every
#: candidate ``n′`` against first; the ``n′`` they leave are tried against them all.
TOP_RADII = 30


def more_draws_evidence(
    log: pd.DataFrame, sigma: float, *, stated: float = STATED_ALPHA
) -> dict[str, object]:
    """Rule 3 of the module docstring on one log certified at ``sigma``: ``draws
    tried`` (the range of :func:`draws_matching_ceiling` for its largest certificate at
    the ``stated`` level), ``draws that fit`` (how many of them give every printed
    radius of a certificate some count, :func:`~rsutils.analysis.printed.fits_some_count`)
    and ``more draws at 0.001`` (``"ruled out"`` when none does, else ``"not ruled
    out"``). The largest :data:`TOP_RADII` radii, where counts lie furthest apart, are
    tried first; exact, as every remaining candidate is then tried against every
    radius."""
    answered = log["predict"].to_numpy() != ABSTAIN
    radii = np.unique(log["radius"].to_numpy(dtype=float)[answered])
    radii = radii[radii > 0]
    span = draws_matching_ceiling(radii.max(), sigma, stated)
    candidates = np.arange(span.start, span.stop)
    for tried in (radii[-TOP_RADII:], radii):
        if len(candidates):
            candidates = candidates[fits_some_count(tried, sigma, candidates, stated).all(axis=1)]
    return {
        "draws tried": f"{span.start:,} to {span.stop - 1:,}" if span else "none",
        "draws that fit": len(candidates),
        "more draws at 0.001": "not ruled out" if len(candidates) else "ruled out",
    }


def more_draws_table(
    keys: Iterable[tuple[str, float, str, float]],
    *,
    root: str | os.PathLike[str] | None = None,
    download: bool = False,
) -> pd.DataFrame:
    """:func:`more_draws_evidence` for the released logs named by ``keys`` (index
    entries of :func:`released_alpha_evidence`: dataset, trained σ, split, certified
    σ), one row each, indexed by them; meant for the logs whose ceilings say α = 0.01,
    whose largest certificates sit at a ceiling (elsewhere the largest certificate
    need not be one, and the rule's first step does not apply)."""
    rows = {}
    for key in keys:
        dataset, trained, split, sigma = key
        path = cohen2019_certify_log(
            dataset, f"{trained:.2f}", f"{sigma:.2f}", split=split, root=root, download=download
        )
        rows[tuple(key)] = more_draws_evidence(read_log(path), float(sigma))
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.index = pd.MultiIndex.from_tuples(
        table.index, names=["dataset", "trained σ", "split", "certified σ"]
    )
    return table


def released_alpha_evidence(
    *,
    root: str | os.PathLike[str] | None = None,
    download: bool = False,
    n: int = 100_000,
    stated: float = STATED_ALPHA,
    alternative: float = ALTERNATIVE_ALPHA,
) -> pd.DataFrame:
    """:func:`alpha_evidence` for every log of
    :data:`~rsutils.book.papers.released.COHEN2019_CERTIFY_LOGS`, at ``n`` draws, the
    ``stated`` level (0.001) against the ``alternative`` (0.01): one row per log, indexed as
    :func:`~rsutils.book.papers.released.reanalyse_released_certify` (dataset, trained σ,
    split, certified σ), with ``images`` (rows of the log) first."""
    rows = []
    for dataset, trained, split, sigma in COHEN2019_CERTIFY_LOGS:
        path = cohen2019_certify_log(
            dataset, trained, sigma, split=split, root=root, download=download
        )
        log = read_log(path)
        row = {"dataset": dataset, "trained σ": float(trained), "split": split}
        row |= {"certified σ": float(sigma), "images": len(log)}
        evidence = alpha_evidence(log, float(sigma), n=n, stated=stated, alternative=alternative)
        rows.append(row | evidence)
    return pd.DataFrame(rows).set_index(["dataset", "trained σ", "split", "certified σ"])


#: The datasets of the release as prose names them.
DATASET_NAMES = {"imagenet": "ImageNet", "cifar10": "CIFAR-10"}


def log_label(key: tuple[str, float, str, float]) -> str:
    """A released log named for prose from its index (dataset, trained σ, split,
    certified σ): ``"CIFAR-10 0.25/0.50"`` (trained/certified σ), with ``" (train)"``
    for a log certified on training images."""
    dataset, trained, split, sigma = key
    name = DATASET_NAMES.get(dataset, dataset)
    return f"{name} {trained:.2f}/{sigma:.2f}" + (" (train)" if split == "train" else "")
