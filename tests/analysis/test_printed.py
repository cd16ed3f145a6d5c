"""A radius printed to three significant digits pins the count of draws behind it."""

import numpy as np
import pytest
from scipy.stats import beta, norm

from rsutils.analysis.printed import count_range, first_count, fits_some_count, half_printed_unit


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


def test_the_first_count_is_exact_at_many_draws() -> None:
    """The binomial-quantile form against a search of every count's bound (scipy's
    beta), at the draws of the papers' logs and at the 4σ requirement: random radii,
    and the midpoints between the top counts' certificates, where consecutive counts
    lie furthest apart (a radius equal to a certificate up to rounding is a tie that
    no float computation settles, and no printed radius ± half a unit meets one)."""
    rng = np.random.default_rng(5)
    for n, alpha in ((100_000, 0.001), (100_000, 0.01), (218_105, 0.001)):
        every = certificate(np.arange(n + 1), n, alpha, 0.5)
        between = (every[-6:-1] + every[-5:]) / 2
        radii = np.concatenate([rng.uniform(0, 2.0, 300), between, [every[-1] + 1e-9]])
        expected = np.searchsorted(every, radii, side="left")  # first k with bound >= r
        np.testing.assert_array_equal(first_count(radii, 0.5, n, alpha), expected)


def test_several_numbers_of_draws_at_once() -> None:
    radii, draws = np.array([0.3, 0.9, 0.95]), np.array([1_000, 50_000, 100_000])
    together = first_count(radii[None, :], 0.25, draws[:, None], 0.001)
    for row, n in zip(together, draws, strict=True):
        np.testing.assert_array_equal(row, first_count(radii, 0.25, int(n), 0.001))


def test_a_log_fits_the_draws_it_was_certified_with() -> None:
    """Radii printed from 100,000 draws at 0.01 fit 100,000 draws; the ceiling of 0.01
    (0.978 at σ = 0.25) fits no count of 100,000 draws at 0.001."""
    n, sigma = 100_000, 0.25
    radii = printed(certificate(np.array([60_000, 99_000, 99_999, n]), n, 0.01, sigma))
    fits = fits_some_count(radii, sigma, [n, 2 * n], 0.01)
    assert fits.shape == (2, 4) and fits[0].all()
    assert not fits_some_count([0.978], sigma, [n], 0.001)[0, 0]


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
