"""The radius registry against closed forms."""

import numpy as np
import pytest
from scipy.stats import norm

from rsutils.core.noise import Gaussian, Laplace, UniformCube
from rsutils.core.radius import certified_radius, get_rule, rules

P = np.linspace(0.5, 0.999999, 200)


def test_gaussian_l2_is_theorem_1() -> None:
    np.testing.assert_allclose(
        certified_radius("gaussian", "l2", P, scale=0.5), 0.5 * norm.ppf(P), atol=1e-12
    )
    pB = (1 - P) / 3
    np.testing.assert_allclose(
        certified_radius("gaussian", "l2", P, pB, scale=0.5),
        0.25 * (norm.ppf(P) - norm.ppf(pB)),
        atol=1e-12,
    )


def test_gaussian_linf_divides_by_root_d() -> None:
    l2 = certified_radius("gaussian", "l2", P, scale=1.0)
    np.testing.assert_allclose(certified_radius("gaussian", "linf", P, scale=1.0, dim=784), l2 / 28)


def test_laplace_l1_binary_case_is_minus_lambda_log_2_one_minus_pA() -> None:
    expected = -0.3 * np.log(2 * (1 - P))
    np.testing.assert_allclose(
        certified_radius("laplace", "l1", P, scale=0.3), expected, atol=1e-12
    )


def test_uniform_radii_binary_case() -> None:
    np.testing.assert_allclose(certified_radius("uniform", "l1", P, scale=0.7), 2 * 0.7 * (P - 0.5))
    d = 784
    expected = 2 * 0.7 * (1 - (1.5 - P) ** (1 / d))
    np.testing.assert_allclose(
        certified_radius("uniform", "linf", P, scale=0.7, dim=d), expected, rtol=1e-9
    )


def test_uniform_linf_worst_shift_in_one_dimension() -> None:
    """In d = 1 the cube's ℓ∞ and ℓ1 certificates coincide, and a shift by the radius
    moves exactly pA - 1/2 of the mass: the certificate is tight."""
    pA = 0.8
    r = certified_radius("uniform", "linf", pA, scale=1.0, dim=1)
    assert r == pytest.approx(certified_radius("uniform", "l1", pA, scale=1.0))
    assert r / 2 == pytest.approx(pA - 0.5)  # mass of U[-1, 1] that a shift of r uncovers


def test_radii_are_zero_at_one_half_and_increase() -> None:
    for rule in rules():
        params = {"a": 12.0} if rule.params else {}
        values = certified_radius(rule.family, rule.norm, P, scale=1.0, dim=10, **params)
        assert values[0] == pytest.approx(0.0, abs=1e-12)
        assert np.all(np.diff(values) > 0)


def test_families_use_their_default_norm() -> None:
    assert Gaussian(0.25).radius(0.9) == pytest.approx(0.25 * norm.ppf(0.9))
    assert Laplace(1.0).radius(0.9) == pytest.approx(-np.log(0.2))
    assert UniformCube(1.0).radius(0.9) == pytest.approx(0.8)


def test_unknown_pairs_and_missing_dimension_are_clear_errors() -> None:
    with pytest.raises(ValueError, match=r"no certified radius is known.*gaussian/l2"):
        get_rule("laplace", "linf")
    with pytest.raises(ValueError, match=r"pass dim=x.numel"):
        certified_radius("gaussian", "linf", 0.9, scale=1.0)
    with pytest.raises(ValueError, match=r"pA_lower must lie in \[0, 1\]"):
        certified_radius("gaussian", "l2", 1.2, scale=1.0)


def test_exponential_linf_rows_of_table_one() -> None:
    d = 784
    np.testing.assert_allclose(
        certified_radius("exp_linf", "l1", P, scale=0.3, dim=d), 2 * d * 0.3 * (P - 0.5)
    )
    np.testing.assert_allclose(
        certified_radius("exp_linf", "linf", P, scale=0.3), 0.3 * np.log(1 / (2 * (1 - P)))
    )


def test_power_law_row_of_table_one() -> None:
    d, a = 784, 790.0
    np.testing.assert_allclose(
        certified_radius("power_law", "l1", P, scale=0.3, dim=d, a=a),
        2 * d * 0.3 / (a - d) * (P - 0.5),
    )


def test_general_pB_forms_of_the_new_rows() -> None:
    pA, pB = 0.7, 0.1
    assert certified_radius("exp_linf", "l1", pA, pB, scale=1.0, dim=5) == pytest.approx(5 * 0.6)
    assert certified_radius("exp_linf", "linf", pA, pB, scale=1.0) == pytest.approx(
        max(0.5 * np.log(7), -np.log(1 - 0.6))
    )
    assert certified_radius("power_law", "l1", pA, pB, scale=1.0, dim=5, a=8.0) == pytest.approx(
        5 / 3 * 0.6
    )


def test_family_parameters_are_checked() -> None:
    with pytest.raises(ValueError, match=r"parameters \['a'\]; missing \['a'\]"):
        certified_radius("power_law", "l1", 0.9, scale=1.0, dim=5)
    with pytest.raises(ValueError, match=r"unexpected \['a'\]"):
        certified_radius("gaussian", "l2", 0.9, scale=1.0, a=3.0)
    with pytest.raises(ValueError, match=r"a > d.*a=7"):
        certified_radius("power_law", "l1", 0.9, scale=1.0, dim=5, a=5.0)
    with pytest.raises(ValueError, match=r"no certified radius.*laplace.*linf"):
        certified_radius("laplace", "linf", 0.9, scale=1.0)
    with pytest.raises(ValueError, match=r"input dimension"):
        certified_radius("exp_linf", "l1", 0.9, scale=1.0)
