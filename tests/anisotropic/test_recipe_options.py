"""The options that test UCAN's recipe: a budget on sigma, the log-mean term, UCAN's
code's SGD with accumulated gradients, the history of sigma, and cache keys that stay."""

from __future__ import annotations

import copy
import math

import pytest
import torch
from torch import nn

from rsutils.anisotropic.generators import (
    CertificationWiseGenerator,
    DatasetWiseGenerator,
    apply_budget,
    build_generator,
)
from rsutils.anisotropic.training import (
    HISTORY_COLUMNS,
    SGD_MOMENTUM,
    SGD_WEIGHT_DECAY,
    NPGConfig,
    make_generator,
    npg_loss,
    train_npg,
    train_npg_with_history,
)
from rsutils.cache import config_key
from rsutils.core.streams import stream_generator
from rsutils.data import Dataset
from rsutils.training.train import TrainConfig


def gmean(sigma: torch.Tensor) -> torch.Tensor:
    """The geometric mean of each input's scales, in float64."""
    return sigma.double().flatten(1).log().mean(dim=1).exp()


def budgeted(kind: str, shape: tuple[int, ...], budget: str, value: float) -> nn.Module:
    if kind == "dataset":
        return DatasetWiseGenerator(shape, hidden=(4, 8), budget=budget, budget_value=value)
    return CertificationWiseGenerator(
        shape[0], width=4, growth=4, budget=budget, budget_value=value
    )


