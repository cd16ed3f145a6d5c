"""The smoothed classifier whose noise parameters come from a generator (UCAN Alg. 1–2).

At each input ``x`` it asks the generator for ``mu(x)``, ``sigma(x)`` once, then runs
Cohen et al.'s CERTIFY or PREDICT with the noise ``mu(x) + sigma(x) ⊙ λ·eps``
(:class:`~rsutils.anisotropic.noise.Anisotropic` over the base family), so every
certificate carries ``radius`` (``min(sigma)·R``), ``region_radius`` (``R``) and the ALM.
It is exactly :class:`~rsutils.core.smooth.Smooth` with those ``mu``, ``sigma`` passed by
hand, and it inherits its guarantee, for the classifier ``g_x`` whose noise is frozen
at ``x`` (UCAN Theorem 7).

For a generator whose ``mu``, ``sigma`` depend on the input (certification-wise), that
guarantee is not one about a deployed system: at a perturbed input ``x + δ`` the same
code computes ``mu(x + δ)``, ``sigma(x + δ)``, another smoothed classifier. Whether its
answers stay inside the claimed region is what :mod:`rsutils.anisotropic.soundness.audit` tests;
the anisotropic certificate memory (:mod:`rsutils.memory.superellipsoids`) is the sound
alternative, as the ball memory is for data-dependent sigma.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np
import torch
from torch import nn

from rsutils.anisotropic.generators import NoiseGenerator
from rsutils.anisotropic.noise import Anisotropic
from rsutils.core.noise import NoiseFamily
from rsutils.core.smooth import Certificate, Smooth
from rsutils.core.smoothed import noise_identity
from rsutils.core.validation import DEFAULT_INPUT_RANGE, check_input

__all__ = ["GeneratedSmooth", "generator_fingerprint"]


def generator_fingerprint(generator: nn.Module) -> str:
    """A short hash of the generator's kind, settings and every tensor of its state."""
    digest = hashlib.sha256(type(generator).__name__.encode())
    for name, tensor in sorted(generator.state_dict().items()):
        digest.update(name.encode())
        digest.update(tensor.detach().to("cpu", torch.float64).numpy().tobytes())
    return digest.hexdigest()[:12]


class GeneratedSmooth:
    """``Smooth`` with the anisotropic noise that ``generator`` produces at each input.

    A :class:`~rsutils.core.smoothed.SmoothedClassifier`, like
    :class:`~rsutils.core.smooth.Smooth`.

    ``base`` is the isotropic family (its scale ``λ`` multiplies ``sigma``); the
    generator runs on the model's device, in eval mode, once per input, in float32.
    ``inference`` is the base model's mode, as for :class:`~rsutils.core.smooth.Smooth`.
    """

    def __init__(
        self,
        model: nn.Module,
        num_classes: int,
        base: NoiseFamily,
        generator: NoiseGenerator,
        *,
        norm: str | None = None,
        input_range: tuple[float, float] | None = DEFAULT_INPUT_RANGE,
        inference: str = "fp32",
    ) -> None:
        if not isinstance(generator, NoiseGenerator):
            raise TypeError(
                "generator must be a noise parameter generator of rsutils.anisotropic "
                f"(FixedNoise, DatasetWiseGenerator, CertificationWiseGenerator), got {generator!r}"
            )
        self._template = Smooth(
            model, num_classes, base, norm=norm, input_range=input_range, inference=inference
        )
        # Wrapped once here; the Smooth of each input reuses it as given.
        self.model, self.num_classes, self.base = self._template.model, num_classes, base
        self.inference = self._template.inference
        self.generator = generator
        self.norm = self._template.norm
        self.input_range = self._template.input_range

    @property
    def device(self) -> torch.device:
        return self._template.device

    @property
    def noise_description(self) -> str:
        """The noise as a log records it (the base family and the generator's identity)."""
        kind = self.generator.kind
        return f"Generated({self.base!r}, {kind}, id={generator_fingerprint(self.generator)})"

    @property
    def logged_scale(self) -> float:
        """The base family's scale ``λ``, which every row of a log records."""
        return self.base.scale

    @property
    def anisotropic(self) -> bool:
        """Always true, since every certificate is a region ``‖δ ⊘ sigma(x)‖_p < R``."""
        return True

    def identity(self, algorithm: str = "certify") -> dict[str, Any]:
        """The noise (the generator's identity included), the norm (for CERTIFY) and the
        inference mode unless fp32 (:func:`~rsutils.core.smoothed.noise_identity`)."""
        return noise_identity(self.noise_description, self.norm, self.inference, algorithm)

    def parameters_at(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(mu(x), sigma(x))`` for one input, in float64 on the CPU."""
        check_input(x, self.input_range)
        if self.generator.training:
            raise ValueError("the generator is in training mode; call generator.eval() first")
        with torch.inference_mode():
            batch = x.to(self.device, torch.float32).unsqueeze(0)
            mu, sigma = self.generator.to(self.device)(batch)
        return mu[0].to("cpu", torch.float64), sigma[0].to("cpu", torch.float64)

    def smooth_at(self, x: torch.Tensor) -> Smooth:
        """The ordinary smoothed classifier with the noise frozen at ``x`` (``g_x``)."""
        mu, sigma = self.parameters_at(x)
        noise = Anisotropic(self.base, sigma, mu)
        return Smooth(
            self.model, self.num_classes, noise, norm=self.norm, input_range=self.input_range
        )

    def certify(
        self,
        x: torch.Tensor,
        n0: int,
        n: int,
        alpha: float,
        batch_size: int = 1000,
        seed: int | None = None,
        index: int = 0,
    ) -> Certificate:
        """UCAN's Algorithm 1: CERTIFY with ``mu(x)``, ``sigma(x)``.

        See :meth:`~rsutils.core.smooth.Smooth.certify` for the arguments and the guarantee.
        """
        return self.smooth_at(x).certify(x, n0, n, alpha, batch_size, seed, index)

    def predict(
        self,
        x: torch.Tensor,
        n: int,
        alpha: float,
        batch_size: int = 1000,
        seed: int | None = None,
        index: int = 0,
    ) -> int:
        """PREDICT (see :meth:`~rsutils.core.smooth.Smooth.predict`) with ``mu(x)``, ``sigma(x)``.

        Cohen et al.'s test of the top two counts, not the test of ``n_A`` against
        ``n/2`` that UCAN's Algorithm 2 prints: both bound the error by ``alpha``, and
        this one abstains less often.
        """
        return self.smooth_at(x).predict(x, n, alpha, batch_size, seed, index)

    def sample_counts(
        self,
        x: torch.Tensor,
        num: int,
        batch_size: int = 1000,
        *,
        seed: int,
        index: int = 0,
        phase: str = "estimate",
    ) -> np.ndarray:
        """Counts of each class among ``num`` noisy copies of ``x`` with ``mu(x)``,
        ``sigma(x)`` (see :meth:`~rsutils.core.smooth.Smooth.sample_counts`)."""
        frozen = self.smooth_at(x)
        return frozen.sample_counts(x, num, batch_size, seed=seed, index=index, phase=phase)
