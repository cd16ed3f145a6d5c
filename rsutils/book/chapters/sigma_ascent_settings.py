"""Chapter 02's settings, read by the chapter and its pages 02a and 02b.

The σ = 0.25 base model, sigma ascent from it and the four fine-tuned variants of the
training section (:class:`SigmaAscentSettings`): 02b reads the variants' logs from the
cache, which finds them only under the settings the chapter trained them with.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import ClassVar

from rsutils.book.chapter import Chapter
from rsutils.book.chapters.settings import ChapterSettings, RunAt
from rsutils.book.profiles import Profile
from rsutils.ddrs.sigma_ascent import SigmaAscent
from rsutils.training.objectives import ObjectiveSettings
from rsutils.training.train import TrainConfig

__all__ = ["SigmaAscentSettings", "finetuned_variants"]

#: The noise level of the base model the ascent starts from and the variants fine-tune.
SIGMA0 = 0.25


def finetuned_variants(
    profile: Profile, base: TrainConfig, seed: int = 0
) -> dict[str, TrainConfig]:
    """The training section's variants of ``base``, by name, each fine-tuned for
    ``profile.ds.finetune_epochs`` epochs (:meth:`~rsutils.book.profiles.Profile.finetune`):
    Cohen-FT (Gaussian noise again), Cohen-DS² (trained with one-step, one-draw DS),
    SmoothAdv (one draw, ε = 0.25, two attack steps) and MACER
    (``profile.ds.macer_draws`` draws)."""
    P = profile
    return {
        "Cohen-FT": P.finetune(base, seed),
        "Cohen-DS²": P.finetune(base, seed, ds=P.ascent(SIGMA0, iterations=1, draws=1)),
        "SmoothAdv": P.finetune(
            base,
            seed,
            method="smoothadv",
            objective=ObjectiveSettings(draws=1, epsilon=0.25, attack_steps=2),
        ),
        "MACER": P.finetune(
            base, seed, method="macer", objective=ObjectiveSettings(draws=P.ds.macer_draws)
        ),
    }


@dataclass(frozen=True)
class SigmaAscentSettings(ChapterSettings):
    """What chapter 02's pages share (see the module's docstring)."""

    PAGES: ClassVar[dict[str, str]] = {
        "chapter-sigma-ascent": "_chapter_rows",
        "chapter-sigma-ascent-method": "_method_rows",
        "chapter-sigma-ascent-l1-memory": "_l1_memory_rows",
    }

    #: Chapter 01's base model of σ = 0.25.
    base: TrainConfig
    #: Sigma ascent from σ0 = 0.25 at the profile's scale (K and M; Algorithm 1's step
    #: and clamp).
    ascent: SigmaAscent
    #: The fine-tuned variants of ``base`` (:func:`finetuned_variants`; read-only).
    variants: Mapping[str, TrainConfig]

    @classmethod
    def of(cls, profile: Profile, seed: int = 0) -> SigmaAscentSettings:
        """The settings at ``profile``'s scale, with the models of ``seed``."""
        base = profile.base_models(seed)[SIGMA0]
        variants = MappingProxyType(finetuned_variants(profile, base, seed))
        return cls(base, profile.ascent(SIGMA0), variants)

    def _chapter_rows(self, chapter: Chapter) -> RunAt:
        P = chapter.profile
        tuned = "all" if P.ds.finetune_subset is None else f"{P.ds.finetune_subset:,}"
        return RunAt(
            {
                **chapter.base_model_rows(),
                **self._ascent_row(),
                **self._secondary_row(P),
                "fine-tuning": f"{P.ds.finetune_epochs} epochs on {tuned} training images",
                **self._replicate_row(chapter),
            }
        )

    def _method_rows(self, chapter: Chapter) -> RunAt:
        return RunAt(
            {
                **chapter.base_model_rows(),
                **self._ascent_row(),
                **self._replicate_row(chapter),
                "ceiling groups": "the fixed-σ logs certified again, other draws",
            }
        )

    def _l1_memory_rows(self, chapter: Chapter) -> RunAt:
        P = chapter.profile
        return RunAt(
            {
                **chapter.base_model_rows(),
                **self._secondary_row(P),
                "uniform model": f"the σ = {SIGMA0} model fine-tuned for "
                f"{P.ds.finetune_epochs} epochs with uniform noise, λ = 0.5",
            }
        )

    def _ascent_row(self) -> dict[str, str]:
        a = self.ascent
        return {
            "sigma ascent (K, M, step, clamp)": (
                f"K = {a.iterations}, M = {a.draws}, step {a.lr}, clamp {a.clamp}"
            )
        }

    @staticmethod
    def _secondary_row(P: Profile) -> dict[str, str]:
        scale = P.secondary
        return {
            "secondary experiments": (
                f"{scale.images} images (every {scale.skip}th), n = {scale.n:,}"
            )
        }

    @staticmethod
    def _replicate_row(chapter: Chapter) -> dict[str, str]:
        P = chapter.profile
        return {
            "replicate models": (
                f"{P.replicates.models} per σ, each certified with its σ and "
                f"Cohen-DS on {len(chapter.replicated.indices)} images "
                f"(every {P.replicates.skip or P.certify.skip}th), "
                f"n = {P.certify.n:,}"
            )
        }
