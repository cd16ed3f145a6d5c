"""A radius printed to three significant digits pins the count of draws behind it."""

import numpy as np
import pytest
from scipy.stats import beta, norm

from rsutils.analysis.printed import count_range, first_count, half_printed_unit


def certificate(k, n: int, alpha: float, sigma: float) -> np.ndarray:
    """sigma·Φ⁻¹ of the one-sided Clopper–Pearson bound, straight from scipy's beta
    (independently of rsutils.core.confidence)."""
    k = np.asarray(k)
    bound = np.where(k > 0, beta.ppf(alpha, np.maximum(k, 1), n - k + 1), 0.0)
    return sigma * norm.ppf(bound)


def printed(values) -> np.ndarray:
    return np.array([float(f"{v:.3}") for v in np.atleast_1d(values)])


def test_half_a_unit_of_the_third_significant_digit() -> None:
    values = np.array([0.953, 1.96, 3.91, 0.000926, 12.5, 0.0])
    expected = [0.0005, 0.005, 0.005, 0.0000005, 0.05, 0.0]
    np.testing.assert_allclose(half_printed_unit(values), expected)


def test_the_first_count_against_every_count_of_a_small_n() -> None:
    n, alpha, sigma = 60, 0.01, 0.5
    every = certificate(np.arange(n + 1), n, alpha, sigma)
    radii = np.array([0.0, 0.1, 0.3, 0.6, every[45], every[n], every[n] + 1e-9])
    found = first_count(radii, sigma, n, alpha)
    brute = [next((k for k in range(n + 1) if every[k] >= r), n + 1) for r in radii]
    np.testing.assert_array_equal(found, brute)
    assert found[-1] == n + 1  # above the ceiling: no count reaches it


def test_every_printed_certificate_pins_its_own_count() -> None:
    n, alpha, sigma = 100_000, 0.01, 0.25
    counts = np.array([50_500, 50_400, 60_000, 90_000, 99_000, 99_990, 99_999, 100_000])
    least, greatest = count_range(printed(certificate(counts, n, alpha, sigma)), sigma, n, alpha)
    assert np.all((least <= counts) & (counts <= greatest))
    # Near the ceiling, consecutive counts print apart: each printed radius is one count.
    np.testing.assert_array_equal((least == greatest)[-3:], [True, True, True])


def test_a_radius_no_count_prints_is_found() -> None:
    """The ceiling of alpha = 0.01 (k = n) prints 0.978 at sigma = 0.25; at 0.001 the
    largest certificates are 0.953 (k = n) and 0.935 (k = n - 1): nothing prints 0.978
    or 0.955 there, while 0.953 and 0.935 do."""
    n, sigma = 100_000, 0.25
    top = certificate(np.array([n, n - 1]), n, 0.001, sigma)
    assert printed(top).tolist() == [0.953, 0.935]
    least, greatest = count_range([0.978, 0.955, 0.953, 0.935], sigma, n, 0.001)
    assert (greatest < least).tolist() == [True, True, False, False]
    assert least[2] == greatest[2] == n


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="0 < alpha < 1"):
        count_range([0.5], 0.25, 100_000, 0.0)
    with pytest.raises(ValueError, match="sigma > 0"):
        first_count([0.5], -1.0, 100, 0.001)
