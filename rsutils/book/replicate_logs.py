"""The replicate logs behind the book's comparisons, defined once.

Chapters 01, 02, 05 and 06 certify these runs and chapter 07 reads them from the cache, so
the verdict table judges exactly the models and images the chapters show. Each function
returns one ``{name: log}`` dictionary per replicate model
(:meth:`~rsutils.book.chapter.Chapter.replicate_runs`: the first replicate is the
chapter's own model, on the replicate images), the shape
:func:`~rsutils.analysis.differences.replicated_comparisons` and
:mod:`rsutils.book.replicate_levels` take.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch

from rsutils.anisotropic.generators import NoiseGenerator
from rsutils.anisotropic.noise import Anisotropic
from rsutils.anisotropic.patterns import spatial_pattern
from rsutils.anisotropic.soundness.local import local_sound_log
from rsutils.anisotropic.soundness.sound import ConstantScale, deployed_lipschitz
from rsutils.anisotropic.training import NPGConfig
from rsutils.book.chapter import Chapter
from rsutils.book.profiles import ANISOTROPIC_LAMBDA, BOOK_SIGMAS, FIG4_PATTERN, NPG_GROUPS
from rsutils.book.trained import trained_npg
from rsutils.core.noise import Gaussian
from rsutils.core.streams import derived_seed

__all__ = [
    "DEPLOYED_CW",
    "deployed_cw_replicates",
    "ds_name",
    "fig4_replicates",
    "fixed_name",
    "fixed_sigma_replicates",
    "independent_ceilings",
    "median_scale",
    "npg_replicates",
    "sigma_ascent_paths",
    "sigma_ascent_replicates",
]

Replicates = list[dict[str, pd.DataFrame]]


def fixed_name(sigma: float) -> str:
    """The name of Cohen et al.'s fixed-σ smoothed classifier in a replicate dictionary."""
    return f"σ = {sigma:g}"


def ds_name(sigma0: float) -> str:
    """The name of Cohen-DS (sigma ascent from ``sigma0``) in a replicate dictionary."""
    return f"Cohen-DS, σ0 = {sigma0:g}"


def _by_replicate(
    chapter: Chapter, runs: dict, cached: bool, *, from_main: bool = True
) -> Replicates:
    """{name: run} → one {name: log} per replicate."""
    logs = {
        name: chapter.replicate_runs(run, cached=cached, from_main=from_main)
        for name, run in runs.items()
    }
    return [
        {name: logs[name][m] for name in runs} for m in range(chapter.profile.replicates.models)
    ]


def fixed_sigma_replicates(chapter: Chapter, *, cached: bool = False) -> Replicates:
    """CERTIFY with the book's base model of every σ (chapter 01), per replicate."""
    P = chapter.profile

    def run(sigma):
        return lambda runs, seed: runs.certify(P.base_models(seed)[sigma], Gaussian(sigma))

    return _by_replicate(chapter, {fixed_name(s): run(s) for s in BOOK_SIGMAS}, cached)


def independent_ceilings(chapter: Chapter, *, cached: bool = False) -> Replicates:
    """Whether :func:`fixed_sigma_replicates`' certificates sit at the ceiling when the
    same models certify the replicate images again with independent draws (the
    certification seed of the stream ``regroup``): an outcome to sort the images by that
    is not the draws of the logs being compared (chapter 02's ceiling split). Each log
    is a ceiling log (:meth:`~rsutils.book.experiments.Experiments.ceilings`), exact and
    cheaper than certifying; every replicate, the first included, is checked on the
    replicate images."""
    P = chapter.profile
    runs = chapter.replicated.at(seed=derived_seed(chapter.seed, 0, "regroup"))
    runs = runs.cached() if cached else runs
    return [
        {fixed_name(s): runs.ceilings(P.base_models(seed)[s], Gaussian(s)) for s in BOOK_SIGMAS}
        for seed in P.replicate_seeds(chapter.seed)
    ]


def sigma_ascent_replicates(chapter: Chapter, *, cached: bool = False) -> Replicates:
    """Cohen-DS from every σ0 on the base model of that σ (chapter 02), per replicate,
    beside the fixed-σ logs of :func:`fixed_sigma_replicates`.

    Cohen-DS answers through a memory of the inputs certified before, so every replicate,
    the first included, is certified on the replicate images alone (chapters 02 and 03
    show the first replicate's logs as the chapter's own model).
    """
    P = chapter.profile

    def run(sigma):
        return lambda runs, seed: runs.certify_ds(P.base_models(seed)[sigma], P.ascent(sigma))

    runs = {ds_name(s): run(s) for s in BOOK_SIGMAS}
    ds = _by_replicate(chapter, runs, cached, from_main=False)
    fixed = fixed_sigma_replicates(chapter, cached=cached)
    return [{**a, **b} for a, b in zip(fixed, ds, strict=True)]


