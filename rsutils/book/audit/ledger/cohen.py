"""Rules for the statements of Cohen et al. 2019, checked against their tables and logs.

The ledger quotes a structured summary of the paper, whose numbers come from its
Tables 1, 3 (transcribed as ``cohen2019_tables_1_3``) and 4 (PREDICT, in
:func:`~rsutils.book.papers.published.cohen2019_published`). Cohen et al. released a
certification or prediction log for each model of those tables
(:mod:`rsutils.book.papers.released`); a rule here checks a stated number against the table
that prints it *and* against the log that should have produced it. A rule that needs
the logs reads them from the context's ``reference_root`` (``None``: the configured
``RSUTILS_REFERENCE``) and says "not checkable" when they are not there.

A log agrees with a printed number when it rounds to it, if the log holds the images
the table was computed on; if it holds a subsample (CIFAR-10: 500 of the
10,000 test images Table 3 certifies; ImageNet σ = 0.25: 427 of 500), when it is
within :data:`SAME_EVALUATION_Z` binomial standard errors of it.

The rules (each ``@ledger_rule`` name, with the columns it reads):

- ``cohen_table``: ``value`` is the cell of ``tables`` at ``column`` of the best of
  ``rows`` (``%`` or ``fraction`` as ``unit`` says), and the log of that row agrees;
- ``cohen_transcription``: the quote is a printed table whose cells the transcribed
  ``tables`` holds;
- ``cohen_table_columns``: of the radii ``column`` lists, the logs of ``rows`` fit the
  printed cells only at the table's headers;
- ``cohen_predict``: Table 4's ``rows`` quantity at ``n = column`` is ``value`` and the
  PREDICT log reproduces it;
- ``cohen_abstentions``: most abstentions of the PREDICT log with ``n = column`` are
  images that the log with the most draws gets wrong;
- ``cohen_images``: the logs of Table 1's or 3's models (``rows`` = dataset) hold
  ``value`` images each;
- ``cohen_release_folder``: the release holds logs under the folder ``rows``, whose
  name ends with ``value``;
- ``cohen_alpha_logs``: no log's certificates rule out the level ``value`` at ``from``
  draws, by the test of
  :func:`~rsutils.book.audit.released_alpha.released_alpha_evidence` (its ``implied
  α``: a log's ceilings where they decide, its printed radii where they do not), the
  one test chapter 07 counts such logs by;
- ``cohen_draws_logs``: no log's largest certificate needs more draws than ``value``
  at level ``from`` (the ceiling test alone: the printed radii say nothing of other
  numbers of draws);
- ``cohen_alpha_insensitive``: recertifying at level ``value`` the logs that imply
  :data:`IMPLIED_RUN_ALPHA` by that test (taken as run at it) moves certified accuracy
  by less than a standard error of the log's images;
- ``cohen_seconds``: ``value`` seconds per image lies within the per-log means of
  dataset ``rows``;
- ``samples_for_radius``: "about ``value``" draws certify ``from``·σ at ``to`` percent
  confidence (within half a decade, :func:`~rsutils.book.audit.measured.about`);
- ``as_percent``: ``value`` percent is ``from``.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from rsutils.analysis.metrics import certified_accuracy
from rsutils.book.audit.cross_paper import released_accuracy
from rsutils.book.audit.ledger.rules import LedgerContext, ledger_rule, printed_interval, verdict
from rsutils.book.audit.measured import about
from rsutils.book.audit.released_alpha import ALTERNATIVE_ALPHA, released_alpha_evidence
from rsutils.book.audit.verdicts import AlphaVerdict, ClaimVerdict, LedgerVerdict
from rsutils.book.papers.published import transcription_mismatches
from rsutils.book.papers.released import (
    COHEN2019_CERTIFY_LOGS,
    COHEN2019_PREDICT_NS,
    cohen2019_certify_log,
    cohen2019_predict_log,
    reanalyse_released_certify,
    reanalyse_released_predict,
    recertify_released_logs,
)
from rsutils.core.confidence import min_samples_for_radius
from rsutils.core.smooth import ABSTAIN
from rsutils.logs.read import read_log
from rsutils.reference import reference_root

__all__ = [
    "ACR_PER_IMAGE",
    "ACR_READINGS",
    "IMPLIED_RUN_ALPHA",
    "SAME_EVALUATION_Z",
    "TABLE_IMAGES",
    "ReleasedValue",
    "agrees_with_log",
    "implied_levels",
    "needs_release",
    "released_best",
    "released_best_per_image",
    "released_envelope_area",
    "released_models",
]

#: How many binomial standard errors a subsample's value may lie from the printed one
#: and still come from the same evaluation (chapter 01's reading: "a value of 2 or
#: more would be surprising if the two came from the same evaluation").
SAME_EVALUATION_Z = 2.0
#: The images each table's numbers were computed on, as the summary states them
#: ("ImageNet (500 subsampled test samples certified), CIFAR-10 (full test set
#: certified)"; CIFAR-10's test set holds 10,000 images).
TABLE_IMAGES = {"imagenet": 500, "cifar10": 10_000}
_DATASETS = {"ImageNet": "imagenet", "CIFAR-10": "cifar10"}
#: The level the test of
#: :func:`~rsutils.book.audit.released_alpha.released_alpha_evidence` weighs the stated
#: one against, and at which the logs it finds run are taken to have been run: their
#: largest certificates need α between about 0.009 and 0.0099.
IMPLIED_RUN_ALPHA = ALTERNATIVE_ALPHA
#: The ``column`` of a ledger row that reads "the ACR" of a best-over-σ row image by
#: image (:func:`released_best_per_image`).
ACR_PER_IMAGE = "ACR, best σ per image"
#: The readings of "the ACR" of a best-over-σ row that :func:`released_best` computes,
#: by the name a ledger row gives in its ``column``, in words for what a rule finds.
ACR_READINGS = {
    "ACR": "the largest ACR of one released model",
    ACR_PER_IMAGE: "the mean over images of each image's best certified radius "
    "over the released models",
}
Rule = Callable[[Mapping[str, str], LedgerContext], tuple[str, LedgerVerdict]]


@dataclass(frozen=True)
class ReleasedValue:
    """One number recomputed from a released log: ``value`` (a fraction, or an ACR),
    the ``sigma`` of the model it comes from, the log's ``images`` and the standard
    error of ``value`` over those images."""

    value: float
    sigma: str
    images: int
    standard_error: float


def _models(dataset: str, root: object) -> dict[str, pd.DataFrame]:
    keys = [(t, s) for d, t, split, s in COHEN2019_CERTIFY_LOGS if d == dataset and t == s]
    return {s: read_log(cohen2019_certify_log(dataset, t, s, root=root)) for t, s in keys}  # type: ignore[arg-type]


def released_models(dataset: str, root: object = None) -> dict[str, pd.DataFrame]:
    """The released logs of the models Tables 1 (``"imagenet"``) and 3 (``"cifar10"``)
    print: each model trained and certified at one σ on the test split, by σ as the
    release writes it (``"0.25"``). Raises ``FileNotFoundError`` when the release is
    not at ``root`` (``None``: ``RSUTILS_REFERENCE``)."""
    if dataset not in TABLE_IMAGES:
        raise ValueError(f"Cohen et al.'s tables cover {sorted(TABLE_IMAGES)}, not {dataset!r}")
    return _models(dataset, root)


def released_best(dataset: str, quantity: float | str, root: object = None) -> ReleasedValue:
    """The best value over the released models of ``dataset`` (:func:`released_models`):
    the certified accuracy at radius ``quantity`` (the envelope over training σ at that
    radius, :func:`~rsutils.book.audit.cross_paper.released_accuracy`), with
    ``quantity="ACR"`` the largest ACR of one model, or with :data:`ACR_PER_IMAGE` the
    mean of each image's best radius (:func:`released_best_per_image`; both readings
    are in :data:`ACR_READINGS`). The standard error is binomial for an
    accuracy and the spread of the per-image radii over √m for ACR."""
    if quantity == ACR_PER_IMAGE:
        return released_best_per_image(dataset, root)
    logs = released_models(dataset, root)
    if quantity != "ACR":
        radius = float(quantity)
        table = released_accuracy(dataset, [radius], logs={float(s): v for s, v in logs.items()})
        sigma, value = float(table.loc[radius, "envelope σ"]), table.loc[radius, "envelope"] / 100
        images = int(table.loc["images", sigma])
        error = float(np.sqrt(max(value * (1 - value), 1 / images) / images))
        return ReleasedValue(float(value), f"{sigma:.2f}", images, error)
    best = None
    for sigma, log in logs.items():
        per_image = log["radius"].to_numpy(dtype=float) * log["correct"].to_numpy()
        if best is None or per_image.mean() > best.value:
            error = float(per_image.std(ddof=1) / np.sqrt(len(log)))
            best = ReleasedValue(float(per_image.mean()), sigma, len(log), error)
    assert best is not None
    return best


def released_best_per_image(dataset: str, root: object = None) -> ReleasedValue:
    """The mean over images of each image's best certified radius over the released
    models of ``dataset`` (:func:`released_models`; a radius counts only where the
    prediction is correct, else it is 0): the ACR of a row that takes, image by image,
    the σ that certifies it furthest. An image that some log lacks takes the best of
    the logs that hold it; ``images`` counts the images any log holds, ``sigma`` lists
    the models, and the standard error is the spread of the best radii over √m."""
    logs = released_models(dataset, root)
    radii = pd.concat(
        {
            s: log.set_index("idx")["radius"] * log.set_index("idx")["correct"]
            for s, log in logs.items()
        },
        axis=1,
    )
    best = radii.max(axis=1).to_numpy(dtype=float)
    error = float(best.std(ddof=1) / np.sqrt(len(best)))
    return ReleasedValue(float(best.mean()), ", ".join(logs), len(best), error)


def released_envelope_area(dataset: str, root: object = None) -> float:
    """The area under the envelope (the best certified accuracy per radius over the
    released models of ``dataset``): what an "ACR" of the envelope would be, although
    no single classifier has it. Exact: the curves are step functions."""
    logs = list(released_models(dataset, root).values())
    steps = np.unique(np.concatenate([[0.0], *(log["radius"].to_numpy(float) for log in logs)]))
    curves = np.array([certified_accuracy(log, steps[1:]) for log in logs])
    return float(np.sum(np.diff(steps) * curves.max(axis=0)))


def agrees_with_log(printed: float, half_unit: float, log: ReleasedValue, table: int) -> bool:
    """Whether a log value agrees with a printed one (fractions; see the module's
    docstring): it rounds to it when the log holds the ``table`` images the number was
    computed on, else it lies within :data:`SAME_EVALUATION_Z` standard errors."""
    if log.images >= table:
        return abs(log.value - printed) <= half_unit + 1e-12
    return abs(log.value - printed) <= SAME_EVALUATION_Z * log.standard_error + half_unit


def needs_release(rule: Rule) -> Rule:
    """``rule``, answering "not checkable" when Cohen et al.'s logs are not found."""

    @functools.wraps(rule)
    def checked(row: Mapping[str, str], context: LedgerContext) -> tuple[str, LedgerVerdict]:
        try:
            return rule(row, context)
        except FileNotFoundError:
            return (
                "Cohen et al.'s released logs are not at the reference folder",
                LedgerVerdict.NOT_CHECKABLE,
            )

    return checked


