"""The groups of a run profile's settings, one per thing they configure.

A :class:`~rsutils.book.profiles.Profile` holds one of each: training
(:class:`TrainingScale`), the main CERTIFY runs (:class:`CertifyScale`), the secondary
runs (:class:`SecondaryScale`), data-dependent smoothing (:class:`DataDependentScale`),
the noise parameter generators (:class:`GeneratorScale`), their audit
(:class:`AuditScale`), the independently trained replicate models behind a comparison
(:class:`ReplicateScale`) and the Monte Carlo checks against known answers
(:class:`CheckScale`). A chapter reads the group it needs (``P.certify.n``,
``P.secondary.images``, ``P.audit.steps``).
"""

from __future__ import annotations

from dataclasses import dataclass

from rsutils.book.recipe_grid import KIND_NAMES

__all__ = [
    "AuditScale",
    "CertifyScale",
    "CheckScale",
    "DataDependentScale",
    "GeneratorScale",
    "ReplicateScale",
    "SecondaryScale",
    "TrainingScale",
]


@dataclass(frozen=True)
class TrainingScale:
    """How the book's base models are trained."""

    #: Training epochs of each base model.
    epochs: int
    #: Training images used (``None``: all of them).
    subset: int | None
    #: The numerical precision of training, the ``precision`` of
    #: :class:`~rsutils.training.train.TrainConfig`; bf16 trains two to three times as
    #: fast on CPUs with AMX or AVX-512 BF16, with models of the same accuracy (measured
    #: against fp32 on the same seeds, chapter 12); fp32 where bf16 would be emulated
    #: (:meth:`~rsutils.book.profiles.Profile.on`).
    precision: str = "fp32"


@dataclass(frozen=True)
class CertifyScale:
    """The main CERTIFY and PREDICT runs: draws, level, test images and forward pass."""

    #: CERTIFY's selection draws.
    n0: int
    #: CERTIFY's estimation draws.
    n: int
    #: The failure probability of each certificate.
    alpha: float
    #: Test images certified, ...
    images: int
    #: ... every ``skip``-th one (Cohen et al.'s ``--skip``).
    skip: int
    #: Monte Carlo batch size.
    batch_size: int
    #: PREDICT's sample sizes compared in chapter 01 (d).
    predict_ns: tuple[int, ...]
    #: The base model's numerical mode when certifying, predicting and auditing
    #: (:mod:`rsutils.core.inference`); a mode other than fp32 is a different base
    #: classifier with its own cached logs. Sigma ascent (chapters 02, 03) runs its model
    #: in fp32 whatever this says; the CERTIFY that follows it runs in this mode. A
    #: bfloat16 mode runs in float32 where the device would emulate bfloat16
    #: (:meth:`~rsutils.book.profiles.Profile.on`).
    inference: str = "fp32"


@dataclass(frozen=True)
class SecondaryScale:
    """The smaller runs of the secondary experiments (CERTIFY's other settings are the
    main runs')."""

    #: Test images certified, ...
    images: int
    #: ... every ``skip``-th one, ...
    skip: int
    #: ... with this many estimation draws.
    n: int


@dataclass(frozen=True)
class DataDependentScale:
    """Data-dependent smoothing (chapters 02 and 03): sigma ascent and the fine-tuned
    training variants."""

    #: K, the steps of sigma ascent when certifying.
    iterations: int
    #: M, the noise draws of each ascent step.
    draws: int
    #: The K compared in the ablation (0, Cohen's fixed sigma, and ``iterations`` among
    #: them).
    ablation_ks: tuple[int, ...]
    #: Epochs of every fine-tuning run (DS², SmoothAdv, MACER, uniform noise).
    finetune_epochs: int
    #: Training images used by fine-tuning (``None``: all of them).
    finetune_subset: int | None
    #: Noise draws per sample in MACER's loss.
    macer_draws: int


@dataclass(frozen=True)
class GeneratorScale:
    """The noise parameter generators of chapter 06: every method's fine-tuning budget,
    and which generators its shape-only runs and recipe grid train."""

    #: Fine-tuning steps of every method, each on ``batch_size`` images.
    steps: int
    #: Training images they cycle through (``None``: all of them).
    subset: int | None
    #: Steps of each run of the recipe grid
    #: (:meth:`~rsutils.book.profiles.Profile.recipe_runs`; ``None``: ``steps``, so that
    #: its recipe is the chapter's own dataset-wise model).
    recipe_steps: int | None = None
    #: The generators the recipe grid varies (``"dataset"``, ``"certification"``).
    recipe_kinds: tuple[str, ...] = ("dataset",)
    #: The generators of the shape-only and log-mean runs.
    shape_only_kinds: tuple[str, ...] = ("dataset",)
    #: Batches (each with its own noise draw) over which chapter 06 averages the
    #: cross-entropy's gradient along sigma at the start of training
    #: (:func:`~rsutils.anisotropic.saturation.ce_sigma_gradient`).
    gradient_draws: int = 200
    #: Images per step, 128 in UCAN's code. A smaller batch keeps the number of steps,
    #: which is what the saturation of sigma depends on (Adam's normalised steps), at a
    #: fraction of the cost of a step.
    batch_size: int = 128

    def run_at_rows(self) -> dict[str, str]:
        """Rows of chapter 06's run-at table for its section (b'): which generators
        the recipe grid varies and for how many steps, and which the shape-only runs
        train."""
        kinds = " and ".join(KIND_NAMES[kind] for kind in self.recipe_kinds)
        steps = self.recipe_steps or self.steps
        shape = " and ".join(KIND_NAMES[kind] for kind in self.shape_only_kinds)
        return {
            "recipe grid (b')": f"{kinds}, {steps:,} steps of {self.batch_size} images",
            "shape-only runs (b')": shape,
        }


@dataclass(frozen=True)
class AuditScale:
    """Chapter 06's soundness audit of certification-wise certificates: how many it
    audits, and its scale in the names of
    :class:`~rsutils.anisotropic.soundness.audit.settings.AuditSettings`' fields."""

    #: Correct certificates with a region whose regions the audit searches.
    images: int
    #: Draws that confirm a point's class (Clopper-Pearson).
    n_verify: int
    #: Projected-gradient steps of the attack.
    steps: int
    #: Noise draws per attack step.
    draws: int


@dataclass(frozen=True)
class ReplicateScale:
    """Independently trained models behind every comparison a verdict rests on."""

    #: Replicate models per setting, each with its own base model, fine-tuning and
    #: generators (seeds from :func:`~rsutils.core.streams.replicate_seeds`).
    models: int
    #: Test images every replicate is certified on, every ``skip``-th one; a subset of
    #: the main runs' images, so that the first replicate's logs are rows of the main
    #: logs (``None``: the main runs' images).
    images: int | None = None
    #: ... every ``skip``-th test image (``None``: the main runs' skip).
    skip: int | None = None


@dataclass(frozen=True)
class CheckScale:
    """Monte Carlo checks against a known answer, which need no data: their draws."""

    #: Draws of each Neyman-Pearson worst-case check of Table I (chapter 04).
    worst_case_draws: int
    #: Uniform draws of each volume estimate of a super-ellipsoid (chapter 05).
    volume_draws: int
    #: Runs of each coverage check of the fewer-draw procedures (chapter 08).
    coverage_runs: int