def scramble(generator: nn.Module, scale: float, seed: int) -> None:
    """Random weights far from the start, so the raw sigma has a shape."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in generator.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * scale)


# -- the budget -------------------------------------------------------------------------


@pytest.mark.parametrize("budget", ["gmean", "min"])
def test_apply_budget_fixes_the_level_and_keeps_the_ratios(budget) -> None:
    g = torch.Generator().manual_seed(0)
    for shape in [(5, 1, 4, 4), (3, 3, 7, 5), (1, 10)]:
        sigma = torch.rand(shape, generator=g, dtype=torch.float64) * 3 + 1e-3
        out = apply_budget(sigma, budget, 0.7)
        level = gmean(out) if budget == "gmean" else out.flatten(1).min(dim=1).values
        torch.testing.assert_close(level, torch.full_like(level, 0.7), rtol=1e-12, atol=0)
        ratio = (out / sigma).flatten(1)  # one factor per input: the shape is kept
        torch.testing.assert_close(ratio, ratio[:, :1].expand_as(ratio), rtol=1e-12, atol=0)
    assert apply_budget(sigma, None) is sigma
    with pytest.raises(ValueError, match="budget must be None, 'gmean' or 'min'"):
        apply_budget(sigma, "max")
    with pytest.raises(ValueError, match="budget_value must be"):
        apply_budget(sigma, "min", 0.0)


@pytest.mark.parametrize("kind", ["dataset", "certification"])
@pytest.mark.parametrize("budget", ["gmean", "min"])
@pytest.mark.parametrize("shape", [(1, 8, 8), (3, 6, 5)])
@torch.no_grad()
def test_a_budgeted_generator_keeps_its_budget_exactly(kind, budget, shape) -> None:
    for seed, (scale, value) in enumerate([(0.2, 1.0), (0.1, 1.0), (0.3, 0.4)]):
        generator = budgeted(kind, shape, budget, value)
        scramble(generator, scale, seed)
        x = torch.rand(4, *shape, generator=torch.Generator().manual_seed(seed))
        mu, sigma = generator(x)
        assert sigma.shape == mu.shape == x.shape
        level = gmean(sigma) if budget == "gmean" else sigma.flatten(1).min(dim=1).values
        # float32 rounding of log, mean and exp over at most 90 entries
        torch.testing.assert_close(
            level.double(), torch.full((4,), value, dtype=torch.float64), rtol=2e-6, atol=0
        )
        assert float(sigma.max() / sigma.min()) > 1.01, "the raw sigma has a shape to keep"


@pytest.mark.parametrize("kind", ["dataset", "certification"])
def test_gradients_reach_the_shape_but_not_the_budgeted_level(kind) -> None:
    generator = budgeted(kind, (1, 8, 8), "gmean", 1.0)
    scramble(generator, 0.5, 3)
    x = torch.rand(2, 1, 8, 8, generator=torch.Generator().manual_seed(3))
    _, sigma = generator(x)
    weights = torch.rand(sigma.shape, generator=torch.Generator().manual_seed(4))
    (sigma * weights).sum().backward()
    last = generator.sigma_net[-1] if kind == "dataset" else generator.sigma_net.out
    assert float(last.weight.grad.abs().max()) > 0
    generator.zero_grad()
    _, sigma = generator(x)
    sigma.log().mean().backward()  # the log of the (fixed) geometric mean
    for p in generator.sigma_net.parameters():
        assert float(p.grad.abs().max()) < 1e-6


@pytest.mark.parametrize("kind", ["dataset", "certification"])
def test_the_budget_is_a_setting_a_checkpoint_rebuilds(kind) -> None:
    generator = budgeted(kind, (1, 8, 8), "min", 0.5)
    scramble(generator, 0.5, 5)
    rebuilt = build_generator(generator.kind, generator.settings())
    rebuilt.load_state_dict(generator.state_dict())
    x = torch.rand(2, 1, 8, 8)
    assert torch.equal(generator(x)[1], rebuilt(x)[1])
    assert (rebuilt.budget, rebuilt.budget_value) == ("min", 0.5)
    fresh = budgeted(kind, (1, 8, 8), "gmean", 1.0)  # starts isotropic, at the budget
    torch.testing.assert_close(fresh(x)[1], torch.ones_like(x))


# -- the loss, the optimiser and the history ---------------------------------------------

SHAPE = (1, 8, 8)


def tiny_model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Flatten(), nn.Linear(64, 3)).eval()


def tiny_data(n: int = 48, *, same: bool = False) -> Dataset:
    g = torch.Generator().manual_seed(0)
    images = torch.rand(n, *SHAPE, generator=g)
    labels = torch.randint(0, 3, (n,), generator=g)
    if same:  # every batch alike, whatever the order
        images, labels = images[:1].expand(n, *SHAPE).clone(), labels[:1].expand(n).clone()
    return Dataset("toy", "train", images, labels, ("a", "b", "c"))


def config(method: str = "dataset", **changes) -> NPGConfig:
    settings = {"steps": 2, "batch_size": 16, "width": 4, **changes}
    return NPGConfig(base=TrainConfig(scale=0.5), method=method, **settings)


def test_the_log_mean_term_is_the_mean_of_log_sigma() -> None:
    model, data = tiny_model(), tiny_data()
    x, y = data.images[:8], data.labels[:8]
    cfg = config(variance_term="logmean", variance_weight=2.0)
    generator = make_generator(cfg, SHAPE)
    scramble(generator, 0.2, 6)
    loss, parts = npg_loss(model, generator, x, y, cfg, torch.Generator().manual_seed(0))
    with torch.no_grad():
        _, sigma = generator(x)
    v = float(sigma.double().log().mean())
    assert parts["variance"] == pytest.approx(v, rel=1e-6)
    assert math.exp(parts["variance"]) == pytest.approx(float(gmean(sigma[:1])), rel=1e-6)
    assert loss.item() == pytest.approx(parts["ce"] - 2.0 * v, rel=1e-6)


def generator_state(cfg: NPGConfig, data: Dataset) -> dict[str, torch.Tensor]:
    _, generator = train_npg(cfg, data, tiny_model(), progress=False, threads=1)
    return copy.deepcopy(generator.state_dict())


def test_sgd_steps_every_accumulate_batches_on_the_summed_gradient() -> None:
    """With the classifier frozen (lr 0) and every batch alike, the generator after 3
    batches is one torch SGD step on the sum of the 3 batches' gradients."""
    data = tiny_data(same=True)
    sgd = {"generator_optimiser": "sgd", "accumulate": 3, "generator_lr": 0.5, "lr": 0.0}
    states = {steps: generator_state(config(steps=steps, **sgd), data) for steps in (2, 3, 5, 6)}
    fresh = make_generator(config(**sgd), SHAPE)
    trainable = {name for name, _ in fresh.named_parameters()}

    def same(a: dict, b: dict) -> bool:
        return all(torch.equal(a[k], b[k]) for k in trainable)

    # The start (2 < 3 steps: no step yet), one step after 3 batches, none before 6.
    assert same(states[3], states[5]) and not same(states[2], states[3])
    assert not same(states[5], states[6])
    # By hand: the start, three backward passes, one torch.optim.SGD step.
    generator = make_generator(config(**sgd), SHAPE)
    generator.load_state_dict(states[2])
    generator.train()
    model, noise = tiny_model().train(), stream_generator(0, 0, "augment")
    cfg = config(**sgd)
    for _ in range(3):
        loss, _ = npg_loss(model, generator, data.images[:16], data.labels[:16], cfg, noise)
        loss.backward()
    optimiser = torch.optim.SGD(
        generator.parameters(), lr=0.5, momentum=SGD_MOMENTUM, weight_decay=SGD_WEIGHT_DECAY
    )
    optimiser.step()
    for name in trainable:
        torch.testing.assert_close(generator.state_dict()[name], states[3][name])


def test_adam_without_accumulation_steps_every_batch() -> None:
    data = tiny_data()
    first, second = (generator_state(config(steps=s), data) for s in (1, 2))
    assert any(not torch.equal(first[k], second[k]) for k in first)


