"""UCAN's released generators: the loader, the cascade, the inputs and the summary.

Most tests build a made-up release in a temporary folder (networks with known weights,
their SHA-256 put in place of the release's), so they run anywhere; the last ones read
the real files from the reference folder and are skipped, with the reason, where it is
not configured.
"""

from __future__ import annotations

import hashlib
import math
import os
from pathlib import Path

import pytest
import torch

from rsutils.anisotropic import released
from rsutils.anisotropic.released import (
    UCAN2025_FILES,
    ReleasedUCANGenerator,
    UCANNoiseNetwork,
    cifar_shaped,
    load_ucan2025,
    released_summary,
    ucan2025_file,
    uniform_images,
)

#: The release's keys and shapes, as its README lists them: 3x3 convolutions, 3 -> 16
#: channels, a dense block of 16, 32, 48, 64 input channels (16 out each), 80 -> 16
#: twice (mean and the unused variance), 16 -> 3 twice.
README_SHAPES = {
    "Image_first.weight": (16, 3, 3, 3),
    "Image_first.bias": (16,),
    "TRN.conv1.weight": (16, 16, 3, 3),
    "TRN.conv1.bias": (16,),
    "TRN.conv2.weight": (16, 32, 3, 3),
    "TRN.conv2.bias": (16,),
    "TRN.conv3.weight": (16, 48, 3, 3),
    "TRN.conv3.bias": (16,),
    "TRN.conv4.weight": (16, 64, 3, 3),
    "TRN.conv4.bias": (16,),
    "TRN.conv_mean.weight": (16, 80, 3, 3),
    "TRN.conv_mean.bias": (16,),
    "TRN.conv_variance.weight": (16, 80, 3, 3),
    "TRN.conv_variance.bias": (16,),
    "trunk_conv_mean.weight": (3, 16, 3, 3),
    "trunk_conv_mean.bias": (3,),
    "trunk_conv_variance.weight": (3, 16, 3, 3),
    "trunk_conv_variance.bias": (3,),
}


def shapes(state: dict[str, torch.Tensor]) -> dict[str, tuple[int, ...]]:
    return {key: tuple(value.shape) for key, value in state.items()}


def constant_network(logits: tuple[float, float, float]) -> UCANNoiseNetwork:
    """A network whose output before tanh is ``logits[c]`` on channel ``c`` everywhere."""
    network = UCANNoiseNetwork()
    with torch.no_grad():
        network.trunk_conv_mean.weight.zero_()
        network.trunk_conv_mean.bias.copy_(torch.tensor(logits))
    return network


def fake_release(folder: Path, monkeypatch, states: dict[str, dict] | None = None) -> None:
    """Write a state dict per role under ``folder/ucan2025`` and make its SHA-256 the
    expected one."""
    (folder / "ucan2025").mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    for role, (name, _) in UCAN2025_FILES.items():
        state = (states or {}).get(role) or UCANNoiseNetwork().state_dict()
        path = folder / "ucan2025" / name
        torch.save(state, path)
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        monkeypatch.setitem(UCAN2025_FILES, role, (name, digest))


def test_the_network_has_the_readme_keys_and_shapes() -> None:
    state = UCANNoiseNetwork().state_dict()
    assert len(state) == 18
    assert list(state) == list(README_SHAPES)
    assert shapes(state) == README_SHAPES


def test_loading_a_made_up_release_is_strict(tmp_path, monkeypatch) -> None:
    torch.manual_seed(1)
    mu_state, sigma_state = UCANNoiseNetwork().state_dict(), UCANNoiseNetwork().state_dict()
    fake_release(tmp_path, monkeypatch, {"mu": mu_state, "sigma": sigma_state})
    generator = load_ucan2025(tmp_path)
    assert not generator.training and generator.lam == 1.0
    for network, state in ((generator.mu_net, mu_state), (generator.sigma_net, sigma_state)):
        loaded = network.state_dict()
        assert all(torch.equal(loaded[key], state[key]) for key in README_SHAPES)
    # A state dict without one key, with one more, or with one other shape is refused.
    missing = {k: v for k, v in mu_state.items() if k != "TRN.conv_variance.bias"}
    extra = {**mu_state, "TRN.conv5.weight": torch.zeros(16, 96, 3, 3)}
    reshaped = {**mu_state, "trunk_conv_mean.bias": torch.zeros(1)}
    for state in (missing, extra, reshaped):
        fake_release(tmp_path, monkeypatch, {"mu": state})
        with pytest.raises(RuntimeError, match="Error\\(s\\) in loading state_dict"):
            load_ucan2025(tmp_path)


