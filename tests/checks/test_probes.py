"""Points drawn inside certified balls."""

import pytest
import torch

from rsutils.checks.probes import points_inside


def test_points_are_at_the_requested_fraction_of_each_radius() -> None:
    generator = torch.Generator().manual_seed(0)
    centers = torch.rand(50, 1, 28, 28, generator=generator)
    radii = torch.rand(50, generator=generator) * 3
    points = points_inside(centers, radii, 0.9, generator)
    distance = (points - centers).flatten(1).norm(dim=1)
    torch.testing.assert_close(distance, 0.9 * radii, rtol=1e-5, atol=1e-6)
    assert points.shape == centers.shape and points.dtype == centers.dtype


def test_directions_are_uniform_on_the_sphere() -> None:
    # The mean of 20,000 uniform unit vectors in 3-D is 0 with per-coordinate SE
    # 1/sqrt(3 * 20000) ≈ 0.0041, so 5 SE = 0.02.
    generator = torch.Generator().manual_seed(1)
    directions = points_inside(torch.zeros(20_000, 3), torch.ones(20_000), 0.5, generator) / 0.5
    assert float(directions.mean(dim=0).abs().max()) < 0.02


def test_bad_fraction_and_shapes_are_named() -> None:
    generator = torch.Generator()
    with pytest.raises(ValueError, match="fraction"):
        points_inside(torch.zeros(2, 3), torch.ones(2), 1.0, generator)
    with pytest.raises(ValueError, match="radii must have shape"):
        points_inside(torch.zeros(2, 3), torch.ones(3), 0.5, generator)
