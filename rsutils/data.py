"""Datasets, resolved without surprises.

Fashion-MNIST (the default benchmark) is looked for, in order, in

1. an explicit ``root`` argument, or the ``RSUTILS_DATA`` environment variable;
2. ``/usr/share/datasets/fashion-mnist`` (Debian's ``dataset-fashion-mnist``);
3. torchvision's download (into ``root``, ``RSUTILS_DATA`` or the rsutils cache);

and a clear error names all three ways when none works. A folder counts when it holds
the four original IDX files (``train-images-idx3-ubyte.gz`` etc.), directly or in
torchvision's ``FashionMNIST/raw`` layout. MNIST and CIFAR-10 go through torchvision
(download, or a local copy under ``root``).

Images come back as float32 tensors in [0, 1] of shape ``(N, C, H, W)``, labels as
int64; normalisation belongs to the model.
"""

from __future__ import annotations

import gzip
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from rsutils.cache import cache_dir

__all__ = ["DEBIAN_FASHION_MNIST", "Dataset", "fashion_mnist_folder", "load_dataset"]

DEBIAN_FASHION_MNIST = Path("/usr/share/datasets/fashion-mnist")

_FILES = {
    "train": ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
    "test": ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"),
}

FASHION_MNIST_CLASSES = (
    "T-shirt/top",
    "Trouser",
    "Pullover",
    "Dress",
    "Coat",
    "Sandal",
    "Shirt",
    "Sneaker",
    "Bag",
    "Ankle boot",
)


@dataclass(frozen=True)
class Dataset:
    """Images in [0, 1] ``(N, C, H, W)``, int64 labels, and class names."""

    name: str
    split: str
    images: torch.Tensor
    labels: torch.Tensor
    classes: tuple[str, ...]

    def __len__(self) -> int:
        return len(self.labels)

    @property
    def num_classes(self) -> int:
        return len(self.classes)


def _holds_idx_files(folder: Path) -> bool:
    return all((folder / f).is_file() for pair in _FILES.values() for f in pair)


def _idx_folder(candidate: Path) -> Path | None:
    for folder in (candidate, candidate / "FashionMNIST" / "raw"):
        if _holds_idx_files(folder):
            return folder
    return None


def _configured_root(root: str | os.PathLike[str] | None) -> Path | None:
    if root is not None:
        return Path(root)
    env = os.environ.get("RSUTILS_DATA")
    return Path(env) if env else None


def fashion_mnist_folder(
    root: str | os.PathLike[str] | None = None, *, download: bool = True
) -> Path:
    """The folder holding Fashion-MNIST's IDX files, by the resolution order above."""
    configured = _configured_root(root)
    for candidate in (configured, DEBIAN_FASHION_MNIST):
        if candidate is not None and (found := _idx_folder(candidate)):
            return found
    target = configured or cache_dir() / "data"
    error: Exception | None = None
    if download:
        try:
            from torchvision.datasets import FashionMNIST

            FashionMNIST(str(target), train=True, download=True)
            FashionMNIST(str(target), train=False, download=True)
        except Exception as exc:  # network or checksum failure: report below
            error = exc
        if (found := _idx_folder(target)) is not None:
            return found
    raise FileNotFoundError(
        "Fashion-MNIST was not found. Either\n"
        "  1. pass root=... or set RSUTILS_DATA to a folder holding the four IDX .gz files;\n"
        f"  2. install Debian's package: apt-get install dataset-fashion-mnist "
        f"(files in {DEBIAN_FASHION_MNIST});\n"
        f"  3. go online so torchvision can download it into {target}"
        + (f" (the download failed: {error})" if error else " (download was disabled)")
    )


def _read_idx(path: Path) -> np.ndarray:
    """Read an IDX file (gzip-compressed), the format of the MNIST family."""
    with gzip.open(path, "rb") as handle:
        data = handle.read()
    if data[:2] != b"\x00\x00" or data[2] != 0x08:
        raise ValueError(f"{path} is not an unsigned-byte IDX file")
    ndim = data[3]
    shape = tuple(int.from_bytes(data[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim))
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(shape)


def _load_fashion_mnist(split: str, root: str | os.PathLike[str] | None) -> Dataset:
    folder = fashion_mnist_folder(root)
    image_file, label_file = _FILES[split]
    images = torch.from_numpy(_read_idx(folder / image_file).copy()).float().div_(255)
    labels = torch.from_numpy(_read_idx(folder / label_file).astype(np.int64))
    return Dataset("fashion-mnist", split, images.unsqueeze(1), labels, FASHION_MNIST_CLASSES)


def _load_torchvision(name: str, split: str, root: str | os.PathLike[str] | None) -> Dataset:
    from torchvision import datasets

    target = _configured_root(root) or cache_dir() / "data"
    cls = {"mnist": datasets.MNIST, "cifar10": datasets.CIFAR10}[name]
    try:
        data = cls(str(target), train=split == "train", download=True)
    except Exception as exc:
        raise FileNotFoundError(
            f"{name} is not under {target} and could not be downloaded ({exc}); go online, or "
            f"pass root=... / set RSUTILS_DATA to a folder holding torchvision's {name} files"
        ) from exc
    array = np.asarray(data.data)
    images = torch.from_numpy(array).float().div_(255)
    images = images.unsqueeze(1) if images.dim() == 3 else images.permute(0, 3, 1, 2)
    labels = torch.as_tensor(np.asarray(data.targets), dtype=torch.int64)
    return Dataset(name, split, images.contiguous(), labels, tuple(data.classes))


def load_dataset(
    name: str = "fashion-mnist", split: str = "test", root: str | os.PathLike[str] | None = None
) -> Dataset:
    """Load ``name`` (fashion-mnist, mnist or cifar10), ``split`` train or test."""
    if split not in _FILES:
        raise ValueError(f"split must be 'train' or 'test', got {split!r}")
    if name == "fashion-mnist":
        return _load_fashion_mnist(split, root)
    if name in ("mnist", "cifar10"):
        return _load_torchvision(name, split, root)
    raise ValueError(f"unknown dataset {name!r}; choose fashion-mnist, mnist or cifar10")
