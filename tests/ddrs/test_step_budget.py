"""The step budget of sigma ascent: inputs whose level K, not the input, decided."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch
from scipy.stats import norm
from torch import nn

from rsutils import DataDependentSmooth, Dataset
from rsutils.checks.classifiers import ProbitBand
from rsutils.core.streams import stream_generator
from rsutils.ddrs.sigma_ascent import SigmaAscent, optimize_sigma
from rsutils.ddrs.step_budget import (
    ascent_paths,
    budget_step,
    step_budget_table,
    still_rising,
)


class Confident(nn.Module):
    """Class 0 with probability e^5 / (1 + e^5) ≈ 0.993 > 1 − clamp, whatever the input:
    the model that pure noise cannot unsettle."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        logits = torch.tensor([5.0, 0.0], dtype=x.dtype)
        return logits.expand(x.shape[0], 2) + 0 * x.flatten(1)[:, :1]


def _generators(count: int) -> list[torch.Generator]:
    return [stream_generator(0, i, "sigma") for i in range(count)]


def test_one_clamped_step_is_the_closed_form() -> None:
    gaussian = SigmaAscent(sigma0=0.25, iterations=50, lr=0.05, clamp=0.02)
    assert budget_step(gaussian) == pytest.approx(0.05 * norm.ppf(0.98), rel=1e-12)
    uniform = SigmaAscent(sigma0=0.5, iterations=10, lr=0.1, clamp=0.02, family="uniform")
    assert budget_step(uniform) == pytest.approx(0.1 * (0.98 - 0.02), rel=1e-12)


@pytest.mark.parametrize("family", ["gaussian", "uniform"])
def test_an_input_noise_cannot_unsettle_climbs_by_full_steps_to_the_end(family: str) -> None:
    # Both expectations sit at their clamps at every step, so each step adds lr·g: the
    # path is a straight line to sigma0 + K·lr·g, still rising when the budget ends.
    ascent = SigmaAscent(sigma0=0.25, iterations=12, draws=2, family=family)
    x = torch.zeros(3, 1, 2, 2, dtype=torch.float64)
    found = optimize_sigma(Confident().eval(), x, ascent, _generators(3))
    steps = np.diff(found.path.numpy(), axis=1)
    np.testing.assert_allclose(steps, budget_step(ascent), rtol=1e-5)
    np.testing.assert_array_equal(found.path[:, -1].numpy(), found.scale.numpy())
    assert found.path.shape == (3, 13) and (found.path[:, 0] == 0.25).all()
    assert still_rising(found.path.numpy()).all()


def test_an_input_with_an_interior_optimum_is_not_rising_at_the_end() -> None:
    # The band's centre has its exact optimum near sigma = 0.6 (chapter 02, section
    # (a)); 200 steps from 0.1 reach it well before the end, then jitter around it.
    band = ProbitBand(torch.tensor([1.0, 0.0]), half_width=1.0, temperature=0.5)
    ascent = SigmaAscent(sigma0=0.1, iterations=200, draws=64)
    x = torch.zeros(40, 2, dtype=torch.float64)
    found = optimize_sigma(band, x, ascent, _generators(40))
    best, _ = band.optimal_scale(0.0)
    assert (found.scale < 2 * best).all()
    # The rule flags a path of ten independent steps without drift with probability
    # P(t_9 > 3) = 0.0075; 3 or more flags among 40 such paths has probability 0.004.
    assert still_rising(found.path.numpy()).sum() <= 2


def test_the_rule_reads_the_last_steps_drift_against_its_noise() -> None:
    rng = np.random.default_rng(0)
    flat = 1.0 + np.cumsum(rng.normal(0, 0.01, (200, 51)), axis=1)  # no drift
    climbing = flat + np.linspace(0, 2.5, 51)  # drift of 0.05 per step, noise 0.01
    # P(t_9 > 3) = 0.0075 per path: 6 or more of 200 has probability below 0.5%
    assert still_rising(flat).sum() <= 5
    assert still_rising(climbing).all()
    early = np.concatenate([np.linspace(0.25, 1.0, 26), np.full(25, 1.0)])[None]
    assert not still_rising(early).any()  # it stopped climbing halfway
    assert still_rising(early, window=50).all()  # a window over the whole run sees it climb
    assert not still_rising(np.ones((3, 2))).any()  # one step cannot tell


def test_paths_rerun_the_logs_ascent_and_refuse_another(cnn) -> None:
    ascent = SigmaAscent(sigma0=0.3, iterations=4, lr=0.05, draws=2)
    smooth = DataDependentSmooth(cnn, 10, ascent)
    x = torch.rand(5, 1, 28, 28, generator=torch.Generator().manual_seed(1))
    data = Dataset("fashion-mnist", "test", x, torch.arange(5), tuple("abcdefghij"))
    log = pd.DataFrame({"idx": [3, 0, 4], "scale": smooth.scales(x[[3, 0, 4]], 7, [3, 0, 4])})
    paths = ascent_paths(smooth, data, log, seed=7, batch=2)
    assert paths.shape == (3, 5)
    np.testing.assert_allclose(paths[:, -1], log["scale"], rtol=1e-6)
    with pytest.raises(ValueError, match="same model, ascent settings and seed"):
        ascent_paths(smooth, data, log, seed=8)


def test_bad_input_is_refused_with_the_fix(cnn) -> None:
    with pytest.raises(ValueError, match="window must lie between 2 and K = 10"):
        still_rising(np.ones((1, 11)), window=11)
    with pytest.raises(ValueError, match=r"must be \(inputs, K \+ 1\)"):
        still_rising(np.ones(5))
    smooth = DataDependentSmooth(cnn, 10, SigmaAscent(sigma0=0.3, iterations=2))
    with pytest.raises(ValueError, match="no 'scale' column"):
        ascent_paths(smooth, None, pd.DataFrame({"idx": [0]}), seed=0)
    with pytest.raises(ValueError, match="has no log for"):
        step_budget_table([{"a": pd.DataFrame()}], {"b": [np.zeros(0)]})
    with pytest.raises(ValueError, match="one per replicate"):
        step_budget_table([{"a": pd.DataFrame()}], {"a": []})


def test_the_table_splits_the_acr_between_the_budget_bound_inputs_and_the_rest() -> None:
    def log(radii, correct):
        return pd.DataFrame({"radius": radii, "correct": correct})

    first = log([2.0, 1.5, 0.5, 0.25], [1, 0, 1, 1])
    second = log([0.5, 1.0, 0.0, 0.5], [1, 1, 0, 1])
    flags = {"DS": [np.array([1, 1, 0, 0]), np.array([0, 1, 0, 0])]}
    table = step_budget_table([{"DS": first}, {"DS": second}], flags)
    assert table.loc[("DS", 0)].to_dict() == pytest.approx(
        {
            "at budget": 0.5,
            "correct at budget": 0.25,
            "ACR": (2.0 + 0.5 + 0.25) / 4,
            "ACR from them": 2.0 / 4,
            "ACR from the rest": 0.75 / 4,
        }
    )
    assert table.loc[("DS", 1)].to_dict() == pytest.approx(
        {
            "at budget": 0.25,
            "correct at budget": 0.25,
            "ACR": 2.0 / 4,
            "ACR from them": 1.0 / 4,
            "ACR from the rest": 1.0 / 4,
        }
    )
