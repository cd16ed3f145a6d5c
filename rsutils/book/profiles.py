"""Run profiles: the scale every chapter runs at.

``smoke`` is for tests and CI (each notebook within a minute on two CPU cores),
``cpu`` is the default of ``make book`` (honest small scale, the whole book within an
hour on two cores), ``paper`` is the papers' own scale for a GPU. ``smoke`` and ``cpu``
run the base model in bfloat16 with the NHWC layout (:mod:`rsutils.core.inference`;
4 to 8 times the float32 forward on this project's 2-core AMX-BF16 Xeon, by
``python -m rsutils bench``); ``paper`` in float32, as the papers did.

A :class:`Profile` also hands out what chapters share, so that they cannot drift apart
and miss each other's cached results: the base models (:meth:`Profile.base_models`),
the test images (:meth:`Profile.indices`), CERTIFY's settings
(:meth:`Profile.certify_settings`), sigma ascent (:meth:`Profile.ascent`), the
fine-tuned variants of chapter 02 (:meth:`Profile.finetune`) and the noise parameter
generators of chapter 06 (:meth:`Profile.npg`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

from rsutils.anisotropic.training import NPGConfig
from rsutils.core.settings import CertifySettings
from rsutils.ddrs.sigma_ascent import SigmaAscent
from rsutils.logs.runner import select_indices
from rsutils.training.train import TrainConfig

__all__ = [
    "ANISOTROPIC_LAMBDA",
    "BOOK_SIGMAS",
    "FIG4_PATTERN",
    "FINETUNE_LR",
    "PROFILES",
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
class Profile:
    """Knobs shared by the chapters. Chapters derive anything else from these."""

    name: str
    n0: int  # CERTIFY selection draws
    n: int  # CERTIFY estimation draws
    alpha: float  # failure probability of each certificate
    num_images: int  # test images certified (every `skip`-th one)
    skip: int
    epochs: int  # training epochs of each base model
    train_subset: int | None  # training images used (None: all)
    predict_ns: tuple[int, ...]  # PREDICT sample sizes compared in chapter 01 (d)
    batch_size: int  # Monte Carlo batch size
    # Data-dependent smoothing (chapters 02 and 03)
    ascent_iterations: int  # K of sigma ascent when certifying
    ascent_draws: int  # M, noise draws per ascent step
    ablation_ks: tuple[int, ...]  # the K compared in the ablation
    reduced_images: int  # test images of the secondary experiments ...
    reduced_skip: int  # ... every `reduced_skip`-th one ...
    reduced_n: int  # ... certified with this many draws
    finetune_epochs: int  # epochs of fine-tuning (DS², SmoothAdv, MACER, uniform noise)
    finetune_subset: int | None  # training images used by fine-tuning (None: all)
    macer_draws: int  # noise draws per sample in MACER's loss
    # Noise parameter generators (chapter 06)
    npg_steps: int  # fine-tuning steps of every method, batch 128
    npg_subset: int | None  # training images they cycle through (None: all)
    audit_images: int  # certified images whose regions the soundness audit searches
    audit_n: int  # draws that confirm a point's class (Clopper-Pearson)
    audit_steps: int  # projected-gradient steps of the attack
    audit_draws: int  # noise draws per attack step
    device: str = "auto"
    # The base model's numerical mode when certifying, predicting and auditing
    # (rsutils.core.inference); a mode other than fp32 is a different base classifier
    # with its own cached logs. Sigma ascent (chapters 02, 03) runs its model in fp32
    # whatever this says; the CERTIFY that follows it runs in this mode.
    inference: str = "fp32"

    def as_dict(self) -> dict[str, object]:
        return asdict(self)

    def certify_settings(self, seed: int = 0, *, secondary: bool = False) -> CertifySettings:
        """CERTIFY's settings at this scale (``reduced_n`` draws for ``secondary``)."""
        n = self.reduced_n if secondary else self.n
        return CertifySettings(
            n0=self.n0, n=n, alpha=self.alpha, seed=seed, batch_size=self.batch_size
        )

    def indices(self, length: int, *, secondary: bool = False) -> list[int]:
        """The test images a chapter certifies: every ``skip``-th, as Cohen et al.'s --skip.

        ``secondary`` gives the smaller set of the secondary experiments.
        """
        if secondary:
            return select_indices(length, self.reduced_skip)[: self.reduced_images]
        return select_indices(length, self.skip)[: self.num_images]

    def base_models(self, seed: int = 0) -> dict[float, TrainConfig]:
        """The Gaussian-augmentation base models of the book, by sigma."""
        return {
            sigma: TrainConfig(
                scale=sigma, epochs=self.epochs, train_subset=self.train_subset, seed=seed
            )
            for sigma in BOOK_SIGMAS
        }

    def ascent(self, sigma0: float, **changes: object) -> SigmaAscent:
        """Sigma ascent from ``sigma0`` at this scale (K and M; step and clamp are
        :class:`~rsutils.ddrs.sigma_ascent.SigmaAscent`'s own). ``changes`` override
        fields (e.g. ``iterations=1`` for training, or ``family="uniform"``)."""
        base = SigmaAscent(
            sigma0=sigma0, iterations=self.ascent_iterations, draws=self.ascent_draws
        )
        return replace(base, **changes)

    def finetune(self, init: TrainConfig, seed: int = 0, **changes: object) -> TrainConfig:
        """A model fine-tuned from ``init`` for ``finetune_epochs`` epochs at
        :data:`FINETUNE_LR`; ``changes`` set the method, noise or DS settings."""
        return TrainConfig(
            epochs=self.finetune_epochs,
            train_subset=self.finetune_subset,
            lr=FINETUNE_LR,
            init=init,
            seed=seed,
            **changes,
        )

    def npg(self, base: TrainConfig, method: str, seed: int = 0, **changes: object) -> NPGConfig:
        """``method``'s noise (UCAN §IV) fine-tuned from ``base`` for ``npg_steps`` steps;
        ``changes`` set the pattern, the variance term and the like."""
        return NPGConfig(
            base=base,
            method=method,
            steps=self.npg_steps,
            train_subset=self.npg_subset,
            seed=seed,
            **changes,  # type: ignore[arg-type]
        )

    def npg_methods(self, base: TrainConfig, seed: int = 0) -> dict[str, NPGConfig]:
        """The noise methods the generator chapter trains from ``base``, by display name:
        two isotropic controls, UCAN's three fixed patterns, the dataset-wise generator
        with either variance term, and the certification-wise generator."""
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


