"""batch_sensitivity counts the draws whose class depends on their batch."""

from __future__ import annotations

import pytest
import torch
from scipy.stats import beta
from torch import nn

from rsutils.checks.batch_invariance import batch_sensitivity

SHIFT = 0.05  # what an odd batch size adds to the second logit


class OddBatchesShift(nn.Module):
    """Two logits, 0 and ``mean(x) - 1/2``, the second raised by ``SHIFT`` in batches of
    an odd size: a row whose ``mean(x) - 1/2`` lies in ``[-SHIFT, 0)`` has class 0 in an
    even batch and class 1 in an odd one."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        second = x.flatten(1).mean(1) - 0.5 + SHIFT * (x.shape[0] % 2)
        return torch.stack([torch.zeros_like(second), second], dim=1)


def draws(count: int = 1000) -> torch.Tensor:
    return torch.rand(count, 1, 2, 2, generator=torch.Generator().manual_seed(0))


def expected_flips(batch: torch.Tensor) -> int:
    centred = batch.flatten(1).mean(1) - 0.5
    return int(((centred >= -SHIFT) & (centred < 0)).sum())


def test_batches_at_their_own_shape_show_the_flips() -> None:
    inputs = draws()
    one, seven = batch_sensitivity(OddBatchesShift(), inputs, sizes=(1, 7), limit=100)
    assert (one.batch, one.draws, seven.batch, seven.draws) == (1, 100, 7, 1000)
    assert one.flips == expected_flips(inputs[:100]) > 0
    assert seven.flips == expected_flips(inputs) > 0
    assert seven.max_logit_change == pytest.approx(SHIFT) and not seven.invariant


def test_fixed_rows_show_none() -> None:
    results = batch_sensitivity(OddBatchesShift(), draws(), sizes=(1, 7), fixed_rows=True)
    assert all(r.invariant and r.fixed_rows for r in results)  # 100 rows: an even size


def test_the_rate_bound_is_clopper_pearson() -> None:
    (seven,) = batch_sensitivity(OddBatchesShift(), draws(), sizes=(7,))
    upper = beta.ppf(0.95, seven.flips + 1, seven.draws - seven.flips)
    assert seven.rate_upper(0.05) == pytest.approx(upper, rel=1e-12)


@pytest.mark.parametrize(
    ("inputs", "options", "message"),
    [
        (torch.zeros(0, 4), {}, "non-empty batch"),
        (draws(10), {"sizes": (0,)}, "positive"),
        (draws(10), {"mode": "fp16"}, "unknown inference mode"),
    ],
)
def test_bad_arguments_are_refused(inputs, options, message) -> None:
    with pytest.raises(ValueError, match=message):
        batch_sensitivity(OddBatchesShift(), inputs, **options)
