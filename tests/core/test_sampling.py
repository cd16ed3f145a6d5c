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
from rsutils.core.sampling import (
    PHASES,
    STREAMS,
    NoiseStream,
    image_generator,
    stream_generator,
)

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
    "sizes",
    [pytest.param((7, 1000), id="7,1000"), pytest.param((1, 1000), id="1,1000", marks=SLOW)],
)
@pytest.mark.parametrize("noise", NOISES, ids=repr)
def test_certificate_does_not_depend_on_the_batch_size(cnn, noise, sizes) -> None:
    x = torch.rand(1, 28, 28, generator=torch.Generator().manual_seed(0))
    smooth = Smooth(cnn, 10, noise)
    certs = [smooth.certify(x, 50, 1000, 0.001, batch_size=b, seed=5, index=3) for b in sizes]
    assert certs[0] == certs[1]
    predictions = {smooth.predict(x, 300, 0.01, batch_size=b, seed=5) for b in sizes}
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


# ------------------------------------------------------------------ the stream registry


def old_certify_generator(seed: int, index: int, phase: int) -> torch.Generator:
    """``image_generator`` before the registry: spawn key ``(index, phase number)``."""
    sequence = np.random.SeedSequence(entropy=seed, spawn_key=(index, phase))
    return torch.Generator().manual_seed(int(sequence.generate_state(1, np.uint64)[0]) >> 1)


def old_audit_generator(seed: int, index: int, stream: int, point: int) -> torch.Generator:
    """The audit's ``_audit_generator`` before the registry: ``(index, 1000 + k, point)``."""
    sequence = np.random.SeedSequence(entropy=seed, spawn_key=(index, stream, point))
    return torch.Generator().manual_seed(int(sequence.generate_state(1, np.uint64)[0]) >> 1)


OLD_STREAMS = {
    "select": lambda seed, index: old_certify_generator(seed, index, 0),
    "estimate": lambda seed, index: old_certify_generator(seed, index, 1),
    "predict": lambda seed, index: old_certify_generator(seed, index, 2),
    "sigma": lambda seed, index: old_certify_generator(seed, index, 3),
    "boundary": lambda seed, index, point=0: old_audit_generator(seed, index, 1000, point),
    "attack": lambda seed, index, point=0: old_audit_generator(seed, index, 1001, point),
    "verify": lambda seed, index, point=0: old_audit_generator(seed, index, 1002, point),
}
AUDIT = ("boundary", "attack", "verify")


@pytest.mark.parametrize("stream", sorted(OLD_STREAMS))
@pytest.mark.parametrize(("seed", "index"), [(0, 0), (7, 3), (2**40 + 1, 9999)])
def test_every_stream_draws_what_it_drew_before_the_registry(stream, seed, index) -> None:
    """Bit-identical draws: the registry changed no SeedSequence entropy nor spawn key."""
    points = (0, 1, 5) if stream in AUDIT else (None,)
    for point in points:
        keys = () if point is None else (point,)
        old = OLD_STREAMS[stream](seed, index, *keys)
        new = stream_generator(seed, index, stream, *keys, device="cpu")
        assert new.initial_seed() == old.initial_seed()
        first = torch.randn(8, generator=new, dtype=torch.float64)
        assert torch.equal(first, torch.randn(8, generator=old, dtype=torch.float64))
        if point is None:
            again = image_generator(seed, index, stream, torch.device("cpu"))
            assert torch.equal(torch.randn(8, generator=again, dtype=torch.float64), first)


def test_the_streams_seeds_are_pinned() -> None:
    """The seeds of input 0 under seed 0, as written down before the registry existed."""
    seeds = {
        "select": 1317536309490288386,
        "estimate": 7449029282396566744,
        "predict": 6732180131098485628,
        "sigma": 5524574814476092572,
        "boundary": 2507735669887332458,
        "attack": 8256077886149939433,
        "verify": 6785659357025361943,
    }
    assert set(seeds) == set(STREAMS)
    for name, expected in seeds.items():
        keys = (0,) * len(STREAMS[name].sub_keys)
        assert stream_generator(0, 0, name, *keys, device="cpu").initial_seed() == expected
    assert stream_generator(0, 0, "verify", 5, device="cpu").initial_seed() == 8146808402409698370


def test_the_registry_keeps_every_stream_apart() -> None:
    numbers = [key.number for key in STREAMS.values()]
    assert len(set(numbers)) == len(numbers)
    assert dict(PHASES) == {"select": 0, "estimate": 1, "predict": 2, "sigma": 3}
    assert all(STREAMS[name].number >= 1000 and STREAMS[name].sub_keys for name in AUDIT)
    with pytest.raises(TypeError):
        STREAMS["new"] = STREAMS["select"]  # type: ignore[index]


@pytest.mark.parametrize(
    ("stream", "keys", "message"),
    [
        ("warmup", (), r"stream must be one of \['attack', 'boundary', 'estimate'"),
        ("verify", (), r"takes the sub-keys \('point',\), got \(\); pass exactly 1"),
        ("select", (0,), r"takes the sub-keys \(\), got \(0,\); pass exactly 0"),
        ("verify", (-1,), r"point must be a non-negative integer"),
        ("verify", (1.0,), r"point must be a non-negative integer"),
    ],
)
def test_a_stream_needs_its_name_and_exactly_its_sub_keys(stream, keys, message) -> None:
    with pytest.raises(ValueError, match=message):
        stream_generator(0, 0, stream, *keys, device="cpu")


def test_image_generator_serves_the_certification_streams_only() -> None:
    with pytest.raises(ValueError, match=r"phase must be one of \['estimate', 'predict'"):
        image_generator(0, 0, "verify", torch.device("cpu"))
    with pytest.raises(ValueError, match=r"index must be a non-negative integer"):
        image_generator(0, -1, "select", torch.device("cpu"))
    with pytest.raises(ValueError, match=r"seed must be a non-negative integer"):
        stream_generator(True, 0, "select", device="cpu")