def _scale(row: Mapping[str, str]) -> float:
    return 0.01 if row["unit"].startswith("%") else 1.0


def _half(text: str) -> float:
    low, high = printed_interval(text)
    return (high - low) / 2


def _label(label: str) -> tuple[str, str]:
    """``"ImageNet 0.25"`` → ``("imagenet", "0.25")``."""
    name, sigma = label.rsplit(" ", 1)
    return _DATASETS[name], f"{float(sigma):.2f}"


def _at(label: str, radius: float, root: object) -> ReleasedValue:
    """The certified accuracy at ``radius`` of the log of the table row ``label``."""
    dataset, sigma = _label(label)
    log = released_models(dataset, root)[sigma]
    value = float(certified_accuracy(log, radius)[0])
    error = float(np.sqrt(max(value * (1 - value), 1 / len(log)) / len(log)))
    return ReleasedValue(value, sigma, len(log), error)


@ledger_rule("cohen_table")
@needs_release
def _cohen_table(row: Mapping[str, str], context: LedgerContext) -> tuple[str, LedgerVerdict]:
    """The stated value is the printed cell (Tables 1 and 3 print two decimals) of the
    best of ``rows`` at ``column``, and that model's log agrees (:func:`agrees_with_log`)."""
    cells = context.table(row["tables"]).data.set_index("row").loc[row["rows"].split("|")]
    label = cells[row["column"]].astype(float).idxmax()
    cell = float(cells.loc[label, row["column"]])
    stated, half = float(row["value"]) * _scale(row), _half(row["value"]) * _scale(row)
    log = _at(label, float(row["column"]), context.reference_root)
    printed = abs(stated - cell) <= half + 0.005
    logged = agrees_with_log(cell, 0.005, log, TABLE_IMAGES[_label(label)[0]])
    text = f"table {cell:.2f} ({label}); log {log.value:.3f} ({log.images} images, "
    return text + f"SE {log.standard_error:.3f})", verdict(printed and logged)


