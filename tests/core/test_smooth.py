"""CERTIFY on linear binary classifiers, where the exact answer is known (Appendix B).

For f(x) = 1[w·x + b > 0] under N(0, σ²I): g = f, pA = Φ(dist/σ), and the tight
radius is the distance dist = |w·x + b|/‖w‖ to the boundary.
"""

import numpy as np
import pytest
import torch
from scipy.stats import norm

from rsutils import ABSTAIN, Smooth
from rsutils.checks.classifiers import LinearClassifier
from rsutils.core.noise import Gaussian, Laplace

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
    smooth = Smooth(model, 2, Gaussian(SIGMA), input_range=None)
    cert = smooth.certify(x, n0=100, n=100_000, alpha=0.001, batch_size=10_000, seed=7)
    assert cert.prediction == model.label(x)  # g = f for a linear classifier
    assert cert.radius <= model.distance(x)
    assert cert.radius >= 0.95 * model.distance(x)


def test_a_perturbation_just_beyond_the_radius_flips_the_smoothed_class(
    model: LinearClassifier,
) -> None:
    x = model.point_at_distance(SIGMA * norm.ppf(0.99), 1)
    smooth = Smooth(model, 2, Gaussian(SIGMA), input_range=None)
    cert = smooth.certify(x, n0=100, n=100_000, alpha=0.001, batch_size=10_000, seed=3)
    beyond = x + 1.05 * model.distance(x) * model.worst_direction(x)
    assert model.label(beyond) != cert.prediction
    flipped = smooth.certify(beyond, n0=100, n=100_000, alpha=0.001, batch_size=10_000, seed=4)
    assert flipped.prediction == model.label(beyond)


def test_monte_carlo_pA_matches_the_closed_form(model: LinearClassifier) -> None:
    x = model.point_at_distance(0.4, -1)
    counts = Smooth(model, 2, Gaussian(SIGMA), input_range=None).sample_counts(
        x, 200_000, 20_000, seed=11
    )
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
    smooth = Smooth(model, 2, Gaussian(SIGMA), input_range=None)
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
    smooth = Smooth(model, 2, Gaussian(SIGMA), input_range=None)
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
    smooth = Smooth(model, 2, Gaussian(SIGMA), input_range=None)
    assert smooth.predict(x, n=1000, alpha=0.001, seed=0) == model.label(x)


# -- bad input gets an error that names the fix ----------------------------------------

X = torch.rand(1, 28, 28)


@pytest.fixture
def smooth(cnn) -> Smooth:
    return Smooth(cnn, 10, Gaussian(0.25))


@pytest.mark.parametrize("alpha", [0, 1, -0.5, 2.0])
def test_alpha_outside_zero_one(smooth, alpha) -> None:
    with pytest.raises(ValueError, match=r"alpha must lie strictly between 0 and 1.*alpha=0.001"):
        smooth.certify(X, 10, 100, alpha)
    with pytest.raises(ValueError, match=r"alpha must lie strictly between 0 and 1"):
        smooth.predict(X, 100, alpha)


@pytest.mark.parametrize(("n0", "n"), [(0, 100), (10, 0), (-1, 100), (10, 2.5), (True, 10)])
def test_sample_sizes_below_one(smooth, n0, n) -> None:
    with pytest.raises(ValueError, match=r"must be a positive integer"):
        smooth.certify(X, n0, n, 0.001)


def test_nan_image(smooth) -> None:
    x = X.clone()
    x[0, 3, 3] = float("nan")
    with pytest.raises(ValueError, match=r"NaN or infinite.*clean the input"):
        smooth.certify(x, 10, 100, 0.001)


def test_input_with_a_batch_dimension_names_the_expected_shape(smooth) -> None:
    with pytest.raises(RuntimeError, match=r"without a batch dimension"):
        smooth.certify(torch.rand(2, 1, 28, 28), 10, 100, 0.001)


def test_wrong_number_of_classes(cnn) -> None:
    with pytest.raises(ValueError, match=r"expected logits of shape \(10, 5\).*num_classes=5"):
        Smooth(cnn, 5, Gaussian(0.25)).certify(X, 10, 100, 0.001, batch_size=10)


def test_model_in_training_mode(cnn) -> None:
    with pytest.raises(ValueError, match=r"call model.eval"):
        Smooth(cnn.train(), 10, Gaussian(0.25)).predict(X, 10, 0.01)


def test_unknown_noise_norm_pair(cnn) -> None:
    with pytest.raises(ValueError, match=r"choose one of the supported family/norm pairs"):
        Smooth(cnn, 10, Laplace(0.25), norm="l2")


def test_noise_must_be_a_family(cnn) -> None:
    with pytest.raises(TypeError, match=r"Gaussian\(sigma=0.25\)"):
        Smooth(cnn, 10, 0.25)  # type: ignore[arg-type]


def test_unknown_phase_and_bad_seed(smooth) -> None:
    with pytest.raises(
        ValueError,
        match=r"phase must be one of \['estimate', 'predict', 'reference', 'select', 'sigma'\]",
    ):
        smooth.sample_counts(X, 10, seed=0, phase="warmup")
    with pytest.raises(ValueError, match=r"seed must be a non-negative integer or None"):
        smooth.certify(X, 10, 100, 0.001, seed=-1)
