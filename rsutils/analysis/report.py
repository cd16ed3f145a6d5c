"""A report on certification logs: the tables of ``python -m rsutils analyze``.

One or more logs (:func:`~rsutils.logs.read.read_rows`: this library's and Cohen et al.'s
released ones) become a summary, one column per log: the number of inputs, the share of
abstentions (``predict`` = -1), the ACR, the certified accuracy at each radius with its
Clopper–Pearson interval over the test images
(:func:`~rsutils.analysis.metrics.certified_accuracy_interval`), and the run time, in
all and per input, from the ``time`` column (:func:`summary_table`). Two or more logs of
the same test images are compared, each against the first, by the book's verdict rule
(:func:`comparison_table`), or on the images they share (:func:`common_images`). The
logs of ``certify --procedure decide`` are summarised at their own radii
(:mod:`~rsutils.analysis.decision_logs`, :func:`shown_decisions`), not compared.
:func:`report` renders the tables as a plain terminal table, in Markdown or in LaTeX
(written here: neither ``tabulate`` nor ``jinja2``, which pandas'
``to_markdown`` and ``to_latex`` need, is a dependency of the library).
"""

from __future__ import annotations

import math
import os
import re
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from rsutils.analysis.decision_logs import (
    checked_decision_log,
    decision_table,
    is_decision_log,
)
from rsutils.analysis.differences import replicated_comparisons
from rsutils.analysis.margins import Margins
from rsutils.analysis.metrics import (
    average_certified_radius,
    certified_accuracy,
    certified_accuracy_interval,
)
from rsutils.analysis.pipe_table import pipe_table
from rsutils.core.smooth import ABSTAIN
from rsutils.logs.read import check_numbers, read_rows

__all__ = [
    "DEFAULT_MARGINS",
    "FORMATS",
    "certification_logs",
    "check_same_images",
    "checked_certification_log",
    "common_images",
    "comparison_table",
    "default_radii",
    "log_names",
    "read_certification_log",
    "read_logs",
    "render",
    "report",
    "shown_comparison",
    "shown_decisions",
    "shown_summary",
    "summary_table",
]

#: The equivalence margins comparisons are judged with unless told otherwise, the
#: book's (``rsutils.book.margins.MARGINS``: 0.02 of ACR and 0.01, one point, of
#: certified accuracy, the smallest differences the papers present as results; the
#: tests keep the two equal).
DEFAULT_MARGINS = Margins(acr=0.02, accuracy=0.01)

#: The output formats of :func:`render`: a plain terminal table, Markdown, LaTeX.
FORMATS = ("plain", "markdown", "latex")

#: The columns :func:`read_certification_log` needs (``time`` is optional).
_NEEDED = ("idx", "label", "predict", "radius", "correct")


def read_certification_log(path: str | os.PathLike[str]) -> pd.DataFrame:
    """:func:`~rsutils.logs.read.read_rows`, refusing what cannot be analysed
    (:func:`checked_certification_log`); a missing file is ``FileNotFoundError``."""
    return checked_certification_log(read_rows(path), os.fspath(path))


def checked_certification_log(log: pd.DataFrame, name: str) -> pd.DataFrame:
    """``log``, the rows of the log ``name``, once it can be analysed.

    Raises ``ValueError`` in one line naming the file for a log without a needed column
    (a prediction log has no ``radius``; the message says which logs are read), a log
    without rows, a value that is not a number (naming its row), and a log that holds
    an image twice.
    """
    missing = [column for column in _NEEDED if column not in log.columns]
    if missing:
        hint = " (a prediction log?)" if missing == ["radius"] else ""
        raise ValueError(
            f"{name!r} is not a certification log: it lacks the columns {missing}{hint}; "
            "analyze reads the logs of certify and Cohen et al.'s (columns "
            f"{' '.join(_NEEDED)} time) and those of certify --procedure decide "
            "(certified@R and draws@R)"
        )
    if log.empty:
        raise ValueError(f"{name!r} holds no rows: certify at least one input into it")
    check_numbers(log, ["predict", "radius", "correct"], name)
    if log["idx"].duplicated().any():
        raise ValueError(f"{name!r} holds an idx twice; keep one row per test image")
    return log


