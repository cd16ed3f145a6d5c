"""Lecuyer et al. and Li et al. radii: valid, and never above the tight Theorem 1."""

import numpy as np
import pytest
from scipy.stats import norm

from rsutils.checks.prior_radii import lecuyer_radius, li_radius

P = np.linspace(0.5, 0.99999, 300)


@pytest.mark.parametrize("bound", [lecuyer_radius, li_radius])
def test_never_exceeds_the_tight_radius_and_vanishes_at_a_tie(bound) -> None:
    tight = 0.5 * norm.ppf(P)
    prior = bound(P, sigma=0.5)
    assert np.all(prior <= tight + 1e-12)
    assert prior[0] == 0.0
    assert np.all(np.diff(prior) >= -1e-12)


def test_the_ordering_of_figure_8() -> None:
    """Theorem 1 > Li et al. > Lecuyer et al. for every pA above 0.55."""
    p = P[P > 0.55]
    tight, li, lecuyer = norm.ppf(p), li_radius(p, sigma=1.0), lecuyer_radius(p, sigma=1.0)
    assert np.all(tight > li) and np.all(li > lecuyer)


def test_lecuyer_plateaus_because_epsilon_is_at_most_one() -> None:
    """With ε ≤ 1 the radius is below σ/√(2 ln 1.25 / δ) < σ·1/√(2 ln 2.5) for δ ≤ 1/2."""
    assert lecuyer_radius(0.9999999, sigma=1.0)[0] < 1 / np.sqrt(2 * np.log(2.5))


def test_li_matches_a_direct_evaluation_at_its_maximiser() -> None:
    pA, pB = 0.9, 0.1
    orders = np.linspace(1.001, 50, 20000)
    mean = ((pA ** (1 - orders) + pB ** (1 - orders)) / 2) ** (1 / (1 - orders))
    direct = np.sqrt(-2 / orders * np.log(1 - pA - pB + 2 * mean)).max()
    assert li_radius(pA, pB, sigma=1.0)[0] == pytest.approx(direct, rel=2e-3)


def test_guarantees_compared_zero_where_certify_abstained() -> None:
    from rsutils.checks.prior_radii import guarantees_compared

    radii = guarantees_compared([0.3, 0.9, 0.99], [False, True, True], sigma=0.25)
    np.testing.assert_allclose(
        radii["Theorem 1 (Cohen et al.)"], [0, *0.25 * norm.ppf([0.9, 0.99])]
    )
    for values in radii.values():
        assert values[0] == 0.0
    assert np.all(radii["Li et al."] <= radii["Theorem 1 (Cohen et al.)"])
