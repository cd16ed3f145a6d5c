"""Noise parameter generators: shapes, bounds, starting point, and what a step trains."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from rsutils.anisotropic.generators import (
    CertificationWiseGenerator,
    DatasetWiseGenerator,
    FixedNoise,
    WithoutOffset,
    build_generator,
    parameter_summary,
)
from rsutils.anisotropic.patterns import UCAN_CODE_PATTERN, spatial_pattern
from rsutils.anisotropic.training import (
    KERNELS,
    NPGConfig,
    make_generator,
    npg_loss,
    train_npg,
    train_npg_with_history,
)
from rsutils.data import Dataset
from rsutils.training.train import TrainConfig

SHAPE = (1, 8, 8)


def generators() -> list[nn.Module]:
    return [
        FixedNoise(spatial_pattern(8, 8).float()),
        DatasetWiseGenerator(SHAPE, gamma=2.0, hidden=(4, 8, 8, 16)),
        CertificationWiseGenerator(1, gamma=1.0, mu_bound=0.5, width=4, growth=4),
    ]


@pytest.mark.parametrize("generator", generators(), ids=lambda g: g.kind)
def test_output_has_the_shape_of_the_input_and_is_bounded(generator) -> None:
    torch.manual_seed(0)
    # Push every weight far from its start, so the bounds are tested, not the init.
    with torch.no_grad():
        for p in generator.parameters():
            p.normal_(0, 5)
    x = torch.rand(3, *SHAPE)
    with torch.no_grad():
        mu, sigma = generator(x)
    assert mu.shape == sigma.shape == x.shape
    assert bool((sigma > 0).all())
    if not isinstance(generator, FixedNoise):
        assert float(sigma.min()) >= generator.floor
        # tanh saturates at 1 in float32, so the bound is reached up to rounding
        assert float(sigma.max()) <= (generator.floor + generator.gamma) * (1 + 1e-6)
        assert float(mu.abs().max()) <= generator.mu_bound * (1 + 1e-6)


@pytest.mark.parametrize("generator", generators()[1:], ids=lambda g: g.kind)
@torch.no_grad()
def test_a_fresh_generator_starts_at_isotropic_noise(generator) -> None:
    mu, sigma = generator(torch.rand(2, *SHAPE))
    assert float(mu.abs().max()) == 0.0
    torch.testing.assert_close(sigma, torch.full_like(sigma, generator.initial_sigma))


def test_dataset_wise_is_the_same_for_every_input_certification_wise_is_not() -> None:
    torch.manual_seed(1)
    dataset, certification = generators()[1:]
    for g in (dataset, certification):
        with torch.no_grad():
            for p in g.parameters():
                p.normal_(0, 0.3)
    x = torch.rand(2, *SHAPE)
    mu, sigma = dataset(x)
    assert torch.equal(mu[0], mu[1]) and torch.equal(sigma[0], sigma[1])
    mu, sigma = certification(x)
    assert not torch.equal(sigma[0], sigma[1])


def test_certification_wise_is_a_cascade_sigma_sees_x_plus_mu() -> None:
    torch.manual_seed(2)
    g = generators()[2]
    with torch.no_grad():
        for p in g.parameters():
            p.normal_(0, 0.3)
    x = torch.rand(2, *SHAPE)
    mu, sigma = g(x)
    expected = g.floor + g.gamma * torch.tanh(g.sigma_net(x + mu)).abs()
    torch.testing.assert_close(sigma, expected)


def test_generators_rebuild_from_their_settings() -> None:
    for g in generators():
        rebuilt = build_generator(g.kind, g.settings())
        rebuilt.load_state_dict(g.state_dict())
        x = torch.rand(2, *SHAPE)
        for a, b in zip(g(x), rebuilt(x), strict=True):
            assert torch.equal(a, b)
    with pytest.raises(ValueError, match="unknown generator kind 'npg'"):
        build_generator("npg", {})


def test_bad_bounds_are_named() -> None:
    with pytest.raises(ValueError, match="gamma must be"):
        DatasetWiseGenerator(SHAPE, gamma=0.0)
    with pytest.raises(ValueError, match="floor must be > 0"):
        CertificationWiseGenerator(1, floor=0.0)
    with pytest.raises(ValueError, match="initial_sigma must lie in"):
        CertificationWiseGenerator(1, gamma=1.0, initial_sigma=1.5)
    with pytest.raises(ValueError, match="finite and positive"):
        FixedNoise(torch.zeros(1, 2, 2))


def test_the_ucan_code_pattern_is_almost_isotropic() -> None:
    """The released code's coordinates span [-1/4, 1/4]: sigma in [0.8, 0.8 + 0.2·r²]."""
    expected_max = {"l1": 0.85, "l2": 0.825, "linf": 0.8125}
    for norm, top in expected_max.items():
        sigma = spatial_pattern(28, 28, norm=norm, **UCAN_CODE_PATTERN)
        assert float(sigma.min()) == pytest.approx(0.8, abs=1e-3)
        assert float(sigma.max()) == pytest.approx(top, abs=1e-12)
        assert float(sigma.max() / sigma.min()) <= 1.0625 + 1e-12


