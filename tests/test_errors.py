"""Bad input (BOOK.md §7) gets an error whose message names the fix."""

import pytest
import torch

from rsutils import Smooth, read_log
from rsutils.data import load_dataset
from rsutils.models import build_model, load_checkpoint
from rsutils.noise import Gaussian, Laplace
from rsutils.profiles import get_profile

X = torch.rand(1, 28, 28)


@pytest.fixture
def smooth(cnn) -> Smooth:
    return Smooth(cnn, 10, Gaussian(0.25))


@pytest.mark.parametrize("alpha", [0, 1, -0.5, 2.0])
def test_alpha_outside_zero_one(smooth, alpha) -> None:
    with pytest.raises(ValueError, match=r"alpha must lie strictly between 0 and 1.*alpha=0.001"):
        smooth.certify(X, 10, 100, alpha)
    with pytest.raises(ValueError, match=r"alpha must lie strictly between 0 and 1"):
        smooth.predict(X, 100, alpha)


@pytest.mark.parametrize(("n0", "n"), [(0, 100), (10, 0), (-1, 100), (10, 2.5), (True, 10)])
def test_sample_sizes_below_one(smooth, n0, n) -> None:
    with pytest.raises(ValueError, match=r"must be a positive integer"):
        smooth.certify(X, n0, n, 0.001)


def test_sigma_not_positive() -> None:
    with pytest.raises(ValueError, match=r"sigma must be a positive finite number"):
        Gaussian(sigma=0)


def test_nan_image(smooth) -> None:
    x = X.clone()
    x[0, 3, 3] = float("nan")
    with pytest.raises(ValueError, match=r"NaN or infinite.*clean the input"):
        smooth.certify(x, 10, 100, 0.001)


def test_input_with_a_batch_dimension_names_the_expected_shape(smooth) -> None:
    with pytest.raises(RuntimeError, match=r"without a batch dimension"):
        smooth.certify(torch.rand(2, 1, 28, 28), 10, 100, 0.001)


def test_wrong_number_of_classes(cnn) -> None:
    with pytest.raises(ValueError, match=r"expected logits of shape \(10, 5\).*num_classes=5"):
        Smooth(cnn, 5, Gaussian(0.25)).certify(X, 10, 100, 0.001, batch_size=10)


def test_model_in_training_mode(cnn) -> None:
    with pytest.raises(ValueError, match=r"call model.eval"):
        Smooth(cnn.train(), 10, Gaussian(0.25)).predict(X, 10, 0.01)


def test_unknown_noise_norm_pair(cnn) -> None:
    with pytest.raises(ValueError, match=r"choose one of the supported family/norm pairs"):
        Smooth(cnn, 10, Laplace(0.25), norm="l2")


def test_noise_must_be_a_family(cnn) -> None:
    with pytest.raises(TypeError, match=r"Gaussian\(sigma=0.25\)"):
        Smooth(cnn, 10, 0.25)  # type: ignore[arg-type]


def test_unknown_profile() -> None:
    with pytest.raises(ValueError, match=r"unknown profile 'fast'.*smoke, cpu, paper"):
        get_profile("fast")


def test_missing_dataset_names_all_three_ways(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr("rsutils.data.DEBIAN_FASHION_MNIST", tmp_path / "absent")
    from rsutils import data

    with pytest.raises(FileNotFoundError) as info:
        data.fashion_mnist_folder(tmp_path / "empty", download=False)
    message = str(info.value)
    assert "RSUTILS_DATA" in message and "dataset-fashion-mnist" in message and "online" in message


def test_unknown_dataset_and_split() -> None:
    with pytest.raises(ValueError, match=r"choose fashion-mnist, mnist or cifar10"):
        load_dataset("svhn")
    with pytest.raises(ValueError, match=r"'train' or 'test'"):
        load_dataset("fashion-mnist", "val")


def test_missing_log_and_checkpoint(tmp_path) -> None:
    with pytest.raises(FileNotFoundError, match=r"python -m rsutils certify"):
        read_log(tmp_path / "none.tsv")
    with pytest.raises(FileNotFoundError, match=r"no checkpoint"):
        load_checkpoint(tmp_path / "none.pt")


def test_unknown_architecture() -> None:
    with pytest.raises(ValueError, match=r"choose one of"):
        build_model("vgg", "cifar10")


def test_unknown_phase_and_bad_seed(smooth) -> None:
    with pytest.raises(
        ValueError, match=r"phase must be one of \['estimate', 'predict', 'select', 'sigma'\]"
    ):
        smooth.sample_counts(X, 10, seed=0, phase="warmup")
    with pytest.raises(ValueError, match=r"seed must be a non-negative integer or None"):
        smooth.certify(X, 10, 100, 0.001, seed=-1)
