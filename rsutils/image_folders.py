"""Folders of images, read lazily: ImageNet's tree and any folder of class subfolders.

A folder in torchvision's ``ImageFolder`` layout holds one subfolder per class, named
after the class; the labels index the sorted names of the class folders (folders and
files whose names begin with a dot, such as ``.ipynb_checkpoints`` or macOS's ``._x.jpg``,
are skipped), or the order ``class_order`` gives them (the folders in the order of a
model's outputs), and files count as images by their extension (``.png``, ``.jpg``, …).

The images are decoded from their files when indexed (:class:`FolderImages`), so a
folder costs memory for its file names only: ImageNet's validation set as one float
tensor would take about 30 GB. Images come out as float32 tensors in [0, 1] of shape
``(C, H, W)``; normalisation belongs to the model.

Two ways to preprocess:

- :func:`read_imagenet` is Cohen et al.'s: RGB, the short side resized to 256, the
  centre 224×224 cropped; the tree must have ImageNet's 1,000 class folders, since a
  1,000-class model's outputs are the indices of the sorted WordNet IDs, which a tree
  with other classes would not match (load such a tree with :func:`read_image_folder`).
- :func:`read_image_folder` reads each image's header once when the folder is loaded
  (no pixels decoded): the images must share one size, unless ``image_size`` S asks to
  resize the short side of each to S and crop its centre S×S. They are kept greyscale
  (one channel) when every image is greyscale (PIL modes ``1``, ``L``, ``LA``) and
  converted to RGB otherwise.

A damaged file is named: when the folder is loaded if its header is damaged, when it is
read if its pixel data is.
"""

from __future__ import annotations

import operator
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

__all__ = [
    "IMAGENET_CLASSES",
    "FolderImages",
    "ImageFolderData",
    "check_image_size",
    "listed",
    "read_image_folder",
    "read_imagenet",
]

#: The number of classes of ImageNet (ILSVRC 2012).
IMAGENET_CLASSES = 1000
#: Cohen et al.'s preprocessing: resize the short side to 256, crop the centre 224×224.
IMAGENET_RESIZE, IMAGENET_CROP = 256, 224
_GREYSCALE_MODES = frozenset({"1", "L", "LA"})
# PIL and torchvision are imported when a folder is read, not with rsutils.
_Transform = Callable[[object], torch.Tensor]


class FolderImages:
    """The images of a folder, decoded when indexed, in the place of an ``(N, C, H, W)``
    tensor: ``len``, ``shape``, ``dtype``, ``images[i]`` (a ``(C, H, W)`` float tensor in
    [0, 1]), and ``images[a:b]`` or ``images[indices]`` (a list, array or tensor of
    indices), which stack the images into one ``(n, C, H, W)`` tensor."""

    dtype = torch.float32

    def __init__(
        self,
        files: Sequence[str],
        shape: tuple[int, int, int],
        mode: str,
        transform: Callable[[object], torch.Tensor],
    ) -> None:
        self.files = tuple(files)
        self.mode = mode
        self._item_shape = tuple(shape)
        self._transform = transform

    def __len__(self) -> int:
        return len(self.files)

    def __repr__(self) -> str:
        return f"FolderImages({len(self)} images of shape {self._item_shape}, {self.mode})"

    @property
    def shape(self) -> torch.Size:
        """``(N, C, H, W)``, as a tensor of all the images would have."""
        return torch.Size((len(self), *self._item_shape))

    def __getitem__(self, index: object) -> torch.Tensor:
        if isinstance(index, slice):
            return self._stack(range(len(self))[index])
        if isinstance(index, (torch.Tensor, np.ndarray)) and index.ndim == 0:
            return self.read(int(index))
        if isinstance(index, (torch.Tensor, np.ndarray, list, tuple, range)):
            return self._stack(_indices(index, len(self)))
        return self.read(operator.index(index))

    def read(self, index: int) -> torch.Tensor:
        """Image ``index`` (negative counts from the end), decoded and preprocessed."""
        if not -len(self) <= index < len(self):
            raise IndexError(f"image index {index} is out of range for {len(self)} images")
        from PIL import Image

        path = self.files[index]
        try:
            with Image.open(path) as image:
                tensor = self._transform(image.convert(self.mode))
        except _image_errors() as error:
            raise ValueError(_unreadable(path, error)) from None
        if tuple(tensor.shape) != self._item_shape:
            raise ValueError(
                f"{path} gives an image of shape {tuple(tensor.shape)}, not the folder's "
                f"{self._item_shape}; it changed since the folder was loaded: load it again"
            )
        return tensor

    def _stack(self, indices: Iterable[int]) -> torch.Tensor:
        images = [self.read(i) for i in indices]
        return torch.stack(images) if images else torch.empty((0, *self._item_shape))


