"""UCAN's released certification-wise generators, loaded from the reference folder.

UCAN's official code (public repository ``youbin2014/UCAN``, commit ``8e53334``,
folder ``model_saved/``) ships two state dicts: the certification-wise noise parameter
generators for CIFAR-10 trained with the radius objective (``isoR``: the minimum of
``sigma``) at Gaussian noise level ``lambda = 1``. The classifier they were trained with
is not in the repository, so they can be examined but not certified with.

rsutils reads them from the ``ucan2025/`` subfolder of the reference folder
(:func:`rsutils.reference.reference_root`: a ``root`` argument or
``RSUTILS_REFERENCE``), checks each file's SHA-256 against the release, and loads it
with ``torch.load(..., weights_only=True)`` (tensors only, no code) into
:class:`UCANNoiseNetwork`, whose parameter names are the state dict's, strictly (every
key, every shape). :func:`load_ucan2025` returns the two as one
:class:`~rsutils.anisotropic.generators.NoiseGenerator` computing the released
certification script's cascade (``certification_personalized.py`` with
``core.Smooth_Personalized``)::

    mu = lambda * G1(x),    sigma = |G2(x + mu)|

each network ending in ``tanh``: ``mu`` in ``(-lambda, lambda)``, ``sigma`` in
``[0, 1)``, with no floor (a pixel's ``sigma`` may be 0). :func:`released_summary`
describes what they give on a batch of inputs, and :func:`cifar_shaped` and
:func:`uniform_images` make inputs of the shape they take (3×32×32 in [0, 1], no
normalisation) when CIFAR-10 is not at hand.
"""

from __future__ import annotations

import hashlib
import math
import os
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from rsutils.anisotropic.generators import NoiseGenerator
from rsutils.core.streams import stream_generator
from rsutils.reference import reference_root

__all__ = [
    "UCAN2025_FILES",
    "UCAN2025_FOLDER",
    "UCAN2025_LAMBDA",
    "UCAN2025_SHAPE",
    "ReleasedUCANGenerator",
    "UCANNoiseNetwork",
    "cifar_shaped",
    "load_ucan2025",
    "released_summary",
    "ucan2025_file",
    "uniform_images",
]

#: The subfolder of the reference folder that holds the release.
UCAN2025_FOLDER = "ucan2025"

#: The released files by role (``"mu"``: G1, the offset; ``"sigma"``: G2, the scale):
#: file name and SHA-256, as in the release's ``model_saved/`` at commit ``8e53334``.
UCAN2025_FILES: dict[str, tuple[str, str]] = {
    "mu": (
        "cifar10_PersNoise_isoR_NoiseGenerator1_Gaussian_sigma1.0_best.pth",
        "48d56cb74e4457972ec09efae00a86ca8bfc40ec957c759d0a6ef0bb8940f35b",
    ),
    "sigma": (
        "cifar10_PersNoise_isoR_NoiseGenerator2_Gaussian_sigma1.0_best.pth",
        "36c2354d56fa5b7d5ccff9e4e36d93821e90ef39280dab4f40fd6cd64b02395b",
    ),
}

#: The Gaussian noise level the released generators were trained at (``sigma1.0``).
UCAN2025_LAMBDA = 1.0

#: The shape of one input they take (CIFAR-10's, values in [0, 1]).
UCAN2025_SHAPE = (3, 32, 32)


