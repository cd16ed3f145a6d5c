"""The step budget of sigma ascent: inputs whose level K, not the input, decided."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch
from scipy.stats import norm
from torch import nn

from rsutils.checks.classifiers import ProbitBand
from rsutils.core.streams import stream_generator
from rsutils.ddrs.sigma_ascent import SigmaAscent, optimize_sigma
from rsutils.ddrs.step_budget import (
    at_step_budget,
    budget_reach,
    budget_step,
    step_budget_table,
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
    assert budget_reach(gaussian) == pytest.approx(0.25 + 50 * 0.05 * norm.ppf(0.98), rel=1e-12)
    uniform = SigmaAscent(sigma0=0.5, iterations=10, lr=0.1, clamp=0.02, family="uniform")
    assert budget_step(uniform) == pytest.approx(0.1 * (0.98 - 0.02), rel=1e-12)


@pytest.mark.parametrize("family", ["gaussian", "uniform"])
def test_an_input_noise_cannot_unsettle_runs_exactly_to_the_budget(family: str) -> None:
    # Both expectations sit at their clamps at every step, so each step adds lr·g and
    # K steps end at sigma0 + K·lr·g: the ascent's own arithmetic, not an estimate (up
    # to the float32 softmax and clamp: a relative 1e-6 over 12 steps).
    ascent = SigmaAscent(sigma0=0.25, iterations=12, draws=2, family=family)
    x = torch.zeros(3, 1, 2, 2, dtype=torch.float64)
    found = optimize_sigma(Confident().eval(), x, ascent, _generators(3)).scale
    np.testing.assert_allclose(found.numpy(), budget_reach(ascent), rtol=1e-6)
    log = pd.DataFrame({"scale": found.numpy()})
    assert at_step_budget(log, ascent, slack=0).all()


def test_an_input_with_an_interior_optimum_stops_short_of_the_budget() -> None:
    # The band's centre has its exact optimum near sigma = 0.6 (chapter 02, section
    # (a)); 60 steps could carry a clamped input to 0.1 + 60 · 0.103 ≈ 6.3.
    band = ProbitBand(torch.tensor([1.0, 0.0]), half_width=1.0, temperature=0.5)
    ascent = SigmaAscent(sigma0=0.1, iterations=60, draws=64)
    x = torch.zeros(2, 2, dtype=torch.float64)
    found = optimize_sigma(band, x, ascent, _generators(2)).scale
    best, _ = band.optimal_scale(0.0)
    assert (found < 2 * best).all()
    assert not at_step_budget(pd.DataFrame({"scale": found.numpy()}), ascent).any()


def test_the_rule_flags_exactly_the_scales_within_slack_steps_of_the_reach() -> None:
    ascent = SigmaAscent(sigma0=0.5, iterations=10)
    step, reach = budget_step(ascent), budget_reach(ascent)
    scales = [reach + 0.01, reach, reach - step, reach - 1.01 * step, 0.5, 0.2]
    log = pd.DataFrame({"scale": scales})
    assert at_step_budget(log, ascent).tolist() == [True, True, True, False, False, False]
    assert at_step_budget(log, ascent, slack=0).tolist() == [True, True] + [False] * 4
    assert at_step_budget(log, ascent, slack=2).tolist() == [True] * 4 + [False] * 2
    no_ascent = SigmaAscent(sigma0=0.5, iterations=0)
    assert not at_step_budget(log, no_ascent).any()


def test_bad_input_is_refused_with_the_fix() -> None:
    ascent = SigmaAscent(sigma0=0.5, iterations=10)
    with pytest.raises(ValueError, match="slack must lie between 0 and K = 10"):
        at_step_budget(pd.DataFrame({"scale": [1.0]}), ascent, slack=11)
    with pytest.raises(ValueError, match="no 'scale' column"):
        at_step_budget(pd.DataFrame({"radius": [1.0]}), ascent)
    with pytest.raises(ValueError, match="has no log for"):
        step_budget_table([{"a": pd.DataFrame()}], {"b": ascent})


def test_the_table_splits_the_acr_between_the_budget_bound_inputs_and_the_rest() -> None:
    ascent = SigmaAscent(sigma0=0.25, iterations=4)
    reach = budget_reach(ascent)

    def log(scales, radii, correct):
        return pd.DataFrame({"scale": scales, "radius": radii, "correct": correct})

    first = log([reach, reach, 0.3, 0.4], [2.0, 1.5, 0.5, 0.25], [1, 0, 1, 1])
    second = log([0.3, reach, 0.3, 0.3], [0.5, 1.0, 0.0, 0.5], [1, 1, 0, 1])
    table = step_budget_table([{"DS": first}, {"DS": second}], {"DS": ascent})
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
