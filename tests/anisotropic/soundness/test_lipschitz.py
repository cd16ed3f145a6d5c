"""The Lipschitz bound on the certification-wise offset mu: exact layer norms, an upper
bound on every pair we can find, and zero where mu does not depend on the input."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from rsutils.anisotropic.generators import (
    CertificationWiseGenerator,
    DatasetWiseGenerator,
    DenseBlockNet,
    FixedNoise,
    NoiseGenerator,
    WithoutOffset,
)
from rsutils.anisotropic.soundness.lipschitz import (
    MARGIN,
    circular_conv_norm,
    conv_operator_norm,
    dense_block_lipschitz,
    empirical_mu_ratios,
    mu_lipschitz_bound,
)
from rsutils.anisotropic.soundness.sound import ConstantScale


def dense_norm(apply, shape: tuple[int, ...]) -> float:
    """The exact ℓ2 operator norm of the linear map ``apply`` on inputs of ``shape``,
    from its dense matrix (one column per basis vector)."""
    d = int(np.prod(shape))
    basis = torch.eye(d, dtype=torch.float64).reshape(d, *shape)
    with torch.no_grad():
        matrix = apply(basis).reshape(d, -1).T.numpy()
    return float(np.linalg.norm(matrix, 2))


def random_conv(c_in: int, c_out: int, k: int, padding: int, seed: int) -> nn.Conv2d:
    torch.manual_seed(seed)
    conv = nn.Conv2d(c_in, c_out, k, padding=padding).double()
    with torch.no_grad():
        conv.bias.zero_()  # the norm of the linear part
    return conv


@pytest.mark.parametrize(("c_in", "c_out", "k", "torus"), [(1, 1, 3, (5, 5)), (3, 2, 3, (6, 4))])
def test_the_fft_norm_is_the_dense_norm_of_the_circular_convolution(c_in, c_out, k, torus):
    conv = random_conv(c_in, c_out, k, 0, seed=c_in)
    pad = (k - 1) // 2

    def circular(x: torch.Tensor) -> torch.Tensor:
        return F.conv2d(F.pad(x, (pad, pad, pad, pad), mode="circular"), conv.weight)

    exact = dense_norm(circular, (c_in, *torus))
    assert circular_conv_norm(conv.weight, torus) == pytest.approx(exact, rel=1e-10)


@pytest.mark.parametrize(
    ("c_in", "c_out", "k", "padding", "size"),
    [(1, 1, 3, 1, (5, 5)), (2, 3, 3, 1, (4, 6)), (2, 2, 5, 2, (6, 5)), (1, 2, 3, 2, (4, 4))],
)
def test_the_bound_is_above_the_zero_padded_norm(c_in, c_out, k, padding, size) -> None:
    conv = random_conv(c_in, c_out, k, padding, seed=k + padding)
    exact = dense_norm(conv, (c_in, *size))
    bound = conv_operator_norm(conv, size)
    assert exact <= bound
    torus = (size[0] + k - 1, size[1] + k - 1)
    assert bound == pytest.approx(circular_conv_norm(conv.weight, torus) * (1 + MARGIN))


def test_the_bound_nears_the_zero_padded_norm_on_large_inputs() -> None:
    """Zero padding loses only the border: on 16 × 16 pixels a 3 × 3 kernel's norm
    is within a few percent of its torus norm (the Toeplitz-circulant gap shrinks as
    1/H), so a bound far above it would be a wrong bound, not a loose one."""
    conv = random_conv(2, 2, 3, 1, seed=5)
    exact = dense_norm(conv, (2, 16, 16))
    assert 0.9 * conv_operator_norm(conv, (16, 16)) <= exact


@pytest.mark.parametrize(
    ("conv", "message"),
    [
        (nn.Conv2d(1, 1, 3, stride=2, padding=1), "stride-1"),
        (nn.Conv2d(1, 1, 3, padding=3), "exceeds kernel size"),
        (nn.Conv2d(1, 1, 3, padding="same"), "integer zero padding"),
        (nn.Conv2d(1, 1, 3, padding=1, padding_mode="reflect"), "integer zero padding"),
    ],
)
def test_convolutions_outside_the_argument_are_refused(conv, message) -> None:
    with pytest.raises(ValueError, match=message):
        conv_operator_norm(conv, (8, 8))


def test_bad_sizes_and_kernels_are_named() -> None:
    with pytest.raises(ValueError, match=r"input_size must be \(H, W\)"):
        conv_operator_norm(nn.Conv2d(1, 1, 3, padding=1), (8,))
    with pytest.raises(ValueError, match="smaller than the kernel"):
        circular_conv_norm(torch.ones(1, 1, 3, 3), (2, 2))
    with pytest.raises(ValueError, match="NaN"):
        circular_conv_norm(torch.full((1, 1, 3, 3), float("nan")), (4, 4))


def generator(channels: int, scale: float, seed: int, mu_bound: float = 0.5):
    """A certification-wise generator with Gaussian weights of standard deviation
    ``scale/sqrt(fan_in)`` (1: a layer that keeps the norm of its input on average;
    3: the large weights training leaves behind) and biases of 0.1."""
    torch.manual_seed(seed)
    g = CertificationWiseGenerator(channels, mu_bound=mu_bound, width=4, growth=4)
    with torch.no_grad():
        for name, p in g.named_parameters():
            std = scale / p[0].numel() ** 0.5 if name.endswith("weight") else 0.1
            p.copy_(std * torch.randn_like(p))
    return g.eval()


@pytest.mark.parametrize(
    ("channels", "scale", "seed", "size"),
    [(1, 1.0, 0, (8, 8)), (1, 3.0, 1, (8, 8)), (3, 1.0, 2, (6, 10)), (3, 3.0, 3, (8, 8))],
)
def test_no_pair_moves_mu_faster_than_the_bound(channels, scale, seed, size) -> None:
    g = generator(channels, scale, seed)
    bound = mu_lipschitz_bound(g, size)
    images = torch.rand(4, channels, *size, generator=torch.Generator().manual_seed(seed))
    found = empirical_mu_ratios(g, images, seed=seed, steps=30)
    assert 0 < found.random and 0 < found.adversarial
    assert found.best <= bound.value <= bound.plain
    assert bound.value == pytest.approx(g.mu_bound * dense_block_lipschitz(g.mu_net, size).value)


def test_the_search_is_seeded_and_leaves_the_generator_alone() -> None:
    g = generator(1, 3.0, 4)
    before = {k: v.clone() for k, v in g.state_dict().items()}
    images = torch.rand(2, 1, 8, 8, generator=torch.Generator().manual_seed(0))
    first = empirical_mu_ratios(g, images, seed=1, steps=5)
    assert first == empirical_mu_ratios(g, images, seed=1, steps=5)
    assert first != empirical_mu_ratios(g, images, seed=2, steps=5)
    assert all(torch.equal(before[k], v) for k, v in g.state_dict().items())
    assert all(p.requires_grad for p in g.parameters())


def test_a_fresh_generator_has_a_constant_mu() -> None:
    """The output convolution starts at zero weights: mu ≡ 0, so L = 0 exactly."""
    g = CertificationWiseGenerator(1, width=4, growth=4).eval()
    assert mu_lipschitz_bound(g, (8, 8)).value == 0.0
    assert empirical_mu_ratios(g, torch.rand(2, 1, 8, 8), steps=2).best == 0.0


def test_input_independent_mu_has_constant_zero_and_wrappers_keep_mu() -> None:
    g = generator(1, 1.0, 5)
    fixed = FixedNoise(torch.ones(1, 8, 8), torch.full((1, 8, 8), 0.3))
    dataset = DatasetWiseGenerator((1, 8, 8), hidden=(4,))
    for zero in (fixed, dataset, WithoutOffset(g), ConstantScale(WithoutOffset(g), 1.0)):
        assert mu_lipschitz_bound(zero, (8, 8)).value == 0.0
    assert mu_lipschitz_bound(ConstantScale(g, 2.0), (8, 8)) == mu_lipschitz_bound(g, (8, 8))
    with pytest.raises(TypeError, match="no Lipschitz bound is known"):
        mu_lipschitz_bound(Unknown(), (8, 8))
    with pytest.raises(TypeError, match="DenseBlockNet"):
        dense_block_lipschitz(nn.Conv2d(1, 1, 3), (8, 8))


class Unknown(NoiseGenerator):  # of no known kind
    depends_on_input = True

    def forward(self, x):
        return x, torch.ones_like(x)


def test_the_dense_block_bound_uses_the_smaller_recursion() -> None:
    """On a net whose dense convolutions read only h_0, the block-wise bound is the
    product along that path, far below the plain product over the concatenation."""
    torch.manual_seed(6)
    net = DenseBlockNet(1, 2, 2).double()
    with torch.no_grad():
        for conv in [*net.dense, net.fuse]:
            conv.weight[:, 2:].zero_()  # read h_0 only
    size = (8, 8)
    bound = dense_block_lipschitz(net, size)
    first, fuse, out = (conv_operator_norm(c, size) for c in (net.first, net.fuse, net.out))
    h0_fuse = circular_conv_norm(net.fuse.weight[:, :2], (10, 10)) * (1 + MARGIN)
    assert bound.value <= first * h0_fuse * out * (1 + MARGIN) * (1 + 1e-12)
    assert bound.value < bound.plain / 2
    assert fuse >= h0_fuse / (1 + MARGIN) * (1 - 1e-12)


def test_the_bound_is_attained_where_the_network_is_linear() -> None:
    """Width 1, centre-only kernels with positive weights and biases that keep every
    LeakyReLU on its slope-1 side and tanh at 0: near x = 0, mu is the linear map
    ``mu_bound·c·x`` with ``c`` the recursion's own product, so the bound must equal
    the ratio of a small random pair (up to the margin and tanh's curvature, O(1e-6)),
    neither above nor below."""
    g = CertificationWiseGenerator(1, mu_bound=0.5, width=1, growth=1).double().eval()
    net = g.mu_net
    with torch.no_grad():
        for k, conv in enumerate([net.first, *net.dense, net.fuse, net.out]):
            conv.weight.zero_()
            conv.weight[:, :, 1, 1] = 2.0 if k == 0 else 0.5
            conv.bias.fill_(1.0 if 0 < k <= len(net.dense) else 0.0)
        net.out.bias -= net(torch.zeros(1, 1, 1, 1, dtype=torch.float64)).flatten()
    bound = mu_lipschitz_bound(g, (6, 6))
    found = empirical_mu_ratios(g, torch.zeros(2, 1, 6, 6), norms=(1e-3,), steps=1)
    assert found.random == pytest.approx(bound.value, rel=1e-5)
    assert found.best <= bound.value