@ledger_rule("cohen_transcription")
def _cohen_transcription(
    row: Mapping[str, str], context: LedgerContext
) -> tuple[str, LedgerVerdict]:
    """The quote, a table printed on one line, holds the cells of the transcribed
    ``tables`` (:func:`~rsutils.book.papers.published.transcription_mismatches`)."""
    table = context.table(row["tables"])
    problems = transcription_mismatches(table, row["quote"])
    cells = int(table.data.iloc[:, 1:].notna().sum().sum())
    return ("; ".join(problems) or f"all {cells} printed cells agree"), verdict(not problems)


@ledger_rule("cohen_table_columns")
@needs_release
def _cohen_table_columns(
    row: Mapping[str, str], context: LedgerContext
) -> tuple[str, LedgerVerdict]:
    """Which radii of ``column`` (``|`` separated) the printed cells of ``rows`` can
    stand at: a choice of increasing radii fits when every cell agrees with its model's
    log there (:func:`agrees_with_log`); holds when the table's headers are the only
    choice that fits."""
    cells = context.table(row["tables"]).data.set_index("row").loc[row["rows"].split("|")]
    cells = cells.dropna(axis=1).astype(float)
    radii = [float(r) for r in row["column"].split("|")]
    root = context.reference_root
    logs = {(label, r): _at(label, r, root) for label in cells.index for r in radii}
    fitting = [
        choice
        for choice in itertools.combinations(radii, cells.shape[1])
        if all(
            agrees_with_log(cell, 0.005, logs[label, r], TABLE_IMAGES[_label(label)[0]])
            for label, printed in cells.iterrows()
            for r, cell in zip(choice, printed, strict=True)
        )
    ]
    headers = tuple(float(h) for h in cells.columns)
    shown = "; ".join(", ".join(f"{r:g}" for r in choice) for choice in fitting) or "none"
    return f"the logs fit the cells at r = {shown}", verdict(fitting == [headers])