def test_a_file_other_than_the_release_is_refused_with_the_fix(tmp_path, monkeypatch) -> None:
    fake_release(tmp_path, monkeypatch)
    name, _ = UCAN2025_FILES["sigma"]
    (tmp_path / "ucan2025" / name).write_bytes(b"not the release")
    with pytest.raises(ValueError, match=r"not the file UCAN released\. Replace it with"):
        load_ucan2025(tmp_path)


def test_a_missing_file_or_folder_names_where_it_looked(tmp_path, monkeypatch) -> None:
    with pytest.raises(FileNotFoundError, match=f"looked for at {tmp_path / 'ucan2025'}"):
        ucan2025_file("mu", tmp_path)
    monkeypatch.delenv("RSUTILS_REFERENCE", raising=False)
    with pytest.raises(FileNotFoundError, match="no reference folder is configured"):
        load_ucan2025()
    with pytest.raises(ValueError, match="role must be one of"):
        ucan2025_file("variance", tmp_path)
    # RSUTILS_REFERENCE is read when no root is passed.
    fake_release(tmp_path, monkeypatch)
    monkeypatch.setenv("RSUTILS_REFERENCE", str(tmp_path))
    assert ucan2025_file("mu") == tmp_path / "ucan2025" / UCAN2025_FILES["mu"][0]


@torch.no_grad()
def test_the_cascade_feeds_x_plus_mu_to_the_scale_network() -> None:
    """mu = lam·tanh(c) from a constant G1; sigma must be |G2(x + mu)|, not |G2(x)|."""
    torch.manual_seed(2)
    mu_net, sigma_net = constant_network((0.5, -1.0, 2.0)), UCANNoiseNetwork()
    with torch.no_grad():
        for p in sigma_net.parameters():
            p.normal_(0, 0.5)
    generator = ReleasedUCANGenerator(mu_net, sigma_net, lam=0.7)
    x = torch.rand(4, 3, 32, 32)
    mu, sigma = generator(x)
    expected_mu = 0.7 * torch.tanh(torch.tensor([0.5, -1.0, 2.0]))[None, :, None, None]
    torch.testing.assert_close(mu, expected_mu.expand_as(x))
    raw = sigma_net(x + mu)
    torch.testing.assert_close(sigma, raw.abs())
    assert bool((raw < 0).any()), "the check of abs needs negative outputs"
    assert not torch.allclose(sigma, sigma_net(x).abs())
    assert mu.shape == sigma.shape == x.shape and float(sigma.min()) >= 0


def test_the_released_generator_is_not_saved_as_an_rsutils_checkpoint() -> None:
    generator = ReleasedUCANGenerator(UCANNoiseNetwork(), UCANNoiseNetwork(), lam=1.0)
    with pytest.raises(TypeError, match="load_ucan2025"):
        generator.settings()
    with pytest.raises(ValueError, match="lam must be a finite number > 0"):
        ReleasedUCANGenerator(UCANNoiseNetwork(), UCANNoiseNetwork(), lam=0.0)


@torch.no_grad()
def test_the_summary_of_known_outputs() -> None:
    """sigma = tanh(4) on channel 0 (0.99933, at its bound), tanh(0.2) on the others;
    mu = lam·tanh(3) on channel 0 (0.99505·lam, near ±lam), −lam·tanh(0.5) elsewhere."""
    lam = 0.5
    generator = ReleasedUCANGenerator(
        constant_network((3.0, -0.5, -0.5)), constant_network((4.0, 0.2, -0.2)), lam
    )
    summary = released_summary(generator, torch.rand(5, 3, 32, 32))
    low, high = math.tanh(0.2), math.tanh(4.0)
    assert summary["images"] == 5
    assert summary["min σ"] == pytest.approx(low) and summary["max σ"] == pytest.approx(high)
    assert summary["median σ"] == pytest.approx(low)  # two thirds of the pixels
    assert summary["geometric mean σ"] == pytest.approx((low * low * high) ** (1 / 3))
    assert summary["lowest σ"] == pytest.approx(low)
    assert summary["largest 1 − σ"] == pytest.approx(1 - low, rel=1e-6)
    assert summary["σ at its bound"] == pytest.approx(1 / 3)
    mu_values = lam * torch.tensor([math.tanh(3.0), math.tanh(0.5), math.tanh(0.5)])
    assert summary["mean |μ|"] == pytest.approx(float(mu_values.mean()), rel=1e-6)
    assert summary["|μ| near λ"] == pytest.approx(1 / 3)
    norm = math.sqrt(1024 * float((mu_values**2).sum()))
    assert summary["‖μ‖₂"] == pytest.approx(norm, rel=1e-6)
    assert summary["‖μ‖₂ / λ√d"] == pytest.approx(norm / (lam * math.sqrt(3072)), rel=1e-6)
    # Saturated in single precision, the distance to the bound is still resolved.
    saturated = ReleasedUCANGenerator(
        constant_network((0.0, 0.0, 0.0)), constant_network((12.0, -12.0, 15.0)), 1.0
    )
    gap = released_summary(saturated, torch.rand(2, 3, 32, 32))["largest 1 − σ"]
    assert gap == pytest.approx(2 / (math.exp(24) + 1), rel=1e-6) and gap > 0
    with pytest.raises(ValueError, match="near must lie in"):
        released_summary(saturated, torch.rand(1, 3, 32, 32), near=1.0)


