"""UCAN's pattern-wise sigma (Eq. 12): small at the centre, rescaled to mean 1."""

import pytest

from rsutils.anisotropic.patterns import spatial_pattern


def test_spatial_pattern_is_smallest_at_the_centre_and_averages_one() -> None:
    for norm in ("l1", "l2", "linf"):
        s = spatial_pattern(28, 28, norm=norm, kappa=2.0, iota=0.5)
        assert s.shape == (1, 28, 28)
        assert float(s.mean()) == pytest.approx(1.0)
        assert float(s[0, 13:15, 13:15].max()) == pytest.approx(float(s.min()))
        assert float(s[0, 0, 0]) == pytest.approx(float(s.max()))
    g = spatial_pattern(28, 28, normalise="geometric")
    assert float(g.log().mean()) == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(ValueError, match=r"iota > 0"):
        spatial_pattern(28, 28, iota=0.0)
