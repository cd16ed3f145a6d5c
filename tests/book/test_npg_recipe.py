"""Chapter 06's shape-only runs and recipe grid, as the profiles define them."""

from dataclasses import asdict

import pandas as pd
import pytest

from rsutils.book.chapters.npg_recipe import saturation
from rsutils.book.profiles import NPG_GROUPS, PROFILES
from rsutils.book.recipe_grid import CODE_ACCUMULATE, RECIPE_GRID, RecipeGrid, effective_gamma


def differences(a, b) -> set[str]:
    left, right = asdict(a), asdict(b)
    return {k for k in left if left[k] != right[k]}


@pytest.mark.parametrize("name", ["smoke", "cpu", "paper"])
def test_the_grid_changes_one_factor_at_a_time_around_the_recipe(name) -> None:
    P = PROFILES[name]
    runs = P.recipe_runs(P.base_models()[0.5], seed=3)
    kinds = P.generators.recipe_kinds
    grid = RECIPE_GRID
    per_kind = len(grid.variance_weights) + len(grid.gammas) + len(grid.optimisers)
    assert len(runs) == len(kinds) * (per_kind + len(grid.draws))
    allowed = {
        "variance weight w": {"variance_weight"},
        "bound γ": {"gamma"},
        "optimiser": {"generator_optimiser", "generator_lr", "accumulate"},
        "draws per step": {"draws"},
    }
    for kind in kinds:
        mine = [r for r in runs if r.kind == kind]
        (recipe,) = {r.config for r in mine if r.recipe}
        assert recipe.method == kind and recipe.variance_term == "min" and recipe.seed == 3
        assert recipe.steps == (P.generators.recipe_steps or P.generators.steps)
        for factor, fields in allowed.items():
            row = [r for r in mine if r.factor == factor]
            assert sum(r.recipe for r in row) == 1, factor  # the recipe in every row
            for r in row:
                assert differences(r.config, recipe) <= fields
                assert r.recipe == (not differences(r.config, recipe))
        sgd = next(r.config for r in mine if r.value.startswith("SGD"))
        assert (sgd.generator_optimiser, sgd.generator_lr) == ("sgd", 1e-3)
        assert sgd.accumulate == CODE_ACCUMULATE[kind]
        gammas = sorted(effective_gamma(r.config) for r in mine if r.factor == "bound γ")
        assert gammas == sorted(grid.gammas)


def test_the_cpu_grid_is_the_dataset_wise_one_around_the_chapters_own_model() -> None:
    cpu, paper = PROFILES["cpu"], PROFILES["paper"]
    base = cpu.base_models()[0.5]
    assert cpu.generators.recipe_kinds == ("dataset",)
    assert set(paper.generators.recipe_kinds) == {"dataset", "certification"}
    (recipe,) = {r.config for r in cpu.recipe_runs(base) if r.recipe}
    assert recipe == cpu.npg_methods(base)["dataset-wise, min"]  # trained once, cached


@pytest.mark.parametrize("name", ["smoke", "cpu", "paper"])
def test_shape_only_runs_keep_a_budget_whose_variance_term_is_constant(name) -> None:
    P = PROFILES[name]
    methods = P.shape_only_methods(P.base_models()[0.5])
    kinds = {config.method for config in methods.values()}
    assert kinds == set(P.generators.shape_only_kinds)
    for method, config in methods.items():
        assert config.steps == P.generators.steps and config.variance_weight == 1.0
        if method in NPG_GROUPS.shape_at_alm_budget:
            assert (config.budget, config.budget_value, config.variance_term) == (
                "gmean", 1.0, "logmean",
            )  # fmt: skip
        elif method in NPG_GROUPS.shape_at_radius_budget:
            assert (config.budget, config.budget_value, config.variance_term) == (
                "min", 1.0, "min",
            )  # fmt: skip
        else:
            assert method in NPG_GROUPS.log_mean
            assert (config.budget, config.variance_term) == (None, "logmean")
    pairs = NPG_GROUPS.shape_comparisons(methods)
    compared = {m for measure in pairs.values() for m, _ in measure}
    assert compared == set(methods)
    for method, control in pairs["ALM"]:
        assert method not in NPG_GROUPS.shape_at_radius_budget and control in NPG_GROUPS.controls
    for method, _ in pairs["radius"]:
        assert method not in NPG_GROUPS.shape_at_alm_budget
    assert ("dataset-wise, log-mean", NPG_GROUPS.control_at_bound) in pairs["ALM"]


def test_saturation_is_the_end_of_the_at_bound_history() -> None:
    history = pd.DataFrame({"at_bound": [0.0] * 18 + [0.5, 1.0]})
    assert saturation(history) == pytest.approx(0.75)  # the last tenth: 2 steps
    assert saturation(history, tail=1.0) == pytest.approx(0.075)
    assert saturation(history.iloc[:3]) == 0.0  # at least one step
    with pytest.raises(ValueError, match="tail must be in"):
        saturation(history, tail=0.0)
    with pytest.raises(ValueError, match="unknown optimisers"):
        RecipeGrid(optimisers=("RMSprop",))
    with pytest.raises(ValueError, match="varies a learned generator"):
        cpu = PROFILES["cpu"]
        RECIPE_GRID.runs(cpu.npg(cpu.base_models()[0.5], "isotropic"))


def test_the_table_names_the_runs_that_saturate_and_the_figure_has_a_panel_each() -> None:
    import matplotlib.pyplot as plt

    from rsutils.book.chapters.npg_recipe import plot_histories, recipe_table, run_names

    P = PROFILES["cpu"]
    runs = P.recipe_runs(P.base_models()[0.5])
    bound = {"w = 5": 1.0, "γ = 1": 0.5}  # these two saturate, the others do not

    def history(run) -> pd.DataFrame:
        share = bound.get(run.value, 0.0)
        return pd.DataFrame(
            {
                "step": range(10),
                "sigma_min": [0.5] * 10,
                "sigma_median": [1.0] * 10,
                "sigma_max": [2.0] * 10,
                "at_bound": [0.0] * 9 + [share],
            }
        )

    histories = {run.config: history(run) for run in runs}
    table = recipe_table(runs, histories)
    assert len(table) == len(runs) and table["saturates"].sum() == 2
    assert table.loc[("dataset-wise", "bound γ", "γ = 1"), "share at bound"] == 0.5
    assert run_names(runs, table, saturates=True) == "dataset-wise: w = 5, dataset-wise: γ = 1"
    others = run_names(runs, table, saturates=False)
    assert others.count("the recipe") == 1 and "w = 1" not in others and "γ = 2" not in others
    figure = plot_histories(runs, histories)
    assert sum(ax.get_visible() for ax in figure.axes) == len(runs)
    plt.close(figure)


def test_the_run_at_table_says_which_generators_the_grid_trains() -> None:
    assert PROFILES["cpu"].generators.run_at_rows() == {
        "recipe grid (b')": "dataset-wise, 320 steps of 64 images",
        "shape-only runs (b')": "dataset-wise",
    }
    paper = PROFILES["paper"].generators.run_at_rows()
    assert paper["recipe grid (b')"] == (
        "dataset-wise and certification-wise, 93,750 steps of 128 images"
    )
