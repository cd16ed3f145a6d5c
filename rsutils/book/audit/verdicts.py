"""The audit's verdicts as values: the claims', the ledger's and the released logs' level.

Three vocabularies, each an ``enum.StrEnum`` defined here once, one line per member:
its text and what test it means (the member's ``__doc__``, listed in the enum's
docstring). ``str(member)`` is its text, and a member equals its text, so tables, CSV
files and glued values read as before; code names the members, never the words.

- :class:`ClaimVerdict`: a paper's qualitative claim judged on the book's replicated
  comparisons (:mod:`rsutils.book.audit.measured`);
- :class:`LedgerVerdict`: a stated number checked by a ledger rule
  (:mod:`rsutils.book.audit.ledger`); :data:`~rsutils.book.audit.ledger.rules.VERDICTS`
  lists them;
- :class:`AlphaVerdict`: the level α a released log's certificates imply
  (:mod:`rsutils.book.audit.released_alpha`).

**Verdicts in tables.** A table's verdict column holds the members themselves; they
become text where the table leaves Python (pandas prints a cell by ``str()``; the book
glues a member as its text, :func:`rsutils.book.glue.plain`). A verdict read back from
text (a value glued by another page, a CSV file) is parsed once with ``parse``, which
refuses a word that is no member. A new member is one line; the functions that combine verdicts
(:func:`~rsutils.book.audit.measured.all_of`) refuse a member they do not rank.
"""

from __future__ import annotations

import inspect
from enum import StrEnum
from typing import Self, TypeVar

__all__ = ["AlphaVerdict", "ClaimVerdict", "LedgerVerdict"]


class _Vocabulary(StrEnum):
    """A member per verdict, written ``NAME = "text", "what test it means"``."""

    def __new__(cls, text: str, meaning: str) -> Self:
        member = str.__new__(cls, text)
        member._value_ = text
        member.__doc__ = meaning
        return member

    @classmethod
    def parse(cls, text: str) -> Self:
        """The member whose text is ``text``; :class:`ValueError` naming the members for
        any other word."""
        try:
            return cls(text)
        except ValueError:
            words = ", ".join(repr(str(m)) for m in cls)
            raise ValueError(f"{text!r} is not a {cls.__name__} (one of {words})") from None


_V = TypeVar("_V", bound=type[_Vocabulary])


def _listed(vocabulary: _V) -> _V:
    """``vocabulary`` with each member's text and meaning listed in its docstring, where
    the API page shows them (autodoc shows no ``__doc__`` of an enum member)."""
    members = "\n".join(f"- ``{member}``: {member.__doc__}" for member in vocabulary)
    vocabulary.__doc__ = f"{inspect.cleandoc(vocabulary.__doc__ or '')}\n\n{members}"
    return vocabulary


@_listed
class ClaimVerdict(_Vocabulary):
    """The verdict on a paper's qualitative claim, from its family of comparisons (each
    judged by :func:`~rsutils.analysis.verdicts.judge` with its margin m), or from an
    exact computation (:func:`~rsutils.book.audit.measured.about`)."""

    HOLDS = (
        "holds",
        (
            "every comparison goes the claimed way, none by an interval that excludes a "
            "difference as large as the margin m (an exact claim: its number fits)"
        ),
    )
    DOES_NOT_HOLD = (
        "does not hold",
        (
            "the data exclude the claimed effect: a comparison goes against it, is "
            "equivalent within ±m, or goes its way by less than m"
        ),
    )
    NOT_RESOLVED = (
        "not resolved at this scale",
        (
            "none goes against the claim, and some interval holds both no change and the "
            "claimed effect"
        ),
    )
    NOT_TESTABLE = (
        "not testable here",
        (
            "the comparison is decided by construction or by a condition unrelated to the "
            "claim (a ceiling, a saturated σ), whose reason is printed beside it"
        ),
    )


@_listed
class LedgerVerdict(_Vocabulary):
    """What a ledger rule concludes about a stated number, checked at its printed precision."""

    HOLDS = "holds", "recomputed from its sources, it lies within the printed precision"
    DOES_NOT_HOLD = "does not hold", "recomputed from its sources, it lies outside it"
    NOT_PRINTED = "not printed", "it cites a cell that its table leaves empty"
    NOT_CHECKABLE = "not checkable", "nothing public holds it, or its release is not at hand"


@_listed
class AlphaVerdict(_Vocabulary):
    """The level α that a released log's certificates imply at the stated n, by one test
    (the ceilings, the printed radii) or both (``implied α``)."""

    ALPHA_0_001 = "α = 0.001", "the certificates fit α = 0.001 and rule out the other level"
    ALPHA_0_01 = "α = 0.01", "the certificates fit α = 0.01 and rule out the other level"
    NEITHER = "neither", "the certificates rule out both levels"
    UNDECIDABLE = "undecidable", "the certificates fit both levels: they tell nothing"
    CONFLICTING = "conflicting", "the two tests decide for different levels"

    @classmethod
    def at_level(cls, alpha: float) -> AlphaVerdict:
        """The member that names the level ``alpha`` (``"α = 0.01"``); :class:`ValueError`
        for a level no member names (add one: a line)."""
        try:
            return cls(f"α = {alpha:g}")
        except ValueError:
            words = ", ".join(repr(str(m)) for m in cls)
            raise ValueError(
                f"no AlphaVerdict names α = {alpha:g} (its members: {words}): "
                "add a member for that level"
            ) from None
