"""Argument types of the command line: a bad value is refused before anything runs.

argparse turns the ``ValueError`` of a type into ``argument --N: must be a positive
integer, got '0'`` and exit status 2, before a model is loaded or a file written.
"""

from __future__ import annotations

import argparse
import math
import re
import textwrap

from rsutils.core.noise import FAMILIES
from rsutils.data import FOLDER_PREFIX, NAMED_DATASETS, check_dataset_name

__all__ = [
    "HelpFormatter",
    "add_noise_family_argument",
    "dataset_name",
    "named_dataset",
    "non_negative_int",
    "plain_text",
    "positive_float",
    "positive_int",
    "probability",
]


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Keeps the description's paragraphs, refilled to the terminal's width (a paragraph
    with an indented or bulleted line is kept as written), and shows each option's
    default, if it has one."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        paragraphs = re.split(r"\n\s*\n", plain_text(textwrap.dedent(text).strip()))
        return "\n\n".join(_refilled(p, width, indent) for p in paragraphs)

    def _get_help_string(self, action: argparse.Action) -> str:
        text = plain_text(action.help or "")
        silent = any(action.default is v for v in (None, False, argparse.SUPPRESS))
        silent = silent or not action.option_strings
        if silent or "%(default)" in text:
            return text
        return f"{text} (default: %(default)s)"


def plain_text(text: str) -> str:
    """``text`` without the reStructuredText markup of docstrings, for a terminal:
    ````code```` and ```code``` become ``code``, a role such as
    ``:func:`~rsutils.core.smooth.Smooth``` becomes ``Smooth`` (the last part of a
    ``~`` target, else the whole target), and ``**bold**`` loses its stars."""
    text = re.sub(r":[a-z:]+:`~?([^`<]*?)(?:\s*<[^>]*>)?`", _role_target, text)
    text = re.sub(r"``([^`]+)``", r"\1", text)
    text = re.sub(r"\*\*([^*]+)\*\*", r"\1", text)
    return re.sub(r"(?<![\w`])`([^`]+)`(?![\w`])", r"\1", text)


def _role_target(match: re.Match[str]) -> str:
    whole = match.group(0)
    target = match.group(1).strip()
    return target.rsplit(".", 1)[-1] if "`~" in whole else target


def add_noise_family_argument(parser: argparse.ArgumentParser) -> None:
    """``--noise FAMILY``, one of the registered families, Gaussian by default."""
    parser.add_argument(
        "--noise",
        choices=sorted(FAMILIES),
        default="gaussian",
        metavar="FAMILY",
        help="noise family: %(choices)s",
    )


def _refilled(paragraph: str, width: int, indent: str) -> str:
    """One paragraph filled to ``width``, or as written if it has a layout to keep."""
    lines = paragraph.splitlines()
    if any(line.startswith((" ", "- ", "* ")) for line in lines):
        return "\n".join(indent + line for line in lines)
    return textwrap.fill(" ".join(lines), width, initial_indent=indent, subsequent_indent=indent)


def _checked(convert, accept, requirement: str):
    """An argparse type: ``convert`` the text, then require ``accept(value)``."""

    def parse(text: str):
        try:
            value = convert(text)
        except ValueError:
            value = None
        if value is None or not accept(value):
            raise argparse.ArgumentTypeError(f"must be {requirement}, got {text!r}")
        return value

    return parse


positive_int = _checked(int, lambda v: v >= 1, "an integer >= 1")
non_negative_int = _checked(int, lambda v: v >= 0, "an integer >= 0")
positive_float = _checked(float, lambda v: math.isfinite(v) and v > 0, "a finite number > 0")
non_negative_float = _checked(float, lambda v: math.isfinite(v) and v >= 0, "a finite number >= 0")
probability = _checked(float, lambda v: 0 < v < 1, "a number strictly between 0 and 1")


def dataset_name(text: str) -> str:
    """A dataset: one of :data:`~rsutils.data.NAMED_DATASETS`, or ``folder:PATH``."""
    try:
        return check_dataset_name(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def named_dataset(text: str) -> str:
    """A dataset known by name: a checkpoint is built for one (its normalisation and
    classes), so ``train`` refuses ``folder:PATH``."""
    if text.startswith(FOLDER_PREFIX):
        raise argparse.ArgumentTypeError(
            f"{text} cannot be trained on: a checkpoint is built for a named dataset "
            f"(its normalisation and classes); choose {', '.join(NAMED_DATASETS)}"
        )
    return dataset_name(text)
