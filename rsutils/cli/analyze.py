"""``python -m rsutils analyze LOG [LOG ...]``: what certification logs say.

A table per run of ``certify`` (or per released log of Cohen et al.): inputs,
abstentions, ACR, certified accuracy at ``--radii`` with Clopper–Pearson intervals, run
time (:func:`~rsutils.analysis.report.report`); with two or more logs of the same
images, each compared with the first by the book's verdict rule
(:func:`~rsutils.analysis.report.comparison_table`), on the images all the logs share
with ``--common``; with ``--plot FILE`` the curves of certified accuracy against radius
(:func:`~rsutils.analysis.plot.plot_certified_accuracy`, which needs matplotlib). The
logs of ``certify --procedure decide`` are summarised at their own radii
(:mod:`~rsutils.analysis.decision_logs`). A log whose last line a stopped run cut is read
without that line, with a notice. Every check (the plot's file type and folder,
matplotlib, the logs, their images) comes before anything is written.
"""

from __future__ import annotations

import argparse
import sys

import pandas as pd

from rsutils.analysis.margins import Margins
from rsutils.analysis.plot import check_plot_path, plot_certified_accuracy, require_matplotlib
from rsutils.analysis.report import (
    DEFAULT_MARGINS,
    FORMATS,
    certification_logs,
    common_images,
    default_radii,
    read_logs,
    report,
)
from rsutils.cli.arguments import (
    HelpFormatter,
    non_negative_float,
    positive_float,
    probability,
)

__all__ = ["DESCRIPTION", "add_parser", "run"]

#: The subcommand's help, as a terminal shows it.
DESCRIPTION = f"""\
Summarize certification logs (of certify, or Cohen et al.'s released ones): per log,
the number of inputs, the share of abstentions, the average certified radius (ACR),
the certified accuracy at each radius with its Clopper-Pearson interval over the test
images, and the run time, in all and per input.

With two or more logs of the same test images, each is compared with the first,
image by image: its difference in ACR and in certified accuracy at each radius, the
interval of that difference over the images (not over retrained models), and the
book's verdict (rises, falls, equivalent within the margin, or undecided), with
Holm's correction over all the comparisons unless --each is given. The margins
default to the book's: {DEFAULT_MARGINS.acr:g} of ACR, {DEFAULT_MARGINS.accuracy:g} of
certified accuracy.

Logs of different images are refused, unless --common compares every log on the
images all of them hold (as for a run that stopped early, or Cohen et al.'s
released ImageNet logs).

The logs of certify --procedure decide are summarised at the radii they asked:
the certified accuracy with its interval and the draws per input at each radius.

With --plot FILE (.png, .svg or .pdf) the certified accuracy of each certification
log against the radius is drawn too; this needs matplotlib (pip install
matplotlib)."""


def add_parser(commands: argparse._SubParsersAction) -> None:
    """The ``analyze`` subcommand."""
    analyze = commands.add_parser(
        "analyze",
        help="summarize and compare certification logs (accuracy, ACR, time)",
        description=DESCRIPTION,
        formatter_class=HelpFormatter,
    )
    analyze.add_argument(
        "logs",
        nargs="+",
        metavar="LOG",
        help="logs (TSV) of certify, of certify --procedure decide, or Cohen et al.'s",
    )
    analyze.add_argument(
        "--radii",
        type=non_negative_float,
        nargs="+",
        default=None,
        metavar="R",
        help="radii of the certified accuracy (default: 0 to the largest radius certified, "
        "in steps of 0.25, or 0.5, 1, ... for larger radii, at most 9 radii); decision "
        "logs are shown at the radii they asked",
    )
    analyze.add_argument(
        "--confidence",
        type=probability,
        default=0.95,
        metavar="LEVEL",
        help="level of the intervals; the verdicts are tested at 1 minus it",
    )
    analyze.add_argument(
        "--margin-acr",
        type=positive_float,
        default=DEFAULT_MARGINS.acr,
        metavar="M",
        help="a difference of ACR within +-M counts as equivalent",
    )
    analyze.add_argument(
        "--margin-accuracy",
        type=positive_float,
        default=DEFAULT_MARGINS.accuracy,
        metavar="M",
        help="a difference of certified accuracy within +-M counts as equivalent",
    )
    analyze.add_argument(
        "--each",
        action="store_true",
        help="judge each comparison alone, without Holm's correction over all of them",
    )
    analyze.add_argument(
        "--common",
        action="store_true",
        help="analyze and compare every log on the images all of them hold only",
    )
    analyze.add_argument(
        "--format", choices=FORMATS, default="plain", help="the tables' format: %(choices)s"
    )
    analyze.add_argument(
        "--plot", default=None, metavar="FILE", help="draw certified accuracy against radius"
    )
    analyze.set_defaults(run=run)


def run(args: argparse.Namespace) -> None:
    """Check the plot's path and matplotlib, read the logs, compute the tables (logs of
    different images are refused there), draw the plot, then print the tables."""
    plot = None
    if args.plot is not None:
        plot = check_plot_path(args.plot)
        try:
            require_matplotlib()
        except ImportError as error:
            raise ValueError(str(error)) from error
    logs = read_logs(args.logs)
    if args.common:
        logs = _on_common_images(logs)
    curves = certification_logs(logs)
    if plot is not None and not curves:
        raise ValueError(
            "--plot draws certified accuracy against the radius of certification logs; "
            "decision logs have none: drop --plot"
        )
    radii = default_radii(logs) if args.radii is None else sorted(set(args.radii))
    text = report(
        logs,
        radii,
        confidence=args.confidence,
        margins=Margins(acr=args.margin_acr, accuracy=args.margin_accuracy),
        family=not args.each,
        fmt=args.format,
    )
    if plot is not None:
        plot_certified_accuracy(curves, plot, radii=radii, confidence=args.confidence)
    print(text, end="")


def _on_common_images(logs: dict[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """The logs on the images all of them hold, with a notice of those left out."""
    shared = common_images(logs)
    left = {name: len(logs[name]) - len(log) for name, log in shared.items()}
    if any(left.values()):
        count = len(next(iter(shared.values())))
        more = ", ".join(f"{name} {extra}" for name, extra in left.items() if extra)
        print(
            f"notice: --common: the {count} image{'s' * (count > 1)} all the logs hold are "
            f"analysed, without the others ({more})",
            file=sys.stderr,
        )
    return shared
