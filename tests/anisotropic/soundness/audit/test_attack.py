"""The attack: strictly inside the region whatever the gradients, exact where it is known."""

import math

import pytest
import torch
from torch import nn

from rsutils.anisotropic.soundness.audit import (
    AuditSettings,
    DeployedClassifier,
    FrozenParams,
    Region,
    attack_in_region,
    frozen,
    noise_params,
)
from rsutils.checks.classifiers import LinearClassifier
from rsutils.checks.shifting import (
    ShiftingParams,
    deployed_pA,
    example_input,
    shifting_classifier,
)

X = example_input()
SCALE = 1.0


class MLP(nn.Module):
    def __init__(self, d: int, out: int, seed: int, gain: float = 1.0) -> None:
        super().__init__()
        torch.manual_seed(seed)
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(d, 16), nn.Tanh(), nn.Linear(16, out))
        with torch.no_grad():
            self.net[-1].weight.mul_(gain)
        self.eval()

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return self.net(z)


class MLPParams(nn.Module):
    """Random differentiable noise parameters: ``mu`` and ``softplus + 0.05`` as sigma."""

    def __init__(self, shape: tuple[int, ...], seed: int) -> None:
        super().__init__()
        self.shape, d = shape, math.prod(shape)
        self.net = MLP(d, 2 * d, seed + 100)

    def forward(self, z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        mu, raw = self.net(z).chunk(2, dim=1)
        sigma = nn.functional.softplus(raw) + 0.05
        return mu.reshape(z.shape), sigma.reshape(z.shape)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("ball", [False, True], ids=["ellipsoid", "ball"])
@pytest.mark.parametrize("box", [None, (0.0, 1.0)], ids=["region", "box"])
@pytest.mark.parametrize("gain", [1.0, 1e6, 0.0], ids=["plain", "huge", "zero"])
def test_the_attack_ends_strictly_inside_the_region(seed, ball, box, gain) -> None:
    shape = (1, 2, 3)
    model, params = MLP(6, 3, seed, gain), MLPParams(shape, seed)
    x = torch.rand(3, *shape, generator=torch.Generator().manual_seed(seed))
    sigma_x = noise_params(params, x)[1].detach()
    R = torch.tensor([0.5, 2.0, 4.0])
    delta = attack_in_region(
        DeployedClassifier(model, params, 0.5, 3), Region(x, [0, 1, 2], sigma_x, R),
        AuditSettings(steps=8, draws=4, ball=ball, input_range=box),
        generator=torch.Generator().manual_seed(seed),
    )  # fmt: skip
    assert delta.shape == x.shape
    axes = sigma_x.flatten(1).amin(dim=1).reshape(-1, 1, 1, 1) if ball else sigma_x
    scaled = (delta / axes).flatten(1).norm(dim=1)
    assert bool((scaled <= 0.99 * R * (1 + 1e-6)).all())
    if box is not None:  # up to the rounding of the sum
        assert bool(((x + delta >= -1e-6) & (x + delta <= 1 + 1e-6)).all())
    if gain == 1.0:  # the ascent moves (a zero or saturated gradient leaves δ = 0)
        assert bool((scaled > (0.0 if box else 0.5) * R).all())


def noisy_loss(delta: torch.Tensor, params, draws: int = 20_000) -> float:
    """Cross-entropy of class 1 averaged over fixed draws, at X + δ."""
    z = (X + delta).unsqueeze(0)
    mu, sigma = params(z)
    eps = torch.randn(draws, 2, generator=torch.Generator().manual_seed(99), dtype=z.dtype)
    logits = shifting_classifier()(z + mu + sigma * SCALE * eps)
    return float(nn.functional.cross_entropy(logits, torch.ones(draws, dtype=torch.long)))


def test_the_attack_increases_the_loss_on_the_linear_example(certificate) -> None:
    params = ShiftingParams()
    sigma_x = params(X.unsqueeze(0))[1]
    R = certificate.region_radius
    delta = attack_in_region(
        DeployedClassifier(shifting_classifier(), params, SCALE, 2),
        Region(X.unsqueeze(0), 1, sigma_x, R),
        AuditSettings(steps=20, draws=8), generator=torch.Generator().manual_seed(0),
    )[0]  # fmt: skip
    assert noisy_loss(delta, params) > noisy_loss(torch.zeros(2, dtype=torch.float64), params) + 5
    assert deployed_pA(X + delta, SCALE) < 1e-6


def test_with_frozen_parameters_the_attack_finds_the_exact_worst_direction(certificate) -> None:
    """For a linear f and frozen parameters the worst δ has δ ⊘ sigma ∝ −sigma ⊙ w."""
    control = frozen(ShiftingParams(), X)
    R = certificate.region_radius
    delta = attack_in_region(
        DeployedClassifier(shifting_classifier(), control, SCALE, 2),
        Region(X.unsqueeze(0), 1, control.sigma.unsqueeze(0), R),
        AuditSettings(steps=30, draws=16), generator=torch.Generator().manual_seed(0),
    )[0]  # fmt: skip
    u = delta / control.sigma
    worst = -control.sigma * torch.tensor([1.0, 0.0], dtype=torch.float64)
    cosine = float(u @ worst / (u.norm() * worst.norm()))
    assert cosine > 0.999 and float(u.norm()) == pytest.approx(0.99 * R)


def dykstra(v, radius, lower, upper, iterations=3000):
    """Projection onto ball ∩ box by Dykstra's alternating projections (slow, reference)."""
    x, p, q = v.clone(), torch.zeros_like(v), torch.zeros_like(v)
    for _ in range(iterations):
        y = torch.clamp(x + p, lower, upper)
        p = x + p - y
        w = y + q
        x = w * min(1.0, radius / float(w.norm()))
        q = y + q - x
    return x


def one_projected_step(v, lower, upper):
    """The attack's projection of ``v`` onto ``{‖u‖ ≤ 1} ∩ [lower, upper]``, observed
    through ``attack_in_region``: one step from ``u = 0`` moves ``u`` to ``2.5·R·g/‖g‖``.

    A linear f with logits ``(−w·z, w·z)``, certified class 0 and frozen parameters
    ``(0, a)`` has the loss gradient ``∝ a ⊙ w`` in u-space, whatever the noise. So with
    ``w = v/a``, ``R = ‖v‖/2.5`` and ``shrink = 1/R`` the step lands on ``v`` and is
    projected onto the ball of radius 1. The input box ``[0, 1]`` is
    ``[(0 − x)/a, (1 − x)/a] = [lower, upper]`` in u-space for
    ``a = 1/(upper − lower)`` and ``x = −lower·a``.
    """
    a = 1.0 / (upper - lower)
    x = -lower * a
    R = float(v.norm()) / 2.5
    assert R > 1.0, "the step must leave the ball (shrink < 1)"
    delta = attack_in_region(
        DeployedClassifier(LinearClassifier(v / a), FrozenParams(torch.zeros_like(a), a), 0.1, 2),
        Region(x.unsqueeze(0), 0, a.unsqueeze(0), R),
        AuditSettings(steps=1, draws=2, shrink=1.0 / R, input_range=(0.0, 1.0)),
        generator=torch.Generator().manual_seed(0),
    )[0]  # fmt: skip
    return delta / a


def test_the_projection_onto_ball_and_box_is_exact() -> None:
    generator = torch.Generator().manual_seed(0)
    cases = []
    for _ in range(5):
        v = 3 * torch.randn(6, generator=generator, dtype=torch.float64)
        lower = -torch.rand(6, generator=generator, dtype=torch.float64)
        upper = torch.rand(6, generator=generator, dtype=torch.float64) * 2
        cases.append((v, lower, upper))
    small = torch.full((6,), 0.1, dtype=torch.float64)
    cases.append((cases[0][0], -small, small))  # the box alone lands in the ball: t = 1
    for v, lower, upper in cases:
        ours = one_projected_step(v, lower, upper)
        assert float(ours.norm()) <= 1.0 + 1e-12
        assert bool(((ours >= lower - 1e-12) & (ours <= upper + 1e-12)).all())
        assert torch.allclose(ours, dykstra(v, 1.0, lower, upper), atol=1e-6)
    assert torch.allclose(one_projected_step(*cases[-1]), cases[-1][0].clamp(-0.1, 0.1))
