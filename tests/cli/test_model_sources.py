"""``certify``/``predict`` with the model a user has: torchvision, a pickled module, an
exported program, TorchScript; each checked against the dataset before anything is
written."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pandas as pd
import pytest
import torch
import torchvision

from rsutils import read_log
from rsutils.data import Dataset
from rsutils.models.architectures import build_model
from rsutils.models.checkpoints import save_checkpoint


@pytest.fixture
def models(tmp_path: Path) -> dict[str, Path]:
    """The same small_cnn as a checkpoint and as each other kind of file; the network
    without its normalisation layer goes to the exported program."""
    torch.manual_seed(0)
    folder = tmp_path / "models"
    folder.mkdir()
    model = build_model("small_cnn", "fashion-mnist").eval()
    save_checkpoint(model, folder / "model.pt", arch="small_cnn", dataset="fashion-mnist")
    torch.save(model, folder / "whole.pt")
    example = (torch.rand(2, 1, 28, 28),)
    program = torch.export.export(model[1], example, dynamic_shapes=({0: torch.export.Dim("b")},))
    torch.export.save(program, folder / "network.pt2")
    with warnings.catch_warnings():  # torch deprecates TorchScript; rsutils still reads it
        warnings.simplefilter("ignore", FutureWarning)
        torch.jit.save(torch.jit.trace(model, example), folder / "model.ts")
        seven = torch.nn.Sequential(model, torch.nn.Linear(10, 7)).eval()
        torch.jit.save(torch.jit.trace(seven, example), folder / "seven.ts")
    return {path.name: path for path in folder.iterdir()}


@pytest.fixture
def out(tmp_path: Path) -> Path:
    folder = tmp_path / "out"
    folder.mkdir()
    return folder


def certify(data: Path, model: str | Path, log: Path, *extra: str) -> list[str]:
    return [
        *("certify", "fashion-mnist", str(model), "0.25", str(log)),
        *("--N0", "10", "--N", "50", "--max", "3", "--data-root", str(data), "--quiet"),
        *extra,
    ]


def rows(log: Path) -> pd.DataFrame:
    return read_log(log).drop(columns="time")


@pytest.mark.parametrize(
    ("name", "extra"),
    [
        ("whole.pt", ["--trust-pickle"]),
        ("network.pt2", ["--normalize", "fashion-mnist"]),
        ("model.ts", []),
    ],
)
def test_each_source_certifies_as_the_checkpoint(
    fake_fashion_mnist: Path, models: dict[str, Path], out: Path, run_cli, name, extra
) -> None:
    assert run_cli(certify(fake_fashion_mnist, models["model.pt"], out / "ckpt.tsv"))[0] == 0
    argv = certify(fake_fashion_mnist, models[name], out / "other.tsv", *extra)
    assert run_cli(argv) == (0, "")
    pd.testing.assert_frame_equal(rows(out / "other.tsv"), rows(out / "ckpt.tsv"))
    config = json.loads((out / "other.tsv.json").read_text())
    assert config["checkpoint"] != json.loads((out / "ckpt.tsv.json").read_text())["checkpoint"]
    assert ("normalize" in config) == bool(extra and extra[0] == "--normalize")


@pytest.mark.parametrize(
    ("name", "extra", "message"),
    [
        ("whole.pt", [], r"runs code from the file; pass --trust-pickle"),
        ("seven.ts", [], r"the model has 7 outputs, the dataset has 10 classes"),
        (
            "torchvision:resnet18",
            ["--untrained"],
            r"the model does not take inputs of shape 1×28×28 \(the dataset's\): ",
        ),
        ("torchvision:resnet18", [], r"needs its weights: pass --weights FILE"),
        ("torchvision:resnet19", ["--untrained"], r"did you mean resnet18"),
        ("model.pt", ["--normalize", "mnist"], r"normalises its inputs itself"),
        ("model.ts", ["--weights", "DEFAULT"], r"--weights goes with torchvision:NAME"),
        ("model.ts", ["--mean", "0.5"], r"--mean and --std go together"),
        ("model.ts", ["--normalize", "cifar10"], r"--normalize cifar10 gives 3 channels, the "),
    ],
)
def test_a_model_that_does_not_fit_is_one_line_and_writes_nothing(
    fake_fashion_mnist: Path, models: dict[str, Path], out: Path, run_cli, name, extra, message
) -> None:
    model = models.get(name, name)
    status, err = run_cli(certify(fake_fashion_mnist, model, out / "log.tsv", *extra))
    assert status == 2 and err.startswith("error: ") and err.count("\n") == 1, err
    assert re.search(message, err), err
    assert list(out.iterdir()) == [], "a rejected command must not write anything"


def test_torchvision_with_a_state_dict_and_normalisation(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, out: Path, run_cli
) -> None:
    """resnet18 on a fake CIFAR-10 split: the log records the architecture, the weights'
    digest and the normalisation, and resumes only with the same ones."""
    torch.manual_seed(0)
    images, labels = torch.rand(3, 3, 32, 32), torch.tensor([0, 1, 2])
    split = Dataset("cifar10", "test", images, labels, tuple(map(str, range(10))))
    monkeypatch.setattr("rsutils.cli.common.load_dataset", lambda *args, **kwargs: split)
    torch.save(torchvision.models.resnet18(num_classes=10).state_dict(), tmp_path / "w.pt")
    argv = ["certify", "cifar10", "torchvision:resnet18", "0.25", str(out / "log.tsv")]
    argv += ["--N0", "10", "--N", "20", "--quiet", "--weights", str(tmp_path / "w.pt")]
    assert run_cli([*argv, "--normalize", "cifar10"]) == (0, "")
    config = json.loads((out / "log.tsv.json").read_text())
    assert config["model"] == "torchvision:resnet18" and len(config["weights"]) == 16
    assert config["normalize"]["mean"] == [0.4914, 0.4822, 0.4465]
    assert len(read_log(out / "log.tsv")) == 3
    status, err = run_cli([*argv, "--normalize", "imagenet"])
    assert status == 2 and "normalize" in err, err


@pytest.mark.slow  # a subprocess
def test_predict_with_a_trusted_pickle_in_a_process_of_its_own(
    fake_fashion_mnist: Path, models: dict[str, Path], out: Path
) -> None:
    command = [sys.executable, "-m", "rsutils", "predict", "fashion-mnist"]
    command += [str(models["whole.pt"]), "0.25", str(out / "p.tsv"), "--N", "50", "--max", "3"]
    command += ["--data-root", str(fake_fashion_mnist), "--quiet"]
    refused = subprocess.run(command, capture_output=True, text=True)
    assert refused.returncode == 2 and "--trust-pickle" in refused.stderr
    subprocess.run([*command, "--trust-pickle"], check=True)
    assert list(read_log(out / "p.tsv")["idx"]) == [0, 1, 2]


@pytest.mark.parametrize(
    "extra",
    [["--normalize", "fashion-mnist"], ["--weights", "DEFAULT"], []],
    ids=["normalize", "weights", "none"],
)
def test_a_truncated_export_is_named_as_damaged_whatever_the_options(
    fake_fashion_mnist: Path, models: dict[str, Path], out: Path, run_cli, extra
) -> None:
    data = models["network.pt2"].read_bytes()
    cut = models["network.pt2"].with_name("cut.pt2")
    cut.write_bytes(data[: len(data) // 2])
    status, err = run_cli(certify(fake_fashion_mnist, cut, out / "log.tsv", *extra))
    assert status == 2 and err.count("\n") == 1, err
    assert "cut.pt2' is a zip archive cut short or damaged" in err
    assert list(out.iterdir()) == []


def test_a_url_saved_as_weights_is_named_as_text(
    fake_fashion_mnist: Path, tmp_path: Path, out: Path, run_cli
) -> None:
    (tmp_path / "weights.txt").write_text("https://download.pytorch.org/models/r.pth\n")
    argv = certify(fake_fashion_mnist, "torchvision:resnet18", out / "log.tsv")
    status, err = run_cli([*argv, "--weights", str(tmp_path / "weights.txt")])
    assert status == 2 and err.count("\n") == 1, err
    assert "weights.txt' is not a PyTorch checkpoint (it is text: 'https://download." in err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            ["--mean", "0.5", "0.5", "0.5", "--std", "0.2", "0.2", "0.2"],
            "--mean/--std give 3 channels, the images have 1; give one value to each",
        ),
        (
            ["--normalize", "imagenet"],
            "--normalize imagenet gives 3 channels, the images have 1; pass --mean and --std",
        ),
    ],
    ids=["mean-std", "normalize"],
)
def test_statistics_of_another_channel_count_are_named_as_the_users(
    fake_fashion_mnist: Path, models: dict[str, Path], out: Path, run_cli, extra, message
) -> None:
    status, err = run_cli(certify(fake_fashion_mnist, models["network.pt2"], out / "l.tsv", *extra))
    assert status == 2 and err.startswith(f"error: {message}") and err.count("\n") == 1
    one = ["--mean", "0.5", "--std", "0.2"]  # one value serves every channel
    assert run_cli(certify(fake_fashion_mnist, models["network.pt2"], out / "l.tsv", *one))[0] == 0
