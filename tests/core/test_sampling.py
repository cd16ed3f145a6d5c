"""Same seed, same certificate: whatever the batch size or the split of a run."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from rsutils import Smooth
from rsutils.anisotropic.noise import Anisotropic
from rsutils.anisotropic.patterns import spatial_pattern
from rsutils.core.noise import ExponentialLinf, Gaussian, Laplace, PowerLawLinf, UniformCube
from rsutils.core.sampling import NoiseStream
from rsutils.core.streams import image_generator

SLOW = pytest.mark.slow
NOISES = [
    Gaussian(0.25),
    Laplace(0.2),
    UniformCube(0.5),
    ExponentialLinf(0.002),
    PowerLawLinf(0.5, a=800.0),
    Anisotropic(Gaussian(0.25), spatial_pattern(28, 28), 0.05 * spatial_pattern(28, 28)),
]


@pytest.mark.parametrize(
    ("sizes", "n"),
    [
        pytest.param((7, 1000), 1000, id="7,1000"),
        # One draw per forward pass: fewer draws, the same path through the batching.
        pytest.param((1, 1000), 250, id="1,1000", marks=SLOW),
    ],
)
@pytest.mark.parametrize("noise", NOISES, ids=repr)
def test_certificate_does_not_depend_on_the_batch_size(cnn, noise, sizes, n) -> None:
    x = torch.rand(1, 28, 28, generator=torch.Generator().manual_seed(0))
    smooth = Smooth(cnn, 10, noise)
    certs = [smooth.certify(x, 50, n, 0.001, batch_size=b, seed=5, index=3) for b in sizes]
    assert certs[0] == certs[1]
    predictions = {smooth.predict(x, n // 4, 0.01, batch_size=b, seed=5) for b in sizes}
    assert len(predictions) == 1


def test_counts_do_not_depend_on_the_thread_count(cnn) -> None:
    """Certification given a model is the same with 1 or 2 torch threads (training is not)."""
    x = torch.rand(1, 28, 28, generator=torch.Generator().manual_seed(1))
    smooth = Smooth(cnn, 10, Gaussian(0.5))
    before = torch.get_num_threads()
    counts = {}
    try:
        for threads in (1, 2):
            torch.set_num_threads(threads)
            counts[threads] = smooth.sample_counts(x, 5000, seed=0, index=0)
    finally:
        torch.set_num_threads(before)
    assert np.array_equal(counts[1], counts[2])
    assert (counts[1] > 0).sum() >= 2, "a spread of classes, so that ties could show"


def test_counts_depend_on_seed_index_and_phase(cnn) -> None:
    x = torch.full((1, 28, 28), 0.5)
    smooth = Smooth(cnn, 10, Gaussian(1.0))
    base = smooth.sample_counts(x, 2000, seed=0, index=0)
    for other in (dict(seed=1, index=0), dict(seed=0, index=1)):
        assert not np.array_equal(base, smooth.sample_counts(x, 2000, **other))
    assert not np.array_equal(base, smooth.sample_counts(x, 2000, seed=0, phase="select"))
    np.testing.assert_array_equal(base, smooth.sample_counts(x, 2000, seed=0, index=0))


@settings(max_examples=30, deadline=None)
@given(
    total=st.integers(1, 2500),
    cuts=st.lists(st.integers(1, 1200), min_size=1, max_size=12),
)
def test_a_noise_stream_serves_the_same_draws_however_requests_are_cut(total, cuts) -> None:
    shape = torch.Size([3, 4])

    def draws(sizes: list[int]) -> torch.Tensor:
        generator = image_generator(9, 2, "estimate", torch.device("cpu"))
        stream = NoiseStream(Gaussian(1.0), shape, total, generator, torch.float32)
        return torch.cat([stream.fill_(torch.empty(k, *shape)) for k in sizes])

    sizes, left = [], total
    for cut in cuts:
        if left == 0:
            break
        sizes.append(min(cut, left))
        left -= sizes[-1]
    if left:
        sizes.append(left)
    torch.testing.assert_close(draws(sizes), draws([total]), rtol=0, atol=0)


def test_asking_a_stream_for_more_than_its_total_is_an_error() -> None:
    stream = NoiseStream(Gaussian(1.0), torch.Size([2]), 5, torch.Generator(), torch.float32)
    stream.fill_(torch.empty(5, 2))
    with pytest.raises(RuntimeError, match=r"exhausted"):
        stream.fill_(torch.empty(1, 2))
