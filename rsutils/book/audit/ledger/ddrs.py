"""Rules for the statements of Alfarra et al. 2022 (data-dependent smoothing, DDRS).

DDRS states its results in prose only: the tables its text cites are missing from it
("In Table , we report"). What can be checked is the arithmetic between the numbers
one sentence gives, the relations between sentences about the same quantities, the
words that compare them, and the numbers it gives for Cohen et al.'s models, which
Cohen et al.'s tables and released logs also give (:mod:`rsutils.book.audit.ledger.cohen`).
Every number is read at its printed precision
(:func:`~rsutils.book.audit.ledger.rules.printed_interval`).

The rules (each ``@ledger_rule`` name, with the columns it reads):

- ``points``: ``value`` is ``to − from`` in percentage points (a difference of
  percentages), not the relative change ``(to − from)/from``; what it finds gives both;
- ``greater`` / ``less``: every reading of the printed numbers puts ``to`` above /
  below ``from`` ("improves", "larger", "drops"; a word's degree, "much" or
  "marginally", has no stated margin and is not checked);
- ``comparable_or_better``: the row's ``value`` and the value of the row whose id is
  ``from`` agree within their printed precision ("comparable": the text states no
  margin) or the row's is the larger ("slightly better": a positive difference);
- ``outweighs``: ``value`` exceeds the size of ``to − from`` for every reading (a gain
  set against a drop in the same passage);
- ``cohen_logs``: a number DDRS gives for Cohen et al. (the best certified accuracy at
  radius ``column`` over training σ, or with ``column`` one of
  :data:`~rsutils.book.audit.ledger.cohen.ACR_READINGS` the ACR so read) lies within
  :data:`~rsutils.book.audit.ledger.cohen.SAME_EVALUATION_Z` standard errors of the best
  released model of dataset ``rows`` (:func:`~rsutils.book.audit.ledger.cohen.released_best`);
  for an ACR, what it finds names the reading its verdict uses and gives the others;
- ``implied_cohen_logs``: the same for Cohen's number implied by a method's stated
  value ``from`` minus its stated improvement ``value``;
- ``cohen_table_envelope``: a number DDRS measured on its own runs of Cohen et al.'s
  method, set beside the best cell of Cohen et al.'s printed ``rows`` of ``tables`` at
  ``column`` (or the absence of that column). DDRS does not say its runs are of the
  models that table certifies, so another paper's table can neither confirm nor refute
  it: the rule gives the gap and says "not checkable", with the row's ``reason``;
- ``ceiling_zero``: a stated zero certified accuracy at radii ``≥ column`` for models
  of σ = ``from`` is forced by the certificate: with Cohen et al.'s draws and level
  (:class:`~rsutils.core.settings.CertifySettings`' defaults, which DDRS's text does not
  restate) CERTIFY cannot certify beyond σΦ⁻¹(α^(1/n)).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

from scipy.stats import norm

from rsutils.book.audit.ledger.cohen import (
    ACR_READINGS,
    SAME_EVALUATION_Z,
    ReleasedValue,
    needs_release,
    released_best,
    released_envelope_area,
)
from rsutils.book.audit.ledger.rules import LedgerContext, ledger_rule, printed_interval, verdict
from rsutils.book.audit.verdicts import LedgerVerdict
from rsutils.core.confidence import max_certifiable_pA
from rsutils.core.settings import CertifySettings

__all__ = ["count_fits", "difference_range"]


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def difference_range(first: str, second: str) -> tuple[float, float]:
    """The least and greatest ``second − first`` over the printed intervals of both."""
    a_low, a_high = printed_interval(first)
    b_low, b_high = printed_interval(second)
    return b_low - a_high, b_high - a_low


def count_fits(percent: str, images: int) -> bool:
    """Whether ``percent`` (as printed) can be ``k/images·100`` for a whole ``k``."""
    low, high = printed_interval(percent)
    return math.ceil(low * images / 100 - 1e-9) <= math.floor(high * images / 100 + 1e-9)


@ledger_rule("points")
def _points(row: Mapping[str, str], context: LedgerContext) -> tuple[str, LedgerVerdict]:
    """``value`` is ``to − from`` read as percentage points; the relative change
    ``(to − from)/from`` is reported beside it and does not count."""
    low, high = printed_interval(row["value"])
    least, most = difference_range(row["from"], row["to"])
    start, end = _number(row["from"]), _number(row["to"])
    relative = (end - start) / start * 100
    text = f"{end - start:.4g} points (as a relative change: {relative:.1f}%)"
    return text, verdict(least <= high and most >= low)


def _order(sign: int) -> Callable[[Mapping[str, str], LedgerContext], tuple[str, LedgerVerdict]]:
    def rule(row: Mapping[str, str], context: LedgerContext) -> tuple[str, LedgerVerdict]:
        least, most = difference_range(row["from"], row["to"])
        start, end = _number(row["from"]), _number(row["to"])
        text = f"{row['to']} − {row['from']} = {end - start:+.4g}"
        if start and end and start * end > 0:
            text += f" (×{end / start:.3g})"
        return text, verdict(least > 0 if sign > 0 else most < 0)

    side = "above" if sign > 0 else "below"
    rule.__doc__ = f"Every reading of the printed numbers puts ``to`` {side} ``from``."
    return rule


ledger_rule("greater")(_order(+1))
ledger_rule("less")(_order(-1))


@ledger_rule("comparable_or_better")
def _comparable_or_better(
    row: Mapping[str, str], context: LedgerContext
) -> tuple[str, LedgerVerdict]:
    """The row's ``value`` and the value of row ``from`` overlap at their printed
    precision, or the row's is larger: "comparable or slightly better"."""
    other = context.values[row["from"]]
    least, most = difference_range(other, row["value"])
    gap = _number(row["value"]) - _number(other)
    text = f"{row['value']} − {other} = {gap:+.3g} (between {least:+.3g} and {most:+.3g})"
    return text, verdict(most >= 0)


