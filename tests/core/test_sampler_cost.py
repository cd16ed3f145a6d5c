"""sampler_cost times both samplers on the same model and input."""

import math

import torch
from torch import nn

from rsutils.core.sampler_cost import sampler_cost


def test_sampler_cost_times_both_samplers_per_batch() -> None:
    model = nn.Sequential(nn.Flatten(), nn.Linear(16, 3)).eval()
    x = torch.full((1, 4, 4), 9 / 255)
    cost = sampler_cost(model, x, 0.25, num_classes=3, batch_size=50, num_batches=2, repeats=2)
    assert cost.batch_size == 50
    times = (cost.noise_plain, cost.noise_sound, cost.loop_plain, cost.loop_sound)
    assert all(t > 0 and math.isfinite(t) for t in times)
    assert cost.noise_ratio == cost.noise_sound / cost.noise_plain
    assert cost.loop_ratio == cost.loop_sound / cost.loop_plain