PROFILES: dict[str, Profile] = {
    "smoke": Profile(
        name="smoke",
        n0=COHEN.n0,
        n=1000,
        alpha=COHEN.alpha,
        num_images=20,
        skip=500,
        epochs=1,
        train_subset=6000,
        predict_ns=(100, 1000),
        batch_size=1000,
        ascent_iterations=5,
        ascent_draws=2,
        ablation_ks=(0, 2, 5),
        reduced_images=10,
        reduced_skip=1000,
        reduced_n=200,
        finetune_epochs=1,
        finetune_subset=1000,
        macer_draws=2,
        npg_steps=4,
        npg_subset=1000,
        audit_images=3,
        audit_n=100,
        audit_steps=3,
        audit_draws=4,
        inference="bf16_channels_last",
    ),
    "cpu": Profile(
        name="cpu",
        n0=COHEN.n0,
        n=10_000,
        alpha=COHEN.alpha,
        num_images=200,
        skip=50,
        epochs=6,
        train_subset=None,
        predict_ns=(100, 1000, 10_000),
        batch_size=1000,
        ascent_iterations=50,
        ascent_draws=8,
        ablation_ks=(0, 1, 5, 20, 50),
        reduced_images=100,
        reduced_skip=100,
        reduced_n=1000,
        finetune_epochs=2,
        finetune_subset=20_000,
        macer_draws=4,
        npg_steps=320,
        npg_subset=10_000,
        audit_images=30,
        audit_n=500,
        audit_steps=20,
        audit_draws=16,
        inference="bf16_channels_last",
    ),
    "paper": Profile(
        name="paper",
        n0=COHEN.n0,
        n=COHEN.n,
        alpha=COHEN.alpha,
        num_images=500,
        skip=20,
        epochs=30,
        train_subset=None,
        predict_ns=(100, 1000, 10_000, 100_000),
        batch_size=10_000,
        ascent_iterations=100,
        ascent_draws=8,
        ablation_ks=(0, 1, 10, 50, 100),
        reduced_images=500,
        reduced_skip=20,
        reduced_n=COHEN.n,
        finetune_epochs=10,
        finetune_subset=None,
        macer_draws=64,
        npg_steps=93_750,
        npg_subset=None,
        audit_images=500,
        audit_n=10_000,
        audit_steps=50,
        audit_draws=32,
    ),
}


def get_profile(name: str) -> Profile:
    """The profile called ``name``; a clear error for an unknown one."""
    try:
        return PROFILES[name]
    except KeyError:
        raise ValueError(
            f"unknown profile {name!r}; choose one of {', '.join(PROFILES)} "
            "(e.g. `make book PROFILE=smoke`)"
        ) from None
