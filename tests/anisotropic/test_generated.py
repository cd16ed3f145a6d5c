"""Certifying through a generator is certifying with its mu, sigma passed by hand."""

from __future__ import annotations

import pytest
import torch

from rsutils import Anisotropic, Gaussian, Smooth, read_log
from rsutils.anisotropic.generated import GeneratedSmooth
from rsutils.anisotropic.generators import CertificationWiseGenerator, load_generator
from rsutils.core.settings import CertifySettings
from rsutils.data import load_dataset
from rsutils.logs.runner import ANISOTROPIC_COLUMNS, certify_dataset
from rsutils.models.architectures import build_model
from rsutils.models.checkpoints import load_checkpoint, save_checkpoint


@pytest.fixture
def generator() -> CertificationWiseGenerator:
    torch.manual_seed(3)
    g = CertificationWiseGenerator(1, gamma=1.0, mu_bound=0.25, width=4, growth=4)
    with torch.no_grad():  # away from the uniform start, so that sigma varies per pixel
        for p in g.parameters():
            p.add_(0.2 * torch.randn_like(p))
    return g.eval()


def test_certificate_equals_the_one_with_mu_sigma_by_hand(cnn, generator) -> None:
    x = torch.rand(1, 28, 28)
    smooth = GeneratedSmooth(cnn, 10, Gaussian(0.5), generator)
    with torch.no_grad():
        mu, sigma = generator(x.unsqueeze(0))
    assert float(sigma.max() / sigma.min()) > 1.1  # really anisotropic
    by_hand = Smooth(cnn, 10, Anisotropic(Gaussian(0.5), sigma[0], mu[0]))
    args = {"n0": 50, "n": 500, "alpha": 0.01, "batch_size": 128, "seed": 7, "index": 4}
    assert smooth.certify(x, **args) == by_hand.certify(x, **args)
    assert smooth.predict(x, 300, 0.01, seed=1) == by_hand.predict(x, 300, 0.01, seed=1)
    cert = smooth.certify(x, **args)
    if cert.region_radius > 0:
        assert cert.radius == pytest.approx(float(sigma.min()) * cert.region_radius, rel=1e-6)
        assert cert.alm >= cert.radius


def test_bad_generators_and_modes_are_named(cnn, generator) -> None:
    with pytest.raises(TypeError, match="noise parameter generator"):
        GeneratedSmooth(cnn, 10, Gaussian(0.5), torch.nn.Identity())
    smooth = GeneratedSmooth(cnn, 10, Gaussian(0.5), generator.train())
    with pytest.raises(ValueError, match="generator is in training mode"):
        smooth.certify(torch.rand(1, 28, 28), 10, 10, 0.01)
    generator.eval()
    with pytest.raises(ValueError, match="range"):
        smooth.certify(255 * torch.rand(1, 28, 28), 10, 10, 0.01)


def test_checkpoint_carries_the_generator(cnn, generator, tmp_path) -> None:
    path = tmp_path / "npg.pt"
    save_checkpoint(cnn, path, arch="small_cnn", dataset="fashion-mnist", generator=generator)
    loaded = load_generator(path)
    x = torch.rand(2, 1, 28, 28)
    with torch.no_grad():
        for a, b in zip(generator(x), loaded(x), strict=True):
            assert torch.equal(a, b)
    _, info = load_checkpoint(path)
    assert info["generator"]["kind"] == "certification"
    plain = tmp_path / "plain.pt"
    save_checkpoint(cnn, plain, arch="small_cnn", dataset="fashion-mnist")
    with pytest.raises(ValueError, match="without a noise parameter generator"):
        load_generator(plain)


def test_dataset_log_has_region_radius_and_alm(cnn, generator, fake_fashion_mnist, tmp_path):
    data = load_dataset("fashion-mnist", "test", fake_fashion_mnist)
    smooth = GeneratedSmooth(cnn, 10, Gaussian(0.5), generator)
    settings = CertifySettings(n0=20, n=200, alpha=0.01, batch_size=100)
    log = certify_dataset(smooth, data, [0, 1, 2], tmp_path / "g.tsv", settings, progress=False)
    assert list(log.columns) == ANISOTROPIC_COLUMNS
    assert (log["scale"] == 0.5).all() and (log["alm"] >= log["radius"]).all()
    row = log.iloc[1]
    by_hand = GeneratedSmooth(cnn, 10, Gaussian(0.5), generator).certify(
        data.images[1], 20, 200, 0.01, 100, 0, index=1
    )
    assert (row["predict"], row["count"]) == (by_hand.prediction, by_hand.count)


def test_certify_command_with_a_generator(fake_fashion_mnist, generator, tmp_path, capsys) -> None:
    from rsutils.cli import main

    torch.manual_seed(0)
    path = tmp_path / "npg.pt"
    model = build_model("small_cnn", "fashion-mnist")
    save_checkpoint(model, path, arch="small_cnn", dataset="fashion-mnist", generator=generator)
    out = tmp_path / "g.tsv"
    args = ["certify", "fashion-mnist", str(path), "0.5"]
    args += [str(out), "--N0", "20", "--N", "200", "--max", "3", "--quiet"]
    args += ["--data-root", str(fake_fashion_mnist)]
    assert main([*args, "--generator", str(path)]) == 0
    log = read_log(out)
    assert list(log.columns) == ANISOTROPIC_COLUMNS and len(log) == 3
    plain = tmp_path / "plain.pt"
    save_checkpoint(model, plain, arch="small_cnn", dataset="fashion-mnist")
    assert main([*args, "--generator", str(plain)]) == 2
    assert "without a noise parameter generator" in capsys.readouterr().err


def test_a_generated_certificate_in_a_fast_mode_equals_the_one_by_hand(cnn, generator) -> None:
    """The model is wrapped once; each input's Smooth reuses it, in the same mode."""
    x = torch.rand(1, 28, 28)
    smooth = GeneratedSmooth(cnn, 10, Gaussian(0.5), generator, inference="bf16_channels_last")
    assert smooth.inference == "bf16_channels_last"
    assert smooth.smooth_at(x).model is smooth.model is not cnn
    with torch.no_grad():
        mu, sigma = generator(x.unsqueeze(0))
    noise = Anisotropic(Gaussian(0.5), sigma[0], mu[0])
    by_hand = Smooth(cnn, 10, noise, inference="bf16_channels_last")
    args = {"n0": 50, "n": 500, "alpha": 0.01, "batch_size": 128, "seed": 7, "index": 4}
    assert smooth.certify(x, **args) == by_hand.certify(x, **args)
