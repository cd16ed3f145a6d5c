"""Run profiles keep their budgets, and chapters share models, images and settings."""

from dataclasses import replace

import pytest
import torch

from rsutils import CertifySettings, SigmaAscent
from rsutils.book.profiles import (
    FINETUNE_LR,
    NPG_GROUPS,
    PROFILES,
    get_profile,
)
from rsutils.book.scales import ReplicateScale


def test_smoke_profile_is_tiny_and_paper_profile_is_the_papers() -> None:
    smoke, paper = PROFILES["smoke"], PROFILES["paper"]
    assert smoke.certify.n <= 1000 and smoke.certify.images <= 20 and smoke.training.epochs <= 1
    assert max(smoke.certify.predict_ns) <= 1000
    main = paper.certify
    assert (main.n0, main.n, main.alpha, main.images, main.skip) == (
        100,
        100_000,
        0.001,
        500,
        20,
    )
    cpu = PROFILES["cpu"]
    assert cpu.certify.n >= 10_000 and cpu.certify.images >= 100
    assert smoke.secondary.n <= 1000 and smoke.secondary.images <= 20
    assert smoke.ds.finetune_epochs <= 1
    assert paper.ds.macer_draws == 64  # MACER's own setting


def test_chapters_share_base_models_and_scales() -> None:
    cpu = PROFILES["cpu"]
    configs = cpu.base_models(seed=3)
    assert sorted(configs) == [0.25, 0.5, 1.0]
    assert all(
        c.scale == s and c.seed == 3 and c.epochs == cpu.training.epochs for s, c in configs.items()
    )
    main = cpu.certify
    assert cpu.indices(10_000) == list(range(0, main.images * main.skip, main.skip))
    assert cpu.indices(10_000, secondary=True)[:2] == [0, cpu.secondary.skip]
    assert cpu.certify_settings(seed=4) == CertifySettings(
        n0=main.n0, n=main.n, alpha=main.alpha, seed=4, batch_size=main.batch_size
    )
    assert cpu.certify_settings(secondary=True).n == cpu.secondary.n


def test_ds_profiles_include_their_main_k_in_the_ablation() -> None:
    # Chapter 02 reuses the ablation's run at K = ds.iterations as its Cohen-DS row.
    for profile in PROFILES.values():
        assert profile.ds.iterations in profile.ds.ablation_ks and 0 in profile.ds.ablation_ks
        ascent = profile.ascent(0.5, family="uniform", iterations=1)
        assert (ascent.sigma0, ascent.family, ascent.iterations) == (0.5, "uniform", 1)
        assert ascent.draws == profile.ds.draws


def test_sigma_ascent_constants_have_one_source() -> None:
    ascent = PROFILES["cpu"].ascent(0.25)
    assert (ascent.lr, ascent.clamp) == (SigmaAscent().lr, SigmaAscent().clamp) == (0.05, 0.02)


def test_fine_tuning_starts_from_the_given_model_at_a_quarter_of_the_rate() -> None:
    cpu = PROFILES["cpu"]
    base = cpu.base_models()[0.25]
    tuned = cpu.finetune(base, seed=2, method="macer")
    assert (tuned.init, tuned.seed, tuned.method, tuned.lr) == (base, 2, "macer", FINETUNE_LR)
    assert tuned.epochs == cpu.ds.finetune_epochs and FINETUNE_LR == base.lr / 4


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
            (P.generators.steps, P.generators.subset, P.generators.batch_size, 1)
        }
        assert all(c.base == base and c.scale == 0.5 for c in configs)


def test_settings_are_grouped_by_what_they_configure() -> None:
    smoke = PROFILES["smoke"].as_dict()
    assert set(smoke) == {
        "name", "training", "certify", "secondary", "ds", "generators", "audit",
        "replicates", "checks", "device",
    }  # fmt: skip
    assert smoke["certify"]["n"] == PROFILES["smoke"].certify_settings().n
    assert smoke["audit"] == {"images": 3, "n_verify": 100, "steps": 3, "draws": 4}


def test_every_comparison_rests_on_replicate_models() -> None:
    """At least 5 independently trained models behind a verdict at the cpu and paper
    profiles (a t(k − 1) interval on fewer cannot check its normality assumption; 2 at
    smoke, which judges nothing), the first of them the run's own model."""
    counts = {name: PROFILES[name].replicates.models for name in ("smoke", "cpu", "paper")}
    assert counts["smoke"] >= 2 and counts["cpu"] >= 5 and counts["paper"] >= counts["cpu"]
    seeds = PROFILES["cpu"].replicate_seeds(5)
    assert seeds[0] == 5 and len(set(seeds)) == len(seeds) == counts["cpu"]
    bases = {PROFILES["cpu"].base_models(s)[0.5] for s in seeds}
    assert len(bases) == len(seeds)  # each replicate has its own base model


def test_the_smoke_checks_are_the_cheapest() -> None:
    smoke, cpu, paper = (PROFILES[name].checks for name in ("smoke", "cpu", "paper"))
    assert cpu == paper  # a linear model or a density in a few dimensions: cheap anywhere
    assert smoke.worst_case_draws < cpu.worst_case_draws
    assert smoke.volume_draws < cpu.volume_draws and smoke.coverage_runs < cpu.coverage_runs


