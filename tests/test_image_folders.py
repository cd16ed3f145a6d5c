"""Datasets from folders of images: ``folder:PATH`` and ImageNet's tree, read lazily."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

from rsutils.data import (
    ClassOrderWarning,
    Dataset,
    check_dataset_name,
    class_key,
    imagenet_folder,
    in_model_order,
    load_dataset,
)
from rsutils.image_folders import FolderImages, read_image_folder, read_imagenet

CLASSES = ("cat", "dog", "emu")
BILINEAR = Image.Resampling.BILINEAR


def write_image(path: Path, size: tuple[int, int] = (40, 30), mode: str = "RGB", seed=0) -> Path:
    """A PNG of random pixels, ``size`` = (width, height)."""
    channels = {"RGB": (3,), "L": ()}[mode]
    pixels = np.random.default_rng(seed).integers(0, 256, (size[1], size[0], *channels))
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(pixels.astype(np.uint8), mode).save(path)
    return path


def make_folder(root: Path, per_class: int = 3, **image) -> Path:
    """``root/<class>/<i>.png`` for the three classes of :data:`CLASSES`."""
    for label, name in enumerate(CLASSES):
        for i in range(per_class):
            write_image(root / name / f"{i}.png", seed=10 * label + i, **image)
    return root


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return make_folder(tmp_path / "pets")


def pixels(path: Path, mode: str = "RGB") -> torch.Tensor:
    """The image at ``path`` as ``(C, H, W)`` floats in [0, 1], decoded here."""
    with Image.open(path) as image:
        return pixels_of(image.convert(mode))


def test_a_folder_is_read_lazily_with_labels_of_its_sorted_class_folders(folder) -> None:
    (folder / ".ipynb_checkpoints").mkdir()  # skipped, as are dot-files
    (folder / "cat" / "notes.txt").write_text("not an image")
    (folder / "dog" / "._0.png").write_bytes(b"macOS resource fork")
    data = load_dataset(f"folder:{folder}")
    assert isinstance(data.images, FolderImages)
    assert data.name == f"folder:{folder}" and data.split == "test"
    assert data.classes == CLASSES and data.num_classes == 3
    assert data.labels.tolist() == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    assert data.labels.dtype == torch.int64
    assert data.images.shape == (9, 3, 30, 40) and len(data) == 9
    first = data.images[0]
    assert first.dtype == torch.float32 and first.shape == (3, 30, 40)
    torch.testing.assert_close(first, pixels(folder / "cat" / "0.png"), rtol=0, atol=0)
    torch.testing.assert_close(data.images[5], pixels(folder / "dog" / "2.png"), rtol=0, atol=0)


def test_lazy_indexing_equals_eager_stacking(folder) -> None:
    images = load_dataset(f"folder:{folder}").images
    eager = torch.stack([images[i] for i in range(len(images))])
    assert eager.shape == images.shape
    same = torch.testing.assert_close
    same(images[2:7], eager[2:7])
    same(images[::4], eager[::4])
    same(images[[4, 1]], eager[[4, 1]])
    same(images[torch.tensor([8, 0, 8])], eager[torch.tensor([8, 0, 8])])
    same(images[np.array([3])], eager[[3]])
    same(images[torch.arange(9) % 2 == 0], eager[torch.arange(9) % 2 == 0])
    same(images[-1], eager[-1])
    same(images[np.int64(3)], eager[3])
    same(images[torch.tensor(6)], eager[6])
    assert images[5:5].shape == (0, 3, 30, 40)
    with pytest.raises(IndexError, match="image index 9 is out of range for 9 images"):
        images[9]


def test_image_size_resizes_the_short_side_and_crops_the_centre(tmp_path) -> None:
    root = make_folder(tmp_path / "pets")
    write_image(root / "dog" / "big.png", size=(50, 80))
    data = load_dataset(f"folder:{root}", image_size=20)
    assert data.images.shape == (10, 3, 20, 20)
    # 40×30 → 26×20 (short side 20), then the centre 20 columns: 3 to 23
    with Image.open(root / "cat" / "0.png") as image:
        expected = pixels_of(image.resize((26, 20), BILINEAR).crop((3, 0, 23, 20)))
    torch.testing.assert_close(data.images[0], expected, rtol=0, atol=1 / 255)
    batch = data.images[:]
    assert batch.shape == (10, 3, 20, 20) and 0 <= float(batch.min()) <= float(batch.max()) <= 1


def pixels_of(image: Image.Image) -> torch.Tensor:
    array = np.asarray(image, dtype=np.float32) / 255
    return torch.from_numpy(array.reshape(*array.shape[:2], -1)).permute(2, 0, 1)


def test_greyscale_folders_keep_one_channel_and_any_colour_image_makes_them_rgb(tmp_path):
    grey = make_folder(tmp_path / "grey", mode="L")
    data = load_dataset(f"folder:{grey}")
    assert data.images.shape == (9, 1, 30, 40)
    torch.testing.assert_close(data.images[4], pixels(grey / "dog" / "1.png", "L"))
    write_image(grey / "emu" / "colour.png", mode="RGB")
    mixed = load_dataset(f"folder:{grey}")
    assert mixed.images.shape == (10, 3, 30, 40)
    torch.testing.assert_close(mixed.images[0], pixels(grey / "cat" / "0.png", "RGB"))


@pytest.mark.parametrize("test_folder", ["test", "val"])
def test_train_and_test_subfolders_are_the_splits(tmp_path, test_folder) -> None:
    make_folder(tmp_path / "set" / "train", per_class=2)
    make_folder(tmp_path / "set" / test_folder, per_class=1)
    assert len(load_dataset(f"folder:{tmp_path / 'set'}", "train")) == 6
    test = load_dataset(f"folder:{tmp_path / 'set'}", "test")
    assert len(test) == 3 and test.split == "test"


def test_a_folder_without_split_folders_is_a_test_split_only(folder) -> None:
    assert len(load_dataset(f"folder:{folder}", "test")) == 9
    with pytest.raises(FileNotFoundError, match=r"no train/ folder.*pass --split test") as error:
        load_dataset(f"folder:{folder}", "train")
    assert "\n" not in str(error.value)


def _corrupt(root: Path) -> str:
    (root / "dog" / "1.png").write_bytes(np.random.default_rng(0).bytes(300))
    return "dog/1.png is not a readable image"


def _mixed(root: Path) -> str:
    write_image(root / "emu" / "wide.png", size=(41, 30))
    return r"emu/wide.png is 41×30 pixels but .*cat/0.png is 40×30.*pass --image-size S"


def _empty_class(root: Path) -> str:
    (root / "fox").mkdir()
    (root / "fox" / "readme.txt").write_text("no images yet")
    return r"pets/fox holds no images \(.*\.png.*\); add images to it or remove it"


def _no_classes(root: Path) -> str:
    for path in sorted(root.rglob("*.png")):
        path.rename(root / f"{path.parent.name}-{path.name}")
    for name in CLASSES:
        (root / name).rmdir()
    return r"pets has no class folders: put each class's images in a subfolder"


def _missing(root: Path) -> str:
    root.rename(root.with_name("elsewhere"))
    return r"pets: no such folder"


def _a_file(root: Path) -> str:
    root.rename(root.with_name("elsewhere"))
    root.write_text("a file")
    return r"pets is a file; pass a folder holding one subfolder per class"


BAD_FOLDERS = {
    "corrupt image": _corrupt,
    "mixed sizes": _mixed,
    "class folder without images": _empty_class,
    "images but no class folders": _no_classes,
    "missing folder": _missing,
    "a file, not a folder": _a_file,
}


@pytest.mark.parametrize("spoil", BAD_FOLDERS.values(), ids=BAD_FOLDERS.keys())
def test_a_bad_folder_is_one_line_naming_the_file_and_the_fix(folder, spoil) -> None:
    expected = spoil(folder)
    with pytest.raises((ValueError, FileNotFoundError), match=expected) as error:
        load_dataset(f"folder:{folder}")
    assert "\n" not in str(error.value)


def test_damaged_pixels_are_named_when_the_image_is_read(folder) -> None:
    """A truncated PNG keeps its header (so the folder loads) and fails when decoded."""
    path = folder / "emu" / "2.png"
    path.write_bytes(path.read_bytes()[:100])
    images = load_dataset(f"folder:{folder}").images
    assert images[0].shape == (3, 30, 40)
    with pytest.raises(ValueError, match=r"emu/2.png is not a readable image .*replace") as error:
        images[6:9]
    assert "\n" not in str(error.value)


@pytest.mark.parametrize("size", [0, -3, 2.5, True, "16"])
def test_image_size_must_be_a_positive_integer(folder, size) -> None:
    with pytest.raises(ValueError, match="must be a positive integer of pixels"):
        load_dataset(f"folder:{folder}", image_size=size)


def test_dataset_names_and_options_that_do_not_apply_are_refused(folder) -> None:
    assert check_dataset_name(f"folder:{folder}") == f"folder:{folder}"
    with pytest.raises(ValueError, match=r"unknown dataset 'svhn'; choose .*folder:PATH"):
        check_dataset_name("svhn")
    with pytest.raises(ValueError, match="folder: needs the folder's path"):
        load_dataset("folder:")
    with pytest.raises(ValueError, match="applies to folder:PATH datasets, not to cifar10"):
        load_dataset("cifar10", image_size=32)
    with pytest.raises(ValueError, match=r"--data-root .* does not apply to folder:"):
        load_dataset(f"folder:{folder}", root=folder)


# --- ImageNet ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def imagenet(tmp_path_factory) -> Path:
    """A fake ImageNet: 1,000 class folders of one tiny image each in val/ (the first a
    300×400 photo-sized one, to check the preprocessing), and 2 classes in train/."""
    root = tmp_path_factory.mktemp("imagenet")
    for label in range(1000):
        write_image(root / "val" / f"n{label:08d}" / "a.JPEG", size=(8, 6), seed=label)
    write_image(root / "val" / "n00000000" / "a.JPEG", size=(300, 400), seed=1)
    for label in range(2):
        write_image(root / "train" / f"n{label:08d}" / "a.png", seed=label)
    return root


def test_imagenet_val_is_the_test_split_preprocessed_as_cohen_et_al(imagenet) -> None:
    data = load_dataset("imagenet", "test", imagenet)
    assert data.num_classes == 1000 and data.classes[:2] == ("n00000000", "n00000001")
    assert data.labels.tolist() == list(range(1000))
    assert data.images.shape == (1000, 3, 224, 224)
    assert data.images[999].shape == (3, 224, 224)
    # 300×400 → 256×341 (short side 256), then the centre 224×224
    with Image.open(imagenet / "val" / "n00000000" / "a.JPEG") as photo:
        expected = pixels_of(photo.resize((256, 341), BILINEAR).crop((16, 58, 240, 282)))
    torch.testing.assert_close(data.images[0], expected, rtol=0, atol=1 / 255)


def test_an_imagenet_tree_without_1000_classes_is_refused_clearly(imagenet) -> None:
    with pytest.raises(ValueError, match=r"has 2 class folders, not ImageNet's 1000") as error:
        load_dataset("imagenet", "train", imagenet)
    assert "load it as folder:" in str(error.value) and "\n" not in str(error.value)
    few = read_image_folder(imagenet / "train")  # the advice works
    assert few.classes == ("n00000000", "n00000001") and few.images.shape == (2, 3, 30, 40)
    with pytest.raises(ValueError, match="has 2 class folders"):
        read_imagenet(imagenet / "train")


def test_imagenet_is_found_by_root_imagenet_dir_or_rsutils_data(imagenet, tmp_path, monkeypatch):
    monkeypatch.delenv("IMAGENET_DIR", raising=False)
    monkeypatch.delenv("RSUTILS_DATA", raising=False)
    assert imagenet_folder("test", imagenet) == imagenet / "val"
    assert imagenet_folder("train", imagenet) == imagenet / "train"
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "imagenet").symlink_to(imagenet)
    monkeypatch.setenv("RSUTILS_DATA", str(tmp_path / "data"))
    assert imagenet_folder("test") == tmp_path / "data" / "imagenet" / "val"
    monkeypatch.setenv("IMAGENET_DIR", str(imagenet))  # Cohen et al.'s variable comes first
    assert imagenet_folder("test") == imagenet / "val"


def test_missing_imagenet_names_the_ways_to_point_at_it(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("IMAGENET_DIR", raising=False)
    monkeypatch.delenv("RSUTILS_DATA", raising=False)
    with pytest.raises(FileNotFoundError, match=r"none is set.*--data-root.*IMAGENET_DIR") as error:
        load_dataset("imagenet")
    assert "\n" not in str(error.value)
    where = re.escape(f"val/ folder was not found (root {tmp_path}")
    with pytest.raises(FileNotFoundError, match=where):
        load_dataset("imagenet", root=tmp_path)


# --- class order ---------------------------------------------------------------------


def test_class_order_gives_the_labels_in_the_order_named(folder) -> None:
    found = read_image_folder(folder, class_order=["emu", "cat", "dog"])
    assert found.classes == ("emu", "cat", "dog")
    by_file = {
        Path(f).parent.name: int(label)
        for f, label in zip(found.images.files, found.labels, strict=True)
    }
    assert by_file == {"emu": 0, "cat": 1, "dog": 2}
    assert load_dataset(f"folder:{folder}", class_order=["dog", "emu", "cat"]).labels[0] == 2


@pytest.mark.parametrize(
    ("order", "message"),
    [
        (["emu", "cat"], r"leaves out the class folders dog of .*pets"),
        (["emu", "cat", "dog", "cat"], r"names cat more than once"),
        (["emu", "cat", "gnu"], r"names gnu, not class folders of .*pets"),
    ],
)
def test_a_class_order_that_is_not_every_folder_once_is_refused(folder, order, message) -> None:
    with pytest.raises(ValueError, match=message) as error:
        read_image_folder(folder, class_order=order)
    assert "name each of its 3 class folders once" in str(error.value)
    assert "\n" not in str(error.value)


def test_class_order_applies_to_folders_only(folder) -> None:
    with pytest.raises(ValueError, match=r"class_order .* applies to folder:PATH datasets"):
        load_dataset("cifar10", class_order=["a"])


def dataset(names: tuple[str, ...], labels: list[int]) -> Dataset:
    """A dataset of one-pixel images whose classes are ``names``."""
    return Dataset(
        "folder:x", "test", torch.zeros(len(labels), 1, 1, 1), torch.tensor(labels), names
    )


MODEL = ("T-shirt/top", "Trouser", "Ankle boot")


def test_the_same_classes_in_another_order_are_relabelled_with_a_warning() -> None:
    data = dataset(("Ankle boot", "T-shirt-top", "Trouser"), [0, 1, 2, 0])
    with pytest.warns(ClassOrderWarning, match=r"follow the model's order \(T-shirt/top, Trouser"):
        ordered = in_model_order(data, MODEL)
    assert ordered.labels.tolist() == [2, 0, 1, 2] and ordered.classes == MODEL


@pytest.mark.parametrize(
    "names",
    [("T-shirt/top", "Trouser", "Ankle boot"), ("0", "1", "2"), ("n01", "n02", "n03")],
    ids=["same-order", "digits", "wordnet-ids"],
)
def test_names_in_the_models_order_or_that_cannot_be_compared_are_kept(names) -> None:
    data = dataset(names, [0, 1, 2])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert in_model_order(data, MODEL) is data
        assert in_model_order(data, None) is data


def test_other_class_names_are_refused_naming_both_orders() -> None:
    data = dataset(("Ankle boot", "Boots", "Trouser"), [0, 1, 2])
    with pytest.raises(ValueError) as error:
        in_model_order(data, MODEL)
    message = str(error.value)
    assert (
        "(Ankle boot, Boots, Trouser) are not the model's classes (T-shirt/top, Trouser, Ankle"
        in message
    )
    assert "Boots not among the model's; no folder for the model's T-shirt/top" in message
    assert "--class-order" in message and "\n" not in message


def test_a_given_order_must_agree_with_the_models_names() -> None:
    agreeing = dataset(("T-shirt/top", "Trouser", "Boots"), [0, 1, 2])
    assert in_model_order(agreeing, MODEL, given=True) is agreeing
    crossed = dataset(("Trouser", "T-shirt/top", "Boots"), [0, 1, 2])
    with pytest.raises(ValueError, match=r"puts Trouser, T-shirt/top where the model has other"):
        in_model_order(crossed, MODEL, given=True)


def test_class_names_are_compared_without_case_or_punctuation() -> None:
    assert class_key("T-shirt/top") == class_key("t_shirt top") == "tshirttop"
    assert class_key("Ankle boot") != class_key("Ankle boots")