def _indices(index: object, length: int) -> list[int]:
    """The positions a list, array or tensor of indices (or a boolean mask) picks."""
    array = np.asarray(index.cpu() if isinstance(index, torch.Tensor) else index)
    if array.dtype == bool:
        if array.shape != (length,):
            raise IndexError(f"a boolean mask must have {length} entries, got {array.shape}")
        return np.flatnonzero(array).tolist()
    if array.size and not np.issubdtype(array.dtype, np.integer):
        raise IndexError(f"images are indexed by integers, got an array of {array.dtype}")
    return array.astype(np.int64).reshape(-1).tolist()


@dataclass(frozen=True)
class ImageFolderData:
    """A folder's images (read lazily), their int64 labels and the class names."""

    images: FolderImages
    labels: torch.Tensor
    classes: tuple[str, ...]


def check_image_size(image_size: object) -> None:
    """Refuse an ``image_size`` that is not a positive integer (``None`` means none)."""
    valid = isinstance(image_size, (int, np.integer)) and not isinstance(image_size, bool)
    if image_size is not None and not (valid and image_size >= 1):
        raise ValueError(
            f"image_size (--image-size) must be a positive integer of pixels, got {image_size!r}"
        )


def read_imagenet(folder: str | os.PathLike[str]) -> ImageFolderData:
    """A split of ImageNet (``train`` or ``val``), preprocessed as Cohen et al.'s."""
    from torchvision import transforms

    classes, samples = _scan_classes(Path(folder))
    if len(classes) != IMAGENET_CLASSES:
        raise ValueError(
            f"{folder} has {len(classes)} class folders, not ImageNet's {IMAGENET_CLASSES}, so "
            "its labels would not index a 1000-class model's outputs; complete the tree, or "
            f"load it as folder:{folder} (a dataset of its own {len(classes)} classes)"
        )
    steps = [transforms.Resize(IMAGENET_RESIZE), transforms.CenterCrop(IMAGENET_CROP)]
    transform = transforms.Compose([*steps, transforms.ToTensor()])
    shape = (3, IMAGENET_CROP, IMAGENET_CROP)
    return _folder_data(samples, classes, shape, "RGB", transform)


def read_image_folder(
    folder: str | os.PathLike[str],
    *,
    image_size: int | None = None,
    class_order: Sequence[str] | None = None,
) -> ImageFolderData:
    """A folder of class subfolders; every image ``image_size`` × ``image_size`` if given
    (short side resized, centre cropped), else all of one size (checked from the
    headers). Label ``i`` is the ``i``-th of ``class_order`` (every class folder's name
    once, refused otherwise) if given, else the ``i``-th class folder in sorted order."""
    from torchvision import transforms

    check_image_size(image_size)
    classes, samples = _scan_classes(Path(folder))
    if class_order is not None:
        classes, samples = _in_given_order(Path(folder), classes, samples, class_order)
    size, mode = _common_size_and_mode([path for path, _ in samples], image_size)
    steps = []
    if image_size is not None:
        steps = [transforms.Resize(image_size), transforms.CenterCrop(image_size)]
    transform = transforms.Compose([*steps, transforms.ToTensor()])
    width, height = size if image_size is None else (image_size, image_size)
    shape = (1 if mode == "L" else 3, height, width)
    return _folder_data(samples, classes, shape, mode, transform)


def _folder_data(
    samples: list[tuple[str, int]],
    classes: list[str],
    shape: tuple[int, int, int],
    mode: str,
    transform: _Transform,
) -> ImageFolderData:
    images = FolderImages([path for path, _ in samples], shape, mode, transform)
    labels = torch.tensor([label for _, label in samples], dtype=torch.int64)
    return ImageFolderData(images, labels, tuple(classes))


def _class_folders(folder: Path) -> list[str]:
    """The names of ``folder``'s class folders, sorted (dot-folders skipped)."""
    with os.scandir(folder) as entries:
        return sorted(e.name for e in entries if e.is_dir() and not e.name.startswith("."))


def _is_image_file(path: str) -> bool:
    from torchvision.datasets.folder import IMG_EXTENSIONS, has_file_allowed_extension

    name = os.path.basename(path)
    return not name.startswith(".") and has_file_allowed_extension(name, IMG_EXTENSIONS)