class _DenseFusion(nn.Module):
    """The dense block: four 3×3 convolutions, each on the concatenation of the block's
    input and every earlier output, LeakyReLU(0.2) after each, then ``conv_mean`` on all
    five. ``conv_variance`` has weights in the release but no part in the output."""

    def __init__(self, width: int, growth: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(width, growth, 3, padding=1)
        self.conv2 = nn.Conv2d(width + growth, growth, 3, padding=1)
        self.conv3 = nn.Conv2d(width + 2 * growth, growth, 3, padding=1)
        self.conv4 = nn.Conv2d(width + 3 * growth, growth, 3, padding=1)
        self.conv_mean = nn.Conv2d(width + 4 * growth, width, 3, padding=1)
        self.conv_variance = nn.Conv2d(width + 4 * growth, width, 3, padding=1)
        self.act = nn.LeakyReLU(0.2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """The block's output, ``width`` channels at ``x``'s resolution."""
        features = [x]
        for conv in (self.conv1, self.conv2, self.conv3, self.conv4):
            features.append(self.act(conv(torch.cat(features, dim=1))))
        return self.conv_mean(torch.cat(features, dim=1))


class UCANNoiseNetwork(nn.Module):
    """One of UCAN's certification-wise networks, with the release's parameter names.

    ``Image_first`` (3×3 conv, ``channels → width``), the dense block ``TRN``, and
    ``trunk_conv_mean`` (3×3 conv, ``width → channels``) followed by ``tanh``: the
    output has the input's shape and lies in ``(-1, 1)``. ``trunk_conv_variance`` (like
    ``TRN.conv_variance``) is stored in the release and loaded, but unused. With the
    defaults (``width = growth = 16``) its state dict has the release's 18 tensors.
    """

    def __init__(self, channels: int = 3, width: int = 16, growth: int = 16) -> None:
        super().__init__()
        self.Image_first = nn.Conv2d(channels, width, 3, padding=1)
        self.TRN = _DenseFusion(width, growth)
        self.trunk_conv_mean = nn.Conv2d(width, channels, 3, padding=1)
        self.trunk_conv_variance = nn.Conv2d(width, channels, 3, padding=1)

    def logits(self, x: torch.Tensor) -> torch.Tensor:
        """The output before ``tanh``, of ``x``'s shape."""
        return self.trunk_conv_mean(self.TRN(self.Image_first(x)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``tanh`` of :meth:`logits`: ``x``'s shape, values in ``(-1, 1)``."""
        return torch.tanh(self.logits(x))


class ReleasedUCANGenerator(NoiseGenerator):
    """The released cascade: ``mu = lam·G1(x)``, ``sigma = |G2(x + mu)|``.

    ``mu`` lies in ``(-lam, lam)`` and ``sigma`` in ``[0, sigma_bound)`` with
    ``sigma_bound = 1`` (``|tanh|``; the release adds no floor, so ``sigma`` can be 0
    and the certified region flat along that pixel). Both depend on the input, so a
    certificate covers the noise at the certified input only (UCAN Theorem 7).
    """

    kind = "ucan-released"
    depends_on_input = True
    #: The supremum of ``sigma``: ``|tanh| < 1`` (UCAN's ``gamma = 1``).
    sigma_bound = 1.0

    def __init__(self, mu_net: UCANNoiseNetwork, sigma_net: UCANNoiseNetwork, lam: float) -> None:
        super().__init__()
        if not (math.isfinite(lam) and lam > 0):
            raise ValueError(f"lam must be a finite number > 0, got {lam!r}")
        self.mu_net, self.sigma_net, self.lam = mu_net, sigma_net, float(lam)

    def settings(self) -> dict[str, object]:
        raise TypeError(
            "UCAN's released generator is not saved in an rsutils checkpoint; "
            "load it again from the reference folder with load_ucan2025()"
        )

    def cascade(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(mu, z)`` with ``sigma = |tanh(z)|``: ``z`` is G2's output before ``tanh``,
        which tells how far into ``tanh``'s flat part each ``sigma`` lies."""
        mu = self.lam * self.mu_net(x)
        return mu, self.sigma_net.logits(x + mu)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(mu, sigma)`` for the batch ``x``, each of ``x``\'s shape."""
        mu, z = self.cascade(x)
        return mu, torch.tanh(z).abs()


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def ucan2025_file(role: str, root: str | os.PathLike[str] | None = None) -> Path:
    """The path of the released file of ``role`` (``"mu"`` or ``"sigma"``), checked.

    Looked for in ``<reference folder>/ucan2025/``. A missing folder setting or file
    raises :class:`FileNotFoundError`, a file whose SHA-256 is not the release's
    :class:`ValueError`; both name the fix.
    """
    if role not in UCAN2025_FILES:
        raise ValueError(f"role must be one of {sorted(UCAN2025_FILES)}, got {role!r}")
    name, expected = UCAN2025_FILES[role]
    configured = reference_root(root)
    if configured is None:
        raise FileNotFoundError(
            f"UCAN's released generator {name} was looked for nowhere: no reference folder "
            "is configured. Set RSUTILS_REFERENCE (or pass root=...) to a folder holding "
            f"{UCAN2025_FOLDER}/ with the two files of model_saved/ of youbin2014/UCAN "
            "(commit 8e53334)"
        )
    path = configured / UCAN2025_FOLDER / name
    if not path.is_file():
        raise FileNotFoundError(
            f"UCAN's released generator was looked for at {path} and is not there. Put "
            f"{name} from model_saved/ of youbin2014/UCAN (commit 8e53334) in "
            f"{configured / UCAN2025_FOLDER}, or point RSUTILS_REFERENCE (or root=...) at "
            f"the folder that holds {UCAN2025_FOLDER}/"
        )
    found = _sha256(path)
    if found != expected:
        raise ValueError(
            f"{path} has SHA-256 {found}, not {expected}: it is not the file UCAN released. "
            f"Replace it with {name} from model_saved/ of youbin2014/UCAN (commit 8e53334)"
        )
    return path


def load_ucan2025(root: str | os.PathLike[str] | None = None) -> ReleasedUCANGenerator:
    """UCAN's released certification-wise generator (CIFAR-10, radius objective,
    Gaussian ``lambda = 1``), in eval mode on the CPU.

    Each file is checked by :func:`ucan2025_file`, read with ``weights_only=True`` and
    loaded strictly: a key or shape other than the release's is an error.
    """
    networks = {}
    for role in UCAN2025_FILES:
        state = torch.load(ucan2025_file(role, root), weights_only=True, map_location="cpu")
        network = UCANNoiseNetwork(channels=UCAN2025_SHAPE[0])
        network.load_state_dict(state, strict=True)
        networks[role] = network
    return ReleasedUCANGenerator(networks["mu"], networks["sigma"], UCAN2025_LAMBDA).eval()


def cifar_shaped(images: torch.Tensor, size: int = 32) -> torch.Tensor:
    """Grey images ``(N, 1, H, W)`` in [0, 1] as colour images ``(N, 3, size, size)``.

    Bilinear resizing (``align_corners=False``: each output pixel a convex combination
    of input pixels, so values stay in [0, 1]), the grey channel repeated three times.
    Images that already have three channels are resized only.
    """
    if images.dim() != 4 or images.shape[1] not in (1, 3):
        raise ValueError(
            f"images must be a batch (N, 1 or 3, H, W), got shape {tuple(images.shape)}; "
            "add the batch and channel dimensions (images[:, None]) first"
        )
    resized = F.interpolate(images.float(), size=(size, size), mode="bilinear", align_corners=False)
    return resized.expand(-1, 3, -1, -1).contiguous()


def uniform_images(
    count: int, *, seed: int, shape: tuple[int, ...] = UCAN2025_SHAPE
) -> torch.Tensor:
    """``count`` images of ``shape`` with pixels uniform in [0, 1), independent.

    Image ``i`` is drawn from the ``uniform-images`` stream of index ``i``
    (:mod:`rsutils.core.streams`), so it does not depend on ``count``.
    """
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ValueError(f"count must be a positive integer, got {count!r}")
    return torch.stack(
        [
            torch.rand(shape, generator=stream_generator(seed, i, "uniform-images"))
            for i in range(count)
        ]
    )


@torch.no_grad()
def released_summary(
    generator: ReleasedUCANGenerator, images: torch.Tensor, *, near: float = 0.01
) -> dict[str, float]:
    """What ``generator`` gives on ``images``: its ``sigma`` and ``mu``, summarised.

    Per image, over its pixels: ``min σ``, ``median σ``, ``max σ`` and ``geometric mean
    σ`` (the factors of the radius and the ALM), each then averaged over the images;
    ``lowest σ`` is the smallest over all pixels of all images, and ``largest 1 − σ``
    its distance to the bound 1, computed in double precision from G2's output before
    ``tanh`` (``1 − tanh|z| = 2/(e^{2|z|} + 1)``), so that it is not rounded to 0 where
    ``sigma`` rounds to 1 in single precision. ``σ at its bound`` is
    the share of all pixels whose ``sigma`` is within ``near`` (relative) of its bound
    (``sigma >= (1 - near)·sigma_bound``). ``mean |μ|`` is averaged over all pixels,
    ``|μ| near λ`` is the share with ``|mu| >= (1 - near)·lam``, ``‖μ‖₂`` the per-image
    Euclidean norm averaged over the images, and ``‖μ‖₂ / λ√d`` that against its
    supremum ``lam·sqrt(d)`` (``d`` the pixels of one image), which is 1 only when every
    pixel's offset is at ``±lam``.
    """
    if not 0 < near < 1:
        raise ValueError(f"near must lie in (0, 1), got {near!r}")
    mu, z = generator.cascade(images)
    flat_mu, flat_z = mu.flatten(1).double(), z.flatten(1).double()
    flat_sigma = torch.tanh(flat_z).abs()
    bound, lam = generator.sigma_bound, generator.lam
    mu_norm = flat_mu.norm(dim=1).mean()
    return {
        "images": float(len(images)),
        "min σ": float(flat_sigma.min(dim=1).values.mean()),
        "median σ": float(flat_sigma.median(dim=1).values.mean()),
        "max σ": float(flat_sigma.max(dim=1).values.mean()),
        "geometric mean σ": float(flat_sigma.log().mean(dim=1).exp().mean()),
        "lowest σ": float(flat_sigma.min()),
        "largest 1 − σ": float(2 / (torch.exp(2 * flat_z.abs().min()) + 1)),
        "σ at its bound": float((flat_sigma >= (1 - near) * bound).double().mean()),
        "mean |μ|": float(flat_mu.abs().mean()),
        "|μ| near λ": float((flat_mu.abs() >= (1 - near) * lam).double().mean()),
        "‖μ‖₂": float(mu_norm),
        "‖μ‖₂ / λ√d": float(mu_norm / (lam * math.sqrt(flat_mu.shape[1]))),
    }
