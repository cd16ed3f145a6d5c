"""Datasets, resolved without surprises.

Fashion-MNIST (the default benchmark) is looked for, in order, in

1. an explicit ``root`` argument, or the ``RSUTILS_DATA`` environment variable;
2. ``/usr/share/datasets/fashion-mnist`` (Debian's ``dataset-fashion-mnist``);
3. torchvision's download (into ``root``, ``RSUTILS_DATA`` or the rsutils cache);

and a clear error names all three ways when none works. A folder counts when it holds
the four original IDX files (``train-images-idx3-ubyte.gz`` etc.), directly or in
torchvision's ``FashionMNIST/raw`` layout. MNIST and CIFAR-10 go through torchvision
(download, or a local copy under ``root``).

ImageNet (``imagenet``) is an ``ImageFolder`` tree: its ``train`` split is
``<folder>/train`` and its ``test`` split ``<folder>/val`` (Cohen et al. certify on the
validation set), with ``<folder>`` the first of

1. an explicit ``root`` argument (``--data-root``);
2. the ``IMAGENET_DIR`` environment variable (Cohen et al.'s);
3. the ``RSUTILS_DATA`` environment variable;

each taken as it is or with ``imagenet/`` appended. ``folder:PATH`` is a folder of class
subfolders of your own: ``PATH/train`` and ``PATH/test`` (or ``PATH/val``) are its
splits if it has them, else ``PATH`` itself is its test split (and it has no training
split). Both are read lazily and preprocessed as :mod:`rsutils.image_folders` describes
(``image_size`` for ``folder:PATH``: resize each image's short side, crop the centre;
``class_order``: the class folders in the order of the model's outputs, instead of
their sorted names).

A folder's labels index its classes, while a model's outputs index the classes it was
trained on: when the model's class names are known (:data:`DATASET_CLASSES` for a
checkpoint of a named dataset, torchvision's for its weights), :func:`in_model_order`
compares them with the folder's names, puts the labels in the model's order when the
two name the same classes in another order (with a :class:`ClassOrderWarning`), and
refuses names that differ, rather than certify against the wrong labels.

Images come back as float32 in [0, 1] of shape ``(N, C, H, W)``: a tensor, or for
image folders a :class:`~rsutils.image_folders.FolderImages` that decodes the images
when indexed (``images[i]``, ``images[a:b]``, ``images[indices]``); labels are int64
and normalisation belongs to the model.
"""

from __future__ import annotations

import gzip
import os
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import torch

from rsutils.cache import cache_dir
from rsutils.image_folders import (
    FolderImages,
    ImageFolderData,
    check_image_size,
    listed,
    read_image_folder,
    read_imagenet,
)

__all__ = [
    "DATASET_CLASSES",
    "DEBIAN_FASHION_MNIST",
    "FOLDER_PREFIX",
    "NAMED_DATASETS",
    "ClassOrderWarning",
    "Dataset",
    "check_dataset_name",
    "class_key",
    "fashion_mnist_folder",
    "imagenet_folder",
    "in_model_order",
    "load_dataset",
]

DEBIAN_FASHION_MNIST = Path("/usr/share/datasets/fashion-mnist")
#: The datasets known by name; ``folder:PATH`` names a folder of class subfolders.
NAMED_DATASETS = ("fashion-mnist", "mnist", "cifar10", "imagenet")
FOLDER_PREFIX = "folder:"
#: ImageNet's folder of each split (Cohen et al. certify on the validation set).
IMAGENET_SPLITS = {"train": "train", "test": "val"}

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
#: The class names of the datasets known by name, in the order of their labels (a
#: model trained on one has its outputs in this order); ImageNet's are WordNet IDs,
#: which the library does not ship.
DATASET_CLASSES: dict[str, tuple[str, ...]] = {
    "fashion-mnist": FASHION_MNIST_CLASSES,
    "mnist": tuple(f"{d} - {w}" for d, w in enumerate(
        ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
    )),
    "cifar10": (
        "airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship",
        "truck",
    ),
}  # fmt: skip


