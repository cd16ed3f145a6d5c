"""Chapter 06's recipe grid: UCAN's training recipe varied one factor at a time.

Around the chapter's recipe (variance weight ``w = 1``, the generator's ``gamma``,
Adam at ``1e-2`` for the generator, one noise draw per step), :class:`RecipeGrid`
changes one factor at a time: the weight ``w`` of the variance term, the bound
``gamma``, the generator's optimiser (UCAN's paper: Adam ``1e-2``; UCAN's code: SGD
``1e-3`` with momentum, stepping the dataset-wise generator once every 20 batches) and
the noise draws per step. The grid is part of what a profile runs
(:mod:`rsutils.book.profiles`); what the runs show is
:mod:`rsutils.book.chapters.npg_recipe`'s.

:class:`HeadGrid` asks why ``sigma`` runs to its bound where nothing rewards it: the
runs without a variance term (``w = 0``) and the shape-only runs (``sigma`` at
geometric mean 1), each with UCAN's ``|tanh|`` head on ``sigma`` and with the monotone
heads of :data:`~rsutils.anisotropic.generators.SIGMA_HEADS`, at the paper's Adam
``1e-2`` and at the smaller ``1e-3``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from rsutils.anisotropic.training import NPGConfig

__all__ = [
    "CODE_ACCUMULATE",
    "HEAD_GRID",
    "HEAD_OBJECTIVES",
    "KIND_NAMES",
    "RECIPE_GRID",
    "HeadGrid",
    "HeadRun",
    "RecipeGrid",
    "RecipeRun",
    "effective_gamma",
]

#: The display name of each learned generator.
KIND_NAMES = {"dataset": "dataset-wise", "certification": "certification-wise"}

#: How many batches UCAN's code sums before each generator step, 20 for the dataset-wise
#: generator (``train_dataset_noise.py``), 1 for the certification-wise one.
CODE_ACCUMULATE = {"dataset": 20, "certification": 1}

#: The generator's optimisers of the grid, by display name: (optimiser, learning rate,
#: whether it sums the gradients of UCAN's code's batches before a step).
_OPTIMISERS = {
    "Adam 1e-2": ("adam", 1e-2, False),
    "Adam 1e-3": ("adam", 1e-3, False),
    "SGD 1e-3": ("sgd", 1e-3, True),
}


def effective_gamma(config: NPGConfig) -> float:
    """The bound ``gamma`` a generator of ``config`` uses (its default when ``None``:
    2 for the dataset-wise generator, 1 for the certification-wise one)."""
    if config.gamma is not None:
        return config.gamma
    return 2.0 if config.method == "dataset" else 1.0


def _check_optimisers(names: tuple[str, ...]) -> None:
    unknown = set(names) - set(_OPTIMISERS)
    if unknown:
        raise ValueError(f"unknown optimisers {sorted(unknown)}; choose from {list(_OPTIMISERS)}")


@dataclass(frozen=True)
class RecipeRun:
    """One run of the grid: the generator ``kind``, the ``factor`` changed and its
    ``value`` (display strings), the run's ``config``, and whether it is the recipe
    itself (each factor's row holds the recipe at its own value)."""

    kind: str
    factor: str
    value: str
    config: NPGConfig
    recipe: bool


@dataclass(frozen=True)
class RecipeGrid:
    """The values of each factor; :meth:`runs` changes one at a time."""

    #: The weight ``w`` of the variance term.
    variance_weights: tuple[float, ...] = (0.0, 0.1, 1.0, 5.0)
    #: The bound ``gamma`` of ``sigma`` (a fresh generator starts at ``gamma / 2``).
    gammas: tuple[float, ...] = (1.0, 2.0, 4.0)
    #: The generator's optimisers (names of UCAN's paper and code).
    optimisers: tuple[str, ...] = tuple(_OPTIMISERS)
    #: Noise draws per training step.
    draws: tuple[int, ...] = (1, 5)

    def __post_init__(self) -> None:
        _check_optimisers(self.optimisers)

    def runs(self, recipe: NPGConfig) -> list[RecipeRun]:
        """Every factor's values around ``recipe`` (a dataset- or certification-wise
        configuration), one factor at a time, in the order of the fields; a value
        equal to the recipe's gives the recipe's own configuration."""
        if recipe.method not in KIND_NAMES:
            raise ValueError(
                f"the recipe grid varies a learned generator: method 'dataset' or "
                f"'certification', not {recipe.method!r}"
            )
        kind, gamma = recipe.method, effective_gamma(recipe)
        changes: list[tuple[str, str, dict[str, object]]] = []
        for w in self.variance_weights:
            changes.append(("variance weight w", f"w = {w:g}", {"variance_weight": w}))
        for g in self.gammas:
            value = recipe.gamma if math.isclose(g, gamma) else g
            changes.append(("bound γ", f"γ = {g:g}", {"gamma": value}))
        for name in self.optimisers:
            optimiser, lr, code = _OPTIMISERS[name]
            accumulate = CODE_ACCUMULATE[kind] if code else 1
            label = f"{name}, every {accumulate}" if accumulate > 1 else name
            step = {"generator_optimiser": optimiser, "generator_lr": lr}
            changes.append(("optimiser", label, {**step, "accumulate": accumulate}))
        for d in self.draws:
            changes.append(("draws per step", f"{d} draw{'s' if d > 1 else ''}", {"draws": d}))
        runs = []
        for factor, value, change in changes:
            config = replace(recipe, **change)  # type: ignore[arg-type]
            runs.append(RecipeRun(kind, factor, value, config, config == recipe))
        return runs


#: The grid of chapter 06 (issue 22's values).
RECIPE_GRID = RecipeGrid()


#: What a run of :class:`HeadGrid` trains for, by display name: no variance term, or
#: the shape only (``sigma`` at geometric mean 1, the variance term the mean of
#: ``log sigma``, then constant, as the shape-only runs of
#: :meth:`~rsutils.book.profiles.Profile.shape_only_methods`).
HEAD_OBJECTIVES: dict[str, dict[str, object]] = {
    "w = 0": {"variance_weight": 0.0},
    "shape at gmean 1": {"budget": "gmean", "variance_term": "logmean"},
}


@dataclass(frozen=True)
class HeadRun:
    """One run of :class:`HeadGrid`: the generator ``kind``, the ``objective`` (a name of
    :data:`HEAD_OBJECTIVES`), the ``head`` on ``sigma``, the generator's ``optimiser``
    (a name of the recipe grid's optimisers) and the run's ``config``."""

    kind: str
    objective: str
    head: str
    optimiser: str
    config: NPGConfig


@dataclass(frozen=True)
class HeadGrid:
    """Which heads each objective is trained with, at which optimisers; UCAN's
    ``"abs-tanh"`` at Adam ``1e-2`` is the recipe grid's own run (``w = 0``) or the
    chapter's shape-only run, so they share its cache.

    Without a variance term the monotone head is the bounded ``"sigmoid"``, which
    differs from UCAN's head only in not folding; the shape-only runs take the
    ``"log"`` head, whose budget fixes the mean of ``log sigma`` and leaves its shape
    free, with no bound to saturate at."""

    #: The heads of each objective of :data:`HEAD_OBJECTIVES`.
    heads: tuple[tuple[str, tuple[str, ...]], ...] = (
        ("w = 0", ("abs-tanh", "sigmoid")),
        ("shape at gmean 1", ("abs-tanh", "log")),
    )
    #: The generator's optimisers (names of :class:`RecipeGrid`'s).
    optimisers: tuple[str, ...] = ("Adam 1e-2", "Adam 1e-3")

    def __post_init__(self) -> None:
        _check_optimisers(self.optimisers)

    def runs(self, recipe: NPGConfig) -> list[HeadRun]:
        """Every (objective, head, optimiser) around ``recipe`` (a dataset- or
        certification-wise configuration), in the order of the fields."""
        if recipe.method not in KIND_NAMES:
            raise ValueError(
                f"the head grid varies a learned generator: method 'dataset' or "
                f"'certification', not {recipe.method!r}"
            )
        runs = []
        for objective, heads in self.heads:
            for head in heads:
                for name in self.optimisers:
                    optimiser, lr, _ = _OPTIMISERS[name]
                    change = {**HEAD_OBJECTIVES[objective], "head": head}
                    change |= {"generator_optimiser": optimiser, "generator_lr": lr}
                    config = replace(recipe, **change)  # type: ignore[arg-type]
                    runs.append(HeadRun(recipe.method, objective, head, name, config))
        return runs


#: The head grid of chapter 06.
HEAD_GRID = HeadGrid()
