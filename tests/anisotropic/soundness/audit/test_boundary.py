"""Random search points: on shrink times the region's boundary, in every direction."""

import pytest
import torch

from rsutils.anisotropic.soundness.audit import boundary_points, region_axes


@pytest.mark.parametrize("ball", [False, True], ids=["ellipsoid", "ball"])
def test_boundary_points_lie_at_shrink_times_the_boundary(ball) -> None:
    sigma = torch.rand(1, 4, 4, generator=torch.Generator().manual_seed(0)) + 0.1
    R = 0.7
    deltas = boundary_points(sigma, R, 50, torch.Generator().manual_seed(1), ball=ball)
    assert deltas.shape == (50, 1, 4, 4)
    axes = sigma.min() if ball else sigma
    scaled = (deltas / axes).flatten(1).norm(dim=1)
    assert torch.allclose(scaled, torch.full((50,), 0.99 * R), rtol=1e-6)
    # directions are spread out, not one point repeated
    assert torch.linalg.matrix_rank(deltas.flatten(1)) == 16


def test_the_region_axes_are_sigma_or_each_inputs_smallest_scale() -> None:
    sigma = torch.tensor([[[1.0, 3.0]], [[0.5, 2.0]]])
    assert torch.equal(region_axes(sigma, ball=False), sigma)
    assert torch.equal(region_axes(sigma, ball=True), torch.tensor([[[1.0, 1.0]], [[0.5, 0.5]]]))


@pytest.mark.parametrize(
    ("arguments", "error", "message"),
    [
        ({"R": 0.0}, ValueError, "R must be finite and positive"),
        ({"count": 0}, ValueError, "count must be a positive integer"),
        ({"shrink": 1.5}, ValueError, "shrink must lie in"),
        ({"sigma_x": -torch.ones(2)}, ValueError, "sigma_x must be finite and positive"),
        ({"sigma_x": torch.ones(2, dtype=torch.long)}, TypeError, "floating-point"),
        ({"generator": "cpu"}, TypeError, "generator must be a torch.Generator"),
    ],
)
def test_bad_arguments_are_refused(arguments, error, message) -> None:
    values = {"sigma_x": torch.ones(2), "R": 1.0, "count": 3, "generator": torch.Generator()}
    values |= arguments
    shrink = values.pop("shrink", 0.99)
    with pytest.raises(error, match=message):
        boundary_points(**values, shrink=shrink)
