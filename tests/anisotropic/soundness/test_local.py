"""Local certificates of the deployed classifier with constant σ: the interval bound on
the offset's move holds over every point found, the local radius keeps ``r + D(r) < R``,
and the ceiling is a radius where a found move already breaks that."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch
from scipy.stats import norm

from rsutils.anisotropic.generators import CertificationWiseGenerator, FixedNoise
from rsutils.anisotropic.soundness import local
from rsutils.anisotropic.soundness.lipschitz import mu_lipschitz_bound
from rsutils.anisotropic.soundness.sound import ConstantScale
from rsutils.core.confidence import max_certifiable_pA

SIZE = 8


def generator(scale: float, seed: int = 0, out_bias: float = 0.0) -> CertificationWiseGenerator:
    """A certification-wise generator with random offset weights (``scale`` sets how fast
    the offset moves) and the output convolution's bias at ``out_bias``."""
    g = CertificationWiseGenerator(1, mu_bound=0.5, width=4, growth=4)
    rng = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in g.mu_net.parameters():
            p.add_(scale * torch.randn(p.shape, generator=rng))
        g.mu_net.out.bias.fill_(out_bias)
    return g


def images(count: int = 6) -> torch.Tensor:
    return torch.rand(count, 1, SIZE, SIZE, generator=torch.Generator().manual_seed(1))


def test_an_offset_that_does_not_move_keeps_the_whole_radius() -> None:
    g = CertificationWiseGenerator(1, mu_bound=0.5, width=4, growth=4)  # mu ≡ 0 at start
    x, radius = images(), torch.tensor([0.0, 0.1, 0.2, 0.3, 0.4, 0.5])
    assert torch.equal(local.offset_move_bound(g, x, radius), torch.zeros(6, dtype=torch.float64))
    found = local.local_radius(g, x, radius)
    step = radius.double() / 2**local.BISECTION_STEPS
    assert torch.allclose(found, radius.double() - step)
    assert torch.allclose(local.local_ceiling(g, x, radius), radius.double())


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_bound_holds_over_every_move_found_and_grows_with_r(seed) -> None:
    g, x = generator(0.3, seed), images()
    previous = torch.zeros(6, dtype=torch.float64)
    for r in (0.01, 0.05, 0.2, 1.0):
        radius = torch.full((6,), r)
        bound = local.offset_move_bound(g, x, radius)
        found = local.offset_move_found(g, x, radius, steps=15, seed=seed)
        assert (found <= bound).all() and (found > 0).all()
        assert (bound >= previous).all()
        previous = bound
    assert (local.offset_move_bound(ConstantScale(g, 0.7), x, radius) == bound).all()


def test_the_local_radius_keeps_r_plus_the_bound_below_r_and_no_more() -> None:
    g, x, radius = generator(0.05), images(), torch.full((6,), 0.5)
    r = local.local_radius(g, x, radius)
    assert (r + local.offset_move_bound(g, x, r) < 0.5).all()
    above = r + 0.5 / 2**local.BISECTION_STEPS
    assert not (above + local.offset_move_bound(g, x, above) < 0.5).any()


def test_the_ceiling_is_a_radius_where_a_found_move_breaks_the_route() -> None:
    g, x, radius = generator(0.3), images(), torch.full((6,), 0.5)
    ceiling = local.local_ceiling(g, x, radius, steps=10, seed=4)
    below = ceiling < 0.5
    assert below.any()
    found = local.offset_move_found(g, x, ceiling, steps=10, seed=4)
    assert (ceiling + found >= 0.5)[below].all()
    assert (local.local_radius(g, x, radius) <= ceiling).all()


def test_a_saturated_offset_certifies_locally_far_beyond_the_global_bound() -> None:
    """Where tanh saturates, the offset barely moves near the input whatever its weights;
    the global Lipschitz bound cannot see that, the local one can."""
    g, x, radius = generator(0.05, out_bias=30.0), images(), torch.full((6,), 0.5)
    global_radius = 0.5 / (1 + mu_lipschitz_bound(g, (SIZE, SIZE)).value)
    r = local.local_radius(g, x, radius)
    assert (r > 3 * global_radius).all()


def test_an_offset_of_no_input_does_not_move_and_others_are_refused() -> None:
    fixed = FixedNoise(torch.ones(1, SIZE, SIZE), mu=torch.full((1, SIZE, SIZE), 0.3))
    move = local.offset_move_bound(ConstantScale(fixed, 1.0), images(), torch.full((6,), 0.1))
    assert torch.equal(move, torch.zeros(6, dtype=torch.float64))

    class Moving(FixedNoise):
        depends_on_input = True

    with pytest.raises(TypeError, match="certification-wise offset network"):
        local.offset_move_bound(Moving(torch.ones(1, SIZE, SIZE)), images(), torch.ones(6))


def test_a_sound_log_keeps_the_larger_radius_image_by_image() -> None:
    g, x = ConstantScale(generator(0.05, out_bias=30.0), 0.8), images()
    radii = [0.5, 0.0, 0.3, 0.5, 0.2, 0.4]
    log = pd.DataFrame({"radius": radii, "alm": radii, "n": 1000, "alpha": 0.001, "scale": 0.5})
    lipschitz = mu_lipschitz_bound(g, (SIZE, SIZE)).value
    out = local.local_sound_log(log, g, x, lipschitz)
    held = (log["radius"] > 0).to_numpy(copy=True)
    radius = torch.tensor(log.radius[held].to_numpy(copy=True))
    near = local.local_radius(g, x[torch.tensor(held)], radius)
    expected = np.maximum(near.numpy(), log.radius[held].values / (1 + lipschitz))
    assert np.allclose(out.radius[held], expected) and out.radius[~held].eq(0).all()
    assert np.allclose(out.alm, out.radius)
    assert (out.radius <= log.radius).all()
    # the ceiling: the larger radius at R_top = c·λ·Φ⁻¹(α^(1/n)), above every radius
    r_top = 0.8 * 0.5 * norm.ppf(max_certifiable_pA(1000, 0.001))
    at_top = local.local_radius(g, x, torch.full((6,), r_top)).numpy()
    assert np.allclose(out[local.CEILING], np.maximum(at_top, r_top / (1 + lipschitz)))
    assert (out[local.CEILING] >= out.radius).all()
    loose = ConstantScale(generator(0.3), 0.8)  # its interval bound loses to the global L
    global_only = local.local_sound_log(log, loose, x, 1.0)
    assert np.allclose(global_only.radius, log.radius / 2)
    with pytest.raises(ValueError, match="one image per row"):
        local.local_sound_log(log, g, x[:3], lipschitz)
    with pytest.raises(TypeError, match="ConstantScale"):
        local.local_sound_log(log, g.inner, x, lipschitz)