@ledger_rule("cohen_predict")
@needs_release
def _cohen_predict(row: Mapping[str, str], context: LedgerContext) -> tuple[str, LedgerVerdict]:
    """Table 4's ``rows`` quantity (``accuracy``, ``abstention rate`` or ``seconds per
    prediction``) at ``n = column`` is the stated value (Table 4 prints two decimals),
    and the released PREDICT log, run on the same 500 images, rounds to it."""
    table = reanalyse_released_predict(root=context.reference_root)
    n, quantity = int(row["column"].replace(",", "")), row["rows"]
    printed, logged = float(table.loc[n, f"{quantity}, printed"]), float(table.loc[n, quantity])
    stated, half = float(row["value"]) * _scale(row), _half(row["value"]) * _scale(row)
    images = int(table.loc[n, "images"])
    log = ReleasedValue(logged, "0.25", images, 0.0)
    holds = abs(stated - printed) <= half + 0.005 and agrees_with_log(printed, 0.005, log, images)
    return f"Table 4 {printed:.2f}; log {logged:.3f} ({images} images)", verdict(holds)


@ledger_rule("cohen_abstentions")
@needs_release
def _cohen_abstentions(row: Mapping[str, str], context: LedgerContext) -> tuple[str, LedgerVerdict]:
    """ "Most abstentions at n = ``column`` occur where g itself is wrong": more than half
    of the images the PREDICT log with ``column`` draws abstains on are wrong (or
    abstained on) in the log with the most draws, the closest the release comes to g."""
    n, most = int(row["column"].replace(",", "")), max(COHEN2019_PREDICT_NS)
    few = read_log(cohen2019_predict_log(n, root=context.reference_root))
    many = read_log(cohen2019_predict_log(most, root=context.reference_root))
    both = few.merge(many, on="idx", suffixes=("", "_g"))
    abstained = both[both["predict"] == ABSTAIN]
    wrong = int((abstained["correct_g"] == 0).sum())
    text = (
        f"{wrong} of {len(abstained)} abstentions at n = {n:,} are wrong at n = {most:,}; "
        f"accuracy {few['correct'].mean():.3f} against {many['correct'].mean():.3f}"
    )
    return text, verdict(wrong > len(abstained) / 2)


def _sigmas(labels: pd.Series) -> str:
    return "; ".join(
        f"{images} (σ = {', '.join(group.index)})" for images, group in labels.groupby(labels)
    )


