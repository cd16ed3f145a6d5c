"""What the manual pages need to show behaviour instead of describing it.

The manual pages (*Using rsutils*) run every example when the book is built, so an
example cannot go stale. Two kinds need help from here:

- command lines: :func:`run_command` runs one line as a terminal would, prints the
  line and what the command printed (standard output and standard error, in order),
  and raises :class:`CommandFailed` unless the command exits with the status the page
  expects;
  :func:`kill_part_way` starts one and kills it (``SIGKILL``) once its log holds some
  rows, as a crash or an impatient user would;
- refusals: :func:`refusal` returns the error a call is refused with, and
  :func:`show_refusals` prints several, so that a page shows the message a user gets.

Every page trains the same small model, :func:`page_model`, and names it in its run-at
table with :func:`describe_page_model`.

A line is split as a POSIX shell splits words (``shlex.split``), without pipes,
redirections, globs or variables. Leading ``NAME=value`` words set environment variables
for the command, and the programs ``python`` and ``torchrun`` are the interpreter that
runs the page (``sys.executable`` and ``sys.executable -m torch.distributed.run``), so a
command uses the environment, and the rsutils, of the page that shows it. A line
``python -m rsutils ...`` (with no variables set) runs
:func:`rsutils.cli.main.main`, the function that command runs, in the page's own
interpreter, its standard output and error captured together as a terminal shows them:
the same command without a second start of Python and import of torch, which a page of
many commands would pay each time. Every other line, ``torchrun`` included, and every
line of :func:`kill_part_way`, runs as a process of its own; the tests run the
command-line entry point itself as a process.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Mapping
from dataclasses import replace

import torch

from rsutils.cli.main import main
from rsutils.training.train import TrainConfig

__all__ = [
    "PAGE_MODEL",
    "CommandFailed",
    "command_argv",
    "describe_page_model",
    "fold_lines",
    "kill_part_way",
    "log_rows",
    "page_model",
    "refusal",
    "run_command",
    "shell_lines",
    "show_refusals",
]

#: What a shell would read as more than one command, or as a redirection.
SHELL_OPERATORS = frozenset({"|", "||", "&", "&&", ";", ">", ">>", "<", "2>", "2>&1"})
#: The programs that name this interpreter (see the module's text).
PROGRAMS = {"python": [sys.executable], "torchrun": [sys.executable, "-m", "torch.distributed.run"]}
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
#: A word of a command line as written, quotes included.
_RAW_WORD = re.compile(r"""(?:[^\s"']+|"[^"]*"|'[^']*')+""")


#: What every manual page trains in seconds on a CPU. The library's defaults
#: (small_cnn on Fashion-MNIST, Gaussian noise augmentation) at σ = 0.25, one epoch on
#: the first 2,000 training images.
PAGE_MODEL = TrainConfig(scale=0.25, epochs=1, train_subset=2000)


def page_model(seed: int = 0) -> TrainConfig:
    """:data:`PAGE_MODEL` with ``seed``: what every manual page trains."""
    return replace(PAGE_MODEL, seed=seed)


def describe_page_model(config: TrainConfig) -> str:
    """A run-at table's ``model`` row, e.g. ``small_cnn, σ = 0.25, 1 epoch on 2,000
    images``."""
    epochs = f"{config.epochs} epoch{'' if config.epochs == 1 else 's'}"
    data = f"{config.train_subset:,} images" if config.train_subset else "the training split"
    return f"{config.arch}, σ = {config.scale:g}, {epochs} on {data}"


class CommandFailed(RuntimeError):
    """A command exited with another status than the one expected; the message holds
    the command, both statuses and what it printed."""


def command_argv(line: str) -> tuple[dict[str, str], list[str]]:
    """The environment variables a ``line`` sets and the argument vector it runs.

    Raises ``ValueError`` for an empty line and for shell operators (one command per
    line: run a pipeline's parts one after the other).
    """
    words = shlex.split(line)
    operators = sorted(SHELL_OPERATORS.intersection(words))
    if operators:
        raise ValueError(
            f"{line!r} uses {', '.join(operators)}; run_command runs one command without a "
            "shell: run each part as its own command"
        )
    environment = {}
    while words and _ASSIGNMENT.match(words[0]):
        name, value = words.pop(0).split("=", 1)
        environment[name] = value
    if not words:
        raise ValueError(f"{line!r} names no command to run")
    return environment, [*PROGRAMS.get(words[0], [words[0]]), *words[1:]]


def log_rows(path: str | os.PathLike[str]) -> int:
    """The complete data rows of the TSV log at ``path`` (lines after the header that end
    with a newline; 0 if there is no log yet)."""
    if not os.path.exists(path):
        return 0
    with open(path, "rb") as handle:
        return max(0, handle.read().count(b"\n") - 1)


def kill_part_way(
    line: str, log: str | os.PathLike[str], rows: int, *, timeout: float = 600.0
) -> int:
    """Start ``line``, ``SIGKILL`` it once the log at ``log`` holds ``rows`` rows, and
    return the rows the log holds after the kill.

    The kill comes without warning, mid-row if the command is writing one. A command
    that ends first is not killed (the rows it wrote are returned); one that is still
    short of ``rows`` after ``timeout`` seconds is killed, and ``TimeoutError`` raised.
    What the command prints is discarded.
    """
    environment, argv = command_argv(line)
    process = subprocess.Popen(
        argv,
        env={**os.environ, **environment},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + timeout
    try:
        while log_rows(log) < rows and process.poll() is None:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{line!r} wrote fewer than {rows} rows in {timeout:g} s")
            time.sleep(0.02)
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGKILL)
        process.wait()
    return log_rows(log)


def run_command(line: str, *, status: int = 0, timeout: float = 600.0, width: int = 75) -> None:
    """Run ``line`` to its end, then print it as a terminal ``width`` columns wide
    shows it (``$ line``, continued with ``\\`` where it is longer) followed by what
    the command printed.

    The command sees ``COLUMNS=width`` (unless the line sets it), so that its help is
    wrapped to the width; a longer output line is folded at a space or tab, as the
    terminal would wrap it.

    Guarantee: returns only if the command exited with ``status`` (0 by default; a page
    showing a refused command passes the status it must be refused with). Otherwise
    raises :class:`CommandFailed`, after printing the output; after ``timeout`` seconds
    it kills the command and raises ``subprocess.TimeoutExpired``. It returns nothing,
    so that a cell ending in it shows the output once.
    """
    environment, argv = command_argv(line)
    if not environment and argv[:3] == [sys.executable, "-m", "rsutils"]:
        returncode, printed = _run_in_this_interpreter(argv[3:], width)
    else:
        result = subprocess.run(
            argv,
            env={**os.environ, "COLUMNS": str(width), **environment},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=timeout,
            check=False,
        )
        returncode, printed = result.returncode, result.stdout
    shown = [*shell_lines(line, width), *fold_lines(printed, width)]
    print("\n".join(shown), flush=True)
    if returncode != status:
        raise CommandFailed(
            f"{line!r} exited with status {returncode}, expected {status}; it printed:\n{printed}"
        )


def _run_in_this_interpreter(args: list[str], width: int) -> tuple[int, str]:
    """``python -m rsutils args`` as :func:`rsutils.cli.main.main` here: its exit status
    and what it printed to standard output and error, in order, with ``COLUMNS=width``
    and torch's thread count restored after it."""
    printed, before = io.StringIO(), os.environ.get("COLUMNS")
    threads = torch.get_num_threads()
    os.environ["COLUMNS"] = str(width)
    try:
        with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
            try:
                returncode = main(args)
            except SystemExit as stop:  # argparse: --help, or a usage error
                code = stop.code
                if isinstance(code, str):  # as Python does: the message, status 1
                    print(code, file=sys.stderr)
                returncode = code if isinstance(code, int) else int(code is not None)
    finally:
        torch.set_num_threads(threads)
        if before is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = before
    return returncode, printed.getvalue()


def shell_lines(line: str, width: int = 75) -> list[str]:
    """``$ line`` as lines of at most ``width`` characters where the words allow: the
    words as written (quotes kept) packed greedily, each line but the last ending in a
    backslash (a shell reads them as one line), the continuations indented by four
    spaces."""
    lines, current = [], "$"
    for word in _RAW_WORD.findall(line):
        if len(f"{current} {word} \\") > width and current.strip() != "$":
            lines.append(f"{current} \\")
            current = "   "
        current = f"{current} {word}"
    return [*lines, current]


def fold_lines(text: str, width: int = 75) -> list[str]:
    """The lines of ``text``, each longer one folded at spaces or tabs into lines of at
    most ``width`` characters (tabs expanded to stops of eight, as a terminal shows
    them; a word longer than ``width`` is cut); continuations keep the line's
    indentation."""
    folded = []
    for line in text.expandtabs().splitlines():
        if len(line) <= width:
            folded.append(line)
            continue
        indent = line[: len(line) - len(line.lstrip())]
        folded += textwrap.wrap(
            line,
            width,
            subsequent_indent=indent,
            break_on_hyphens=False,
            drop_whitespace=True,
        )
    return folded


def refusal(call: Callable[[], object]) -> str:
    """The error ``call()`` is refused with, as ``"TypeName: message"``.

    Only ``TypeError`` and ``ValueError`` count as refusals (rsutils refuses bad input
    with them); a call that returns raises ``AssertionError``, so a page cannot show a
    refusal that did not happen.
    """
    try:
        call()
    except (TypeError, ValueError) as error:
        return f"{type(error).__name__}: {error}"
    raise AssertionError(f"{call!r} was accepted; the page shows it as refused")


def show_refusals(calls: Mapping[str, Callable[[], object]], *, width: int = 75) -> None:
    """Print each case of ``calls`` and the error its call is refused with
    (:func:`refusal`), wrapped to ``width`` characters."""
    for case, call in calls.items():
        print(f"{case}:")
        print(textwrap.fill(refusal(call), width, initial_indent="  ", subsequent_indent="  "))
