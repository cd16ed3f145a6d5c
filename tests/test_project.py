"""Project hygiene: the conda environment matches pyproject, profiles keep their budgets."""

import tomllib
from pathlib import Path

import yaml

from rsutils.profiles import (
    PROFILES,
    ascent_for,
    base_model_configs,
    certify_settings,
    chapter_indices,
)

REPO = Path(__file__).resolve().parents[1]


def test_environment_yml_lists_the_same_packages_as_pyproject() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    wanted = {
        req
        for req in project["dependencies"] + extras["book"] + extras["test"]
        if not req.startswith("rsutils")
    }
    environment = yaml.safe_load((REPO / "environment.yml").read_text())
    pip_section = next(d["pip"] for d in environment["dependencies"] if isinstance(d, dict))
    assert set(pip_section) - {"-e ."} == wanted
    assert "-e ." in pip_section


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
    configs = base_model_configs(cpu, seed=3)
    assert sorted(configs) == [0.25, 0.5, 1.0]
    assert all(c.scale == s and c.seed == 3 and c.epochs == cpu.epochs for s, c in configs.items())
    assert chapter_indices(cpu, 10_000) == list(range(0, 200 * cpu.skip, cpu.skip))
    assert chapter_indices(cpu, 10_000, secondary=True)[:2] == [0, cpu.reduced_skip]
    assert certify_settings(cpu)["n"] == cpu.n
    assert certify_settings(cpu, secondary=True)["n"] == cpu.reduced_n


def test_ds_profiles_include_their_main_k_in_the_ablation() -> None:
    # Chapter 02 reuses the ablation's run at K = ascent_iterations as its Cohen-DS row.
    for profile in PROFILES.values():
        assert profile.ascent_iterations in profile.ablation_ks and 0 in profile.ablation_ks
        ascent = ascent_for(profile, 0.5, family="uniform", iterations=1)
        assert (ascent.sigma0, ascent.family, ascent.iterations) == (0.5, "uniform", 1)
        assert ascent.draws == profile.ascent_draws


def test_every_notebook_has_a_parameters_cell_with_profile() -> None:
    for source in sorted((REPO / "notebooks").glob("[0-9][0-9]_*.py")):
        text = source.read_text()
        assert '# %% tags=["parameters"]\nprofile = ' in text, source.name


def test_run_at_table_states_the_scale() -> None:
    import torch

    from rsutils.report import run_at_table

    table = run_at_table(PROFILES["cpu"], torch.device("cpu"), dataset="Fashion-MNIST")
    assert table.loc["n (estimation draws)", "value"] == "10,000"
    assert table.loc["dataset", "value"] == "Fashion-MNIST"
    assert table.loc["device", "value"].startswith("CPU")
