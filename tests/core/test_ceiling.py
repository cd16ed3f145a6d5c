"""Whether CERTIFY sits at its ceiling, found by stopping at the first miss."""

import pytest
import torch
from scipy.stats import norm

from rsutils import Smooth
from rsutils.checks.classifiers import LinearClassifier
from rsutils.core.ceiling import reaches_ceiling
from rsutils.core.noise import Gaussian

SIGMA, N0, N = 0.5, 50, 2000


@pytest.fixture
def model() -> LinearClassifier:
    torch.manual_seed(1)
    return LinearClassifier(torch.randn(20), b=0.3)


def at(model: LinearClassifier, pA: float) -> tuple[Smooth, torch.Tensor]:
    x = model.point_at_distance(SIGMA * norm.ppf(pA), 1)
    return Smooth(model, 2, Gaussian(SIGMA), input_range=None), x


# pA from far below the ceiling to beyond it: at pA = 1 - 1/n about a third of the
# runs reach it, so both answers occur at the same input.
@pytest.mark.parametrize("pA", [0.6, 0.99, 1 - 1 / N, 1 - 1e-6])
@pytest.mark.parametrize("step", [100, 300, N])  # 300 does not divide n
def test_the_answer_is_certifys_for_every_seed(model, pA: float, step: int) -> None:
    smooth, x = at(model, pA)
    answers = set()
    for index in range(12):
        cert = smooth.certify(x, N0, N, 0.001, batch_size=700, seed=5, index=index)
        found = reaches_ceiling(smooth, x, N0, N, seed=5, index=index, step=step)
        assert found.selected == cert.selected
        assert found.at_ceiling == (cert.count == N)
        assert found.draws == N if found.at_ceiling else 0 < found.draws <= N
        answers.add(found.at_ceiling)
    if pA == 1 - 1 / N:
        assert answers == {True, False}  # the input where one draw decides


def test_far_below_the_ceiling_it_stops_after_one_step(model) -> None:
    smooth, x = at(model, 0.9)
    found = reaches_ceiling(smooth, x, N0, N, seed=0, step=100)
    assert not found.at_ceiling and found.draws == 100  # P(100 hits) = 0.9^100 < 1e-4


def test_bad_counts_are_refused(model) -> None:
    smooth, x = at(model, 0.9)
    for bad in ({"n0": 0}, {"n": -1}, {"step": 0}):
        args = {"n0": N0, "n": N, "step": 100, **bad}
        with pytest.raises(ValueError, match="must be a positive integer"):
            reaches_ceiling(smooth, x, args["n0"], args["n"], seed=0, step=args["step"])
