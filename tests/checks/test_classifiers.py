"""The closed-form toy classifiers against Monte Carlo and against SciPy's optimiser."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy import optimize
from scipy.stats import norm

from rsutils.checks.classifiers import Disk
from rsutils.core.noise import Gaussian
from rsutils.core.smooth import Smooth


def test_disk_probability_matches_monte_carlo() -> None:
    # 200,000 draws: the standard error of a probability is at most 0.0011; 5 SE.
    disk = Disk(radius=1.0)
    generator = torch.Generator().manual_seed(0)
    for point, sigma in (([0.0, 0.0], 0.5), ([1.3, 0.0], 1.0), ([0.4, -0.7], 2.0)):
        x = torch.tensor(point, dtype=torch.float64)
        noisy = x + sigma * torch.randn(200_000, 2, generator=generator, dtype=torch.float64)
        inside = float((disk(noisy).argmax(1) == 1).double().mean())
        assert inside == pytest.approx(float(disk.prob_inside(np.array(point), sigma)), abs=0.0055)


def test_disk_smoothed_radius_is_theorem_one_and_certify_agrees() -> None:
    disk = Disk(radius=1.0)
    label, radius = disk.smoothed(np.array([0.0, 0.0]), 0.4)
    p_a = disk.prob_inside(np.array([0.0, 0.0]), 0.4)
    assert label == 1 and radius == pytest.approx(0.4 * norm.ppf(p_a))
    cert = Smooth(disk, 2, Gaussian(0.4)).certify(
        torch.zeros(2, dtype=torch.float64), 100, 20_000, 0.001, seed=0
    )
    assert cert.prediction == 1 and cert.radius <= radius  # a lower bound, w.p. 0.999
    capped = disk.smoothed(np.array([0.0, 0.0]), 0.1, p_max=0.99)[1]
    assert capped == pytest.approx(0.1 * norm.ppf(0.99))


def test_best_sigma_matches_a_bounded_search_and_keeps_the_class() -> None:
    disk = Disk(radius=1.0)
    grid = np.linspace(0.05, 3.0, 3000)
    p_max = 0.9999
    centre = np.array([0.0, 0.0])
    (best,), (radius,) = disk.best_sigma(centre[None], grid, p_max)
    # The class at the centre is 1 while P(inside) > 1/2, i.e. below this sigma:
    flip = optimize.brentq(lambda s: disk.prob_inside(centre, s) - 0.5, 0.05, 3.0)
    found = optimize.minimize_scalar(
        lambda s: -disk.smoothed(centre, s, p_max)[1],
        bounds=(0.05, flip),
        method="bounded",
    )
    # The maximum sits at the cap's kink, where the radius rises with slope Φ⁻¹(p_max):
    # a grid of step h loses at most h·Φ⁻¹(p_max) of it and h of the position.
    step = grid[1] - grid[0]
    assert best == pytest.approx(found.x, abs=step)
    assert radius == pytest.approx(-found.fun, abs=step * norm.ppf(p_max))
    # Inside the disk near its edge, a large sigma would flip the class to 0: not allowed.
    sigma_edge, _ = disk.best_sigma(np.array([[0.95, 0.0]]), grid, p_max)
    assert disk.smoothed(np.array([0.95, 0.0]), sigma_edge, p_max)[0] == 1
