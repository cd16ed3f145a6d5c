"""Command line: ``python -m rsutils certify|predict|train|bench ...``.

``certify`` and ``predict`` take the positional arguments and options of Cohen et
al.'s ``certify.py``/``predict.py`` (``dataset base_classifier sigma outfile --batch
--skip --max --split --N0 --N --alpha``) and write the same TSV columns, followed by
ours. Both resume a killed run: run the same command again.

``certify --ascent-steps K`` certifies with a data-dependent noise level (DDRS): each
input's sigma comes from K steps of sigma ascent started at ``sigma``, and the answers
go through a certificate memory (``--memory``, by default ``<outfile>.memory.sqlite``)
that keeps them consistent across runs and processes.

``certify --procedure NAME`` runs a fewer-draws procedure of ``rsutils.sequential`` by
name. ``planned --radius-loss L`` gives each input its own number of estimation draws,
at most ``--N``: as many as lose at most about L of radius by the selection draws'
estimate of pA (the log's ``n`` column), certified at the full ``--alpha``.
``decide --radii R [R ...]`` answers "certified at radius R?" sequentially instead, with
looks at 32, 64, ... up to ``--N`` draws whose levels sum to ``--alpha`` (or the test of
``--test``); its log has ``certified@R`` and ``draws@R`` per radius. With
``--true-label`` it evaluates instead whether each input's true label is certified at
R, without the ``--N0`` selection draws: a measure of certified accuracy on a labelled
test set, not a certificate for a deployed classifier (which has no label); the log's
``n0`` is 0.

``--generator CKPT`` takes mu and sigma from the noise parameter generator saved in a
checkpoint (UCAN): the noise at input x is ``mu(x) + sigma(x) ⊙ eps``, with ``eps`` of the
family and ``sigma`` given on the command line, and the log has ``region_radius`` and
``alm``.

``analyze LOG [LOG ...]`` tabulates what logs say (certified accuracy with its
intervals, ACR, abstentions, run time), compares logs of the same images with the
first by the book's verdict rule, and draws the curves with ``--plot FILE``.

A mistake in a command (a bad value, a damaged checkpoint or map, a device this machine
does not have, an output path that is a folder) is one line on stderr and exit status
2, found before anything is written; ``RSUTILS_TRACEBACK=1`` shows the traceback too.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import warnings
from collections.abc import Iterator, Sequence

from rsutils.cli import analyze, bench, certify, device_check, predict, train
from rsutils.cli.arguments import HelpFormatter
from rsutils.data import ClassOrderWarning
from rsutils.logs.read import CutRowWarning
from rsutils.logs.resumable import LogRepairedWarning

__all__ = ["NOTICES", "build_parser", "main", "notices_on_stderr"]


def build_parser() -> argparse.ArgumentParser:
    """The parser of every subcommand; each module adds its own (``certify``,
    ``predict``, ``train``, ``bench``, ``device-check``) and names the function to run."""
    parser = argparse.ArgumentParser(
        prog="python -m rsutils", description=__doc__, formatter_class=HelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True)
    for command in (certify, predict, train, bench, device_check, analyze):
        command.add_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run a command; a user's mistake is one line on stderr and exit status 2.

    Set ``RSUTILS_TRACEBACK=1`` to see the traceback of such an error too.
    """
    args = build_parser().parse_args(argv)
    try:
        with notices_on_stderr():
            args.run(args)
    except (ValueError, TypeError, OSError) as error:
        if os.environ.get("RSUTILS_TRACEBACK"):
            raise
        print(f"error: {_describe(error)}", file=sys.stderr)
        return 2
    return 0


#: The warnings that say the command changed or skipped data (a damaged log tail cut
#: on resume, a folder's labels put in the model's class order, a log's cut last line
#: left out of an analysis).
NOTICES = (LogRepairedWarning, ClassOrderWarning, CutRowWarning)


@contextlib.contextmanager
def notices_on_stderr() -> Iterator[None]:
    """Show every warning of :data:`NOTICES` as one line on stderr, ``notice: ...``,
    whatever ``--quiet`` says and every time it happens; other warnings are shown as
    Python shows them."""
    shown = warnings.showwarning

    def show(message, category, filename, lineno, file=None, line=None):
        if issubclass(category, NOTICES):
            print(f"notice: {message}", file=sys.stderr, flush=True)
        else:
            shown(message, category, filename, lineno, file, line)

    with warnings.catch_warnings():
        for category in NOTICES:
            warnings.simplefilter("always", category)
        warnings.showwarning = show
        yield


def _describe(error: BaseException) -> str:
    """One line for a user: the message, with the file for errors of the operating system."""
    if isinstance(error, OSError) and error.filename is not None:
        return f"{error.filename}: {error.strerror or error}"
    return str(error)


if __name__ == "__main__":
    sys.exit(main())
