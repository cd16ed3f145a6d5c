"""The heads of a generator's sigma (UCAN's folding |tanh| and two monotone ones), and the
measurements of why sigma saturates: the cross-entropy's pull and the absorbed share."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from rsutils.anisotropic.generators import (
    SIGMA_HEADS,
    CertificationWiseGenerator,
    DatasetWiseGenerator,
    build_generator,
    head_slope,
    sigma_bound,
    sigma_from_raw,
)
from rsutils.anisotropic.saturation import absorbed_share, ce_sigma_gradient
from rsutils.anisotropic.training import NPGConfig, describe_npg, make_generator, npg_loss
from rsutils.cache import config_key
from rsutils.training.train import TrainConfig

GAMMA, FLOOR = 2.0, 1e-3
RAW = torch.linspace(-30, 30, 6001, dtype=torch.float64)


def generator_of(kind: str, head: str, **settings) -> nn.Module:
    if kind == "dataset":
        return DatasetWiseGenerator((1, 6, 6), hidden=(4, 8), head=head, **settings)
    return CertificationWiseGenerator(1, width=4, growth=4, head=head, **settings)


def scramble(generator: nn.Module, scale: float, seed: int) -> None:
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in generator.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * scale)


# -- the heads ---------------------------------------------------------------------------


def test_each_head_stays_in_its_range() -> None:
    tanh = sigma_from_raw(RAW, "abs-tanh", GAMMA, FLOOR)
    sigmoid = sigma_from_raw(RAW, "sigmoid", GAMMA, FLOOR)
    assert float(tanh.min()) >= FLOOR and float(tanh.max()) <= FLOOR + GAMMA
    assert float(sigmoid.min()) >= FLOOR and float(sigmoid.max()) <= FLOOR + GAMMA
    small = torch.linspace(-8, 8, 161, dtype=torch.float64)
    log = sigma_from_raw(small, "log", GAMMA, FLOOR)
    torch.testing.assert_close(log.log(), small)  # exp(raw): any positive level, no bound
    assert float(log.max()) > FLOOR + GAMMA and float(log.min()) < FLOOR


def test_the_monotone_heads_are_monotone_and_ucans_folds_both_signs() -> None:
    for head in ("sigmoid", "log"):
        sigma = sigma_from_raw(torch.linspace(-8, 8, 1601, dtype=torch.float64), head, 2, 1e-3)
        assert bool((sigma.diff() > 0).all()), head
    tanh = sigma_from_raw(RAW, "abs-tanh", GAMMA, FLOOR)
    torch.testing.assert_close(tanh, tanh.flip(0))  # raw and −raw give the same sigma
    assert not bool((tanh.diff() >= 0).all())
    # a large raw of either sign: UCAN's head gives the upper bound, the sigmoid the
    # bound on its own side only
    far = torch.tensor([-6.0, 6.0], dtype=torch.float64)
    torch.testing.assert_close(
        sigma_from_raw(far, "abs-tanh", GAMMA, FLOOR),
        torch.full((2,), FLOOR + GAMMA, dtype=torch.float64),
        rtol=1e-4,
        atol=0,
    )
    low, high = sigma_from_raw(far, "sigmoid", GAMMA, FLOOR).tolist()
    assert low < FLOOR + 0.01 and high > FLOOR + GAMMA - 0.01


def test_the_slope_vanishes_at_large_raw_for_the_bounded_heads_only() -> None:
    for head in SIGMA_HEADS:
        raw = RAW.clone().requires_grad_(True)
        sigma = sigma_from_raw(raw, head, GAMMA, FLOOR)
        level = sigma.log() if head == "log" else sigma / GAMMA
        (grad,) = torch.autograd.grad(level.sum(), raw)
        torch.testing.assert_close(grad.abs(), head_slope(RAW, head), rtol=1e-6, atol=1e-12)
    far = torch.tensor([-10.0, -4.0, 4.0, 10.0], dtype=torch.float64)
    assert float(head_slope(far, "abs-tanh").max()) < 0.01
    assert float(head_slope(far, "sigmoid").max()) < 0.02
    torch.testing.assert_close(head_slope(far, "log"), torch.ones_like(far))
    # where UCAN's head saturates: |raw| > atanh(√0.99) ≈ 2.99 has slope below 0.01
    edge = math.atanh(math.sqrt(0.99))
    assert float(head_slope(torch.tensor(edge - 0.01), "abs-tanh")) > 0.01
    assert float(head_slope(torch.tensor(edge + 0.01), "abs-tanh")) < 0.01


@pytest.mark.parametrize("budget", ["gmean", "min"])
def test_the_log_heads_budget_acts_on_log_sigma_exactly(budget) -> None:
    g = torch.Generator().manual_seed(1)
    raw = torch.randn(5, 3, 7, 7, generator=g, dtype=torch.float64) * 2
    sigma = sigma_from_raw(raw, "log", GAMMA, FLOOR, budget, 0.7)
    flat = sigma.flatten(1)
    level = flat.log().mean(dim=1).exp() if budget == "gmean" else flat.min(dim=1).values
    torch.testing.assert_close(
        level, torch.full((5,), 0.7, dtype=torch.float64), rtol=1e-14, atol=0
    )
    ratio = (sigma / raw.exp()).flatten(1)  # one factor per input: exp(raw)'s shape is kept
    torch.testing.assert_close(ratio, ratio[:, :1].expand_as(ratio), rtol=1e-12, atol=0)


@pytest.mark.parametrize("kind", ["dataset", "certification"])
@pytest.mark.parametrize("head", SIGMA_HEADS)
def test_every_head_starts_at_the_initial_sigma_and_rebuilds(kind, head) -> None:
    x = torch.rand(3, 1, 6, 6, generator=torch.Generator().manual_seed(2))
    fresh = generator_of(kind, head, gamma=2.0, initial_sigma=1.0)
    torch.testing.assert_close(fresh(x)[1], torch.ones_like(x), rtol=1e-5, atol=0)
    scramble(fresh, 0.3, 3)
    rebuilt = build_generator(fresh.kind, fresh.settings())
    rebuilt.load_state_dict(fresh.state_dict())
    assert rebuilt.head == head and torch.equal(rebuilt(x)[1], fresh(x)[1])
    assert ("head" in fresh.settings()) == (head != "abs-tanh")  # old settings unchanged
    assert sigma_bound(fresh) == (None if head == "log" else 2.0 + 1e-3)
    with torch.no_grad():
        raw = fresh.raw_sigma(x)
        sigma = sigma_from_raw(raw, head, fresh.gamma, fresh.floor)
    torch.testing.assert_close(fresh(x)[1], sigma.expand_as(x))


@torch.no_grad()
def test_the_log_head_keeps_the_geometric_mean_in_a_generator() -> None:
    for kind in ("dataset", "certification"):
        generator = generator_of(kind, "log", budget="gmean", budget_value=1.0)
        scramble(generator, 0.3, 4)
        _, sigma = generator(torch.rand(4, 1, 6, 6, generator=torch.Generator().manual_seed(4)))
        gmean = sigma.double().flatten(1).log().mean(dim=1).exp()
        torch.testing.assert_close(gmean, torch.ones(4, dtype=torch.float64), rtol=1e-6, atol=0)
        assert float(sigma.max() / sigma.min()) > 1.1, "the shape moved"


def test_a_bad_head_is_named() -> None:
    with pytest.raises(ValueError, match="head must be one of"):
        DatasetWiseGenerator((1, 4, 4), head="relu")
    with pytest.raises(ValueError, match="head must be one of"):
        NPGConfig(base=TrainConfig(scale=0.5), method="dataset", head="tanh")
    with pytest.raises(ValueError, match="a head shapes a learned sigma"):
        NPGConfig(base=TrainConfig(scale=0.5), method="isotropic", head="sigmoid")


# -- the configuration -------------------------------------------------------------------


def test_the_default_head_keeps_every_cache_key() -> None:
    """UCAN's head stays out of a configuration (test_recipe_options pins the keys that
    follow), and another head changes the key."""
    base = TrainConfig(scale=0.5)
    for method in ("dataset", "certification", "isotropic"):
        assert "head" not in NPGConfig(base=base, method=method).as_dict()
    default = config_key({"npg": NPGConfig(base=base, method="dataset").as_dict()})
    sigmoid = NPGConfig(base=base, method="dataset", head="sigmoid")
    assert sigmoid.as_dict()["head"] == "sigmoid"
    assert config_key({"npg": sigmoid.as_dict()}) != default
    assert "sigmoid head" in describe_npg(sigmoid)
    assert make_generator(sigmoid, (1, 6, 6)).head == "sigmoid"


# -- the measurements --------------------------------------------------------------------


def tiny_model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Flatten(), nn.Linear(36, 3)).eval()


def tiny_images(n: int = 64) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    return torch.rand(n, 1, 6, 6, generator=g), torch.randint(0, 3, (n,), generator=g)


def test_the_sigma_gradient_is_the_loss_gradient_of_a_training_step() -> None:
    """One draw of the whole set is npg_loss's cross-entropy gradient along sigma's level."""
    model, (images, labels) = tiny_model(), tiny_images()
    generator = DatasetWiseGenerator((1, 6, 6), hidden=(4, 8), initial_sigma=1.0)
    measured = ce_sigma_gradient(
        model, generator, images, labels, scale=0.5, draws=1, batch_size=len(labels), seed=3
    )
    assert measured.draws == 1 and math.isnan(measured.standard_error)
    # the same level derivative by a finite difference of the same draw
    from rsutils.core.streams import stream_generator

    picks = stream_generator(3, 0, "gradient")
    batch = torch.randperm(len(labels), generator=picks)
    eps = torch.randn(images.shape, generator=stream_generator(3, 0, "gradient"))
    x, y = images[batch], labels[batch]

    def ce(t: float) -> float:
        with torch.no_grad():
            return float(nn.functional.cross_entropy(model(x + t * 0.5 * eps), y))

    h = 1e-3
    assert measured.mean == pytest.approx((ce(1 + h) - ce(1 - h)) / (2 * h), rel=1e-2, abs=1e-5)
    assert measured.pixels.shape == (1, 1, 6, 6)
    # the pixel gradients add up to the level derivative when sigma ≡ 1
    assert float(measured.pixels.sum()) == pytest.approx(measured.mean, rel=1e-9)
    # nothing trained, nothing left behind
    assert all(p.grad is None for p in [*model.parameters(), *generator.parameters()])
    config = NPGConfig(base=TrainConfig(scale=0.5), method="dataset", variance_weight=0.0)
    loss, _ = npg_loss(model, generator, x, y, config, torch.Generator().manual_seed(0))
    assert loss.requires_grad


class Energy(nn.Module):
    """Class 1 when an input's energy ``Σ x_i²`` exceeds 16: noise adds energy, so it
    moves every input towards class 1 (clean uniform inputs have about 12)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        energy = x.flatten(1).pow(2).sum(dim=1)
        return torch.stack([torch.zeros_like(energy), 0.5 * (energy - 16)], dim=1)