@dataclass(frozen=True)
class Dataset:
    """Images in [0, 1] ``(N, C, H, W)`` (a tensor, or images decoded when indexed),
    int64 labels, and class names."""

    name: str
    split: str
    images: torch.Tensor | FolderImages
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
    """Read an IDX file (gzip-compressed), the format of the MNIST family; a damaged or
    truncated one is a one-line ``ValueError`` naming it."""
    try:
        with gzip.open(path, "rb") as handle:
            data = handle.read()
        if data[:2] != b"\x00\x00" or data[2] != 0x08:
            raise ValueError("not an unsigned-byte IDX file")
        ndim = data[3]
        shape = tuple(int.from_bytes(data[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim))
        return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(shape)
    except (OSError, EOFError, ValueError, IndexError) as error:  # gzip's and the layout's
        raise ValueError(
            f"{path} is not a readable gzip-compressed IDX file ({error}); it may be truncated "
            "or damaged: copy it again, or delete it to download the dataset again"
        ) from None


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


def check_dataset_name(name: str) -> str:
    """``name`` if it names a dataset (one of :data:`NAMED_DATASETS`, or ``folder:PATH``)."""
    if name in NAMED_DATASETS or (name.startswith(FOLDER_PREFIX) and name[len(FOLDER_PREFIX) :]):
        return name
    if name == FOLDER_PREFIX:
        raise ValueError("folder: needs the folder's path, as in folder:my_images")
    raise ValueError(
        f"unknown dataset {name!r}; choose {', '.join(NAMED_DATASETS)}, or folder:PATH for "
        "a folder holding one subfolder of images per class"
    )


def load_dataset(
    name: str = "fashion-mnist",
    split: str = "test",
    root: str | os.PathLike[str] | None = None,
    *,
    image_size: int | None = None,
    class_order: Sequence[str] | None = None,
) -> Dataset:
    """Load ``name`` (fashion-mnist, mnist, cifar10, imagenet or folder:PATH), ``split``
    train or test; ``image_size`` S resizes and crops folder:PATH's images to S×S, and
    ``class_order`` names its class folders in the order of the model's outputs."""
    if split not in _FILES:
        raise ValueError(f"split must be 'train' or 'test', got {split!r}")
    check_dataset_name(name)
    check_image_size(image_size)
    folder = name.startswith(FOLDER_PREFIX)
    for given, option in ((image_size, "image_size (--image-size)"),
                          (class_order, "class_order (--class-order)")):  # fmt: skip
        if given is not None and not folder:
            raise ValueError(f"{option} applies to folder:PATH datasets, not to {name}; drop it")
    if folder:
        return _load_folder(name, split, root, image_size, class_order)
    if name == "imagenet":
        return _from_folder("imagenet", split, read_imagenet(imagenet_folder(split, root)))
    if name == "fashion-mnist":
        return _load_fashion_mnist(split, root)
    return _load_torchvision(name, split, root)


def imagenet_folder(split: str = "test", root: str | os.PathLike[str] | None = None) -> Path:
    """ImageNet's folder of ``split`` (``train``, or ``val`` for test), by the order above."""
    sub = IMAGENET_SPLITS[split]
    if root is not None:
        bases = [("root", Path(root))]
    else:
        variables = ("IMAGENET_DIR", "RSUTILS_DATA")
        bases = [(v, Path(os.environ[v])) for v in variables if os.environ.get(v)]
    for _, base in bases:
        for candidate in (base / sub, base / "imagenet" / sub):
            if candidate.is_dir():
                return candidate
    looked = "; ".join(f"{where} {base}" for where, base in bases) or "none is set"
    raise FileNotFoundError(
        f"ImageNet's {sub}/ folder was not found ({looked}): pass --data-root (root=...) or set "
        f"IMAGENET_DIR to the folder holding train/ and val/, each with one folder per class"
    )


def _load_folder(
    name: str,
    split: str,
    root: str | os.PathLike[str] | None,
    image_size: int | None,
    class_order: Sequence[str] | None,
) -> Dataset:
    if root is not None:
        raise ValueError(f"--data-root (root=...) does not apply to {name}; its path names it")
    folder = _split_folder(Path(name[len(FOLDER_PREFIX) :]).expanduser(), split)
    found = read_image_folder(folder, image_size=image_size, class_order=class_order)
    return _from_folder(name, split, found)


def _split_folder(folder: Path, split: str) -> Path:
    """``folder/train``, ``folder/test`` or ``folder/val``, or ``folder`` for its test split."""
    if not folder.is_dir():
        return folder  # read_image_folder names what is wrong with it
    named = [folder / sub for sub in ("test", "val") if (folder / sub).is_dir()]
    if split == "test":
        if named:
            return named[0]
        if (folder / "train").is_dir():
            raise FileNotFoundError(
                f"{folder} has train/ but no test/ or val/ folder; add one, or pass --split train"
            )
        return folder
    if (folder / "train").is_dir():
        return folder / "train"
    raise FileNotFoundError(
        f"{folder} has no train/ folder, so it is a test split only; pass --split test, or "
        f"put the training images in {folder / 'train'} and the test images in {folder / 'test'}"
    )


def _from_folder(name: str, split: str, found: ImageFolderData) -> Dataset:
    return Dataset(name, split, found.images, found.labels, found.classes)


class ClassOrderWarning(UserWarning):
    """A folder's labels were put in the order of a model's classes, not of the sorted
    folder names (:func:`in_model_order`); the command line shows it as a notice."""


def class_key(name: str) -> str:
    """A class name as compared with another: lower case, letters and digits only
    (``T-shirt/top``, ``t-shirt_top`` and ``TShirt Top`` are one class)."""
    return "".join(ch for ch in name.casefold() if ch.isalnum())


def in_model_order(
    data: Dataset, model_classes: Sequence[str] | None, *, given: bool = False
) -> Dataset:
    """``data`` with labels that index ``model_classes``, the classes of the model's
    outputs in order, wherever its class names and theirs can be compared.

    They can be when at least one class of ``data`` has one of the model's names (by
    :func:`class_key`; ``None`` or repeated model names never can): the same classes in
    another order are relabelled in the model's order, with a
    :class:`ClassOrderWarning`; other names are refused in one line naming both orders.
    With ``given`` (the order came from ``class_order``, the user's word) a class named
    as one of the model's must already sit at its position; nothing is relabelled.
    Where the names cannot be compared, ``data`` is returned as it is.
    """
    ours = [class_key(name) for name in data.classes]
    theirs = [class_key(name) for name in model_classes or ()]
    position = {key: label for label, key in enumerate(theirs)}
    if len(position) < len(theirs) or not set(ours) & set(position):
        return data
    if given:
        moved = [name for label, name in enumerate(data.classes)
                 if position.get(ours[label], label) != label]  # fmt: skip
        if moved:
            raise ValueError(_order_conflict(data, model_classes, moved))
        return data
    if sorted(ours) != sorted(theirs):
        raise ValueError(_other_classes(data, model_classes, ours, position))
    if ours == theirs:
        return data
    labels = torch.tensor([position[key] for key in ours])[data.labels]
    warnings.warn(
        f"the class folders of {data.name} name the model's classes in another order; "
        f"their labels follow the model's order ({listed(model_classes)}), not the "
        f"folders' sorted order ({listed(data.classes)})",
        ClassOrderWarning,
        stacklevel=2,
    )
    return replace(data, labels=labels, classes=tuple(model_classes))


def _order_conflict(data: Dataset, model_classes: Sequence[str], moved: list[str]) -> str:
    return (
        f"--class-order (class_order) puts {listed(moved)} where the model has other "
        f"classes: the model's order is {listed(model_classes)}, the one given "
        f"{listed(data.classes)}; give the model's order, or drop --class-order"
    )


def _other_classes(
    data: Dataset, model_classes: Sequence[str], ours: list[str], position: dict[str, int]
) -> str:
    foreign = [name for name, key in zip(data.classes, ours, strict=True) if key not in position]
    absent = [name for name in model_classes if class_key(name) not in set(ours)]
    what = [f"{listed(foreign)} not among the model's"] if foreign else []
    what += [f"no folder for the model's {listed(absent)}"] if absent else []
    what = what or ["two folders' names differ only in case or punctuation"]
    return (
        f"the class folders of {data.name} ({listed(data.classes)}) are not the model's "
        f"classes ({listed(model_classes)}): {'; '.join(what)}; name each folder after "
        "one of the model's classes, or pass --class-order (class_order) with the "
        "folders in the order of the model's outputs"
    )