def log_names(paths: Sequence[str | os.PathLike[str]]) -> list[str]:
    """Short names for ``paths``: the fewest trailing parts that tell them apart.

    ``a/sigma_0.25`` and ``b/sigma_0.50`` are ``sigma_0.25`` and ``sigma_0.50``;
    ``noise_0.25/sigma_0.50`` and ``noise_1.00/sigma_0.50`` keep their folders. A path
    given twice gets `` (2)``, `` (3)``, ... after its later occurrences.
    """
    given = [Path(path).as_posix() for path in paths]
    unique = list(dict.fromkeys(given))
    parts = [Path(path).parts or (path,) for path in unique]
    for keep in range(1, max((len(p) for p in parts), default=0) + 1):
        short = [Path(*p[-keep:]).as_posix() for p in parts]
        if len(set(short)) == len(short):
            break
    named = dict(zip(unique, short, strict=True)) if unique else {}
    return [
        named[path] if path not in given[:i] else f"{named[path]} ({given[:i].count(path) + 1})"
        for i, path in enumerate(given)
    ]


def read_logs(paths: Sequence[str | os.PathLike[str]]) -> dict[str, pd.DataFrame]:
    """The logs at ``paths`` by their :func:`log_names`: certification logs
    (:func:`checked_certification_log`) and decision logs
    (:func:`~rsutils.analysis.decision_logs.checked_decision_log`), told apart by their
    columns (:func:`~rsutils.analysis.decision_logs.is_decision_log`)."""
    if not paths:
        raise ValueError("no log given: pass the path of at least one certification log")
    logs = {}
    for name, path in zip(log_names(paths), paths, strict=True):
        rows = read_rows(path)
        check = checked_decision_log if is_decision_log(rows.columns) else checked_certification_log
        logs[name] = check(rows, os.fspath(path))
    return logs