def test_grey_images_become_cifar_shaped_by_bilinear_resizing() -> None:
    a = torch.tensor([[[[0.0, 1.0], [0.5, 0.25]]]])
    out = cifar_shaped(a, size=4)
    assert out.shape == (1, 3, 4, 4) and torch.equal(out[:, 0], out[:, 2])
    # align_corners=False: output pixel 1 samples at 0.25 of the way from pixel 0 to 1.
    weights = torch.tensor([0.75 * 0.75, 0.75 * 0.25, 0.25 * 0.75, 0.25 * 0.25])
    expected = float((weights * torch.tensor([0.0, 1.0, 0.5, 0.25])).sum())
    assert float(out[0, 0, 1, 1]) == pytest.approx(expected)
    assert float(out[0, 0, 0, 0]) == 0.0 and float(out[0, 0, 3, 3]) == 0.25
    images = torch.rand(6, 1, 28, 28)
    resized = cifar_shaped(images)
    assert resized.shape == (6, 3, 32, 32)
    assert float(resized.min()) >= float(images.min()) and float(resized.max()) <= 1.0
    torch.testing.assert_close(
        cifar_shaped(torch.full((2, 1, 28, 28), 0.3)), torch.full((2, 3, 32, 32), 0.3)
    )
    with pytest.raises(ValueError, match="must be a batch"):
        cifar_shaped(torch.rand(28, 28))


def test_uniform_images_are_reproducible_per_image_and_uniform() -> None:
    ten = uniform_images(10, seed=3)
    assert ten.shape == (10, 3, 32, 32) and float(ten.min()) >= 0 and float(ten.max()) < 1
    assert torch.equal(uniform_images(4, seed=3), ten[:4])
    assert not torch.equal(uniform_images(4, seed=4), ten[:4])
    # The mean of 30,720 uniform pixels: standard deviation sqrt(1/12/30720) = 0.00165.
    assert abs(float(ten.mean()) - 0.5) < 5 * math.sqrt(1 / 12 / ten.numel())
    with pytest.raises(ValueError, match="count must be a positive integer"):
        uniform_images(0, seed=3)


ROOT = Path(
    os.environ.get("RSUTILS_REFERENCE") or Path(__file__).resolve().parents[3] / "shared/reference"
)
needs_release = pytest.mark.skipif(
    not (ROOT / "ucan2025").is_dir(),
    reason=f"UCAN's released generators are not at {ROOT / 'ucan2025'}; set RSUTILS_REFERENCE",
)


@needs_release
def test_the_release_has_the_readme_keys_and_shapes_and_loads_strictly() -> None:
    for role, (_, digest) in UCAN2025_FILES.items():
        path = ucan2025_file(role, ROOT)
        assert hashlib.sha256(path.read_bytes()).hexdigest() == digest
        state = torch.load(path, weights_only=True, map_location="cpu")
        assert list(state) == list(README_SHAPES) and shapes(state) == README_SHAPES
    generator = load_ucan2025(ROOT)
    file_state = torch.load(ucan2025_file("sigma", ROOT), weights_only=True, map_location="cpu")
    assert all(torch.equal(generator.sigma_net.state_dict()[k], v) for k, v in file_state.items())


@needs_release
@torch.no_grad()
def test_the_release_gives_bounded_parameters_of_the_input_shape() -> None:
    generator = load_ucan2025(ROOT)
    x = uniform_images(4, seed=0)
    mu, sigma = generator(x)
    assert mu.shape == sigma.shape == x.shape
    assert float(mu.abs().max()) <= released.UCAN2025_LAMBDA
    assert float(sigma.min()) >= 0 and float(sigma.max()) <= generator.sigma_bound