@ledger_rule("cohen_images")
@needs_release
def _cohen_images(row: Mapping[str, str], context: LedgerContext) -> tuple[str, LedgerVerdict]:
    """Each released log of the models of the table of dataset ``rows``
    (:func:`released_models`) holds ``value`` images."""
    logs = released_models(row["rows"], context.reference_root)
    images = pd.Series({sigma: len(log) for sigma, log in logs.items()})
    return _sigmas(images), verdict(bool((images == int(row["value"])).all()))


@ledger_rule("cohen_release_folder")
def _cohen_release_folder(
    row: Mapping[str, str], context: LedgerContext
) -> tuple[str, LedgerVerdict]:
    """The release holds logs under the folder ``rows`` (relative to its ``cohen2019/``),
    and the folder's name ends with the stated ``value`` as a whole number (``resnet110``
    for a 110-layer network, not for 10; ``noise_0.25`` for σ = 0.25)."""
    root = reference_root(context.reference_root)
    if root is None or not (root / "cohen2019").is_dir():
        return (
            "Cohen et al.'s released logs are not at the reference folder",
            LedgerVerdict.NOT_CHECKABLE,
        )
    folder = root / "cohen2019" / row["rows"]
    logs = [p for p in folder.rglob("*") if p.is_file()] if folder.is_dir() else []
    named = re.search(rf"(?<![\d.]){re.escape(row['value'])}$", folder.name) is not None
    holds = bool(logs) and named
    return f"{row['rows']}: {len(logs)} logs", verdict(holds)


def _released(context: LedgerContext, n: int = 100_000, alpha: float = 0.001) -> pd.DataFrame:
    """Every released certification log
    (:func:`~rsutils.book.papers.released.reanalyse_released_certify`),
    read afresh: the logs are small."""
    return reanalyse_released_certify(root=context.reference_root, n=n, alpha=alpha)


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def implied_levels(context: LedgerContext, n: int, alpha: float) -> pd.DataFrame:
    """The evidence of :func:`~rsutils.book.audit.released_alpha.released_alpha_evidence`
    for every released log at ``n`` draws, ``alpha`` against
    :data:`IMPLIED_RUN_ALPHA`, with ``rules out`` added: whether the log's ``implied
    α`` is a level other than ``alpha`` (not ``alpha``, not "undecidable"). Computed
    once per context (the ``computed`` field of
    :class:`~rsutils.book.audit.ledger.rules.LedgerContext`)."""
    key = ("implied levels", n, alpha)
    if key not in context.computed:
        evidence = released_alpha_evidence(
            root=context.reference_root, n=n, stated=alpha, alternative=IMPLIED_RUN_ALPHA
        )
        kept = {AlphaVerdict.at_level(alpha), AlphaVerdict.UNDECIDABLE}
        context.computed[key] = evidence.assign(**{"rules out": ~evidence["implied α"].isin(kept)})
    return context.computed[key]  # type: ignore[return-value]


def _implied_text(evidence: pd.DataFrame, alpha: str, n: str) -> str:
    """How many logs rule out level ``alpha`` at ``n`` draws, what they imply, and by
    which of the two tests (the ceilings decide first)."""
    out = evidence[evidence["rules out"]]
    levels = out["implied α"].value_counts()
    said = " or ".join(
        level if len(levels) == 1 else f"{level} ({count})" for level, count in levels.items()
    )
    by_ceilings = int((out["ceilings say"] != AlphaVerdict.UNDECIDABLE).sum())
    text = f"{len(out)} of {len(evidence)} logs imply {said or 'no other level'}"
    text += f", not α = {alpha}, at n = {n} (implied α of released_alpha_evidence"
    if len(out):
        text += f": {by_ceilings} by the ceilings, {len(out) - by_ceilings} by the printed radii"
    return text + ")"


@ledger_rule("cohen_alpha_logs")
@needs_release
def _cohen_alpha_logs(row: Mapping[str, str], context: LedgerContext) -> tuple[str, LedgerVerdict]:
    """No released certification log rules out the stated α (``value``) at the stated
    ``from`` draws: none implies another level by the test of
    :func:`~rsutils.book.audit.released_alpha.released_alpha_evidence` (:func:`implied_levels`)."""
    evidence = implied_levels(context, int(_number(row["from"])), _number(row["value"]))
    text = _implied_text(evidence, row["value"], row["from"])
    return text, verdict(not evidence["rules out"].any())