def certification_logs(logs: Mapping[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """The logs of ``logs`` that have a radius per input (not decision logs)."""
    return {name: log for name, log in logs.items() if not is_decision_log(log.columns)}


def common_images(logs: Mapping[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """Each log restricted to the images (``idx``) that every log holds, in its order;
    refused when the logs share none."""
    shared = set.intersection(*(set(log["idx"]) for log in logs.values()))
    if not shared:
        raise ValueError(
            f"the logs {', '.join(logs)} share no image, so they cannot be compared: "
            "analyze each on its own"
        )
    return {name: log[log["idx"].isin(shared)].reset_index(drop=True) for name, log in logs.items()}


def default_radii(logs: Mapping[str, pd.DataFrame], *, most: int = 9) -> list[float]:
    """A grid of at most ``most`` radii from 0 to the largest radius certified correct
    in the certification logs of ``logs`` (decision logs have their own radii).

    The step is the smallest of ..., 0.1, 0.25, 0.5, 1, 2.5, 5, ... that keeps the grid
    to ``most`` radii: Cohen et al.'s 0.25 for CIFAR-10's radii up to 2, 0.5 for
    ImageNet's up to 4; ``[0.0]`` when no input is certified correct.
    """
    if most < 2:
        raise ValueError(f"most must be at least 2 (0 and one radius), got {most!r}")
    radii = [_certified_radii(log) for log in certification_logs(logs).values()]
    certified = np.concatenate(radii) if radii else np.zeros(0)
    certified = certified[np.isfinite(certified)]
    top = float(certified.max()) if certified.size else 0.0
    if top <= 0:
        return [0.0]
    decade = 10.0 ** math.floor(math.log10(top / most))
    steps = [decade * factor for factor in (1, 2.5, 5, 10, 25, 50, 100)]
    step = next(s for s in steps if math.floor(top / s + 1e-9) + 1 <= most)
    count = math.floor(top / step + 1e-9) + 1
    return [round(i * step, 12) for i in range(count)]


def _certified_radii(log: pd.DataFrame) -> np.ndarray:
    return log["radius"].to_numpy(dtype=float) * log["correct"].to_numpy(dtype=float)


def summary_table(
    logs: Mapping[str, pd.DataFrame], radii: Sequence[float], *, confidence: float = 0.95
) -> pd.DataFrame:
    """One row per log: ``inputs``, ``abstained`` (the share of ``predict`` = -1),
    ``ACR`` (:func:`~rsutils.analysis.metrics.average_certified_radius`), then per radius
    r ``accuracy at r``, ``low at r`` and ``high at r`` (the certified accuracy and its
    Clopper–Pearson ``confidence`` interval over the log's inputs), and ``time (s)`` and
    ``time per input (s)``: the sum and mean of the ``time`` column, NaN without one.

    The time is the sum of the inputs' certification times: with several processes
    (torchrun) it exceeds the wall-clock time of the run.
    """
    radii = list(radii)
    rows = {name: _summary_row(log, radii, confidence) for name, log in logs.items()}
    return pd.DataFrame.from_dict(rows, orient="index")


def _summary_row(log: pd.DataFrame, radii: list[float], confidence: float) -> dict[str, float]:
    accuracy = certified_accuracy(log, radii)
    low, high = certified_accuracy_interval(log, radii, confidence=confidence)
    row: dict[str, float] = {
        "inputs": len(log),
        "abstained": float((log["predict"].to_numpy() == ABSTAIN).mean()),
        "ACR": average_certified_radius(log),
    }
    for r, value, lo, hi in zip(radii, accuracy, low, high, strict=True):
        row |= {f"accuracy at {r:g}": value, f"low at {r:g}": lo, f"high at {r:g}": hi}
    total = float(log["time"].sum()) if "time" in log.columns else math.nan
    return row | {"time (s)": total, "time per input (s)": total / len(log)}


def check_same_images(logs: Mapping[str, pd.DataFrame]) -> None:
    """Refuse logs that do not all hold the first log's images (``idx`` values), with
    advice that fits them: the images they share, and how to compare on those."""
    (first, reference), *others = logs.items()
    images = set(reference["idx"])
    for name, log in others:
        theirs = set(log["idx"])
        if theirs != images:
            raise ValueError(_different_images(name, theirs, first, images))


def _different_images(name: str, theirs: set, first: str, images: set) -> str:
    shared = len(theirs & images)
    said = (
        f"{name} and {first} hold different images ({shared} in common, of {len(theirs)} "
        f"and {len(images)}); a comparison pairs the same test images"
    )
    if theirs < images or images < theirs:
        fewer, more = (name, first) if theirs < images else (first, name)
        said += f" ({fewer} holds only some of {more}'s: a run that stopped?)"
    fix = (
        f"pass --common to compare them on the {shared} image{'s' * (shared > 1)} they share"
        if shared
        else "analyze each on its own"
    )
    return (
        f"{said}: {fix}, or, for logs of certify, run the command of one with the other's "
        "--skip and --max (it adds the missing images)"
    )


def comparison_table(
    logs: Mapping[str, pd.DataFrame],
    radii: Sequence[float],
    *,
    confidence: float = 0.95,
    margins: Margins = DEFAULT_MARGINS,
    family: bool = True,
) -> pd.DataFrame:
    """Each log after the first against the first, on the same images: the differences
    of ACR and of certified accuracy at each radius, their intervals and verdicts.

    :func:`~rsutils.analysis.differences.replicated_comparisons` with one replicate
    (one trained model per log): the interval is the paired one-sample Student-t
    interval of the per-image differences, over the choice of test images only; it says
    nothing about how the difference moves with a retrained model. It was chosen over
    :func:`~rsutils.analysis.metrics.acr_difference` (a paired bootstrap of the ACR
    alone) because it measures certified accuracy at a radius as well, tests
    equivalence within ``margins`` (the ACR's margin for the ACR, the accuracy's for
    the radii) with the same variance estimate, and judges the rows by the book's one
    rule (:func:`~rsutils.analysis.verdicts.judge`). With ``family`` the table's rows
    are one family, judged on Holm-adjusted p-values; without it each row alone.

    One row per (log, measure), indexed by ``log`` and ``measure``: ``difference``
    (log minus the first), ``low``, ``high`` (the ``confidence`` interval), ``p``
    (two-sided, of no difference), ``margin``, ``p equivalent``, ``tests`` (the
    family's) and ``verdict``. Refuses logs of different images
    (:func:`check_same_images`).
    """
    if len(logs) < 2:
        raise ValueError("a comparison needs at least two logs of the same test images")
    check_same_images(logs)
    names = list(logs)
    measures = {"ACR": "radius", **{f"accuracy at {r:g}": ("radius", r) for r in radii}}
    pairs = [(name, names[0]) for name in names[1:]]
    table = replicated_comparisons(
        [logs], pairs, measures=measures, margin=margins, confidence=confidence, family=family
    )
    table = table.droplevel("against").rename(columns={"gain": "difference"})
    table.index.names = ["log", "measure"]
    return table[["difference", "low", "high", "p", "margin", "p equivalent", "tests", "verdict"]]


def shown_summary(table: pd.DataFrame, radii: Sequence[float]) -> pd.DataFrame:
    """:func:`summary_table` as text, one column per log and one row per measure."""
    shown = {}
    for name, row in table.iterrows():
        column = {"inputs": f"{int(row['inputs'])}", "abstained": f"{row['abstained']:.3f}"}
        column["ACR"] = f"{row['ACR']:.3f}"
        for r in radii:
            value, low, high = (row[f"{what} at {r:g}"] for what in ("accuracy", "low", "high"))
            column[f"accuracy at r = {r:g}"] = f"{value:.3f} [{low:.3f}, {high:.3f}]"
        column["time"] = _duration(row["time (s)"])
        column["time per input"] = _duration(row["time per input (s)"])
        shown[name] = column
    result = pd.DataFrame(shown)
    result.index.name = "measure"
    return result


def shown_comparison(table: pd.DataFrame, log: str) -> pd.DataFrame:
    """The rows of :func:`comparison_table` of ``log`` as text, one row per measure."""
    rows = table.xs(log, level="log")
    shown = pd.DataFrame(
        {
            "difference": [f"{v:+.3f}" for v in rows["difference"]],
            "interval": [
                f"[{lo:+.3f}, {hi:+.3f}]" for lo, hi in zip(rows["low"], rows["high"], strict=True)
            ],
            "verdict": [str(verdict) for verdict in rows["verdict"]],
        },
        index=pd.Index([m.replace(" at ", " at r = ") for m in rows.index], name="measure"),
    )
    return shown


def _duration(seconds: float) -> str:
    """``12.3 s`` below a minute, else ``H:MM:SS``; ``-`` for an unknown time."""
    if not math.isfinite(seconds):
        return "-"
    if seconds < 60:
        return f"{seconds:.3g} s"
    minutes, second = divmod(round(seconds), 60)
    hours, minute = divmod(minutes, 60)
    return f"{hours}:{minute:02d}:{second:02d}"


def render(table: pd.DataFrame, fmt: str = "plain", *, caption: str = "") -> str:
    """``table`` (text cells; its index is the first column) with ``caption`` above it:
    ``"plain"`` columns aligned by spaces, ``"markdown"`` a pipe table, ``"latex"`` a
    ``tabular`` in a ``table`` with the caption (``\\hline`` rules, no packages)."""
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    header = [table.index.name or "", *map(str, table.columns)]
    rows = [
        [str(i), *map(str, values)] for i, values in zip(table.index, table.to_numpy(), strict=True)
    ]
    return {"plain": _plain, "markdown": _markdown, "latex": _latex}[fmt](header, rows, caption)


def _plain(header: list[str], rows: list[list[str]], caption: str) -> str:
    widths = [max(len(line[i]) for line in [header, *rows]) for i in range(len(header))]
    lines = [
        "  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip()
        for line in [header, *rows]
    ]
    return "\n".join([textwrap.fill(caption, 72), *lines] if caption else lines)


def _text(position: int, name: str) -> bool:
    """Whether a column is text, aligned left: the first (the measures) and verdicts."""
    return position == 0 or name == "verdict"


def _markdown(header: list[str], rows: list[list[str]], caption: str) -> str:
    right = [i for i, name in enumerate(header) if not _text(i, name)]
    table = pipe_table(header, rows, right=right)
    return f"{caption}\n\n{table}" if caption else table


_LATEX = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
    "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
    "±": r"$\pm$", "−": r"$-$", "–": "--",
}  # fmt: skip


def _tex(text: str) -> str:
    return re.sub("|".join(map(re.escape, _LATEX)), lambda m: _LATEX[m.group(0)], text)


def _latex(header: list[str], rows: list[list[str]], caption: str) -> str:
    spec = "".join("l" if _text(i, h) else "r" for i, h in enumerate(header))
    body = [" & ".join(map(_tex, line)) + r" \\" for line in rows]
    return "\n".join(
        [r"\begin{table}", r"\centering"]
        + ([rf"\caption{{{_tex(caption)}}}"] if caption else [])
        + [rf"\begin{{tabular}}{{{spec}}}", r"\hline", " & ".join(map(_tex, header)) + r" \\"]
        + [r"\hline", *body, r"\hline", r"\end{tabular}", r"\end{table}"]
    )


def report(
    logs: Mapping[str, pd.DataFrame],
    radii: Sequence[float] | None = None,
    *,
    confidence: float = 0.95,
    margins: Margins = DEFAULT_MARGINS,
    family: bool = True,
    fmt: str = "plain",
) -> str:
    """The summary of the certification logs of ``logs`` and, for two or more, each
    one's comparison with the first, then the summary of its decision logs (at their
    own radii, not compared), rendered in ``fmt`` (:data:`FORMATS`) with their captions.

    ``radii`` defaults to :func:`default_radii`. Everything is computed before anything
    is rendered: certification logs of different images are refused (``ValueError``)
    first.
    """
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    radii = default_radii(logs) if radii is None else sorted(set(map(float, radii)))
    level = f"{confidence * 100:g}%"
    certified = certification_logs(logs)
    decided = {name: log for name, log in logs.items() if name not in certified}
    compared = None
    if len(certified) > 1:
        compared = comparison_table(
            certified, radii, confidence=confidence, margins=margins, family=family
        )
    parts = []
    if certified:
        summary = shown_summary(summary_table(certified, radii, confidence=confidence), radii)
        parts.append(render(summary, fmt, caption=_summary_caption(level)))
    first = next(iter(certified), "")
    for name in list(certified)[1:] if compared is not None else []:
        caption = _comparison_caption(name, first, len(logs[first]), level, margins, family)
        parts.append(render(shown_comparison(compared, name), fmt, caption=caption))
    if decided:
        table = shown_decisions(decision_table(decided, confidence=confidence))
        parts.append(render(table, fmt, caption=_decisions_caption(level)))
    return "\n\n".join(parts) + "\n"


def shown_decisions(table: pd.DataFrame) -> pd.DataFrame:
    """:func:`~rsutils.analysis.decision_logs.decision_table` as text, one column per
    log and one row per measure, ``-`` at a radius a log did not ask."""
    radii = [float(c.removeprefix("draws at ")) for c in table if c.startswith("draws at ")]
    shown = {}
    for name, row in table.iterrows():
        column = {"inputs": f"{int(row['inputs'])}"}
        for r in radii:
            value, low, high = (row[f"{what} at {r:g}"] for what in ("accuracy", "low", "high"))
            asked = math.isfinite(value)
            column[f"accuracy at r = {r:g}"] = f"{value:.3f} [{low:.3f}, {high:.3f}]" * asked
            column[f"draws per input at r = {r:g}"] = f"{row[f'draws at {r:g}']:,.0f}" * asked
        column["draws per input"] = f"{row['draws']:,.0f}"
        column["time"] = _duration(row["time (s)"])
        column["time per input"] = _duration(row["time per input (s)"])
        shown[name] = {key: text or "-" for key, text in column.items()}
    result = pd.DataFrame(shown)
    result.index.name = "measure"
    return result


def _decisions_caption(level: str) -> str:
    return (
        "Decision logs (certify --procedure decide), at the radii each asked: the share of "
        f"test images certified at r with their label, with its {level} Clopper-Pearson "
        "interval, and the draws per input (selection and estimation) that the answer at "
        "r took; these logs are summarised, not compared."
    )


def _summary_caption(level: str) -> str:
    return (
        f"Certified accuracy at radius r with its {level} Clopper-Pearson interval over the "
        "test images; ACR: the average certified radius (0 when wrong or abstained)."
    )


def _comparison_caption(
    name: str, first: str, images: int, level: str, margins: Margins, family: bool
) -> str:
    judged = "Holm-corrected over all comparisons" if family else "each row alone"
    return (
        f"{name} minus {first}, paired over their {images} images ({level} interval over the "
        f"images, not over retrained models); verdicts {judged}, equivalence within "
        f"±{margins.acr:g} of ACR and ±{margins.accuracy:g} of accuracy."
    )