def sigma_ascent_paths(chapter: Chapter, *, cached: bool = False) -> list[dict[str, np.ndarray]]:
    """The ascent path of every input of every Cohen-DS log of
    :func:`sigma_ascent_replicates`, per replicate: ``{ds_name(σ0): (inputs, K + 1)}``
    in the logs' row order (:meth:`~rsutils.book.experiments.Experiments.ascent_paths`)."""
    P, runs = chapter.profile, chapter.replicated
    runs = runs.cached() if cached else runs
    return [
        {ds_name(s): runs.ascent_paths(P.base_models(seed)[s], P.ascent(s)) for s in BOOK_SIGMAS}
        for seed in P.replicate_seeds(chapter.seed)
    ]


def fig4_replicates(chapter: Chapter, *, cached: bool = False) -> Replicates:
    """The isotropic base model of λ = 0.5 certified with its own noise and with UCAN's
    Fig. 4 pattern (chapter 05), per replicate: names ``"isotropic"`` and ``"Fig. 4
    pattern"``; the isotropic log gains an ``alm`` column equal to its radius."""
    P, lam = chapter.profile, ANISOTROPIC_LAMBDA
    pattern = Anisotropic(Gaussian(lam), spatial_pattern(28, 28, **FIG4_PATTERN))

    def isotropic(runs, seed):
        log = runs.certify(P.base_models(seed)[lam], Gaussian(lam))
        return log.assign(alm=log["radius"])

    def patterned(runs, seed):
        return runs.certify(P.base_models(seed)[lam], pattern)

    return _by_replicate(chapter, {"isotropic": isotropic, "Fig. 4 pattern": patterned}, cached)


def npg_replicates(chapter: Chapter, *, cached: bool = False) -> Replicates:
    """Chapter 06's noise methods (:meth:`~rsutils.book.profiles.Profile.npg_methods`,
    then the runs UCAN's claims are also judged on,
    :meth:`~rsutils.book.profiles.Profile.claim_methods`), each fine-tuned from the
    replicate's own base model of λ = 0.5 and certified with its generator on the
    chapter's secondary images, per replicate: names as
    :data:`~rsutils.book.profiles.NPG_GROUPS`. Unlike the other replicates, every one is
    certified on the same secondary images (the first replicate's logs are chapter 06's
    own), as the secondary runs are already small."""
    P, lam = chapter.profile, ANISOTROPIC_LAMBDA
    runs = chapter.secondary.cached() if cached else chapter.secondary

    def methods(seed: int) -> dict[str, NPGConfig]:
        base = P.base_models(seed)[lam]
        return {**P.npg_methods(base, seed), **P.claim_methods(base, seed)}

    return [
        {name: runs.certify_generated(c) for name, c in methods(s).items()}
        for s in P.replicate_seeds(chapter.seed)
    ]


#: The name, in :func:`deployed_cw_replicates`, of the certification-wise classifier as
#: deployed: σ ≡ c, its offset kept, certified with a radius that holds for the
#: deployed classifier (the larger of R/(1 + L) and a local one).
DEPLOYED_CW = "certification-wise, deployed (σ ≡ c)"


def median_scale(generator: NoiseGenerator, images: torch.Tensor) -> float:
    """The constant ``c`` of :class:`~rsutils.anisotropic.soundness.sound.ConstantScale`
    for ``generator``: the median of its σ over ``images``, rounded to two decimals
    (the classifier was fine-tuned under that σ, so ``σ ≡ c`` is noise it knows)."""
    with torch.no_grad():
        sigma = generator(images)[1]
    return round(float(sigma.median()), 2)


def deployed_cw_replicates(chapter: Chapter, *, cached: bool = False) -> Replicates:
    """The certification-wise method as a classifier one can deploy, per replicate.

    UCAN's certification-wise σ depends on the input, and for such a σ no radius is
    known to hold for the deployed classifier ``G(z) = g_z(z)``: Theorem 7's radius
    certifies ``g_x``, a classifier nobody deploys. Keeping its offset μ and setting
    ``σ ≡ c`` (:func:`median_scale` on the chapter's secondary images) gives one that
    can be certified: each replicate's radius ``R`` of an image becomes the larger of
    ``R/(1 + L)``, ``L`` the bound on μ's Lipschitz constant, and the local radius an
    interval bound on μ's move around that image gives
    (:func:`~rsutils.anisotropic.soundness.local.local_sound_log`).
    One ``{DEPLOYED_CW: log}`` per replicate, on :func:`npg_replicates`' images.
    """
    P, lam = chapter.profile, ANISOTROPIC_LAMBDA
    runs = chapter.secondary.cached() if cached else chapter.secondary
    images = chapter.test.images[list(chapter.secondary.indices)].to(chapter.device)
    name = NPG_GROUPS.certification_wise[0]
    found = []
    for s in P.replicate_seeds(chapter.seed):
        config = P.npg_methods(P.base_models(s)[lam], s)[name]
        generator = trained_npg(config, device=chapter.device, progress=chapter.progress)[1]
        c = median_scale(generator, images)
        constant = ConstantScale(generator, c)
        bound = deployed_lipschitz(constant, tuple(images.shape[-2:]))
        log = runs.certify_generated(config, constant_sigma=c)
        certified = chapter.test.images[list(log["idx"])]
        found.append({DEPLOYED_CW: local_sound_log(log, constant, certified, bound)})
    return found