@pytest.mark.parametrize("method", ["isotropic", "dataset", "certification"])
def test_the_history_has_a_row_per_step_and_the_weights_do_not_change(method) -> None:
    cfg = config(method, steps=5)
    run = train_npg_with_history(cfg, tiny_data(), tiny_model(), progress=False, threads=1)
    history = run.history
    assert list(history.columns) == list(HISTORY_COLUMNS)
    assert history["step"].tolist() == list(range(5))
    assert (history.sigma_min <= history.sigma_median).all()
    assert (history.sigma_median <= history.sigma_max).all()
    first = history.iloc[0]
    start = {"isotropic": 1.0, "dataset": 1.0, "certification": 0.5}[method]
    for column in ("sigma_min", "sigma_median", "sigma_max"):
        assert first[column] == pytest.approx(start, rel=1e-6)
    if method == "isotropic":
        assert history.at_bound.isna().all()
    else:
        assert first.at_bound == 0.0
    plain = train_npg(cfg, tiny_data(), tiny_model(), progress=False, threads=1)
    for a, b in zip((run.classifier, run.generator), plain, strict=True):
        for t, u in zip(a.state_dict().values(), b.state_dict().values(), strict=True):
            assert torch.equal(t, u)


def test_at_bound_counts_the_sigma_at_the_generators_bound() -> None:
    cfg = config(variance_weight=50.0, steps=40, gamma=1.0)
    run = train_npg_with_history(cfg, tiny_data(), tiny_model(), progress=False, threads=1)
    last = run.history.iloc[-1]
    with torch.no_grad():
        _, sigma = run.generator(tiny_data().images[:2])
    # a large weight pushes sigma to floor + gamma = 1.001
    assert last.at_bound > 0.5 and float(sigma.max()) == pytest.approx(1.001, rel=1e-3)


# -- the configuration --------------------------------------------------------------------


def test_default_configurations_keep_their_cache_keys() -> None:
    """The keys of models cached before these options existed (computed then): plain
    kernels, as every model was trained then; the fused default has keys of its own."""
    base = TrainConfig(scale=0.5)
    pinned = {
        "dataset": "f5b9a87ea8e01ab19bbf",
        "certification": "f44cd12fbf9bcf050205",
        "isotropic": "05951dce3237f7d5ec6a",
    }
    for method, key in pinned.items():
        plain = NPGConfig(base=base, method=method, kernels="plain")
        assert config_key({"npg": plain.as_dict()}) == key
        assert config_key({"npg": NPGConfig(base=base, method=method).as_dict()}) != key
    changed = NPGConfig(base=base, method="dataset", budget="gmean", accumulate=20)
    values = changed.as_dict()
    assert values["budget"] == "gmean" and values["accumulate"] == 20
    assert "generator_optimiser" not in values and "budget_value" not in values


def test_bad_options_are_named() -> None:
    with pytest.raises(ValueError, match="use it with method 'dataset' or 'certification'"):
        config("isotropic", budget="gmean")
    with pytest.raises(ValueError, match="budget must be None"):
        config(budget="mean")
    with pytest.raises(ValueError, match="budget_value must be > 0"):
        config(budget="min", budget_value=-1.0)
    with pytest.raises(ValueError, match="generator_optimiser must be 'adam' or 'sgd'"):
        config(generator_optimiser="rmsprop")
    with pytest.raises(ValueError, match="accumulate must be"):
        config(accumulate=0)
    with pytest.raises(ValueError, match="variance_term must be one of"):
        config(variance_term="max")
    with pytest.raises(ValueError, match="pattern_normalise must be one of"):
        config("pattern", pattern_normalise="median")
    with pytest.raises(ValueError, match="use it with method 'pattern'"):
        config("dataset", pattern_normalise="geometric")


@pytest.mark.parametrize("norm", ["l1", "l2", "linf"])
def test_a_pattern_at_geometric_mean_1_is_the_same_shape_with_the_alm_of_sigma_1(norm) -> None:
    """The geometric-mean pattern is UCAN's mean-1 pattern times one constant, the
    ratio of its mean to its geometric mean, and its ALM factor (the geometric mean of
    sigma) is exactly 1; the mean-1 pattern's factor is below 1 (AM–GM)."""
    base = TrainConfig(scale=0.5)
    ucan = make_generator(NPGConfig(base=base, method="pattern", pattern_norm=norm), (1, 28, 28))
    volume = make_generator(
        NPGConfig(base=base, method="pattern", pattern_norm=norm, pattern_normalise="geometric"),
        (1, 28, 28),
    )
    x = torch.zeros(2, 1, 28, 28)
    sigma_ucan, sigma_volume = ucan(x)[1].double(), volume(x)[1].double()
    assert torch.allclose(gmean(sigma_volume), torch.ones(2, dtype=torch.float64), atol=1e-6)
    ratio = sigma_volume / sigma_ucan
    assert torch.allclose(ratio, ratio.flatten()[0].expand_as(ratio), rtol=1e-6)
    assert float(gmean(sigma_ucan)[0]) < 1 < float(ratio.flatten()[0])
    keyed = NPGConfig(base=base, method="pattern", pattern_normalise="geometric").as_dict()
    assert keyed["pattern_normalise"] == "geometric"
    assert "pattern_normalise" not in NPGConfig(base=base, method="pattern").as_dict()
