"""Chapter 06's settings, read by the chapter and its pages 06a, 06b and 06c.

The Gaussian scale λ, the base model every noise method is fine-tuned from, the methods
themselves and the audit's scale (:class:`NpgSettings`): the pages train, read and
audit the chapter's generators, which they find in the cache only under the settings
the chapter trained them with.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import ClassVar

from rsutils.anisotropic.training import NPGConfig
from rsutils.book.chapter import Chapter
from rsutils.book.chapters.settings import ChapterSettings, RunAt
from rsutils.book.profiles import ANISOTROPIC_LAMBDA, Profile
from rsutils.book.scales import AuditScale
from rsutils.training.train import TrainConfig

__all__ = ["NpgSettings"]


@dataclass(frozen=True)
class NpgSettings(ChapterSettings):
    """What chapter 06's pages share (see the module's docstring)."""

    PAGES: ClassVar[dict[str, str]] = {
        "chapter-npg-training": "_chapter_rows",
        "chapter-npg-saturation": "_saturation_rows",
        "chapter-ucan-code": "_ucan_code_rows",
        "chapter-deployed-soundness": "_deployed_rows",
    }

    #: The Gaussian scale λ of the anisotropic chapters.
    lam: float
    #: Chapter 01's base model trained at ``lam``, which every method is fine-tuned from.
    base: TrainConfig
    #: The noise methods, by display name (:meth:`~rsutils.book.profiles.Profile.npg_methods`
    #: of ``base``; read-only).
    methods: Mapping[str, NPGConfig]
    #: The soundness audit's scale (06c).
    audit_scale: AuditScale

    @classmethod
    def of(cls, profile: Profile, seed: int = 0) -> NpgSettings:
        """The settings at ``profile``'s scale, with the base model and methods of
        ``seed``."""
        lam = ANISOTROPIC_LAMBDA
        base = profile.base_models(seed)[lam]
        methods = MappingProxyType(profile.npg_methods(base, seed))
        return cls(lam, base, methods, profile.audit)

    def base_model_row(self) -> str:
        """The base model as the run-at tables name it."""
        return f"chapter 01's small_cnn, σ = {self.lam}"

    def _certified_rows(self, chapter: Chapter) -> dict[str, str]:
        runs = chapter.secondary
        return {
            "test images certified": f"{len(runs.indices)}",
            "n (estimation draws)": f"{runs.settings.n:,}",
        }

    def _chapter_rows(self, chapter: Chapter) -> RunAt:
        P, shape_row = chapter.profile, "shape-only runs (b')"
        rows = {
            "dataset": "Fashion-MNIST (test split)",
            "base model": self.base_model_row(),
            "fine-tuning": (
                f"{P.generators.steps:,} Adam steps, batch {P.generators.batch_size}, 1 draw"
            ),
            "replicate models": f"{P.replicates.models} per method, own bases",
            **self._certified_rows(chapter),
            shape_row: P.generators.run_at_rows()[shape_row],
        }
        return RunAt(rows, ("n0", "alpha"))

    def _saturation_rows(self, chapter: Chapter) -> RunAt:
        G = chapter.profile.generators
        rows = {
            "base model": self.base_model_row(),
            "recipe grid": G.run_at_rows()["recipe grid (b')"],
            "batches for the pull": f"{G.gradient_draws}",
            "test images read": f"{len(chapter.secondary.indices)}",
        }
        return RunAt(rows, ())

    def _ucan_code_rows(self, chapter: Chapter) -> RunAt:
        rows = {
            "released files": "UCAN's model_saved/ (CIFAR-10, λ = 1)",
            "inputs": f"{len(chapter.secondary.indices)} Fashion-MNIST test images, "
            "and as many of uniform random pixels",
        }
        return RunAt(rows, ())

    def _deployed_rows(self, chapter: Chapter) -> RunAt:
        rows = {
            "classifiers": f"chapter 06's, fine-tuned from σ = {self.lam}",
            **self._certified_rows(chapter),
            "audited images": f"up to {self.audit_scale.images}",
            "draws per audited point": f"{self.audit_scale.n_verify:,}",
        }
        return RunAt(rows, ("n0", "alpha"))