def test_chapter_06_names_its_methods_by_group_and_control() -> None:
    smoke = PROFILES["smoke"]
    methods = smoke.npg_methods(smoke.base_models()[0.5])
    assert list(methods) == [*NPG_GROUPS.controls, *NPG_GROUPS.anisotropic]
    kinds = {name: (config.method, config.isotropic_sigma) for name, config in methods.items()}
    assert {kinds[name][0] for name in NPG_GROUPS.patterns} == {"pattern"}
    assert {kinds[name][0] for name in NPG_GROUPS.dataset_wise} == {"dataset"}
    assert [kinds[name][0] for name in NPG_GROUPS.certification_wise] == ["certification"]
    assert kinds[NPG_GROUPS.control][0] == kinds[NPG_GROUPS.control_at_bound][0] == "isotropic"
    assert kinds[NPG_GROUPS.control_at_bound][1] == 2.0 != kinds[NPG_GROUPS.control][1]
    pairs = NPG_GROUPS.comparisons()
    assert pairs[:6] == [(name, "isotropic") for name in NPG_GROUPS.anisotropic]
    assert pairs[6:] == [
        ("dataset-wise, min", "isotropic, σ ≡ 2"),
        ("dataset-wise, mean", "isotropic, σ ≡ 2"),
    ]


@pytest.mark.parametrize("name", ["smoke", "cpu"])
def test_the_claims_runs_keep_each_pattern_and_the_recipe_grids_unsaturated_run(name) -> None:
    """The patterns at geometric mean 1 differ from chapter 06's only in the rescaling;
    the dataset-wise run at Adam 1e-3 is the recipe grid's run of that optimiser, so
    the first replicate's model is trained once for both chapters."""
    profile = PROFILES[name]
    base = profile.base_models(3)[0.5]
    claims, methods = profile.claim_methods(base, 3), profile.npg_methods(base, 3)
    assert list(claims) == [*NPG_GROUPS.patterns_at_gmean, *NPG_GROUPS.dataset_wise_unsaturated]
    for volume, ucan in zip(NPG_GROUPS.patterns_at_gmean, NPG_GROUPS.patterns, strict=True):
        assert claims[volume].pattern_normalise == "geometric"
        assert replace(claims[volume], pattern_normalise="mean") == methods[ucan]
    recipe = {run.value: run.config for run in profile.recipe_runs(base, 3)}
    assert claims[NPG_GROUPS.dataset_wise_unsaturated[0]] == recipe["Adam 1e-3"]


def test_replicates_are_certified_on_a_subset_of_the_main_images() -> None:
    """The first replicate's logs are rows of the main logs, so the replicate images
    must be among the main images; at cpu and smoke they are fewer."""
    for name, profile in PROFILES.items():
        chosen, main = profile.replicate_indices(10_000), profile.indices(10_000)
        assert set(chosen) <= set(main), name
        assert len(chosen) == (profile.replicates.images or len(main)), name
    assert len(PROFILES["cpu"].replicate_indices(10_000)) == 40
    bad = replace(PROFILES["cpu"], replicates=ReplicateScale(models=3, images=10, skip=75))
    with pytest.raises(ValueError, match=r"multiple of certify\.skip"):
        bad.replicate_indices(10_000)


def test_the_book_trains_its_base_models_in_the_profiles_precision() -> None:
    """bf16 where the book runs on CPUs (measured against fp32 in chapter 12), fp32 in
    the paper profile, which states the papers' recipe."""
    for profile in PROFILES.values():
        configs = profile.base_models().values()
        assert {c.precision for c in configs} == {profile.training.precision}
    assert [PROFILES[n].training.precision for n in ("smoke", "cpu", "paper")] == [
        "bf16",
        "bf16",
        "fp32",
    ]


@pytest.mark.parametrize("name", list(PROFILES))
def test_a_profile_runs_in_float32_where_bfloat16_would_be_emulated(monkeypatch, name) -> None:
    """On a device without bfloat16 hardware the profile trains in fp32 and runs the
    forward pass in the float32 mode of the same layout; with it, as declared. The
    precision is in the models' cache keys, so the two never share a model."""
    declared = PROFILES[name]
    monkeypatch.setattr("rsutils.book.profiles.native_bf16", lambda device: True)
    assert declared.on("cpu") == declared == get_profile(name, "cpu")
    monkeypatch.setattr("rsutils.book.profiles.native_bf16", lambda device: False)
    emulated = get_profile(name, "cpu")
    assert emulated.training.precision == "fp32"
    assert emulated.certify.inference in ("fp32", "channels_last")
    assert emulated.certify.inference.endswith("channels_last") == (
        declared.certify.inference.endswith("channels_last")
    )
    assert replace(emulated, training=declared.training, certify=declared.certify) == declared, (
        "only the precision changes"
    )
    if declared.training.precision == "bf16":
        assert emulated.base_models()[0.25] != declared.base_models()[0.25]


def test_the_run_at_table_names_the_precision_that_trained() -> None:
    from rsutils.book.chapter import run_at_table

    table = run_at_table(PROFILES["paper"], torch.device("cpu"))
    assert table.loc["training precision", "value"] == "fp32"
