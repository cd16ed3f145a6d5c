"""Shared fixtures: tiny models and a fake Fashion-MNIST folder (no real data needed),
and the papers' texts and released artefacts where this machine has them."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import numpy as np
import pytest
import torch

from rsutils.checks.classifiers import LinearClassifier
from rsutils.data import Dataset
from rsutils.models.architectures import build_model


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    """Every test writes its cache into a fresh temporary folder."""
    monkeypatch.setenv("RSUTILS_CACHE", str(tmp_path_factory.mktemp("cache")))


SHARED = Path(__file__).resolve().parents[2] / "shared"


@pytest.fixture(scope="session")
def seeds() -> Path:
    """The folder of the papers' texts (``RSUTILS_SEEDS``, else ``../shared/seeds``);
    a test that asks for it is skipped where the texts are missing."""
    folder = Path(os.environ.get("RSUTILS_SEEDS") or SHARED / "seeds")
    if not folder.is_dir():
        pytest.skip(f"the papers' texts are not at {folder}; set RSUTILS_SEEDS")
    return folder


@pytest.fixture(scope="session")
def reference() -> Path:
    """The folder of the papers' released artefacts (``RSUTILS_REFERENCE``, else
    ``../shared/reference``); a test that asks for it is skipped where Cohen et al.'s
    logs or UCAN's generators are missing."""
    folder = Path(os.environ.get("RSUTILS_REFERENCE") or SHARED / "reference")
    missing = [name for name in ("cohen2019", "ucan2025") if not (folder / name).is_dir()]
    if missing:
        pytest.skip(f"{' and '.join(missing)} not in {folder}; set RSUTILS_REFERENCE")
    return folder


@pytest.fixture
def cnn() -> torch.nn.Module:
    torch.manual_seed(0)
    return build_model("small_cnn", "fashion-mnist").eval()


@pytest.fixture
def line_2d() -> LinearClassifier:
    return LinearClassifier(torch.tensor([3.0, -4.0]), b=0.5)


def write_idx(path: Path, array: np.ndarray) -> None:
    """Write ``array`` (uint8) as a gzip-compressed IDX file."""
    header = bytes([0, 0, 0x08, array.ndim]) + b"".join(
        int(s).to_bytes(4, "big") for s in array.shape
    )
    with gzip.open(path, "wb") as handle:
        handle.write(header + array.astype(np.uint8).tobytes())


@pytest.fixture
def fake_fashion_mnist(tmp_path: Path) -> Path:
    """A folder with the four IDX files: 64 training and 40 test images."""
    rng = np.random.default_rng(0)
    for prefix, count in (("train", 64), ("t10k", 40)):
        write_idx(
            tmp_path / f"{prefix}-images-idx3-ubyte.gz", rng.integers(0, 256, (count, 28, 28))
        )
        write_idx(tmp_path / f"{prefix}-labels-idx1-ubyte.gz", rng.integers(0, 10, count))
    return tmp_path


def _separable_data(count: int = 512) -> Dataset:
    """Two classes that differ in mean brightness: learnable in one short epoch."""
    generator = torch.Generator().manual_seed(0)
    labels = torch.arange(count) % 2
    images = (
        0.25
        + 0.5 * labels.float().reshape(-1, 1, 1, 1)
        + 0.05 * torch.randn(count, 1, 28, 28, generator=generator)
    )
    return Dataset("fashion-mnist", "train", images.clamp(0, 1), labels, ("dark", "light"))


@pytest.fixture
def separable_data():
    """A factory of easy two-class training sets of a given size."""
    return _separable_data
