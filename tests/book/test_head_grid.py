"""Chapter 06's head grid (the runs without a variance term and the shape-only runs,
with each head on sigma) and its tables, as the profiles define them."""

from __future__ import annotations

import math
from dataclasses import asdict

import pytest
import torch

from rsutils.anisotropic.generators import DatasetWiseGenerator
from rsutils.anisotropic.saturation import SigmaGradient
from rsutils.book.chapters.npg_recipe import (
    bounded_heads_on_flat_part,
    head_names,
    head_table,
    pull_table,
)
from rsutils.book.profiles import NPG_GROUPS, PROFILES
from rsutils.book.recipe_grid import HEAD_GRID, HeadGrid


@pytest.mark.parametrize("name", ["smoke", "cpu", "paper"])
def test_the_head_grid_changes_the_head_and_the_step_around_the_recipe(name) -> None:
    P = PROFILES[name]
    base = P.base_models()[0.5]
    runs = P.head_runs(base, seed=2)
    per_kind = sum(len(heads) for _, heads in HEAD_GRID.heads) * len(HEAD_GRID.optimisers)
    assert len(runs) == len(P.generators.recipe_kinds) * per_kind
    assert len({r.config for r in runs}) == len(runs)
    recipes = {r.config for r in P.recipe_runs(base, seed=2) if r.recipe}
    for run in runs:
        (recipe,) = {c for c in recipes if c.method == run.kind}
        left, right = asdict(run.config), asdict(recipe)
        changed = {k for k in left if left[k] != right[k]}
        assert changed <= {
            "variance_weight", "budget", "variance_term", "head", "generator_lr",
        }  # fmt: skip
        assert run.config.head == run.head and run.config.generator_optimiser == "adam"
        assert run.config.generator_lr == {"Adam 1e-2": 1e-2, "Adam 1e-3": 1e-3}[run.optimiser]
        if run.objective == "w = 0":
            assert run.config.variance_weight == 0.0 and run.config.budget is None
        else:
            assert (run.config.budget, run.config.variance_term) == ("gmean", "logmean")


@pytest.mark.parametrize("name", ["smoke", "cpu"])
def test_ucans_head_at_the_papers_step_is_a_run_the_chapter_already_trains(name) -> None:
    """No new training for the runs the grid shares with the recipe grid and the
    shape-only runs: the same configuration, so the same cache key."""
    P = PROFILES[name]
    base = P.base_models()[0.5]
    ucan = [r for r in P.head_runs(base) if r.head == "abs-tanh" and r.optimiser == "Adam 1e-2"]
    recipe = {r.config for r in P.recipe_runs(base)}
    shape = P.shape_only_methods(base)
    (w0,) = [r.config for r in ucan if r.objective == "w = 0"]
    (only,) = [r.config for r in ucan if r.objective == "shape at gmean 1"]
    assert w0 in recipe and "head" not in w0.as_dict()
    assert only == shape[NPG_GROUPS.shape_at_alm_budget[0]]
    new = [r for r in P.head_runs(base) if r.config not in recipe | set(shape.values())]
    assert len(new) == len(P.head_runs(base)) - 2


def test_a_head_grid_of_an_unknown_optimiser_or_a_fixed_noise_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown optimisers"):
        HeadGrid(optimisers=("Adam 1e-1",))
    P = PROFILES["smoke"]
    with pytest.raises(ValueError, match="varies a learned generator"):
        HEAD_GRID.runs(P.npg(P.base_models()[0.5], "isotropic"))


def test_the_pull_table_says_which_way_only_beyond_z_standard_errors() -> None:
    def gradient(values) -> SigmaGradient:
        level = torch.tensor(values, dtype=torch.float64)
        return SigmaGradient(level, level.reshape(-1, 1, 1, 1).expand(-1, 1, 2, 2).clone())

    table = pull_table(
        {
            "up": gradient([-1.0, -1.1, -0.9, -1.05]),
            "down": gradient([1.0, 1.1, 0.9, 1.05]),
            "flat": gradient([1.0, -1.0, 0.5, -0.6]),
        }
    )
    assert table["the cross-entropy asks for"].tolist() == ["more noise", "less noise", "undecided"]
    assert table.loc["down", "dCE/dt"] == pytest.approx(1.0125)
    assert table.loc["down", "pixels asking less"] == 1.0
    assert table.loc["flat", "pixels asking more"] == 0.0
    assert table.loc["up", "draws"] == 4


