"""The mu-swap probe and the mu = 0 ablation see an offset that decides the class."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from rsutils.anisotropic.generators import FixedNoise, NoiseGenerator, WithoutOffset
from rsutils.anisotropic.leakage import different_class_pairs, mu_swap_votes


class LabelWriter(NoiseGenerator):
    """mu(x) = +1 on pixel 0 if x's pixel 1 is bright, else −1: the offset carries the label."""

    kind = "label-writer"
    depends_on_input = True

    def forward(self, x):
        mu = torch.zeros_like(x)
        mu[:, 0] = torch.where(x[:, 1] > 0.5, 1.0, -1.0)
        return mu, torch.full_like(x, 0.1)


def reads_pixel_zero() -> nn.Module:
    """Class 1 when pixel 0 exceeds 0.5, else class 0 (the offset's pixel)."""
    layer = nn.Linear(2, 2)
    with torch.no_grad():
        layer.weight.copy_(torch.tensor([[-1.0, 0.0], [1.0, 0.0]]))
        layer.bias.copy_(torch.tensor([0.5, -0.5]))
    return layer.eval()


def test_votes_follow_the_offset_when_mu_decides() -> None:
    images = torch.tensor([[0.5, 0.0], [0.5, 1.0]])  # class 0 and class 1 (pixel 1)
    labels = torch.tensor([0, 1])
    votes = mu_swap_votes(
        reads_pixel_zero(), LabelWriter(), images, labels, np.array([[0, 1], [1, 0]]), 1.0, 200
    )
    assert votes["offset"].min() > 0.99 and votes["own"].max() < 0.01
    mute = WithoutOffset(LabelWriter())
    votes = mu_swap_votes(reads_pixel_zero(), mute, images, labels, np.array([[0, 1]]), 1.0, 2000)
    # Without mu, pixel 0 sits at the threshold: about half the votes each way.
    assert abs(float(votes["offset"].iloc[0]) - 0.5) < 4 * 0.5 / np.sqrt(2000)


def test_no_offset_no_swap() -> None:
    images, labels = torch.tensor([[0.9, 0.0], [0.1, 1.0]]), torch.tensor([1, 0])
    fixed = FixedNoise(torch.full((2,), 0.01))
    votes = mu_swap_votes(
        reads_pixel_zero(), fixed, images, labels, np.array([[0, 1], [1, 0]]), 1.0, 100
    )
    assert (votes["own"] == 1.0).all() and (votes["offset"] == 0.0).all()


def test_pairs_have_different_classes_and_are_seeded() -> None:
    labels = torch.tensor([0, 0, 1, 2, 2, 1])
    pairs = different_class_pairs(labels, 50, seed=3)
    assert pairs.shape == (50, 2) and all(labels[i] != labels[j] for i, j in pairs)
    assert np.array_equal(pairs, different_class_pairs(labels, 50, seed=3))
    with pytest.raises(ValueError, match="single class"):
        different_class_pairs(torch.zeros(4), 3)
