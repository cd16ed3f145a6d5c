"""The noise parameters: every bad output of params(z) refused, and the frozen control."""

import pytest
import torch

from rsutils.anisotropic.soundness.audit import FrozenParams, frozen, noise_params
from rsutils.checks.shifting import ShiftingParams, example_input

X = example_input()


@pytest.mark.parametrize(
    ("params", "error", "message"),
    [
        (lambda z: z, TypeError, r"must return a pair \(mu, sigma\)"),
        (lambda z: (z, 1.0), TypeError, "returned sigma of type float"),
        (lambda z: (z[:, :1], z), ValueError, "mu and sigma must have the shape of z"),
        (lambda z: (z * float("nan"), z), ValueError, "non-finite values in mu"),
        (lambda z: (z, -torch.ones_like(z)), ValueError, "sigma <= 0"),
    ],
)
def test_bad_parameters_are_refused(params, error, message) -> None:
    with pytest.raises(error, match=message):
        noise_params(params, X.unsqueeze(0))


def test_frozen_parameters_are_those_of_x_whatever_z() -> None:
    control = frozen(ShiftingParams(), X)
    assert isinstance(control, FrozenParams)
    mu_x, sigma_x = ShiftingParams()(X.unsqueeze(0))
    z = torch.tensor([[0.0, 5.0], [1.0, -3.0]], dtype=torch.float64)
    mu, sigma = control(z)
    assert torch.equal(mu, mu_x.expand(2, 2)) and torch.equal(sigma, sigma_x.expand(2, 2))
    assert not torch.equal(ShiftingParams()(z)[1], sigma)  # the deployed parameters move
    with pytest.raises(ValueError, match="shape"):
        control(torch.zeros(2, 3, dtype=torch.float64))
