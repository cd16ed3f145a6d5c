"""Clopper–Pearson bounds and the PREDICT test against scipy's own implementations."""

import numpy as np
import pytest
from scipy.stats import binomtest, norm

from rsutils.core.confidence import (
    clopper_pearson_lower,
    max_certifiable_pA,
    min_alpha_for_radius,
    min_samples_for_radius,
    top_two_pvalue,
)


@pytest.mark.parametrize("alpha", [0.1, 0.01, 0.001])
@pytest.mark.parametrize("n", [1, 2, 10, 100, 1000, 100_000])
def test_lower_bound_equals_scipy_exact_clopper_pearson(n: int, alpha: float) -> None:
    ks = np.unique(np.linspace(0, n, 25).round().astype(int))
    ours = clopper_pearson_lower(ks, n, alpha)
    for k, bound in zip(ks, ours, strict=True):
        # One-sided (1 - alpha) lower bound = lower end of the two-sided (1 - 2 alpha) interval.
        expected = binomtest(int(k), n).proportion_ci(1 - 2 * alpha, method="exact").low
        assert bound == pytest.approx(expected, rel=1e-9, abs=1e-12)


def test_lower_bound_when_every_draw_succeeds_is_alpha_to_the_one_over_n() -> None:
    n = np.array([1, 10, 1000, 100_000])
    np.testing.assert_allclose(max_certifiable_pA(n, 0.001), 0.001 ** (1 / n), rtol=1e-10)


def test_lower_bound_is_below_the_point_estimate_and_zero_at_zero() -> None:
    ks, n = np.arange(0, 51), 50
    bounds = clopper_pearson_lower(ks, n, 0.05)
    assert bounds[0] == 0.0
    assert np.all(bounds <= ks / n)
    assert np.all(np.diff(bounds) > 0)


def test_pvalue_is_scipys_two_sided_binomial_test() -> None:
    for top, second in [(60, 40), (55, 45), (100, 0), (10, 9)]:
        assert top_two_pvalue(top, second) == binomtest(top, top + second, 0.5).pvalue
    assert top_two_pvalue(0, 0) == 1.0


@pytest.mark.parametrize("alpha", [0.0, 1.0, -0.1, 1.5, float("nan")])
def test_alpha_outside_the_open_unit_interval_is_rejected(alpha: float) -> None:
    with pytest.raises(ValueError, match=r"alpha must lie strictly between 0 and 1"):
        clopper_pearson_lower(5, 10, alpha)


@pytest.mark.parametrize(("multiple", "alpha"), [(4.0, 0.001), (1.0, 0.05), (2.5, 1e-6)])
def test_min_samples_for_radius_is_the_first_n_whose_ceiling_reaches_it(multiple, alpha) -> None:
    n = min_samples_for_radius(multiple, alpha)
    ceiling = norm.ppf(max_certifiable_pA(np.array([n - 1, n]), alpha))
    assert ceiling[0] < multiple <= ceiling[1]


def test_four_sigma_at_cohen_alpha_needs_about_two_hundred_thousand_draws() -> None:
    # ln Φ(4) = ln(1 − Q(4)) ≈ −Q(4) with Q(4) = 3.1671e-5, so n ≈ 6.9078 / 3.1671e-5.
    assert 218_000 < min_samples_for_radius(4.0, 0.001) < 218_200
    assert min_samples_for_radius(0.0, 0.001) == 10  # 0.5^10 <= 0.001 < 0.5^9
    with pytest.raises(ValueError, match=">= 0"):
        min_samples_for_radius(-0.1, 0.001)


@pytest.mark.parametrize(("n", "alpha"), [(100_000, 0.001), (100_000, 0.01), (1000, 0.05)])
def test_min_alpha_for_radius_inverts_the_ceiling(n, alpha) -> None:
    ceiling = float(norm.ppf(max_certifiable_pA(n, alpha)))
    assert min_alpha_for_radius(ceiling, n) == pytest.approx(alpha, rel=1e-6)
    assert min_alpha_for_radius(ceiling * 1.01, n) > alpha > min_alpha_for_radius(ceiling * 0.99, n)


def test_walds_bound_is_the_floor_at_p_one_and_grows_near_the_threshold() -> None:
    """At p = 1 the bound is ln(1/alpha)/ln(1/p0), the floor before rounding; it is the
    evidence ln(1/alpha) over KL(p || p0) (scipy's entropy) elsewhere, infinite at or
    below p0, and a sequential test that certifies does not beat it: the one-sided
    confidence sequence spends more at p = 1."""
    import math

    from scipy.stats import entropy

    from rsutils.core.confidence import least_expected_draws
    from rsutils.sequential.confidence_sequence import cs_min_draws_all_successes

    p0 = float(norm.cdf(1.0))
    assert least_expected_draws(1.0, p0, 0.001) == pytest.approx(math.log(1000) / -math.log(p0))
    assert math.ceil(least_expected_draws(1.0, p0, 0.001)) == min_samples_for_radius(1.0, 0.001)
    assert cs_min_draws_all_successes(p0, 0.001, one_sided=True) >= least_expected_draws(
        1.0, p0, 0.001
    )
    p = np.array([0.9, 0.95, 0.99])
    kl = np.array([entropy([q, 1 - q], [p0, 1 - p0]) for q in p])
    assert np.allclose(least_expected_draws(p, p0, 0.001), math.log(1000) / kl)
    assert np.all(np.diff(least_expected_draws(p, p0, 0.001)) < 0)
    assert np.isinf(least_expected_draws([p0, 0.5], p0, 0.001)).all()
    half = 0.5 * math.log(0.5 / 0.001) + 0.5 * math.log(0.5 / 0.999)
    assert least_expected_draws(0.9, p0, 0.001, power=0.5) == pytest.approx(half / kl[0])
    with pytest.raises(ValueError, match="power"):
        least_expected_draws(0.9, p0, 0.001, power=0.0005)
