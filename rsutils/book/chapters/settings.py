"""What a chapter's settings object is: one per chapter with linked pages, read by them all.

A chapter and its linked pages (02 with 02a and 02b, 06 with 06a to 06c, 07 with 07a to
07c, 08 with 08a to 08c) share constants and objects derived from the profile: radii,
schedules, the noise methods, the ascent. Each chapter builds them once, in a frozen
:class:`ChapterSettings` (:mod:`~rsutils.book.chapters.sigma_ascent_settings`,
:mod:`~rsutils.book.chapters.npg_settings`, :mod:`~rsutils.book.chapters.sota_settings`,
:mod:`~rsutils.book.chapters.fewer_draws_settings`), so that a page cannot state a value
its chapter states otherwise; it also holds the rows of each page's run-at table.
:func:`~rsutils.book.chapters.pages.open_page` opens a page with them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar, NamedTuple, Self

import pandas as pd

from rsutils.book.chapter import STANDARD_ROWS, Chapter
from rsutils.book.profiles import Profile

__all__ = ["ChapterSettings", "RunAt"]


class RunAt(NamedTuple):
    """A page's run-at table: its own rows, and the profile's rows it names
    (see :meth:`~rsutils.book.chapter.Chapter.run_at`)."""

    rows: Mapping[str, object]
    standard: tuple[str, ...] = STANDARD_ROWS


class ChapterSettings:
    """The settings a chapter and its linked pages share; a subclass is a frozen
    dataclass whose fields are those settings, built by :meth:`of`.

    :attr:`PAGES` names the chapter's pages by their labels, the chapter's own first,
    each with the method that gives its run-at rows (a :class:`RunAt`, from the chapter);
    :meth:`run_at` gives each page its run-at table.
    """

    #: The chapter's pages by label, the chapter's own first, each with the name of the
    #: method that gives its run-at rows.
    PAGES: ClassVar[Mapping[str, str]] = {}

    @classmethod
    def of(cls, profile: Profile, seed: int = 0) -> Self:
        """The settings at the scale of ``profile``, for the chapter's ``seed``."""
        raise NotImplementedError(f"{cls.__name__} must define of(profile, seed)")

    @classmethod
    def at(cls, chapter: Chapter) -> Self:
        """The settings of ``chapter``: :meth:`of` its profile and seed."""
        return cls.of(chapter.profile, chapter.seed)

    def run_at(self, chapter: Chapter, page: str) -> pd.DataFrame:
        """The run-at table of ``page`` (one of :attr:`PAGES`), with the scale and
        environment of ``chapter``. An unknown page raises :class:`ValueError`."""
        if page not in self.PAGES:
            raise ValueError(
                f"{type(self).__name__} has no page {page!r}; choose one of {list(self.PAGES)}"
            )
        rows, standard = getattr(self, self.PAGES[page])(chapter)
        return chapter.run_at(rows, standard=standard)