def test_the_sigma_gradient_has_the_sign_of_the_cross_entropys_pull() -> None:
    """More noise raises the energy: for inputs of class 0 it raises the cross-entropy
    (a positive level derivative, less noise wanted), for inputs of class 1 it lowers
    it (negative, more noise wanted), on every pixel, with a standard error small
    enough to tell."""
    images, _ = tiny_images(256)
    generator = DatasetWiseGenerator((1, 6, 6), hidden=(4, 8), initial_sigma=1.0)
    for label, sign, wanted in [(0, 1, "less noise"), (1, -1, "more noise")]:
        labels = torch.full((256,), label)
        measured = ce_sigma_gradient(Energy(), generator, images, labels, scale=0.5, draws=40)
        assert sign * measured.mean > 4 * measured.standard_error
        shares = measured.pixel_shares()
        assert shares[wanted] > 0.9 and sum(shares.values()) == pytest.approx(1.0)


def test_the_absorbed_share_counts_the_flat_part_of_the_head() -> None:
    x = torch.rand(2, 1, 6, 6)
    fresh = DatasetWiseGenerator((1, 6, 6), hidden=(4, 8), initial_sigma=1.0)
    assert absorbed_share(fresh, x) == 0.0  # raw = atanh(0.4995): slope 0.75
    with torch.no_grad():
        last = fresh.sigma_net[-1]
        last.bias.copy_(torch.tensor([4.0, -4.0, 1.0] * 12))  # |raw| > 2.99 on 24 of 36
    assert absorbed_share(fresh, x) == pytest.approx(24 / 36)
    torch.testing.assert_close(fresh(x)[1][0, 0, 0, :2], torch.full((2,), 2.0), rtol=2e-3, atol=0)
    log = DatasetWiseGenerator((1, 6, 6), hidden=(4, 8), initial_sigma=1.0, head="log")
    scramble(log, 3.0, 5)
    assert absorbed_share(log, x) == 0.0
    with pytest.raises(ValueError, match="slope_below"):
        absorbed_share(fresh, x, slope_below=1.5)