@ledger_rule("outweighs")
def _outweighs(row: Mapping[str, str], context: LedgerContext) -> tuple[str, LedgerVerdict]:
    """``value`` exceeds the size of ``to − from`` for every reading of the printed
    numbers: the gain stated is larger than the drop it is set against."""
    least, most = difference_range(row["from"], row["to"])
    low, _ = printed_interval(row["value"])
    drop = abs(_number(row["to"]) - _number(row["from"]))
    text = f"{row['value']} against {drop:.3g}"
    return text, verdict(low > max(abs(least), abs(most)))


def _against_logs(
    low: float, high: float, row: Mapping[str, str], context: LedgerContext, printed: str = ""
) -> tuple[str, str]:
    """Whether [low, high] (the stated number, in the row's unit) meets the best
    released value ± z standard errors; what it finds, in words (with whether a
    ``printed`` percentage can be a count of the log's images, or for an ACR the
    reading the verdict uses and the values of the others)."""
    acr = row["column"] in ACR_READINGS
    scale = 1.0 if acr else 100.0
    quantity = row["column"] if acr else _number(row["column"])
    best: ReleasedValue = released_best(row["rows"], quantity, context.reference_root)
    value, error = best.value * scale, best.standard_error * scale
    centre = (low + high) / 2
    digits, unit = (3, "") if acr else (1, "%")
    reading = f", read as {ACR_READINGS[row['column']]}" if acr else ""
    text = (
        f"released{reading}: {value:.{digits}f}{unit} (σ = {best.sigma}, "
        f"{best.images} images, SE {error:.{digits}f}{unit})"
    )
    if error > 0:
        text += f"; {abs(centre - value) / error:.1f} SE from the stated"
    if acr:
        text += _other_acr_readings(row["rows"], row["column"], context)
    elif printed and not count_fits(printed, best.images):
        text += f"; {printed}% is not a count out of {best.images} images"
    z = SAME_EVALUATION_Z * error
    return text, verdict(low <= value + z and high >= value - z)