@torch.no_grad()
def test_the_head_table_tells_saturation_from_a_shape() -> None:
    P = PROFILES["smoke"]
    runs = [r for r in P.head_runs(P.base_models()[0.5]) if r.optimiser == "Adam 1e-2"]
    images = torch.rand(3, 1, 4, 4)
    generators = {}
    for run in runs:
        settings = {"hidden": (4, 8), "initial_sigma": 1.0, "head": run.head}
        if run.config.budget is not None:
            settings |= {"budget": "gmean"}
        generator = DatasetWiseGenerator((1, 4, 4), **settings)
        last = generator.sigma_net[-1]
        if run.head == "abs-tanh":  # both signs far out: the upper bound everywhere
            last.bias.copy_(torch.tensor([8.0, -8.0] * 8))
        elif run.head == "sigmoid":  # far out on both sides: floor and bound
            last.bias.copy_(torch.tensor([8.0, -8.0] * 8))
        else:  # a shape, no bound
            last.bias.copy_(torch.linspace(-1, 1, 16))
        generators[run.config] = generator
    table = head_table(runs, generators, images)
    tanh = table.loc[("w = 0", "abs-tanh", "Adam 1e-2")]
    assert tanh["at upper bound"] == 1.0 and tanh["flat head"] == 1.0 and tanh["saturates"]
    assert not tanh["has a shape"]
    sigmoid = table.loc[("w = 0", "sigmoid", "Adam 1e-2")]
    assert sigmoid["at upper bound"] == 0.5 and sigmoid["at floor"] == 0.5
    assert sigmoid["saturates"] and sigmoid["has a shape"]  # floor to bound: 2000-fold
    log = table.loc[("shape at gmean 1", "log", "Adam 1e-2")]
    assert math.isnan(log["at upper bound"]) and log["flat head"] == 0.0
    assert log["geometric mean σ"] == pytest.approx(1.0, rel=1e-5)
    assert log["max/min"] == pytest.approx(float(torch.exp(torch.tensor(2.0))), rel=1e-5)
    assert log["has a shape"] and not log["saturates"]
    only = table.loc[("shape at gmean 1", "abs-tanh", "Adam 1e-2")]
    assert only["max/min"] == pytest.approx(1.0) and not only["has a shape"]
    flat = head_names(table, "has a shape", False).split("; ")
    assert flat == ["w = 0, abs-tanh, Adam 1e-2", "shape at gmean 1, abs-tanh, Adam 1e-2"]
    assert head_names(table.iloc[:0], "saturates", True) == "none"
    assert not table["diverged"].any()
    assert bounded_heads_on_flat_part(table, "Adam 1e-2")
    with pytest.raises(ValueError, match="no bounded head trained with 'Adam 1e-3'"):
        bounded_heads_on_flat_part(table, "Adam 1e-3")
    # a sigmoid head left at its steep middle: one bounded head off its flat part
    (sigmoid_run,) = [r for r in runs if r.head == "sigmoid"]
    generators[sigmoid_run.config].sigma_net[-1].bias.zero_()
    generators[sigmoid_run.config].sigma_net[-1].weight.zero_()
    assert not bounded_heads_on_flat_part(head_table(runs, generators, images), "Adam 1e-2")
    # a log head thrown far: exp overflows, the run diverged and has no shape to show
    (log_run,) = [r for r in runs if r.head == "log"]
    generators[log_run.config].sigma_net[-1].bias.copy_(torch.linspace(-200, 200, 16))
    row = head_table([log_run], generators, images).iloc[0]
    assert row["diverged"] and not row["has a shape"] and not row["saturates"]
