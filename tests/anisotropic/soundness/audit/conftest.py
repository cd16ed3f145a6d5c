"""The audit's exact case (:mod:`rsutils.checks.shifting`) and its certificate at x = (2, 0).

At ``x = (2, 0)`` the frozen classifier g_x has ``P(class 1) = Φ(2)`` and a certified
region that reaches far along z₂ (``sigma₂(x) = 10``). The deployed classifier G at
``z`` has ``P(class 1) = Φ(z₁ − z₂)`` (its offset moves z across the decision boundary),
so G is class 0 on much of that region. Theorem 7 holds for g_x: with frozen parameters
the exact probability of class 1 stays above 1/2 on the whole region.
"""

import pytest

from rsutils.anisotropic.noise import Anisotropic
from rsutils.checks.shifting import ShiftingParams, example_input, shifting_classifier
from rsutils.core.noise import Gaussian
from rsutils.core.smooth import Certificate, Smooth

#: The noise's scale λ of the exact case.
SCALE = 1.0


@pytest.fixture(scope="session")
def certificate() -> Certificate:
    """CERTIFY at ``example_input()`` with the noise of ShiftingParams there (class 1)."""
    x = example_input()
    mu, sigma = ShiftingParams()(x.unsqueeze(0))
    noise = Anisotropic(Gaussian(SCALE), sigma[0], mu[0])
    smooth = Smooth(shifting_classifier(), 2, noise, input_range=None)
    cert = smooth.certify(x, 100, 10_000, 0.001, seed=0)
    assert cert.prediction == 1
    return cert
