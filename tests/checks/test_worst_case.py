"""Neyman–Pearson worst cases: the numerical check behind the book's Table I."""

import numpy as np
import pytest
from scipy.stats import norm

from rsutils.anisotropic.noise import Anisotropic
from rsutils.checks.worst_case import worst_case_on_boundary, worst_case_pA
from rsutils.core.noise import Gaussian, UniformCube, make_noise
from rsutils.core.radius import certified_radius, rules

D, PA = 3, 0.8
SIGMA = np.array([0.5, 1.0, 2.0])


def test_gaussian_worst_case_is_the_closed_form() -> None:
    delta = np.array([0.3, -0.4, 0.2])
    result = worst_case_pA(Gaussian(0.7), delta, PA, draws=400_000)
    exact = norm.cdf(norm.ppf(PA) - np.linalg.norm(delta) / 0.7)
    assert abs(result.pA_shifted - exact) < 4 * result.stderr


def test_uniform_worst_case_is_pA_minus_total_variation() -> None:
    delta = np.array([0.2, -0.1, 0.05])
    result = worst_case_pA(UniformCube(1.0), delta, PA, draws=400_000)
    tv = 1 - np.prod(1 - np.abs(delta) / 2)
    assert abs(result.pA_shifted - (PA - tv)) < 4 * result.stderr + 4 * np.sqrt(tv / 400_000)


def _rule_case(rule):
    params = {"a": D + 3.0} if rule.params else {}
    noise = make_noise(rule.family, 1.0, **params)
    R = float(certified_radius(rule.family, rule.norm, PA, scale=1.0, dim=D, **params))
    return noise, R


@pytest.mark.parametrize("rule", rules(), ids=lambda r: f"{r.family}-{r.norm}")
def test_every_registry_row_holds_against_the_worst_classifier(rule) -> None:
    noise, R = _rule_case(rule)
    at_boundary = worst_case_on_boundary(noise, rule.norm, PA, R, dim=D)
    assert at_boundary.pA_shifted > 0.5 - 4 * at_boundary.stderr
    inside = worst_case_on_boundary(noise, rule.norm, PA, 0.9 * R, dim=D)
    assert inside.pA_shifted > 0.5 + 4 * inside.stderr


@pytest.mark.parametrize("rule", rules(), ids=lambda r: f"{r.family}-{r.norm}")
def test_theorem_2_anisotropic_boundary_is_the_isotropic_one(rule) -> None:
    """Same draws, same likelihood ratios: the worst case at sigma ⊙ δ under
    mu + sigma ⊙ eps equals the isotropic worst case at δ."""
    noise, R = _rule_case(rule)
    iso = worst_case_on_boundary(noise, rule.norm, PA, R, dim=D, draws=50_000)
    mu = np.array([0.3, -1.0, 0.2])
    ani = worst_case_on_boundary(
        Anisotropic(noise, SIGMA, mu), rule.norm, PA, R, dim=D, scale_by=SIGMA, draws=50_000
    )
    assert ani.pA_shifted == pytest.approx(iso.pA_shifted, abs=1e-9)


def test_gaussian_radius_with_the_printed_table_density_fails() -> None:
    """UCAN's Table I writes the Gaussian density as exp(-‖z/λ‖²) (standard deviation
    λ/√2) next to the radius λΦ⁻¹(pA), which belongs to standard deviation λ."""
    lam = 1.0
    R = lam * norm.ppf(PA)
    result = worst_case_on_boundary(Gaussian(lam / np.sqrt(2)), "l2", PA, 0.9 * R, dim=D)
    assert result.pA_shifted < 0.5 - 4 * result.stderr


def test_pA_must_be_a_probability() -> None:
    with pytest.raises(ValueError, match=r"pA must lie in \(0, 1\)"):
        worst_case_pA(Gaussian(1.0), np.zeros(2), 1.0)


def test_verdict_reads_the_gap_in_standard_errors() -> None:
    from rsutils.checks.worst_case import WorstCase, verdict

    assert verdict(WorstCase(0.502, 0.001)) == "tight"
    assert verdict(WorstCase(0.51, 0.001)) == "valid (slack)"
    assert verdict(WorstCase(0.49, 0.001)) == "fails"
