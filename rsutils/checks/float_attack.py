"""A base classifier that reads the low bits of ``x + ε`` and breaks the plain sampler.

Voráček and Hein (2023) show that floating-point addition leaks the clean input: with
``y = fl(v + ε)`` (float32), whenever ``ε`` is in the binade above ``v`` and cancels it
(``-2v ≤ ε ≤ -2^(e+1)``, ``2^e ≤ v``), the sum is exact and ``y ≡ v`` modulo twice
``v``'s last place, so ``y`` carries ``v``'s last bit. The classifier here (our
construction, after their idea) tests each coordinate for consistency with a known
clean value ``v``: ``fl(v + fl(y − v)) == y``, which every ``y = fl(v + ε)`` we drew
passes (when ``|ε| ≤ |v|`` the difference ``y − v`` is exact, Sterbenz-like; in the
cancelling case it is ``ε`` itself), while a draw around a neighbour ``v + 1/255``
fails it at a rate of a few percent per coordinate. It answers class 0 ("this is
``x0``") when at most ``tolerance`` coordinates fail, class 1 otherwise.

On an image of 784 coordinates, CERTIFY with the plain sampler certifies class 0 at
``x0`` with a large radius, yet one grey level up on every pixel, far inside that
radius, the smoothed classifier says class 1: the certificate is false.
With :class:`~rsutils.core.sound_sampling.SoundGaussian` the model sees only
``(a + n)/255``, a function of the integer ``a + n``, and the same classifier is just
another function of the noisy input: the certificate holds (:func:`float_attack`).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from rsutils.core.noise import Gaussian
from rsutils.core.smooth import Smooth

__all__ = ["FloatAttack", "LowBitsRecogniser", "float_attack"]


class LowBitsRecogniser(nn.Module):
    """Class 0 for inputs whose low bits say "``x0`` plus float32 noise", else class 1.

    ``forward`` takes a batch ``(B, *x0.shape)`` and returns logits ``(B, 2)``.
    """

    def __init__(self, x0: torch.Tensor, tolerance: int = 3) -> None:
        super().__init__()
        if x0.dtype != torch.float32:
            raise ValueError(f"the recogniser reads float32 bits, got {x0.dtype}: pass x0.float()")
        self.register_buffer("x0", x0.clone())
        self.tolerance = tolerance

    def failures(self, batch: torch.Tensor) -> torch.Tensor:
        """The number of coordinates of each input inconsistent with ``x0`` (int64)."""
        consistent = (self.x0 + (batch - self.x0)) == batch
        return (~consistent).flatten(1).sum(1)

    def forward(self, batch: torch.Tensor) -> torch.Tensor:
        """Logits ``(B, 2)``: one-hot class 0 where at most ``tolerance`` coordinates
        are inconsistent with ``x0``, else class 1."""
        other = (self.failures(batch) > self.tolerance).float()
        return torch.stack([1.0 - other, other], dim=1)


@dataclass(frozen=True)
class FloatAttack:
    """The attack on one sampler: CERTIFY at ``x0`` and the smoothed class at ``x1``."""

    sampler: str
    #: CERTIFY's answer at x0 (0 when recognised, -1 when it abstains) and its radius.
    prediction: int
    radius: float
    #: ‖x1 − x0‖₂, the attack point's distance.
    distance: float
    #: The smoothed classifier's class at x1, from the same number of draws.
    prediction_at_attack: int
    #: The share of draws the recogniser answers 0 at x0 and at x1.
    recognised_x0: float
    recognised_x1: float

    @property
    def certificate_false(self) -> bool:
        """Whether x1 lies within the certified radius yet gets another class."""
        certified = self.prediction >= 0 and self.distance < self.radius
        return certified and self.prediction_at_attack not in (self.prediction, -1)


def float_attack(
    sampler: str,
    *,
    sigma: float = 0.25,
    level: int = 7,
    side: int = 28,
    n: int = 1000,
    alpha: float = 0.001,
    seed: int = 0,
) -> FloatAttack:
    """The attack on a constant ``side × side`` image of grey level ``level``/255.

    ``x0`` is that image, ``x1`` is one grey level brighter everywhere. CERTIFY runs at
    ``x0`` (``n0 = 100``) and PREDICT-like counts at ``x1`` (``n`` draws each).
    """
    x0 = torch.full((1, side, side), level / 255.0)
    x1 = torch.full((1, side, side), (level + 1) / 255.0)
    model = LowBitsRecogniser(x0).eval()
    smooth = Smooth(model, 2, Gaussian(sigma), sampler=sampler)
    cert = smooth.certify(x0, 100, n, alpha, seed=seed, index=0)
    counts0 = smooth.sample_counts(x0, n, seed=seed, index=0)
    counts1 = smooth.sample_counts(x1, n, seed=seed, index=1)
    at_x1 = smooth.predict(x1, n, alpha, seed=seed, index=1)
    return FloatAttack(
        sampler=sampler,
        prediction=cert.prediction,
        radius=cert.radius,
        distance=float(torch.linalg.vector_norm(x1 - x0)),
        prediction_at_attack=at_x1,
        recognised_x0=float(counts0[0] / n),
        recognised_x1=float(counts1[0] / n),
    )