def _other_acr_readings(dataset: str, used: str, context: LedgerContext) -> str:
    """The readings of an ACR other than ``used``, each with its released value, and the
    area under the envelope (which is not the ACR of any one classifier)."""
    text = ""
    for reading, words in ACR_READINGS.items():
        if reading != used:
            other = released_best(dataset, reading, context.reference_root)
            text += f"; {words}: {other.value:.3f} (σ = {other.sigma})"
    area = released_envelope_area(dataset, context.reference_root)
    return text + f"; area under the envelope {area:.3f}"


@ledger_rule("cohen_logs")
@needs_release
def _cohen_logs(row: Mapping[str, str], context: LedgerContext) -> tuple[str, LedgerVerdict]:
    """A number DDRS gives for Cohen et al. against the best released model of dataset
    ``rows`` at radius ``column`` (or ``ACR``): within two standard errors of it."""
    return _against_logs(*printed_interval(row["value"]), row, context, row["value"])


@ledger_rule("implied_cohen_logs")
@needs_release
def _implied_cohen_logs(
    row: Mapping[str, str], context: LedgerContext
) -> tuple[str, LedgerVerdict]:
    """Cohen et al.'s number implied by a method's stated ``from`` minus its stated
    improvement ``value``, against the released logs as in ``cohen_logs``."""
    low, high = difference_range(row["value"], row["from"])
    implied = _number(row["from"]) - _number(row["value"])
    text, said = _against_logs(low, high, row, context)
    return f"implied {row['from']} − {row['value']} = {implied:.4g}; {text}", said


@ledger_rule("cohen_table_envelope")
def _cohen_table_envelope(
    row: Mapping[str, str], context: LedgerContext
) -> tuple[str, LedgerVerdict]:
    """A number DDRS measured on its own runs of Cohen et al.'s method (percent) beside
    the best printed cell of ``rows`` of Cohen et al.'s table at radius ``column``
    (fractions with two decimals), or the absence of that radius. DDRS does not say its
    runs are of the models the table certifies, so the table cannot hold or fail the
    number: always "not checkable", and the row's ``reason`` must say why."""
    if not row["reason"].strip():
        raise ValueError(f"{row['id']}: say why another paper's table cannot judge it (reason)")
    table = context.table(row["tables"]).data.set_index("row")
    if row["column"] not in table.columns:
        return f"the table prints no radius {row['column']}", LedgerVerdict.NOT_CHECKABLE
    cells = table.loc[row["rows"].split("|"), row["column"]].astype(float)
    if cells.isna().all():
        return f"the table prints nothing at radius {row['column']}", LedgerVerdict.NOT_CHECKABLE
    best = float(cells.max())
    gap = _number(row["value"]) - 100 * best
    text = f"{100 * best:.0f}% (Cohen et al. print {best:.2f}: {cells.idxmax()}); "
    signed = f"{gap:+.1f}".replace("-", "−")
    return text + f"stated − printed = {signed} points", LedgerVerdict.NOT_CHECKABLE


@ledger_rule("ceiling_zero")
def _ceiling_zero(row: Mapping[str, str], context: LedgerContext) -> tuple[str, LedgerVerdict]:
    """A zero certified accuracy at radii ``≥ column`` for σ = ``from`` is forced when
    the radius exceeds the ceiling σΦ⁻¹(α^(1/n)) of Cohen et al.'s n and α; when it does
    not, the zero depends on the model ("not checkable")."""
    settings = CertifySettings()
    sigma, radius = _number(row["from"]), _number(row["column"])
    ceiling = sigma * float(norm.ppf(max_certifiable_pA(settings.n, settings.alpha)))
    text = f"ceiling {ceiling:.3f} at n = {settings.n:,}, α = {settings.alpha:g}"
    if radius > ceiling:
        return text + f" < {row['column']}: forced by the certificate", LedgerVerdict.HOLDS
    return text + f" ≥ {row['column']}: the zero is the model's", LedgerVerdict.NOT_CHECKABLE
