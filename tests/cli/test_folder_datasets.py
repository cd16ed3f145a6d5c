"""The commands on folders of images: ``folder:PATH`` (and ``imagenet``) as the dataset."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

from rsutils import read_log
from rsutils.data import FASHION_MNIST_CLASSES
from rsutils.models.architectures import build_model
from rsutils.models.checkpoints import save_checkpoint


def write_digits(root: Path, per_class: int = 2, sizes=((28, 28),)) -> Path:
    """``root/<d>/<i>.png``: greyscale images of ten classes, of the given sizes in turn."""
    rng = np.random.default_rng(0)
    for digit in range(10):
        (root / str(digit)).mkdir(parents=True)
        for i in range(per_class):
            width, height = sizes[(digit + i) % len(sizes)]
            pixels = rng.integers(0, 256, (height, width), dtype=np.uint8)
            Image.fromarray(pixels, "L").save(root / str(digit) / f"{i}.png")
    return root


@pytest.fixture
def checkpoint(tmp_path: Path) -> Path:
    """An untrained Fashion-MNIST model: it takes 1×28×28 images and has 10 classes."""
    torch.manual_seed(0)
    path = tmp_path / "model.pt"
    save_checkpoint(
        build_model("small_cnn", "fashion-mnist"), path, arch="small_cnn", dataset="fashion-mnist"
    )
    return path


def settings(out: Path, n0: bool = True) -> list[str]:
    """The log and small Monte Carlo settings (``predict`` has no ``--N0``)."""
    return [str(out), *(["--N0", "10"] if n0 else []), "--N", "50", "--batch", "50", "--quiet"]


def test_certify_a_folder_end_to_end(tmp_path, checkpoint, run_cli) -> None:
    digits = write_digits(tmp_path / "digits")
    out = tmp_path / "certify.tsv"
    argv = ["certify", f"folder:{digits}", str(checkpoint), "0.25", *settings(out)]
    status, err = run_cli(argv)
    assert status == 0 and "notice" not in err, err  # digits are no class names to compare
    log = read_log(out)
    assert list(log["idx"]) == list(range(20))
    assert list(log["label"]) == [d for d in range(10) for _ in range(2)]
    assert log["predict"].between(-1, 9).all()


def test_predict_a_folder_of_mixed_sizes_with_image_size(tmp_path, checkpoint, run_cli) -> None:
    digits = write_digits(tmp_path / "digits", sizes=((40, 30), (30, 50)))
    out = tmp_path / "predict.tsv"
    argv = ["predict", f"folder:{digits}", str(checkpoint), "0.25", *settings(out, n0=False)]
    status, err = run_cli([*argv, "--skip", "5"])
    assert status == 2 and not out.exists()
    assert "error: " in err and "pass --image-size S" in err and len(err.splitlines()) == 1
    status, err = run_cli([*argv, "--skip", "5", "--image-size", "28"])
    assert status == 0, err
    assert list(read_log(out)["idx"]) == [0, 5, 10, 15]


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["certify", "svhn"], "argument dataset: unknown dataset 'svhn'; choose "),
        (["predict", "folder:"], "argument dataset: folder: needs the folder's path"),
        (["certify", "folder:x", "--image-size", "0"], "argument --image-size: must be an "),
        (["train", "folder:x", "small_cnn"], "argument dataset: folder:x cannot be trained on"),
    ],
)
def test_a_bad_dataset_argument_is_refused_by_the_parser(tmp_path, argv, expected, run_cli):
    out = tmp_path / "out"
    rest = ["model.pt", "0.25", str(out)] if argv[0] != "train" else [str(out), "--noise-sd", "1"]
    status, err = run_cli([*argv[:2], *rest, *argv[2:]])
    assert status == 2 and expected in err and not out.exists()


def test_a_missing_or_empty_folder_is_one_line_and_nothing_is_written(
    tmp_path, checkpoint, run_cli
) -> None:
    out = tmp_path / "log.tsv"
    argv = ["certify", f"folder:{tmp_path / 'nowhere'}", str(checkpoint), "0.25", *settings(out)]
    status, err = run_cli(argv)
    assert status == 2 and f"error: {tmp_path / 'nowhere'}: no such folder" in err
    (tmp_path / "empty").mkdir()
    argv[1] = f"folder:{tmp_path / 'empty'}"
    status, err = run_cli(argv)
    assert status == 2 and "has no class folders" in err and len(err.splitlines()) == 1
    assert not out.exists()


def write_named(root: Path, names: list[str], per_class: int = 2) -> Path:
    """``root/<name>/<i>.png`` for each of ``names``: 28×28 greyscale images."""
    rng = np.random.default_rng(1)
    for name in names:
        (root / name).mkdir(parents=True)
        for i in range(per_class):
            pixels = rng.integers(0, 256, (28, 28), dtype=np.uint8)
            Image.fromarray(pixels, "L").save(root / name / f"{i}.png")
    return root


#: Fashion-MNIST's classes as folder names ("/" cannot be in one).
FOLDERS = [name.replace("/", "-") for name in FASHION_MNIST_CLASSES]


def test_folders_named_after_the_models_classes_follow_its_order(
    tmp_path, checkpoint, run_cli
) -> None:
    """The issue's silent wrong answer: sorted folder names ("Ankle boot", "Bag", ...)
    are not the model's order; the labels must be the model's class of each folder."""
    clothes = write_named(tmp_path / "clothes", FOLDERS)
    out = tmp_path / "certify.tsv"
    argv = ["certify", f"folder:{clothes}", str(checkpoint), "0.25", *settings(out)]
    status, err = run_cli(argv)
    assert status == 0 and err.startswith("notice: the class folders of folder:")
    assert "their labels follow the model's order (T-shirt/top, Trouser" in err
    log = read_log(out)
    folders = sorted(FOLDERS)  # the images' order: sorted folders, then files
    expected = [FOLDERS.index(folders[i // 2]) for i in range(20)]
    assert list(log["label"]) == expected and log["label"].iloc[0] == 9  # Ankle boot
    recorded = json.loads((tmp_path / "certify.tsv.json").read_text())
    assert recorded["class_order"] == list(FASHION_MNIST_CLASSES)
    sorted_order = [*argv, "--class-order", *folders]  # the old labels, said explicitly
    status, err = run_cli(sorted_order)
    assert status == 2 and "puts Ankle boot, Bag" in err, err


def test_folders_of_other_names_are_refused_naming_both_orders(
    tmp_path, checkpoint, run_cli
) -> None:
    clothes = write_named(tmp_path / "clothes", [*FOLDERS[:-1], "Boots"])
    out = tmp_path / "certify.tsv"
    argv = ["certify", f"folder:{clothes}", str(checkpoint), "0.25", *settings(out)]
    status, err = run_cli(argv)
    assert status == 2 and err.count("\n") == 1 and not out.exists()
    assert "(Bag, Boots, Coat," in err and "(T-shirt/top, Trouser, Pullover," in err
    assert "Boots not among the model's; no folder for the model's Ankle boot" in err
    status, err = run_cli([*argv, "--class-order", *FOLDERS[:-1], "Boots"])
    assert status == 0 and list(read_log(out)["label"])[:4] == [8, 8, 9, 9]  # Bag, Boots


def test_class_order_labels_folders_whose_names_say_nothing(tmp_path, checkpoint, run_cli):
    letters = write_named(tmp_path / "letters", list("abcdefghij"), per_class=1)
    out = tmp_path / "certify.tsv"
    argv = ["certify", f"folder:{letters}", str(checkpoint), "0.25", *settings(out)]
    status, err = run_cli([*argv, "--class-order", *"jihgfedcba"])
    assert status == 0 and err == ""
    assert list(read_log(out)["label"]) == list(range(9, -1, -1))
    status, err = run_cli([*argv, "--class-order", *"jihgfedcb"])
    assert status == 2 and "leaves out the class folders a of" in err


def test_class_order_is_refused_for_a_named_dataset(
    tmp_path, checkpoint, fake_fashion_mnist, run_cli
) -> None:
    out = tmp_path / "certify.tsv"
    argv = ["certify", "fashion-mnist", str(checkpoint), "0.25", *settings(out)]
    status, err = run_cli([*argv, "--data-root", str(fake_fashion_mnist), "--class-order", "a"])
    assert status == 2 and "applies to folder:PATH datasets, not to fashion-mnist" in err
    assert not out.exists()
