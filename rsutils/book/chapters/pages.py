"""What a page of a chapter with linked pages does first, in one call.

A page of chapter 02, 06, 07 or 08 (the chapter or one of its linked pages) starts with

>>> chapter, S = open_page("chapter-design-costs", "smoke", seed=0)  # doctest: +SKIP

after its ``parameters`` cell (there ``profile``, ``seed`` and ``progress``): it opens the
chapter (:meth:`~rsutils.book.chapter.Chapter.open`), builds the chapter's settings
(:class:`~rsutils.book.chapters.settings.ChapterSettings`) and shows the page's run-at
table. The page names itself by its label, and reads every setting it shares with its
chapter from ``S``.
"""

from __future__ import annotations

from IPython.display import display

from rsutils.book.chapter import Chapter
from rsutils.book.chapters.fewer_draws_settings import FewerDrawsSettings
from rsutils.book.chapters.npg_settings import NpgSettings
from rsutils.book.chapters.settings import ChapterSettings
from rsutils.book.chapters.sigma_ascent_settings import SigmaAscentSettings
from rsutils.book.chapters.sota_settings import SotaSettings

__all__ = ["SETTINGS", "open_page", "settings_of"]

#: The settings of every chapter with linked pages, in the book's order.
SETTINGS: tuple[type[ChapterSettings], ...] = (
    SigmaAscentSettings,
    NpgSettings,
    SotaSettings,
    FewerDrawsSettings,
)


def settings_of(page: str) -> type[ChapterSettings]:
    """The settings class of the chapter whose pages include ``page`` (a label); any
    other label raises :class:`ValueError` naming the pages there are."""
    for kind in SETTINGS:
        if page in kind.PAGES:
            return kind
    every = [p for kind in SETTINGS for p in kind.PAGES]
    raise ValueError(f"no chapter has a page {page!r}; the pages with settings are {every}")


def open_page(
    page: str, profile: str, *, seed: int = 0, progress: bool = True
) -> tuple[Chapter, ChapterSettings]:
    """The chapter at ``profile``'s scale and its settings, for the page labelled
    ``page``, after showing the page's run-at table (the book's figure style is set)."""
    kind = settings_of(page)
    chapter = Chapter.open(profile, seed=seed, progress=progress)
    settings = kind.at(chapter)
    display(settings.run_at(chapter, page))
    return chapter, settings
