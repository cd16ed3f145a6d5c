"""Chapter 07's settings, read by the chapter and its pages 07a, 07b and 07c.

The audit chapter runs nothing at a scale of its own: what its pages share is the
papers' printed tables, read once (:class:`SotaSettings`), and the rows of their
run-at tables, which say what they read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import ClassVar

from rsutils.book.audit import ledger as lg
from rsutils.book.chapter import Chapter
from rsutils.book.chapters.settings import ChapterSettings, RunAt
from rsutils.book.papers import released as rel
from rsutils.book.papers.published import (
    PublishedTable,
    published_table,
    published_table_names,
)
from rsutils.book.profiles import Profile

__all__ = ["SotaSettings"]


@dataclass(frozen=True, eq=False)
class SotaSettings(ChapterSettings):
    """What chapter 07's pages share (see the module's docstring). Two of them are equal
    only if they are one (the tables hold data frames, which have no single truth
    value)."""

    PAGES: ClassVar[dict[str, str]] = {
        "chapter-sota-tables": "_chapter_rows",
        "chapter-released-logs": "_released_rows",
        "chapter-printed-tables": "_printed_rows",
        "chapter-beside": "_beside_rows",
    }

    #: Every published table shipped with rsutils, by name (read-only).
    tables: Mapping[str, PublishedTable]

    @classmethod
    def of(cls, profile: Profile, seed: int = 0) -> SotaSettings:
        """The settings (the same at every profile and seed)."""
        names = published_table_names()
        return cls(MappingProxyType({name: published_table(name) for name in names}))

    def _published_row(self) -> dict[str, str]:
        return {"published": f"{len(self.tables)} tables (shipped with rsutils)"}

    def _chapter_rows(self, chapter: Chapter) -> RunAt:
        rows = {
            "published": f"a ledger of {len(lg.ledger())} statements (shipped with rsutils)",
            "replicates": f"{chapter.profile.replicates.models} models per method, read "
            "from the cache of chapters 01, 02, 05 and 06",
        }
        return RunAt(rows, ("alpha",))

    def _released_rows(self, chapter: Chapter) -> RunAt:
        rows = {
            "released": f"Cohen et al.'s {len(rel.COHEN2019_CERTIFY_LOGS)} "
            f"CERTIFY and {len(rel.COHEN2019_PREDICT_NS)} PREDICT logs, "
            "the same at every profile",
        }
        return RunAt(rows, ("alpha",))

    def _printed_rows(self, chapter: Chapter) -> RunAt:
        return RunAt(self._published_row(), ())

    def _beside_rows(self, chapter: Chapter) -> RunAt:
        P = chapter.profile
        rows = {
            **self._published_row(),
            "released": "Cohen et al.'s logs, the same at every profile",
            "our rows": "chapters 01, 02 and 06 at this profile, read from the cache",
            "their images and draws": f"{len(chapter.replicated.indices)} "
            f"at n = {P.certify.n:,} (01, 02); "
            f"{P.secondary.images} at n = {P.secondary.n:,} (06)",
        }
        return RunAt(rows, ("alpha",))
