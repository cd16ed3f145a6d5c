"""The base classifiers rsutils trains: their architectures, built for a dataset.

Every model is ``nn.Sequential(Normalize(dataset), network)``: normalisation is the
first layer, so noise is added in [0, 1] pixel space as in Cohen et al., and the
state-dict keys (``1.conv1.weight`` …) match their released checkpoints.

Checkpoints: :mod:`rsutils.models.checkpoints`.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

__all__ = [
    "ARCHITECTURES",
    "DATASET_STATS",
    "DEFAULT_DATASET",
    "NUM_CLASSES",
    "CifarResNet",
    "Normalize",
    "build_model",
]

#: Per-channel mean and standard deviation of each dataset's training images.
DATASET_STATS: dict[str, tuple[tuple[float, ...], tuple[float, ...]]] = {
    "fashion-mnist": ((0.2860,), (0.3530,)),
    "mnist": ((0.1307,), (0.3081,)),
    "cifar10": ((0.4914, 0.4822, 0.4465), (0.2023, 0.1994, 0.2010)),
    "imagenet": ((0.485, 0.456, 0.406), (0.229, 0.224, 0.225)),
}
NUM_CLASSES = {"fashion-mnist": 10, "mnist": 10, "cifar10": 10, "imagenet": 1000}


class Normalize(nn.Module):
    """(x - mean) / std per channel; the statistics are not part of the state dict."""

    def __init__(self, mean: tuple[float, ...], std: tuple[float, ...]) -> None:
        super().__init__()
        shape = (1, len(mean), 1, 1)
        self.register_buffer("mean", torch.tensor(mean).reshape(shape), persistent=False)
        self.register_buffer("std", torch.tensor(std).reshape(shape), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Normalised inputs."""
        return (x - self.mean) / self.std


def small_cnn(in_channels: int = 1, num_classes: int = 10) -> nn.Module:
    """Two conv blocks and two dense layers, for 28×28 inputs (≈0.2M parameters)."""
    return nn.Sequential(
        nn.Conv2d(in_channels, 16, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(32 * 7 * 7, 128),
        nn.ReLU(),
        nn.Linear(128, num_classes),
    )


class _BasicBlock(nn.Module):
    def __init__(self, in_planes: int, planes: int, stride: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(in_planes, planes, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.downsample: nn.Module | None = None
        if stride != 1 or in_planes != planes:
            self.downsample = nn.Sequential(
                nn.Conv2d(in_planes, planes, 1, stride=stride, bias=False), nn.BatchNorm2d(planes)
            )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shortcut = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        return self.relu(self.bn2(self.conv2(out)) + shortcut)


class CifarResNet(nn.Module):
    """He et al.'s CIFAR ResNet of depth 6k+2 (20, 110, ...), basic blocks, 16-32-64."""

    def __init__(self, depth: int, num_classes: int = 10) -> None:
        super().__init__()
        if (depth - 2) % 6:
            raise ValueError(f"depth must be 6k+2 (20, 32, 44, 56, 110), got {depth}")
        blocks = (depth - 2) // 6
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        self.relu = nn.ReLU(inplace=True)
        self.layer1 = self._stage(16, 16, blocks, stride=1)
        self.layer2 = self._stage(16, 32, blocks, stride=2)
        self.layer3 = self._stage(32, 64, blocks, stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(64, num_classes)

    @staticmethod
    def _stage(in_planes: int, planes: int, blocks: int, stride: int) -> nn.Sequential:
        first = _BasicBlock(in_planes, planes, stride)
        return nn.Sequential(first, *(_BasicBlock(planes, planes, 1) for _ in range(blocks - 1)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits for a batch of 32×32 images."""
        x = self.relu(self.bn1(self.conv1(x)))
        x = self.layer3(self.layer2(self.layer1(x)))
        return self.fc(torch.flatten(self.avgpool(x), 1))


def _resnet50(num_classes: int) -> nn.Module:
    from torchvision.models import resnet50

    return resnet50(weights=None, num_classes=num_classes)


#: Architecture name → constructor taking (in_channels, num_classes).
ARCHITECTURES: dict[str, Callable[[int, int], nn.Module]] = {
    "small_cnn": small_cnn,
    "cifar_resnet20": lambda c, k: CifarResNet(20, k),
    "cifar_resnet110": lambda c, k: CifarResNet(110, k),
    "resnet50": lambda c, k: _resnet50(k),
}
#: The dataset each ImageNet or CIFAR-10 architecture is built for, when a checkpoint
#: does not say it.
DEFAULT_DATASET = {
    "cifar_resnet20": "cifar10",
    "cifar_resnet110": "cifar10",
    "resnet50": "imagenet",
}


def build_model(arch: str, dataset: str) -> nn.Sequential:
    """A freshly initialised ``Sequential(Normalize, network)`` for ``dataset``."""
    if arch not in ARCHITECTURES:
        raise ValueError(f"unknown architecture {arch!r}; choose one of {sorted(ARCHITECTURES)}")
    if dataset not in DATASET_STATS:
        raise ValueError(f"unknown dataset {dataset!r}; choose one of {sorted(DATASET_STATS)}")
    mean, std = DATASET_STATS[dataset]
    network = ARCHITECTURES[arch](len(mean), NUM_CLASSES[dataset])
    return nn.Sequential(Normalize(mean, std), network)
