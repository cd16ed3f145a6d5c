"""Architectures and the two checkpoint formats."""

import pytest
import torch

from rsutils.models.architectures import CifarResNet, build_model
from rsutils.models.checkpoints import load_checkpoint, save_checkpoint


def parameters(model: torch.nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


def test_cifar_resnets_have_he_et_al_sizes() -> None:
    # He et al. (2016), Table 6: 0.27M parameters for ResNet-20, 1.7M for ResNet-110.
    assert parameters(CifarResNet(20)) == pytest.approx(0.27e6, rel=0.02)
    assert parameters(CifarResNet(110)) == pytest.approx(1.7e6, rel=0.02)
    assert CifarResNet(20).eval()(torch.rand(2, 3, 32, 32)).shape == (2, 10)


def test_normalisation_is_the_first_layer_and_not_in_the_state_dict() -> None:
    model = build_model("small_cnn", "fashion-mnist")
    x = torch.full((1, 1, 28, 28), 0.2860)
    assert torch.allclose(model[0](x), torch.zeros_like(x), atol=1e-6)
    assert not any(key.startswith("0.") for key in model.state_dict())


def test_our_checkpoint_round_trip(tmp_path) -> None:
    model = build_model("small_cnn", "fashion-mnist").eval()
    save_checkpoint(
        model, tmp_path / "m.pt", arch="small_cnn", dataset="fashion-mnist", meta={"sigma": 0.25}
    )
    loaded, info = load_checkpoint(tmp_path / "m.pt")
    x = torch.rand(3, 1, 28, 28)
    assert torch.equal(loaded(x), model(x))
    assert info == {
        "arch": "small_cnn",
        "dataset": "fashion-mnist",
        "meta": {"sigma": 0.25},
        "generator": None,
    }
    assert not loaded.training


@pytest.mark.parametrize("prefix", ["1.module.", "module.1.", "1."])
def test_cohen_format_checkpoints_load(tmp_path, prefix) -> None:
    """{'arch', 'state_dict'} with DataParallel's `module.` where Cohen et al. had it."""
    torch.manual_seed(0)
    reference = build_model("cifar_resnet20", "cifar10").eval()
    network_state = reference[1].state_dict()
    state = {f"{prefix}{key}": value for key, value in network_state.items()}
    optimizer = torch.optim.SGD(reference.parameters(), lr=0.1, momentum=0.9)
    checkpoint = {
        "epoch": 90,
        "arch": "cifar_resnet20",
        "state_dict": state,
        "optimizer": optimizer.state_dict(),
    }
    torch.save(checkpoint, tmp_path / "c.pth")
    loaded, info = load_checkpoint(tmp_path / "c.pth")
    assert info["dataset"] == "cifar10"
    x = torch.rand(2, 3, 32, 32)
    assert torch.equal(loaded(x), reference(x))


def test_a_bare_network_state_dict_loads(tmp_path) -> None:
    reference = build_model("small_cnn", "mnist").eval()
    torch.save({"arch": "small_cnn", "state_dict": reference[1].state_dict()}, tmp_path / "b.pt")
    loaded, _ = load_checkpoint(tmp_path / "b.pt", dataset="mnist")
    x = torch.rand(2, 1, 28, 28)
    assert torch.equal(loaded(x), reference(x))


def test_unreadable_checkpoints_are_explained(tmp_path) -> None:
    torch.save({"weights": 1}, tmp_path / "x.pt")
    with pytest.raises(ValueError, match=r"'arch' and 'state_dict'"):
        load_checkpoint(tmp_path / "x.pt")
    torch.save({"arch": "small_cnn", "state_dict": {}}, tmp_path / "y.pt")
    with pytest.raises(ValueError, match=r"pass dataset="):
        load_checkpoint(tmp_path / "y.pt")


def test_missing_checkpoint(tmp_path) -> None:
    with pytest.raises(FileNotFoundError, match=r"no checkpoint"):
        load_checkpoint(tmp_path / "none.pt")


def test_unknown_architecture() -> None:
    with pytest.raises(ValueError, match=r"choose one of"):
        build_model("vgg", "cifar10")
