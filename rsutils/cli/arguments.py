"""Argument types of the command line: a bad value is refused before anything runs.

argparse turns the ``ValueError`` of a type into ``argument --N: must be a positive
integer, got '0'`` and exit status 2, before a model is loaded or a file written.
"""

from __future__ import annotations

import argparse
import math

__all__ = [
    "HelpFormatter",
    "non_negative_int",
    "positive_float",
    "positive_int",
    "probability",
]


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Keeps the description's paragraphs and shows each option's default, if it has one."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        silent = any(action.default is v for v in (None, False, argparse.SUPPRESS))
        silent = silent or not action.option_strings
        if silent or "%(default)" in text:
            return text
        return f"{text} (default: %(default)s)"


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
