"""CERTIFY on linear binary classifiers, where the exact answer is known (Appendix B).

For f(x) = 1[w·x + b > 0] under N(0, σ²I): g = f, pA = Φ(dist/σ), and the tight
radius is the distance dist = |w·x + b|/‖w‖ to the boundary.
"""

import numpy as np
import pytest
import torch
from scipy.stats import norm

from rsutils import ABSTAIN, Smooth
from rsutils.linear import LinearClassifier
from rsutils.noise import Gaussian

SIGMA = 0.5


@pytest.fixture
def model() -> LinearClassifier:
    torch.manual_seed(1)
    return LinearClassifier(torch.randn(20), b=0.3)


@pytest.mark.parametrize("pA", [0.6, 0.8, 0.95, 0.99, 0.999])
@pytest.mark.parametrize("side", [1, -1])
def test_radius_is_sound_and_nearly_tight_at_n_100000(
    model: LinearClassifier, pA: float, side: int
) -> None:
    distance = SIGMA * norm.ppf(pA)
    x = model.point_at_distance(distance, side)
    assert model.distance(x) == pytest.approx(distance, rel=1e-5)
    assert model.label(x) == (side > 0)
    assert model.smoothed_pA(x, SIGMA) == pytest.approx(pA, rel=1e-5)
    smooth = Smooth(model, 2, Gaussian(SIGMA))
    cert = smooth.certify(x, n0=100, n=100_000, alpha=0.001, batch_size=10_000, seed=7)
    assert cert.prediction == model.label(x)  # g = f for a linear classifier
    assert cert.radius <= model.distance(x)
    assert cert.radius >= 0.95 * model.distance(x)


def test_a_perturbation_just_beyond_the_radius_flips_the_smoothed_class(
    model: LinearClassifier,
) -> None:
    x = model.point_at_distance(SIGMA * norm.ppf(0.99), 1)
    smooth = Smooth(model, 2, Gaussian(SIGMA))
    cert = smooth.certify(x, n0=100, n=100_000, alpha=0.001, batch_size=10_000, seed=3)
    beyond = x + 1.05 * model.distance(x) * model.worst_direction(x)
    assert model.label(beyond) != cert.prediction
    flipped = smooth.certify(beyond, n0=100, n=100_000, alpha=0.001, batch_size=10_000, seed=4)
    assert flipped.prediction == model.label(beyond)


def test_monte_carlo_pA_matches_the_closed_form(model: LinearClassifier) -> None:
    x = model.point_at_distance(0.4, -1)
    counts = Smooth(model, 2, Gaussian(SIGMA)).sample_counts(x, 200_000, 20_000, seed=11)
    p = model.smoothed_pA(x, SIGMA)
    standard_error = np.sqrt(p * (1 - p) / 200_000)
    assert abs(counts[model.label(x)] / 200_000 - p) < 4 * standard_error


@pytest.mark.slow
@pytest.mark.parametrize("pA", [0.7, 0.9, 0.99])
def test_false_certificates_are_at_most_alpha(pA: float) -> None:
    """Coverage: over 2,000 independent CERTIFY calls at alpha = 0.05, the fraction whose
    radius exceeds the true one (or whose class is wrong) is at most alpha + 3 SE.

    A radius computed from the point estimate count/n instead of the Clopper–Pearson
    bound would be too large about half of the time and fail this test.
    """
    model = LinearClassifier(torch.tensor([1.0]), b=0.0)
    x = torch.tensor([SIGMA * norm.ppf(pA)])
    true_radius = model.distance(x)
    smooth = Smooth(model, 2, Gaussian(SIGMA))
    alpha, calls = 0.05, 2000
    false = 0
    for seed in range(calls):
        cert = smooth.certify(x, n0=10, n=100, alpha=alpha, batch_size=100, seed=seed)
        wrong_class = cert.prediction not in (ABSTAIN, model.label(x))
        false += wrong_class or cert.radius > true_radius
    bound = alpha + 3 * np.sqrt(alpha * (1 - alpha) / calls)
    assert false / calls <= bound


@pytest.mark.slow
def test_predict_on_an_exact_tie_abstains_at_the_rate_the_test_allows() -> None:
    """At pA = pB = 1/2 PREDICT should answer (rather than abstain) only when the
    two-sided binomial test rejects; its exact size at n draws is computed from scipy,
    and the observed answer rate must agree with it within 3 standard errors (and so
    stay below alpha plus 3 standard errors)."""
    from scipy.stats import binom, binomtest

    model = LinearClassifier(torch.tensor([1.0]), b=0.0)
    x = torch.tensor([0.0])  # on the boundary: each class has probability exactly 1/2
    n, alpha, calls = 100, 0.1, 2000
    smooth = Smooth(model, 2, Gaussian(SIGMA))
    answers = sum(smooth.predict(x, n, alpha, seed=s) != ABSTAIN for s in range(calls))
    # The answer is returned iff min(k, n - k) leads to a p-value <= alpha.
    ks = np.arange(n + 1)
    rejects = np.array([binomtest(int(max(k, n - k)), n, 0.5).pvalue <= alpha for k in ks])
    size = binom.pmf(ks, n, 0.5)[rejects].sum()
    assert size <= alpha
    standard_error = np.sqrt(size * (1 - size) / calls)
    assert abs(answers / calls - size) <= 3 * standard_error
    assert answers / calls <= alpha + 3 * np.sqrt(alpha * (1 - alpha) / calls)


def test_predict_returns_the_class_when_it_clearly_dominates(model: LinearClassifier) -> None:
    x = model.point_at_distance(SIGMA * norm.ppf(0.9), -1)
    smooth = Smooth(model, 2, Gaussian(SIGMA))
    assert smooth.predict(x, n=1000, alpha=0.001, seed=0) == model.label(x)
