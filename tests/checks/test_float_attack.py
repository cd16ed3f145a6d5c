"""The low-bits recogniser breaks the plain sampler's certificate, not the sound one's."""

import pytest
import torch

from rsutils.checks.float_attack import LowBitsRecogniser, float_attack
from rsutils.core.noise import Gaussian


@pytest.fixture(scope="module")
def attacks():
    return {sampler: float_attack(sampler, n=500) for sampler in ("plain", "sound")}


def test_plain_sampler_certifies_a_false_radius(attacks):
    plain = attacks["plain"]
    assert plain.prediction == 0 and plain.recognised_x0 == 1.0
    assert plain.distance < plain.radius / 2
    assert plain.prediction_at_attack == 1 and plain.recognised_x1 == 0.0
    assert plain.certificate_false


def test_sound_sampler_is_not_fooled(attacks):
    sound = attacks["sound"]
    assert not sound.certificate_false
    # Smoothing is Lipschitz after Φ⁻¹: the recognition rates at x0 and x1 are close.
    assert abs(sound.recognised_x0 - sound.recognised_x1) < 0.1
    assert sound.recognised_x0 < 0.5


def test_genuine_float32_draws_always_pass_the_check():
    x0 = torch.full((1, 28, 28), 7 / 255)
    draws = Gaussian(0.25).sample((200, 1, 28, 28), torch.Generator().manual_seed(0))
    recogniser = LowBitsRecogniser(x0)
    assert int(recogniser.failures(draws + x0).sum()) <= 1
    neighbour = torch.full((1, 28, 28), 8 / 255)
    assert float(recogniser.failures(draws + neighbour).float().mean()) > 20


def test_recogniser_needs_float32():
    with pytest.raises(ValueError, match="float32"):
        LowBitsRecogniser(torch.zeros(3, dtype=torch.float64))