def _scan_classes(folder: Path) -> tuple[list[str], list[tuple[str, int]]]:
    """The class names and the ``(file, label)`` pairs of ``folder`` (by torchvision's
    ``make_dataset``, ``ImageFolder``'s scan), or a clear error."""
    from torchvision.datasets.folder import IMG_EXTENSIONS, make_dataset

    if not folder.exists():
        raise FileNotFoundError(f"{folder}: no such folder; pass a folder of class subfolders")
    if not folder.is_dir():
        raise ValueError(f"{folder} is a file; pass a folder holding one subfolder per class")
    if not (classes := _class_folders(folder)):
        raise ValueError(
            f"{folder} has no class folders: put each class's images in a subfolder named "
            "after the class (ImageFolder's layout, such as cat/1.png, dog/2.png)"
        )
    index = {name: label for label, name in enumerate(classes)}
    samples = make_dataset(str(folder), index, is_valid_file=_is_image_file, allow_empty=True)
    counts = np.bincount([label for _, label in samples], minlength=len(classes))
    if (empty := np.flatnonzero(counts == 0)).size:
        raise ValueError(
            f"{folder / classes[empty[0]]} holds no images ({', '.join(IMG_EXTENSIONS)}); "
            "add images to it or remove it (every class folder needs at least one image)"
        )
    return classes, samples


def _in_given_order(
    folder: Path, classes: list[str], samples: list[tuple[str, int]], order: Sequence[str]
) -> tuple[list[str], list[tuple[str, int]]]:
    """``classes`` and ``samples`` relabelled so that label ``i`` is the folder ``order[i]``."""
    order = [str(name) for name in order]
    twice = sorted({name for name in order if order.count(name) > 1})
    unknown = [name for name in order if name not in classes]
    missing = [name for name in classes if name not in order]
    problem = (
        f"names {listed(twice)} more than once" if twice
        else f"names {listed(unknown)}, not class folders of {folder}" if unknown
        else f"leaves out the class folders {listed(missing)} of {folder}" if missing
        else None
    )  # fmt: skip
    if problem is not None:
        raise ValueError(
            f"--class-order (class_order) {problem}; name each of its {len(classes)} class "
            f"folders once, in the order of the model's outputs ({listed(classes)})"
        )
    position = {name: label for label, name in enumerate(order)}
    return order, [(path, position[classes[label]]) for path, label in samples]


def _common_size_and_mode(files: list[str], image_size: int | None) -> tuple[tuple[int, int], str]:
    """The images' common size (``(width, height)``, checked unless ``image_size`` is
    given) and mode: ``L`` if every image is greyscale, else ``RGB``."""
    first, greyscale = None, True
    for path in files:
        size, mode = _header(path)
        greyscale = greyscale and mode in _GREYSCALE_MODES
        if first is None:
            first = (path, size)
        elif image_size is None and size != first[1]:
            raise ValueError(
                f"{path} is {_size(size)} pixels but {first[0]} is {_size(first[1])}: the "
                "images must share one size; pass --image-size S (image_size=S) to resize "
                "each image's short side to S and crop its centre S×S"
            )
    assert first is not None  # _scan_classes found an image in every class
    return first[1], "L" if greyscale else "RGB"


def _header(path: str) -> tuple[tuple[int, int], str]:
    """An image's size and mode, read from its header (its pixels are not decoded)."""
    from PIL import Image

    try:
        with Image.open(path) as image:
            return image.size, image.mode
    except _image_errors() as error:
        raise ValueError(_unreadable(path, error)) from None


def _image_errors() -> tuple[type[BaseException], ...]:
    """What PIL raises for a damaged or foreign file (UnidentifiedImageError is an OSError)."""
    from PIL import Image

    return (OSError, SyntaxError, ValueError, Image.DecompressionBombError)


def listed(names: Sequence[str], most: int = 10) -> str:
    """``names`` joined by commas for a one-line message: the first ``most`` of them,
    then ``…`` and the count when there are more."""
    names = list(names)
    if len(names) <= most:
        return ", ".join(names)
    return f"{', '.join(names[:most])}, … ({len(names)} in all)"


def _size(size: tuple[int, int]) -> str:
    return f"{size[0]}×{size[1]}"


def _unreadable(path: str, error: BaseException) -> str:
    reason = str(error).strip().splitlines()[0][:160] if str(error).strip() else ""
    reason = reason or type(error).__name__
    return f"{path} is not a readable image ({reason}); replace or remove the file"