# -- training ------------------------------------------------------------------------------


def tiny_data(n: int = 64) -> Dataset:
    g = torch.Generator().manual_seed(0)
    images = torch.rand(n, *SHAPE, generator=g)
    labels = torch.randint(0, 3, (n,), generator=g)
    return Dataset("toy", "train", images, labels, ("a", "b", "c"))


def tiny_model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Flatten(), nn.Linear(64, 3)).eval()


def config(method: str, **changes) -> NPGConfig:
    base = TrainConfig(scale=0.5)
    settings = {"steps": 2, "batch_size": 16, "width": 4, **changes}
    return NPGConfig(base=base, method=method, **settings)


@pytest.mark.parametrize("method", ["isotropic", "pattern", "dataset", "certification"])
def test_a_step_trains_what_the_algorithm_says(method) -> None:
    """Classifier always; the generator only for dataset- and certification-wise noise."""
    start = tiny_model()
    cfg = config(method)
    model, generator = train_npg(cfg, tiny_data(), start, progress=False, threads=1)
    fresh = make_generator(cfg, SHAPE)
    changed = {
        name: not torch.equal(tensor, fresh.state_dict()[name])
        for name, tensor in generator.state_dict().items()
    }
    weights_changed = not torch.equal(model[1].weight, start[1].weight)
    assert weights_changed, "the classifier is trained by every method"
    if method in ("isotropic", "pattern"):
        assert not any(changed.values()), "a fixed noise has nothing to train"
    else:
        trainable = {n for n, _ in generator.named_parameters()}
        assert all(changed[n] for n in trainable if n.endswith("weight")), changed
        assert not any(changed[n] for n in changed if n not in trainable)  # buffers stay
    assert not start.training and torch.equal(start[1].weight, tiny_model()[1].weight)


def test_npg_training_names_its_method_and_base_in_the_side_channel(tmp_path, monkeypatch) -> None:
    from rsutils.progress import PROGRESS_FILE

    monkeypatch.setenv(PROGRESS_FILE, str(tmp_path / "progress.log"))
    train_npg(config("dataset", seed=4), tiny_data(), tiny_model(), progress=False, threads=1)
    last = (tmp_path / "progress.log").read_text().splitlines()[-1]
    assert last.startswith(
        "train dataset-wise generator, min variance term, seed 4, 2 steps, from the base "
        "small_cnn on fashion-mnist, σ=0.5, seed 0, gaussian training | step 2 of 2 | "
    )
    assert last.endswith("| done")


def test_the_loss_subtracts_the_variance_term_only_when_a_generator_trains() -> None:
    model, x, y = tiny_model(), tiny_data().images[:8], tiny_data().labels[:8]
    for method, term in (("dataset", "min"), ("dataset", "mean"), ("pattern", "min")):
        cfg = config(method, variance_term=term, variance_weight=3.0)
        generator = make_generator(cfg, SHAPE)
        loss, parts = npg_loss(model, generator, x, y, cfg, torch.Generator().manual_seed(0))
        with torch.no_grad():
            _, sigma = generator(x)
        v = float(sigma.min() if term == "min" else sigma.mean())
        assert parts["variance"] == pytest.approx(v)
        expected = parts["ce"] - (3.0 * v if method == "dataset" else 0.0)
        assert loss.item() == pytest.approx(expected, rel=1e-6)


