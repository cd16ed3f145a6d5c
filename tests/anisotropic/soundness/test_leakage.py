"""The mu-swap and label-channel probes see an offset that decides the class."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch
from torch import nn

from rsutils.anisotropic.generators import FixedNoise, NoiseGenerator, WithoutOffset
from rsutils.anisotropic.soundness.leakage import (
    LABEL_PROBES,
    different_class_pairs,
    label_channel_votes,
    mu_swap_votes,
    same_class_donors,
    vote_share_table,
)


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


def reads_pixel_one() -> nn.Module:
    """Class 1 when pixel 1 exceeds 0.5 (the image's own evidence), ignoring pixel 0."""
    layer = nn.Linear(2, 2)
    with torch.no_grad():
        layer.weight.copy_(torch.tensor([[0.0, -1.0], [0.0, 1.0]]))
        layer.bias.copy_(torch.tensor([0.5, -0.5]))
    return layer.eval()


#: Two inputs of each class; pixel 1 says the class, pixel 0 sits at the threshold.
POOL = torch.tensor([[0.5, 0.0], [0.5, 0.1], [0.5, 1.0], [0.5, 0.9]])
POOL_LABELS = torch.tensor([0, 0, 1, 1])


def test_an_offset_that_writes_the_label_is_read_without_the_image() -> None:
    """mu(x) puts ±1 on pixel 0: on a constant background c = 0.5, the classifier that
    reads pixel 0 still gets every input's class (mu_only = 1), while the background
    alone sits on the threshold (about half the votes)."""
    draws = 2000
    votes = label_channel_votes(
        reads_pixel_zero(), LabelWriter(), POOL, POOL_LABELS, [0, 1, 2, 3], 1.0, draws,
        background=0.5, seed=1,
    )  # fmt: skip
    assert list(votes.columns) == ["idx", "label", "donor", *LABEL_PROBES]
    assert (votes[["own", "same_class", "mu_only"]] == 1.0).all().all()
    tolerance = 4 * 0.5 / np.sqrt(draws)  # four standard errors of a fair coin
    assert (abs(votes["background_only"] - 0.5) < tolerance).all()
    mute = label_channel_votes(
        reads_pixel_zero(), WithoutOffset(LabelWriter()), POOL, POOL_LABELS, [0, 2], 1.0,
        draws, background=0.5, seed=1,
    )  # fmt: skip
    assert (abs(mute["mu_only"] - 0.5) < tolerance).all()  # no offset, no channel


def test_no_label_channel_when_the_classifier_reads_the_image() -> None:
    """The classifier of pixel 1 ignores the offset: with the image replaced by c = 0
    every input is class 0, so mu_only equals the background's share (1 for class 0,
    0 for class 1), and own and same-class stay right."""
    votes = label_channel_votes(
        reads_pixel_one(), LabelWriter(), POOL, POOL_LABELS, [0, 1, 2, 3], 0.1, 500,
        background=0.0,
    )  # fmt: skip
    assert (votes["own"] == 1.0).all() and (votes["same_class"] == 1.0).all()
    assert votes["mu_only"].tolist() == [1.0, 1.0, 0.0, 0.0]
    assert votes["mu_only"].tolist() == votes["background_only"].tolist()


def test_donors_share_the_class_and_each_depends_on_its_input_only() -> None:
    labels = torch.tensor([0, 1, 0, 2, 1, 2, 0])
    donors = same_class_donors(labels, [0, 1, 3, 6], seed=2)
    for i, j in zip([0, 1, 3, 6], donors, strict=True):
        assert j != i and labels[j] == labels[i]
    assert np.array_equal(same_class_donors(labels, [6, 3], seed=2), donors[[3, 2]])
    with pytest.raises(ValueError, match=r"input 1 is the only one of class 1"):
        same_class_donors(torch.tensor([0, 1, 0]), [1])
    with pytest.raises(ValueError, match=r"indices must be positions in labels \[0, 3\)"):
        same_class_donors(torch.tensor([0, 1, 0]), [3])


def test_the_votes_are_seeded_per_input() -> None:
    args = (reads_pixel_zero(), LabelWriter(), POOL, POOL_LABELS)
    both = label_channel_votes(*args, [0, 3], 1.0, 50, background=0.5, seed=4)
    alone = label_channel_votes(*args, [3], 1.0, 50, background=0.5, seed=4)
    pd.testing.assert_frame_equal(both.iloc[[1]].reset_index(drop=True), alone)
    with pytest.raises(ValueError, match="background must be a number"):
        label_channel_votes(*args, [0], 1.0, 5, background="grey")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="background must be finite"):
        label_channel_votes(*args, [0], 1.0, 5, background=float("nan"))


def test_the_vote_table_has_the_mean_and_a_bootstrap_interval() -> None:
    """On 400 inputs the percentile interval is the normal one, mean ± 1.96·sd/√n, to
    within a tenth of its half-width (the bootstrap's own error at this n)."""
    rng = np.random.default_rng(12)
    shares = rng.beta(2, 3, size=400)
    table = vote_share_table({"probe": shares, "constant": np.full(10, 0.25)}, seed=0)
    assert list(table.columns) == ["inputs", "mean", "low", "high"]
    row = table.loc["probe"]
    half = 1.96 * shares.std(ddof=1) / np.sqrt(shares.size)
    assert row["mean"] == pytest.approx(shares.mean())
    assert row["low"] == pytest.approx(shares.mean() - half, abs=0.1 * half)
    assert row["high"] == pytest.approx(shares.mean() + half, abs=0.1 * half)
    assert table.loc["constant", ["mean", "low", "high"]].tolist() == [0.25] * 3
    again = vote_share_table({"probe": shares, "constant": np.full(10, 0.25)}, seed=0)
    pd.testing.assert_frame_equal(table, again)
    with pytest.raises(ValueError, match=r"fractions in \[0, 1\]"):
        vote_share_table({"bad": [1.5]})
    with pytest.raises(ValueError, match="non-empty"):
        vote_share_table({"empty": []})
