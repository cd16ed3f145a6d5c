"""The CERTIFY ceiling of a log, against its closed form alpha^(1/n)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from rsutils.analysis.ceilings import at_ceiling, ceiling_radii, ceiling_share
from rsutils.core.confidence import clopper_pearson_lower


def certified_log(counts, factors, *, n=1000, alpha=0.001, scale=0.5, labels=None):
    """A log as CERTIFY writes it for anisotropic noise whose radius factor (min σ) is
    ``factors``: pA_lower from Clopper–Pearson, R = scale·Φ⁻¹(pA_lower), radius = factor·R,
    abstaining below 1/2."""
    counts = np.asarray(counts)
    p_lower = clopper_pearson_lower(counts, n, alpha)
    certified = p_lower > 0.5
    region = np.where(certified, scale * norm.ppf(p_lower), 0.0)
    predict = np.where(certified, 3, -1)
    label = np.full(len(counts), 3) if labels is None else np.asarray(labels)
    return pd.DataFrame(
        {
            "idx": np.arange(len(counts)),
            "label": label,
            "predict": predict,
            "radius": np.asarray(factors) * region,
            "region_radius": region,
            "correct": (predict == label).astype(int),
            "count": counts,
            "n": n,
            "alpha": alpha,
            "scale": scale,
        }
    )


def test_the_ceiling_is_the_closed_form_times_the_inputs_factor() -> None:
    log = certified_log([1000, 990, 700, 400], [1.0, 2.0, 0.5, 1.0])
    top = 0.5 * norm.ppf(0.001 ** (1 / 1000))
    assert top == pytest.approx(1.2316, abs=1e-4)  # the 1.23 of λ = 0.5, n = 1,000
    found = ceiling_radii(log)
    np.testing.assert_allclose(found[:3], [top, 2 * top, 0.5 * top], rtol=1e-12)
    assert np.isnan(found[3])  # an abstention has no factor
    # a certificate whose draws all agreed is at its ceiling; the others lie below it
    assert found[0] == pytest.approx(log.radius[0], rel=1e-12)
    assert (log.radius[1:3] < found[1:3]).all()


def test_a_log_without_regions_has_the_isotropic_ceiling() -> None:
    log = certified_log([1000, 400], [1.0, 1.0]).drop(columns="region_radius")
    found = ceiling_radii(log)
    assert found[0] == pytest.approx(0.5 * norm.ppf(0.001 ** (1 / 1000)), rel=1e-12)
    assert np.isnan(found[1])


def test_the_alm_column_has_its_own_factor() -> None:
    log = certified_log([1000], [0.8]).assign(alm=lambda df: 1.5 * df.region_radius)
    top = 0.5 * norm.ppf(0.001 ** (1 / 1000))
    assert ceiling_radii(log, column="alm")[0] == pytest.approx(1.5 * top, rel=1e-12)


def test_the_share_at_the_ceiling_counts_correct_certificates_only() -> None:
    log = certified_log([1000, 1000, 999, 1000, 300], [1.0] * 5, labels=[3, 3, 3, 4, 3])
    assert at_ceiling(log).tolist() == [True, True, False, True, False]
    assert ceiling_share(log) == pytest.approx(2 / 3)  # the third correct one is below
    assert np.isnan(ceiling_share(certified_log([300], [1.0])))


def test_a_ceiling_log_is_read_as_it_says() -> None:
    ceiling_log = pd.DataFrame({"idx": [0, 1, 2], "at_ceiling": [1, 0, 1]})
    assert at_ceiling(ceiling_log).tolist() == [True, False, True]
