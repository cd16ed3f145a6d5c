"""Run profiles: the scale every chapter runs at.

``smoke`` is for tests and CI (each notebook within a minute on two CPU cores),
``cpu`` is the default of ``make book`` (honest small scale, the whole book within an
hour on two cores), ``paper`` is the papers' own scale for a GPU. ``smoke`` and ``cpu``
train and run the base model in bfloat16 with the NHWC layout
(:mod:`rsutils.core.inference`; 4 to 8 times the float32 forward on a 2-core
AMX-BF16 Xeon, by ``python -m rsutils bench``); ``paper`` in float32, as the papers
did. Bfloat16 is declared, and used where the device computes it in hardware:
:func:`get_profile` gives the profile as it runs here (:meth:`Profile.on`), in float32
on a device that would emulate bfloat16 (on an AVX2-only CPU, ``bf16_channels_last``
ran at an eleventh of ``channels_last``'s inputs per second), and every run-at table names
the mode that ran.

A :class:`Profile` groups its settings by what they configure
(:mod:`rsutils.book.scales`), so that a chapter reads the group it needs
(``P.certify.n``, ``P.secondary.images``, ``P.audit.steps``).

It also hands out what chapters share, so that they cannot drift apart
and miss each other's cached results: the base models (:meth:`Profile.base_models`),
the test images (:meth:`Profile.indices`), CERTIFY's settings
(:meth:`Profile.certify_settings`), sigma ascent (:meth:`Profile.ascent`), the
fine-tuned variants of chapter 02 (:meth:`Profile.finetune`) and the noise parameter
generators of chapter 06 (:meth:`Profile.npg`, :meth:`Profile.npg_methods`, grouped in
:data:`NPG_GROUPS`), with its shape-only runs (:meth:`Profile.shape_only_methods`) and
its recipe grid (:meth:`Profile.recipe_runs`) and its runs with other heads on
``sigma`` (:meth:`Profile.head_runs`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, replace

import torch

from rsutils.anisotropic.training import NPGConfig
from rsutils.book.recipe_grid import HEAD_GRID, KIND_NAMES, RECIPE_GRID, HeadRun, RecipeRun
from rsutils.book.scales import (
    AuditScale,
    CertifyScale,
    CheckScale,
    DataDependentScale,
    GeneratorScale,
    ReplicateScale,
    SecondaryScale,
    TrainingScale,
)
from rsutils.core.devices import pick_device
from rsutils.core.inference import float32_equivalent, native_bf16
from rsutils.core.settings import CertifySettings
from rsutils.core.streams import replicate_seeds
from rsutils.ddrs.sigma_ascent import SigmaAscent
from rsutils.logs.runner import select_indices
from rsutils.training.train import TrainConfig

__all__ = [
    "ANISOTROPIC_LAMBDA",
    "BOOK_SIGMAS",
    "FIG4_PATTERN",
    "FINETUNE_LR",
    "NPG_GROUPS",
    "PROFILES",
    "NoiseMethodGroups",
    "Profile",
    "get_profile",
]

#: The noise levels of the book's base models (Cohen et al.'s grid).
BOOK_SIGMAS = (0.25, 0.5, 1.0)

#: The Gaussian scale λ of the anisotropic chapters, whose base model is the book's base
#: model trained at this sigma.
ANISOTROPIC_LAMBDA = 0.5

#: The fixed anisotropic noise of the ALM chapter, UCAN's Fig. 4 pattern with p = 2,
#: κ = ι = 1 and mean 1, as arguments of :func:`~rsutils.anisotropic.patterns.spatial_pattern`.
FIG4_PATTERN = {"norm": "l2", "kappa": 1.0, "iota": 1.0}

#: Cohen et al.'s CERTIFY settings (n0 = 100, n = 100,000, alpha = 0.001): every profile
#: selects and fails like the paper; the paper profile also samples as much.
COHEN = CertifySettings()

#: Learning rate of every fine-tuning run of the book (a quarter of training's).
FINETUNE_LR = 5e-4


@dataclass(frozen=True)
class NoiseMethodGroups:
    """Chapter 06's noise methods (the display names of :meth:`Profile.npg_methods`) by
    what they are, and which control each is compared with."""

    #: The isotropic control, at the base model's own noise, fine-tuned for as many steps.
    control: str = "isotropic"
    #: The isotropic control at σ ≡ 2, the level the dataset-wise σ reaches. A gain against
    #: the first control that vanishes against this one comes from more noise, not from
    #: its shape.
    control_at_bound: str = "isotropic, σ ≡ 2"
    #: UCAN's three fixed patterns (p = 1, 2, ∞).
    patterns: tuple[str, ...] = ("pattern ℓ1", "pattern ℓ2", "pattern ℓ∞")
    #: The dataset-wise generator, trained for the minimum and for the mean of σ.
    dataset_wise: tuple[str, ...] = ("dataset-wise, min", "dataset-wise, mean")
    #: The certification-wise generator.
    certification_wise: tuple[str, ...] = ("certification-wise",)
    #: Shape-only runs (:meth:`Profile.shape_only_methods`): σ rescaled to geometric mean
    #: 1, the ALM's factor of σ ≡ 1, so only its shape is learned; compared by ALM with
    #: :attr:`control`.
    shape_at_alm_budget: tuple[str, ...] = (
        "dataset-wise, shape at gmean 1",
        "certification-wise, shape at gmean 1",
    )
    #: σ rescaled to minimum 1, the radius' factor of σ ≡ 1; compared by radius with
    #: :attr:`control`.
    shape_at_radius_budget: tuple[str, ...] = (
        "dataset-wise, shape at min 1",
        "certification-wise, shape at min 1",
    )
    #: The paper's ALM objective, the mean of log σ, without a budget; compared by radius
    #: and by ALM with both controls.
    log_mean: tuple[str, ...] = ("dataset-wise, log-mean", "certification-wise, log-mean")
    #: UCAN's three patterns rescaled to geometric mean 1 instead of mean 1
    #: (:meth:`Profile.claim_methods`): the same shapes, each with the ALM factor of
    #: σ ≡ 1, so that an ALM comparison with :attr:`control` weighs the shape. Rescaled
    #: to mean 1, a pattern's ALM factor is its geometric mean, below 1 by AM–GM.
    patterns_at_gmean: tuple[str, ...] = (
        "pattern ℓ1, gmean 1",
        "pattern ℓ2, gmean 1",
        "pattern ℓ∞, gmean 1",
    )
    #: The dataset-wise recipe at the generator's smaller step (Adam 1e-3), which the
    #: saturation chapter's recipe grid finds does not run σ to its bound
    #: (:meth:`Profile.claim_methods`): a dataset-wise σ with a shape to judge.
    dataset_wise_unsaturated: tuple[str, ...] = ("dataset-wise, min, Adam 1e-3",)

    @property
    def controls(self) -> tuple[str, ...]:
        """The two isotropic controls."""
        return (self.control, self.control_at_bound)

    @property
    def anisotropic(self) -> tuple[str, ...]:
        """The methods with anisotropic noise (patterns, dataset-wise, certification-wise)."""
        return (*self.patterns, *self.dataset_wise, *self.certification_wise)

    def comparisons(self) -> list[tuple[str, str]]:
        """The (method, control) pairs the chapter compares: every anisotropic method
        against :attr:`control`, then the dataset-wise ones against
        :attr:`control_at_bound`."""
        return [(method, self.control) for method in self.anisotropic] + [
            (method, self.control_at_bound) for method in self.dataset_wise
        ]

    def shape_comparisons(self, methods: Iterable[str]) -> dict[str, list[tuple[str, str]]]:
        """The (method, control) pairs of the shape-only and log-mean runs among
        ``methods``, by the measure (``"radius"``, ``"ALM"``) each is compared by: a
        run at a fixed geometric mean against :attr:`control` by ALM, one at a fixed
        minimum by radius (each at the budget of σ ≡ 1), the log-mean runs against
        both controls by both."""
        present = set(methods)
        alm = [(m, self.control) for m in self.shape_at_alm_budget if m in present]
        radius = [(m, self.control) for m in self.shape_at_radius_budget if m in present]
        log = [(m, c) for m in self.log_mean if m in present for c in self.controls]
        return {"radius": radius + log, "ALM": alm + log}


#: The groups of :meth:`Profile.npg_methods`.
NPG_GROUPS = NoiseMethodGroups()


@dataclass(frozen=True)
class Profile:
    """Knobs shared by the chapters, grouped by what they configure. Chapters derive
    anything else from these."""

    name: str
    training: TrainingScale
    certify: CertifyScale
    secondary: SecondaryScale
    ds: DataDependentScale
    generators: GeneratorScale
    audit: AuditScale
    replicates: ReplicateScale
    checks: CheckScale
    #: Where models train, certify and audit (:func:`~rsutils.core.devices.pick_device`).
    device: str = "auto"

    def on(self, device: torch.device | str) -> Profile:
        """This profile as it runs on ``device``: as declared where the device computes
        bfloat16 in hardware (:func:`~rsutils.core.inference.native_bf16`), else with
        training and the forward pass in float32 (the same memory layout), which such a
        device runs several times as fast as emulated bfloat16. Another precision trains
        other models and certifies another base classifier: both are in the cache keys,
        and the run-at tables say which ran."""
        if native_bf16(device):
            return self
        training = replace(self.training, precision="fp32")
        certify = replace(self.certify, inference=float32_equivalent(self.certify.inference))
        return replace(self, training=training, certify=certify)

    def as_dict(self) -> dict[str, object]:
        """Every setting, one nested dictionary per group."""
        return asdict(self)

    def certify_settings(self, seed: int = 0, *, secondary: bool = False) -> CertifySettings:
        """CERTIFY's settings at this scale (the secondary runs' ``n`` for ``secondary``)."""
        main = self.certify
        n = self.secondary.n if secondary else main.n
        return CertifySettings(
            n0=main.n0, n=n, alpha=main.alpha, seed=seed, batch_size=main.batch_size
        )

    def indices(self, length: int, *, secondary: bool = False) -> list[int]:
        """The test images a chapter certifies: every ``skip``-th, as Cohen et al.'s --skip.

        ``secondary`` gives the smaller set of the secondary experiments.
        """
        scale = self.secondary if secondary else self.certify
        return select_indices(length, scale.skip)[: scale.images]

    def replicate_indices(self, length: int) -> list[int]:
        """The test images every replicate model is certified on: a subset of
        :meth:`indices` (the whole of it unless ``replicates`` says fewer)."""
        scale = self.replicates
        main = self.indices(length)
        if scale.images is None:
            return main
        chosen = select_indices(length, scale.skip or self.certify.skip)[: scale.images]
        if not set(chosen) <= set(main):
            raise ValueError(
                f"profile {self.name!r}: the replicate images must be among the main runs' "
                "images; make replicates.skip a multiple of certify.skip"
            )
        return chosen

    def replicate_seeds(self, seed: int = 0) -> tuple[int, ...]:
        """The run seeds of the ``replicates.models`` replicate models of run ``seed``
        (the first is ``seed`` itself)."""
        return replicate_seeds(seed, self.replicates.models)

    def base_models(self, seed: int = 0) -> dict[float, TrainConfig]:
        """The Gaussian-augmentation base models of the book, by sigma."""
        training = self.training
        return {
            sigma: TrainConfig(
                scale=sigma,
                epochs=training.epochs,
                train_subset=training.subset,
                seed=seed,
                precision=training.precision,
            )
            for sigma in BOOK_SIGMAS
        }

    def ascent(self, sigma0: float, **changes: object) -> SigmaAscent:
        """Sigma ascent from ``sigma0`` at this scale (K and M; step and clamp are
        :class:`~rsutils.ddrs.sigma_ascent.SigmaAscent`'s own). ``changes`` override
        fields (e.g. ``iterations=1`` for training, or ``family="uniform"``)."""
        base = SigmaAscent(sigma0=sigma0, iterations=self.ds.iterations, draws=self.ds.draws)
        return replace(base, **changes)

    def finetune(self, init: TrainConfig, seed: int = 0, **changes: object) -> TrainConfig:
        """A model fine-tuned from ``init`` for ``ds.finetune_epochs`` epochs at
        :data:`FINETUNE_LR`; ``changes`` set the method, noise or DS settings."""
        return TrainConfig(
            epochs=self.ds.finetune_epochs,
            train_subset=self.ds.finetune_subset,
            lr=FINETUNE_LR,
            init=init,
            seed=seed,
            **changes,
        )

    def npg(self, base: TrainConfig, method: str, seed: int = 0, **changes: object) -> NPGConfig:
        """``method``'s noise (UCAN §IV) fine-tuned from ``base`` for ``generators.steps``
        steps; ``changes`` set the pattern, the variance term and the like."""
        return NPGConfig(
            base=base,
            method=method,
            steps=self.generators.steps,
            batch_size=self.generators.batch_size,
            train_subset=self.generators.subset,
            seed=seed,
            **changes,  # type: ignore[arg-type]
        )

    def npg_methods(self, base: TrainConfig, seed: int = 0) -> dict[str, NPGConfig]:
        """The noise methods the generator chapter trains from ``base``, by display name:
        two isotropic controls, UCAN's three fixed patterns, the dataset-wise generator
        with either variance term, and the certification-wise generator, in the order and
        under the names of :data:`NPG_GROUPS` (its controls, then its anisotropic methods).
        """
        return {
            "isotropic": self.npg(base, "isotropic", seed),
            "isotropic, σ ≡ 2": self.npg(base, "isotropic", seed, isotropic_sigma=2.0),
            "pattern ℓ1": self.npg(base, "pattern", seed, pattern_norm="l1"),
            "pattern ℓ2": self.npg(base, "pattern", seed, pattern_norm="l2"),
            "pattern ℓ∞": self.npg(base, "pattern", seed, pattern_norm="linf"),
            "dataset-wise, min": self.npg(base, "dataset", seed, variance_term="min"),
            "dataset-wise, mean": self.npg(base, "dataset", seed, variance_term="mean"),
            "certification-wise": self.npg(base, "certification", seed, variance_term="min"),
        }

    def claim_methods(self, base: TrainConfig, seed: int = 0) -> dict[str, NPGConfig]:
        """The runs UCAN's pattern-wise and dataset-wise claims are judged on besides
        :meth:`npg_methods`, by the names of :data:`NPG_GROUPS`: the three patterns at
        geometric mean 1, and the dataset-wise recipe at Adam ``1e-3`` (the recipe
        grid's run of that optimiser, so the first replicate's is trained once)."""
        groups = NPG_GROUPS
        norms = ("l1", "l2", "linf")
        patterns = {
            name: self.npg(base, "pattern", seed, pattern_norm=norm, pattern_normalise="geometric")
            for name, norm in zip(groups.patterns_at_gmean, norms, strict=True)
        }
        (unsaturated,) = groups.dataset_wise_unsaturated
        adam = {"variance_term": "min", "generator_optimiser": "adam", "generator_lr": 1e-3}
        return {**patterns, unsaturated: self.npg(base, "dataset", seed, **adam)}

    def shape_only_methods(self, base: TrainConfig, seed: int = 0) -> dict[str, NPGConfig]:
        """The shape-only and log-mean runs of ``generators.shape_only_kinds``, by the
        names of :data:`NPG_GROUPS` (fine-tuned like :meth:`npg_methods`).

        A shape-only run keeps σ's geometric mean (with the variance term the mean of
        log σ) or its minimum (with the minimum) at 1: its variance term is then
        constant, so the cross-entropy alone shapes σ. The log-mean run trains for the
        paper's mean of σ "in log scale" without a budget.
        """
        groups = NPG_GROUPS
        runs = {
            groups.shape_at_alm_budget: {"budget": "gmean", "variance_term": "logmean"},
            groups.shape_at_radius_budget: {"budget": "min", "variance_term": "min"},
            groups.log_mean: {"variance_term": "logmean"},
        }
        methods = {}
        for names, changes in runs.items():
            for name in names:
                kind = next(k for k, shown in KIND_NAMES.items() if name.startswith(shown))
                if kind in self.generators.shape_only_kinds:
                    methods[name] = self.npg(base, kind, seed, **changes)
        return methods

    def recipe_runs(self, base: TrainConfig, seed: int = 0) -> list[RecipeRun]:
        """Chapter 06's recipe grid (:data:`~rsutils.book.recipe_grid.RECIPE_GRID`) for
        each of ``generators.recipe_kinds``, around the chapter's recipe (the minimum
        as variance term) with ``generators.recipe_steps`` steps."""
        return [run for recipe in self._recipes(base, seed) for run in RECIPE_GRID.runs(recipe)]

    def head_runs(self, base: TrainConfig, seed: int = 0) -> list[HeadRun]:
        """Chapter 06's head grid (:data:`~rsutils.book.recipe_grid.HEAD_GRID`) for each
        of ``generators.recipe_kinds``, around the recipe of :meth:`recipe_runs`: its
        runs at ``w = 0`` and with the shape only, with each head on ``sigma``. UCAN's
        head at Adam ``1e-2`` gives the recipe grid's ``w = 0`` run and the shape-only
        run of :meth:`shape_only_methods` (when the grid's steps are the chapter's)."""
        return [run for recipe in self._recipes(base, seed) for run in HEAD_GRID.runs(recipe)]

    def _recipes(self, base: TrainConfig, seed: int) -> list[NPGConfig]:
        """The chapter's recipe (the minimum as variance term) with
        ``generators.recipe_steps`` steps, for each of ``generators.recipe_kinds``."""
        steps = self.generators.recipe_steps or self.generators.steps
        return [
            replace(self.npg(base, kind, seed, variance_term="min"), steps=steps)
            for kind in self.generators.recipe_kinds
        ]


PROFILES: dict[str, Profile] = {
    "smoke": Profile(
        name="smoke",
        training=TrainingScale(epochs=1, subset=6000, precision="bf16"),
        certify=CertifyScale(
            n0=COHEN.n0,
            n=1000,
            alpha=COHEN.alpha,
            images=20,
            skip=500,
            batch_size=1000,
            predict_ns=(100, 1000),
            inference="bf16_channels_last",
        ),
        secondary=SecondaryScale(images=10, skip=1000, n=200),
        ds=DataDependentScale(
            iterations=5,
            draws=2,
            ablation_ks=(0, 2, 5),
            finetune_epochs=1,
            finetune_subset=1000,
            macer_draws=2,
        ),
        generators=GeneratorScale(steps=4, subset=1000, recipe_steps=4, gradient_draws=20),
        audit=AuditScale(images=3, n_verify=100, steps=3, draws=4),
        replicates=ReplicateScale(models=2, images=10, skip=1000),
        checks=CheckScale(worst_case_draws=50_000, volume_draws=100_000, coverage_runs=200),
    ),
    "cpu": Profile(
        name="cpu",
        training=TrainingScale(epochs=3, subset=None, precision="bf16"),
        certify=CertifyScale(
            n0=COHEN.n0,
            n=10_000,
            alpha=COHEN.alpha,
            images=100,
            skip=100,
            batch_size=1000,
            predict_ns=(100, 1000, 10_000),
            inference="bf16_channels_last",
        ),
        secondary=SecondaryScale(images=100, skip=100, n=1000),
        ds=DataDependentScale(
            iterations=50,
            draws=8,
            ablation_ks=(0, 1, 5, 20, 50),
            finetune_epochs=1,
            finetune_subset=20_000,
            macer_draws=4,
        ),
        generators=GeneratorScale(steps=320, subset=10_000, recipe_steps=320, batch_size=64),
        audit=AuditScale(images=10, n_verify=500, steps=20, draws=16),
        replicates=ReplicateScale(models=5, images=40, skip=200),
        checks=CheckScale(worst_case_draws=200_000, volume_draws=400_000, coverage_runs=2000),
    ),
    "paper": Profile(
        name="paper",
        training=TrainingScale(epochs=30, subset=None),
        certify=CertifyScale(
            n0=COHEN.n0,
            n=COHEN.n,
            alpha=COHEN.alpha,
            images=500,
            skip=20,
            batch_size=10_000,
            predict_ns=(100, 1000, 10_000, 100_000),
        ),
        secondary=SecondaryScale(images=500, skip=20, n=COHEN.n),
        ds=DataDependentScale(
            iterations=100,
            draws=8,
            ablation_ks=(0, 1, 10, 50, 100),
            finetune_epochs=10,
            finetune_subset=None,
            macer_draws=64,
        ),
        generators=GeneratorScale(
            steps=93_750,
            subset=None,
            recipe_kinds=("dataset", "certification"),
            shape_only_kinds=("dataset", "certification"),
        ),
        audit=AuditScale(images=500, n_verify=10_000, steps=50, draws=32),
        replicates=ReplicateScale(models=5),
        checks=CheckScale(worst_case_draws=200_000, volume_draws=400_000, coverage_runs=2000),
    ),
}


def get_profile(name: str, device: torch.device | str | None = None) -> Profile:
    """The profile called ``name`` as it runs on ``device`` (:meth:`Profile.on`; by
    default the profile's own device, CUDA when there is one); a clear error for an
    unknown name. ``PROFILES`` holds the profiles as declared."""
    try:
        profile = PROFILES[name]
    except KeyError:
        raise ValueError(
            f"unknown profile {name!r}; choose one of {', '.join(PROFILES)} "
            "(e.g. `make book PROFILE=smoke`)"
        ) from None
    return profile.on(pick_device(profile.device if device is None else device))
