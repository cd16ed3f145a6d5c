"""Run profiles keep their budgets, and chapters share models, images and settings."""

import pytest

from rsutils import CertifySettings, SigmaAscent
from rsutils.book.profiles import FINETUNE_LR, PROFILES, get_profile


def test_smoke_profile_is_tiny_and_paper_profile_is_the_papers() -> None:
    smoke, paper = PROFILES["smoke"], PROFILES["paper"]
    assert smoke.n <= 1000 and smoke.num_images <= 20 and smoke.epochs <= 1
    assert max(smoke.predict_ns) <= 1000
    assert (paper.n0, paper.n, paper.alpha, paper.num_images, paper.skip) == (
        100,
        100_000,
        0.001,
        500,
        20,
    )
    cpu = PROFILES["cpu"]
    assert cpu.n >= 10_000 and cpu.num_images >= 200
    assert smoke.reduced_n <= 1000 and smoke.reduced_images <= 20 and smoke.finetune_epochs <= 1
    assert paper.macer_draws == 64  # MACER's own setting


def test_chapters_share_base_models_and_scales() -> None:
    cpu = PROFILES["cpu"]
    configs = cpu.base_models(seed=3)
    assert sorted(configs) == [0.25, 0.5, 1.0]
    assert all(c.scale == s and c.seed == 3 and c.epochs == cpu.epochs for s, c in configs.items())
    assert cpu.indices(10_000) == list(range(0, 200 * cpu.skip, cpu.skip))
    assert cpu.indices(10_000, secondary=True)[:2] == [0, cpu.reduced_skip]
    assert cpu.certify_settings(seed=4) == CertifySettings(
        n0=cpu.n0, n=cpu.n, alpha=cpu.alpha, seed=4, batch_size=cpu.batch_size
    )
    assert cpu.certify_settings(secondary=True).n == cpu.reduced_n


def test_ds_profiles_include_their_main_k_in_the_ablation() -> None:
    # Chapter 02 reuses the ablation's run at K = ascent_iterations as its Cohen-DS row.
    for profile in PROFILES.values():
        assert profile.ascent_iterations in profile.ablation_ks and 0 in profile.ablation_ks
        ascent = profile.ascent(0.5, family="uniform", iterations=1)
        assert (ascent.sigma0, ascent.family, ascent.iterations) == (0.5, "uniform", 1)
        assert ascent.draws == profile.ascent_draws


def test_sigma_ascent_constants_have_one_source() -> None:
    ascent = PROFILES["cpu"].ascent(0.25)
    assert (ascent.lr, ascent.clamp) == (SigmaAscent().lr, SigmaAscent().clamp) == (0.05, 0.02)


def test_fine_tuning_starts_from_the_given_model_at_a_quarter_of_the_rate() -> None:
    cpu = PROFILES["cpu"]
    base = cpu.base_models()[0.25]
    tuned = cpu.finetune(base, seed=2, method="macer")
    assert (tuned.init, tuned.seed, tuned.method, tuned.lr) == (base, 2, "macer", FINETUNE_LR)
    assert tuned.epochs == cpu.finetune_epochs and FINETUNE_LR == base.lr / 4


def test_unknown_profile() -> None:
    with pytest.raises(ValueError, match=r"unknown profile 'fast'.*smoke, cpu, paper"):
        get_profile("fast")


def test_every_method_of_chapter_06_gets_the_same_training_budget() -> None:
    from rsutils.book.profiles import get_profile

    for name in ("smoke", "cpu", "paper"):
        P = get_profile(name)
        base = P.base_models()[0.5]
        configs = [P.npg(base, m) for m in ("isotropic", "pattern", "dataset", "certification")]
        assert {(c.steps, c.train_subset, c.batch_size, c.draws) for c in configs} == {
            (P.npg_steps, P.npg_subset, 128, 1)
        }
        assert all(c.base == base and c.scale == 0.5 for c in configs)
