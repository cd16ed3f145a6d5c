"""Chapter 08's settings, read by the chapter and its pages 08a, 08b and 08c.

CERTIFY's draws and level, the decision radii, the planned draws' radius loss, the
coverage runs, 08c's paired draws and the three schedules the procedures test with:
the fewer-draws pages compare the same procedures on the same records, so they must
state them once (:class:`FewerDrawsSettings`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from rsutils.book.chapter import Chapter
from rsutils.book.chapters.settings import ChapterSettings, RunAt
from rsutils.book.profiles import Profile
from rsutils.sequential.sequence import AnytimeSchedule
from rsutils.sequential.spending import LookSchedule

__all__ = ["FewerDrawsSettings"]


@dataclass(frozen=True)
class FewerDrawsSettings(ChapterSettings):
    """What chapter 08's pages share (see the module's docstring); the schedules are
    derived from ``n`` and ``alpha``, so they cannot disagree with them."""

    PAGES: ClassVar[dict[str, str]] = {
        "chapter-fewer-draws": "_chapter_rows",
        "chapter-design-costs": "_design_rows",
        "chapter-whole-curves": "_curve_rows",
        "chapter-forward-pass": "_forward_pass_rows",
    }

    #: CERTIFY's selection draws n0, estimation draws n and level alpha (the profile's
    #: main runs).
    n0: int
    n: int
    alpha: float
    #: Runs of each coverage check of a procedure.
    coverage_runs: int
    #: The decision task's radii, in units of each model's σ.
    r_over_sigma: tuple[float, ...] = (0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0)
    #: The planned draws' budget, in ℓ2 units of [0, 1] pixels.
    radius_loss: float = 0.05
    #: Paired float32 / fast draws of 08c's float32-from-fast certificates.
    reference_draws: tuple[int, ...] = (300, 1000)
    #: Alpha spent over CERTIFY's n at doubling looks.
    schedule: LookSchedule = field(init=False)
    #: The one-sided confidence sequence over n.
    anytime: AnytimeSchedule = field(init=False)
    #: ``schedule`` with randomised tests.
    randomised: LookSchedule = field(init=False)

    def __post_init__(self) -> None:
        derived = {
            "schedule": LookSchedule.geometric(self.n, self.alpha),
            "anytime": AnytimeSchedule.geometric(self.n, self.alpha),
            "randomised": LookSchedule.geometric(self.n, self.alpha, randomized=True),
        }
        for name, value in derived.items():
            object.__setattr__(self, name, value)  # a frozen dataclass's own fields

    @classmethod
    def of(cls, profile: Profile, seed: int = 0) -> FewerDrawsSettings:
        """The settings at ``profile``'s scale (the chapter's seed changes none of them)."""
        main = profile.certify
        return cls(main.n0, main.n, main.alpha, profile.checks.coverage_runs)

    @property
    def certify_passes(self) -> int:
        """Forward passes CERTIFY spends on every image, ``n0 + n``."""
        return self.n0 + self.n

    def radii_row(self) -> str:
        """The decision radii as the run-at tables show them."""
        return "r/σ = " + ", ".join(f"{r:g}" for r in self.r_over_sigma)

    def _chapter_rows(self, chapter: Chapter) -> RunAt:
        return RunAt(
            {
                **chapter.base_model_rows(),
                "decision radii": self.radii_row(),
                "confidence sequence": f"{len(self.anytime.looks)} looks",
                "planned draws' radius loss": self.radius_loss,
                "coverage runs": f"{self.coverage_runs:,} per procedure",
            }
        )

    def _design_rows(self, chapter: Chapter) -> RunAt:
        rows = {
            "radii": self.radii_row(),
            "confidence sequence": f"{len(self.anytime.looks)} looks",
        }
        return RunAt(rows, ("n0", "n", "alpha"))

    def _curve_rows(self, chapter: Chapter) -> RunAt:
        return RunAt(
            {
                **chapter.base_model_rows(),
                "decision radii": self.radii_row(),
                "planned draws' radius loss": self.radius_loss,
            }
        )

    def _forward_pass_rows(self, chapter: Chapter) -> RunAt:
        secondary = chapter.profile.secondary
        rows = {
            **chapter.base_model_rows(),
            "images": f"{secondary.images} (every {secondary.skip}th)",
            "n (estimation draws)": f"{secondary.n:,}",
            "model and noise": "σ = 0.25",
            "paired draws m": ", ".join(f"{m:,}" for m in self.reference_draws),
        }
        return RunAt(rows, ("n0", "alpha", "epochs", "inference"))
