"""On a GPU: noise is drawn where the model lives, and the guarantees still hold.

Skipped on machines without CUDA (the CPU versions of these checks run everywhere).
The classifiers are linear and in float64, so that the base model gives the same label
to the same input whatever the batch and whatever kernel the GPU picks for it.
"""

import numpy as np
import pytest
import torch
from scipy.stats import norm

from rsutils import (
    Anisotropic,
    CertificateMemory,
    DataDependentSmooth,
    ExponentialLinf,
    Gaussian,
    SigmaAscent,
    Smooth,
    UniformCube,
    spatial_pattern,
)
from rsutils.checks.classifiers import LinearClassifier
from rsutils.cli.bench import benchmark

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

W = torch.randn(784, generator=torch.Generator().manual_seed(0))
NOISES = [
    Gaussian(0.25),
    UniformCube(0.5),
    ExponentialLinf(0.002),
    Anisotropic(Gaussian(0.25), spatial_pattern(28, 28), 0.05 * spatial_pattern(28, 28)),
]


@pytest.fixture
def line() -> LinearClassifier:
    return LinearClassifier(W, b=0.1).cuda()


@pytest.mark.parametrize("noise", NOISES, ids=repr)
def test_certificates_on_the_gpu_do_not_depend_on_the_batch_size(line, noise) -> None:
    x = torch.rand(1, 28, 28, generator=torch.Generator().manual_seed(1))
    smooth = Smooth(line, 2, noise)
    assert smooth.device.type == "cuda"
    certs = [
        smooth.certify(x, 50, 3000, 0.001, batch_size=b, seed=5, index=3) for b in (1, 7, 1000)
    ]
    assert certs[0] == certs[1] == certs[2]


def test_the_gpu_radius_is_sound_and_nearly_tight(line) -> None:
    sigma = 0.5
    x = line.point_at_distance(sigma * norm.ppf(0.99)).cuda()
    cert = Smooth(line, 2, Gaussian(sigma)).certify(x, 100, 100_000, 0.001, seed=0)
    distance = line.distance(x)
    assert cert.prediction == 1 and 0.95 * distance < cert.radius <= distance


def test_data_dependent_certification_runs_on_the_gpu(line) -> None:
    x = torch.rand(784, generator=torch.Generator().manual_seed(2)).double()
    with CertificateMemory() as memory:
        smooth = DataDependentSmooth(line, 2, SigmaAscent(sigma0=0.25, iterations=5), memory)
        answer = smooth.certify(x, 50, 2000, 0.001, seed=0, key="x")
        again = smooth.certify(x, 50, 2000, 0.001, seed=0, key="x")
    assert answer.scale > 0 and np.isfinite(answer.radius)
    assert (again.prediction, again.radius) == (answer.prediction, answer.radius)


def test_the_benchmark_times_the_gpu(line) -> None:
    result = benchmark(line, (1, 28, 28), Gaussian(0.25), num_classes=2, batch_size=1000)
    assert result.raw_per_second > 0 and result.sampling_per_second > 0
