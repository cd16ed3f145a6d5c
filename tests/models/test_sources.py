"""Base classifiers from each source: torchvision, a pickled module, an exported program,
TorchScript, and the checkpoints of rsutils and Cohen et al. (no network)."""

from __future__ import annotations

import hashlib
import urllib.error
import warnings
import zipfile
from pathlib import Path

import pytest
import torch
import torchvision
from torch import nn

from rsutils.core.inference import InferenceModel
from rsutils.data import DATASET_CLASSES
from rsutils.models.architectures import Normalize, build_model
from rsutils.models.checkpoints import save_checkpoint, text_start
from rsutils.models.dataset_fit import check_model_fits, normalization_stats
from rsutils.models.source_kinds import source_kind
from rsutils.models.sources import load_model


def tiny(in_channels: int = 1, classes: int = 10, side: int = 28) -> nn.Module:
    """A small classifier of ``(in_channels, side, side)`` images, with batch norm."""
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Conv2d(in_channels, 4, 3, padding=1),
        nn.BatchNorm2d(4),
        nn.ReLU(),
        nn.Flatten(),
        nn.Linear(4 * side * side, classes),
    ).eval()


def exported(model: nn.Module, path: Path, batch: int = 2, dynamic: bool = True) -> Path:
    example = torch.rand(batch, 1, 28, 28)
    shapes = ({0: torch.export.Dim("batch")},) if dynamic else None
    torch.export.save(torch.export.export(model, (example,), dynamic_shapes=shapes), path)
    return path