def test_training_is_deterministic_and_the_config_is_checked() -> None:
    cfg = config("certification")
    a = train_npg(cfg, tiny_data(), tiny_model(), progress=False, threads=1)
    b = train_npg(cfg, tiny_data(), tiny_model(), progress=False, threads=1)
    for m, n in zip(a, b, strict=True):
        for (k, t), (_, u) in zip(m.state_dict().items(), n.state_dict().items(), strict=True):
            assert torch.equal(t, u), k
    with pytest.raises(ValueError, match="method must be one of"):
        config("learned")
    with pytest.raises(ValueError, match="variance_term must be"):
        config("dataset", variance_term="max")
    with pytest.raises(ValueError, match="steps must be"):
        config("dataset", steps=0)


def test_parameter_summary_and_the_offset_ablation() -> None:
    sigma = torch.tensor([[[0.5, 2.0], [1.0, 1.0]]])
    mu = torch.tensor([[[0.3, -0.3], [0.0, 0.0]]])
    fixed = FixedNoise(sigma, mu)
    summary = parameter_summary(fixed, torch.rand(4, 1, 2, 2))
    assert summary["min σ"] == pytest.approx(0.5) and summary["max σ"] == pytest.approx(2.0)
    assert summary["geometric mean σ"] == pytest.approx(1.0)
    assert summary["mean |μ|"] == pytest.approx(0.15)
    assert summary["‖μ‖₂"] == pytest.approx(0.3 * 2**0.5)
    ablated = WithoutOffset(fixed.eval())
    assert not ablated.training
    with torch.no_grad():
        mu0, sigma0 = ablated(torch.rand(3, 1, 2, 2))
    assert float(mu0.abs().max()) == 0.0 and torch.equal(sigma0[0], sigma)
    with pytest.raises(TypeError, match="not saved"):
        ablated.settings()


def conv_model() -> nn.Module:
    torch.manual_seed(0)
    conv = nn.Conv2d(1, 2, 3)
    return nn.Sequential(conv, nn.Flatten(), nn.Linear(2 * 6 * 6, 3)).eval()


def test_the_kernels_are_in_the_key_unless_plain_as_before() -> None:
    fused = config("dataset")
    assert fused.kernels == "fused" and fused.as_dict()["kernels"] == "fused"
    assert "kernels" not in config("dataset", kernels="plain").as_dict()
    with pytest.raises(ValueError, match="kernels must be one of"):
        config("dataset", kernels="fast")


@pytest.mark.parametrize("method", ["isotropic", "certification"])
def test_fused_kernels_compute_the_plain_steps(method) -> None:
    """The same steps up to the order of summation: the first loss agrees to float
    rounding, and every weight ends within a few Adam steps of the plain run (an Adam
    step moves a weight by about its learning rate whatever the gradient, so rounding
    can move a weight whose gradient is near zero by up to lr a step, no more)."""
    runs = {}
    for kernels in KERNELS:
        cfg = config(method, kernels=kernels, steps=3)
        runs[kernels] = train_npg_with_history(
            cfg, tiny_data(), conv_model(), progress=False, threads=1
        )
    fused, plain = runs["fused"], runs["plain"]
    assert fused.history["ce"][0] == pytest.approx(plain.history["ce"][0], rel=1e-6)
    pairs = {
        cfg.lr: (fused.classifier, plain.classifier),
        cfg.generator_lr: (fused.generator, plain.generator),
    }
    for lr, (a, b) in pairs.items():
        pairs_of = zip(a.state_dict().items(), b.state_dict().items(), strict=True)
        for (name, t), (_, u) in pairs_of:
            assert t.is_contiguous(), name  # a checkpoint's layout, whatever the kernels
            assert float((t - u).abs().max()) <= 3 * 1.01 * lr, name