@ledger_rule("cohen_draws_logs")
@needs_release
def _cohen_draws_logs(row: Mapping[str, str], context: LedgerContext) -> tuple[str, LedgerVerdict]:
    """No released certification log needs more than the stated ``value`` draws at the
    stated level ``from`` (``draws it needs`` of
    :func:`~rsutils.book.papers.released.reanalyse_released_certify`)."""
    n, alpha = int(_number(row["value"])), _number(row["from"])
    table = _released(context, n, alpha)
    above = table[table["draws it needs"] > n]
    text = f"{len(above)} of {len(table)} logs need more than {n:,} draws at α = {row['from']}"
    if len(above):
        text += f" (up to {int(above['draws it needs'].max()):,})"
    return text, verdict(above.empty)


@ledger_rule("cohen_alpha_insensitive")
@needs_release
def _cohen_alpha_insensitive(
    row: Mapping[str, str], context: LedgerContext
) -> tuple[str, LedgerVerdict]:
    """ "Certified accuracy is insensitive to α": recertifying at the stated α
    (``value``) the logs that imply :data:`IMPLIED_RUN_ALPHA` instead
    (:func:`implied_levels`), taken as run at it
    (:func:`~rsutils.book.papers.released.recertify_released_logs`), changes certified
    accuracy at the tables' radii by less than one binomial standard error of each
    log's images (a change its test images cannot resolve); "not checkable" when no
    log implies another level."""
    alpha = _number(row["value"])
    evidence = implied_levels(context, 100_000, alpha)
    beyond = evidence[evidence["implied α"] == AlphaVerdict.at_level(IMPLIED_RUN_ALPHA)]
    if beyond.empty:
        return f"no log implies α = {IMPLIED_RUN_ALPHA:g}: the release varies no level", (
            LedgerVerdict.NOT_CHECKABLE
        )
    changed = recertify_released_logs(
        beyond.index, alpha=alpha, run_alpha=IMPLIED_RUN_ALPHA, root=context.reference_root
    )
    images = changed.set_index(["dataset", "trained σ", "split", "certified σ"]).index.map(
        evidence["images"]
    )
    p = changed["as released"].to_numpy()
    error = np.sqrt(np.maximum(p * (1 - p), 1 / images.to_numpy()) / images.to_numpy())
    ratio = float((changed["largest change"] / error).max())
    text = (
        f"{len(beyond)} logs recertified at α = {row['value']}: certified accuracy moves by "
        f"at most {changed['largest change'].max():.3f} ({ratio:.2f} standard errors)"
    )
    return text, verdict(ratio < 1)


@ledger_rule("cohen_seconds")
@needs_release
def _cohen_seconds(row: Mapping[str, str], context: LedgerContext) -> tuple[str, LedgerVerdict]:
    """ "About ``value`` seconds per image": the stated time lies within the range of the
    mean seconds per image of the released certification logs of dataset ``rows``."""
    seconds = _released(context).xs(row["rows"], level="dataset")["seconds per image"]
    low, high = printed_interval(row["value"])
    text = f"per-log means {seconds.min():.1f}–{seconds.max():.1f} s ({len(seconds)} logs)"
    return text, verdict(low <= seconds.max() and high >= seconds.min())


@ledger_rule("samples_for_radius")
def _samples_for_radius(
    row: Mapping[str, str], context: LedgerContext
) -> tuple[str, LedgerVerdict]:
    """ "About ``value`` draws certify ``from``·σ at ``to`` percent confidence": the
    fewest draws that can (:func:`~rsutils.core.confidence.min_samples_for_radius`) are
    within half a decade of ``value`` (:func:`~rsutils.book.audit.measured.about`)."""
    alpha = 1 - _number(row["to"]) / 100
    needed = min_samples_for_radius(_number(row["from"]), alpha)
    text = f"{needed:,} draws at α = {alpha:.3g}"
    return text, verdict(about(_number(row["value"]), needed) is ClaimVerdict.HOLDS)


@ledger_rule("as_percent")
def _as_percent(row: Mapping[str, str], context: LedgerContext) -> tuple[str, LedgerVerdict]:
    """``value`` percent is the fraction ``from``, at both printed precisions."""
    low, high = printed_interval(row["value"])
    f_low, f_high = printed_interval(row["from"])
    text = f"{100 * _number(row['from']):g}%"
    return text, verdict(low <= 100 * f_high and high >= 100 * f_low)