def scripted(model: nn.Module, path: Path) -> Path:
    with warnings.catch_warnings():  # torch deprecates TorchScript; rsutils still reads it
        warnings.simplefilter("ignore", FutureWarning)
        torch.jit.save(torch.jit.trace(model, torch.rand(2, 1, 28, 28)), path)
    return path


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One file of each kind, all of the same tiny model."""
    folder, model = tmp_path_factory.mktemp("sources"), tiny()
    torch.save(model, folder / "whole.pt")
    return {
        "pickle": folder / "whole.pt",
        "export": exported(model, folder / "model.pt2"),
        "torchscript": scripted(model, folder / "model.ts"),
    }


@pytest.mark.parametrize("kind", ["pickle", "export", "torchscript"])
def test_each_file_source_classifies_as_the_original(files: dict[str, Path], kind: str) -> None:
    path = files[kind]
    assert source_kind(path) == kind
    loaded = load_model(path, trust_pickle=True)
    x = torch.rand(3, 1, 28, 28)
    assert loaded.kind == kind and not loaded.model.training
    assert torch.allclose(loaded.model(x), tiny()(x), atol=1e-5)
    assert set(loaded.identity) == {"checkpoint"} and len(loaded.identity["checkpoint"]) == 16
    check_model_fits(loaded.model, (1, 28, 28), 10)


def test_the_kind_comes_from_the_content_not_the_name(files: dict[str, Path], tmp_path) -> None:
    for kind, path in files.items():
        renamed = tmp_path / f"{kind}.bin"
        renamed.write_bytes(path.read_bytes())
        assert source_kind(renamed) == kind


def test_a_pickled_module_needs_the_opt_in(files: dict[str, Path]) -> None:
    with pytest.raises(ValueError, match=r"runs code from the file; pass --trust-pickle") as error:
        load_model(files["pickle"])
    assert "torch.nn.modules" in str(error.value) and "\n" not in str(error.value)


def test_a_pickle_of_something_else_is_named(tmp_path: Path) -> None:
    torch.save({"model": tiny(), "epoch": 3}, tmp_path / "dict.pt")
    with pytest.raises(ValueError, match=r"holds a dict \(keys: model, epoch\), not a torch.nn"):
        load_model(tmp_path / "dict.pt", trust_pickle=True)


def test_checkpoints_load_as_before(tmp_path: Path) -> None:
    model = build_model("small_cnn", "fashion-mnist").eval()
    save_checkpoint(model, tmp_path / "m.pt", arch="small_cnn", dataset="fashion-mnist")
    loaded = load_model(tmp_path / "m.pt")
    x = torch.rand(2, 1, 28, 28)
    assert loaded.kind == "checkpoint" and torch.equal(loaded.model(x), model(x))
    digest = hashlib.sha256((tmp_path / "m.pt").read_bytes()).hexdigest()[:16]
    assert loaded.identity == {"checkpoint": digest}  # as logs have always recorded it
    assert loaded.info is not None and loaded.info["dataset"] == "fashion-mnist"
    with pytest.raises(ValueError, match=r"normalises its inputs itself; drop --normalize"):
        load_model(tmp_path / "m.pt", normalize=((0.5,), (0.5,)))
    with pytest.raises(ValueError, match=r"--weights goes with torchvision:NAME"):
        load_model(tmp_path / "m.pt", weights="DEFAULT")


def test_files_that_are_no_model_are_named_with_the_fix(tmp_path: Path) -> None:
    torch.save(tiny().state_dict(), tmp_path / "state.pt")
    with pytest.raises(ValueError, match=r"state dict without its architecture; pass torchvision"):
        source_kind(tmp_path / "state.pt")
    torch.save(torch.ones(3), tmp_path / "tensor.pt")
    with pytest.raises(ValueError, match=r"holds a Tensor, not a model; pass a checkpoint"):
        source_kind(tmp_path / "tensor.pt")
    with zipfile.ZipFile(tmp_path / "images.zip", "w") as archive:
        archive.writestr("a.txt", "not a model")
    with pytest.raises(ValueError, match=r"zip archive but no PyTorch model file; pass"):
        source_kind(tmp_path / "images.zip")
    (tmp_path / "model.onnx").write_bytes(b"\x08\x07\x12\x04onnx")
    with pytest.raises(ValueError, match=r"looks like an ONNX file.*torch.export.save"):
        source_kind(tmp_path / "model.onnx")
    (tmp_path / "noise.pt").write_bytes(bytes(range(256)) * 8)
    with pytest.raises(ValueError, match=r"not a readable PyTorch checkpoint"):
        load_model(tmp_path / "noise.pt")
    with pytest.raises(FileNotFoundError, match=r"no checkpoint at"):
        load_model(tmp_path / "missing.pt")


def test_an_exported_program_of_training_mode_is_refused(tmp_path: Path) -> None:
    path = exported(tiny().train(), tmp_path / "train.pt2")
    with pytest.raises(ValueError, match=r"exported in training mode.*call model.eval\(\)"):
        load_model(path)


def test_an_exported_program_for_one_batch_size_is_named(tmp_path: Path) -> None:
    loaded = load_model(exported(tiny(), tmp_path / "one.pt2", batch=1, dynamic=False))
    with pytest.raises(ValueError, match=r"takes one input but not a batch of two"):
        check_model_fits(loaded.model, (1, 28, 28), 10)


def test_torchvision_with_a_state_dict_file(tmp_path: Path) -> None:
    """Cohen-style and DataParallel-wrapped state dicts of resnet18, on 3×32×32 inputs."""
    torch.manual_seed(1)
    reference = torchvision.models.resnet18(num_classes=10).eval()
    state = {f"module.{key}": value for key, value in reference.state_dict().items()}
    torch.save({"arch": "resnet18", "state_dict": state}, tmp_path / "w.pth")
    loaded = load_model("torchvision:resnet18", num_classes=10, weights=str(tmp_path / "w.pth"))
    x = torch.rand(2, 3, 32, 32)
    assert loaded.kind == "torchvision" and torch.equal(loaded.model(x), reference(x))
    assert loaded.identity["model"] == "torchvision:resnet18"
    assert len(loaded.identity["weights"]) == 16
    check_model_fits(loaded.model, (3, 32, 32), 10)
    unsized = load_model("torchvision:resnet18", weights=str(tmp_path / "w.pth"))
    assert torch.equal(unsized.model(x), reference(x)), "10 classes, read off the weights"
    with pytest.raises(ValueError, match=r"does not fit torchvision's resnet34"):
        load_model("torchvision:resnet34", num_classes=10, weights=str(tmp_path / "w.pth"))


def test_torchvision_untrained_is_seeded_and_needs_the_flag() -> None:
    with pytest.raises(ValueError, match=r"needs its weights: pass --weights FILE.*--untrained"):
        load_model("torchvision:resnet18", num_classes=10)
    first, second = (
        load_model("torchvision:resnet18", num_classes=10, untrained=True) for _ in "ab"
    )
    x = torch.rand(1, 3, 32, 32)
    assert torch.equal(first.model(x), second.model(x))
    assert first.identity == {"model": "torchvision:resnet18", "weights": "untrained (seed 0)"}


def test_unknown_torchvision_names_get_a_hint() -> None:
    with pytest.raises(ValueError, match=r"no classifier 'resnet19'; did you mean resnet18"):
        load_model("torchvision:resnet19", untrained=True)
    with pytest.raises(ValueError, match=r"not an image classifier"):
        load_model("torchvision:fasterrcnn_resnet50_fpn", untrained=True)
    with pytest.raises(ValueError, match=r"not a weights name of torchvision's resnet18 \(DEFAULT"):
        load_model("torchvision:resnet18", weights="nowhere.pt")


def test_torchvision_weights_offline_name_the_fix(monkeypatch, tmp_path: Path) -> None:
    def offline(self, *args, **kwargs):
        raise urllib.error.URLError("[Errno -3] Temporary failure in name resolution")

    monkeypatch.setenv("TORCH_HOME", str(tmp_path))
    monkeypatch.setattr(torchvision.models.WeightsEnum, "get_state_dict", offline)
    with pytest.raises(ValueError) as error:
        load_model("torchvision:resnet18", weights="DEFAULT")
    message = str(error.value)
    assert message.startswith("could not fetch torchvision's ResNet18_Weights.IMAGENET1K_V1")
    assert "offline, copy https://" in message and str(tmp_path / "hub" / "checkpoints") in message
    assert "--weights FILE" in message and "\n" not in message


def test_normalisation_is_a_layer_in_front(files: dict[str, Path]) -> None:
    stats = normalization_stats(mean=[0.5], std=[0.25])
    loaded = load_model(files["export"], normalize=stats)
    x = torch.rand(2, 1, 28, 28)
    assert torch.allclose(loaded.model(x), tiny()((x - 0.5) / 0.25), atol=1e-5)
    assert isinstance(loaded.model[0], Normalize)
    assert loaded.identity["normalize"] == {"mean": [0.5], "std": [0.25]}
    assert normalization_stats("cifar10") == ((0.4914, 0.4822, 0.4465), (0.2023, 0.1994, 0.2010))
    assert normalization_stats("none") is None and normalization_stats() is None


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"name": "imagenet", "mean": [0.5]}, r"exclude each other"),
        ({"mean": [0.5]}, r"--mean and --std go together"),
        ({"mean": [0.5, 0.5], "std": [0.2]}, r"--mean has 2 values and --std 1"),
        ({"mean": [0.5], "std": [0.0]}, r"--std finite and > 0"),
        ({"name": "svhn"}, r"unknown --normalize 'svhn'"),
    ],
)
def test_bad_normalisations_are_refused(options: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        normalization_stats(**options)


def test_the_model_is_checked_against_the_dataset() -> None:
    with pytest.raises(ValueError) as error:
        check_model_fits(tiny(), (3, 32, 32), 10)
    assert str(error.value).startswith(
        "the model does not take inputs of shape 3×32×32 (the dataset's): "
    )
    with pytest.raises(ValueError, match=r"^the model has 7 outputs, the dataset has 10 classes"):
        check_model_fits(tiny(classes=7), (1, 28, 28), 10)
    with pytest.raises(ValueError, match=r"returns a tuple, not a tensor of logits"):
        check_model_fits(TupleModel(), (1, 28, 28), 10)
    model = tiny().train()
    check_model_fits(InferenceModel(model, "fp32"), (1, 28, 28), 10)
    assert model.training, "the model's mode is left as it was"


class TupleModel(nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return x.flatten(1)[:, :10], x


def test_a_damaged_file_is_named_before_the_options_are_judged(tmp_path: Path) -> None:
    """The options of a file that cannot be read say nothing: its damage comes first."""
    model = build_model("small_cnn", "fashion-mnist")
    save_checkpoint(model, tmp_path / "m.pt", arch="small_cnn", dataset="fashion-mnist")
    data = (tmp_path / "m.pt").read_bytes()
    (tmp_path / "cut.pt").write_bytes(data[: len(data) // 2])
    for options in ({"normalize": ((0.5,), (0.5,))}, {"weights": "DEFAULT"}, {"untrained": True}):
        with pytest.raises(ValueError, match=r"cut.pt' is a zip archive cut short or damaged"):
            load_model(tmp_path / "cut.pt", **options)
    torch.save(model, tmp_path / "legacy.pt", _use_new_zipfile_serialization=False)
    data = (tmp_path / "legacy.pt").read_bytes()
    (tmp_path / "legacy.pt").write_bytes(data[: len(data) - 64])
    with pytest.raises(ValueError, match=r"legacy.pt' is not a readable .*truncated or damaged"):
        load_model(tmp_path / "legacy.pt", trust_pickle=True, normalize=((0.5,), (0.5,)))


@pytest.mark.parametrize(
    ("text", "shown"),
    [("https://x.org/model.pt\n", "https://x.org/model.pt"), ("jq\n", "jq"), ("é" * 600, "é")],
    ids=["url", "pickle-opcode", "long-unicode"],
)
def test_a_text_file_is_named_as_text(tmp_path: Path, text: str, shown: str) -> None:
    path = tmp_path / "model.txt"
    path.write_text(text)
    assert text_start(path).startswith(shown)
    with pytest.raises(ValueError, match=r"model.txt' is not a PyTorch checkpoint \(it is text"):
        load_model(path)
    with pytest.raises(ValueError, match=r"model.txt' is not a PyTorch checkpoint \(it is text"):
        load_model("torchvision:resnet18", weights=str(path))


def test_pytorch_files_are_never_taken_for_text(files: dict[str, Path], tmp_path: Path) -> None:
    torch.save(tiny().state_dict(), tmp_path / "legacy.pt", _use_new_zipfile_serialization=False)
    for path in [*files.values(), tmp_path / "legacy.pt"]:
        assert text_start(path) is None, path
    (tmp_path / "empty.pt").write_bytes(b"")
    assert text_start(tmp_path / "empty.pt") is None


@pytest.mark.parametrize(
    "checkpoint",
    [
        {"arch": "small_cnn", "state_dict": 5},
        {"arch": ["small_cnn"], "state_dict": {}},
        {"arch": "small_cnn", "state_dict": {1: torch.zeros(1)}},
    ],
    ids=["state-dict-not-a-dict", "arch-not-a-name", "keys-not-names"],
)
def test_a_foreign_dict_with_arch_and_state_dict_is_refused(tmp_path: Path, checkpoint) -> None:
    torch.save({**checkpoint, "dataset": "fashion-mnist"}, tmp_path / "odd.pt")
    with pytest.raises(ValueError, match=r"odd.pt' is not a checkpoint rsutils can read"):
        load_model(tmp_path / "odd.pt")


def test_the_models_class_names_where_they_are_known(tmp_path: Path, monkeypatch) -> None:
    model = build_model("small_cnn", "fashion-mnist")
    save_checkpoint(model, tmp_path / "m.pt", arch="small_cnn", dataset="fashion-mnist")
    assert load_model(tmp_path / "m.pt").classes == DATASET_CLASSES["fashion-mnist"]
    assert load_model("torchvision:resnet18", untrained=True).classes is None
    built = lambda name, weights: torchvision.models.get_model(name)  # noqa: E731 (offline)
    monkeypatch.setattr("rsutils.models.sources._download_build", built)
    loaded = load_model("torchvision:resnet18", weights="DEFAULT")
    assert loaded.classes[:2] == ("tench", "goldfish") and len(loaded.classes) == 1000
