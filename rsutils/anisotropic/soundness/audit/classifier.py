"""The classifier an audit examines: the certification-wise classifier as deployed.

A user who deploys a certification-wise classifier runs, at every input ``z`` it
receives, ``G(z) = argmax_c P(f(z + mu(z) + sigma(z) ⊙ λε) = c)``: the base model
``f``, the noise parameters ``(mu, sigma)`` recomputed at ``z``, the noise's scale
``λ`` and its classes. :class:`DeployedClassifier` is that one object, which the
audit's search (:mod:`~rsutils.anisotropic.soundness.audit.attack`), its verification
(:mod:`~rsutils.anisotropic.soundness.audit.verification`) and its runs
(:mod:`~rsutils.anisotropic.soundness.audit.runs`) take; frozen at one input it is
UCAN Theorem 7's ``g_x``, the audit's control.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np
import torch
from torch import nn

from rsutils.anisotropic.noise import Anisotropic
from rsutils.anisotropic.soundness.audit.checks import as_model_input, check_generator
from rsutils.anisotropic.soundness.audit.params import NoiseParams, frozen, noise_params
from rsutils.core.noise import Gaussian
from rsutils.core.sampling import count_classes
from rsutils.core.settings import check_count
from rsutils.core.validation import check_model, check_num_classes

if TYPE_CHECKING:
    from rsutils.anisotropic.generated import GeneratedSmooth

__all__ = ["DeployedClassifier"]


@dataclass(frozen=True, eq=False)
class DeployedClassifier:
    """``G(z)``: the base ``model``, its noise parameters ``params`` (``z -> (mu, sigma)``,
    a generator or any differentiable callable of a batch), the noise's ``scale`` λ and
    its ``num_classes`` (see the module). Checked on construction."""

    model: nn.Module
    params: NoiseParams
    scale: float
    num_classes: int

    def __post_init__(self) -> None:
        check_model(self.model)
        if not callable(self.params):
            raise TypeError(
                f"params must map a batch z to (mu, sigma), got {type(self.params).__name__}"
            )
        Gaussian(self.scale)  # a positive, finite scale
        check_num_classes(self.num_classes)

    @classmethod
    def of(cls, smooth: GeneratedSmooth) -> DeployedClassifier:
        """The classifier a :class:`~rsutils.anisotropic.generated.GeneratedSmooth`
        deploys: its base model (in its inference mode), generator, λ and classes."""
        return cls(smooth.model, smooth.generator, smooth.base.scale, smooth.num_classes)

    def frozen_at(self, x: torch.Tensor) -> DeployedClassifier:
        """``g_x``: the same classifier with ``mu`` and ``sigma`` fixed at one input ``x``
        (:func:`~rsutils.anisotropic.soundness.audit.params.frozen`)."""
        return replace(self, params=frozen(self.params, x))

    def counts(
        self, z: torch.Tensor, n: int, *, generator: torch.Generator, batch_size: int = 1000
    ) -> np.ndarray:
        """Class counts of ``f(z + mu(z) + sigma(z) ⊙ λε)`` over ``n`` draws (int64 array).

        ``z`` is one input (no batch dimension). ``mu(z)`` and ``sigma(z)`` are computed
        once, under ``torch.inference_mode``. The draws come from ``generator``, which
        must live on the model's device. They are those of
        :class:`~rsutils.core.smooth.Smooth` with ``Anisotropic(Gaussian(scale),
        sigma(z), mu(z))``. So the counts are independent of ``batch_size``, and ``n``
        draws from ``generator`` estimate G's class probabilities at ``z``.
        """
        check_count("n", n)
        check_count("batch_size", batch_size)
        z = as_model_input(self.model, z, "z")
        check_generator(generator, z.device)
        with torch.inference_mode():
            mu, sigma = noise_params(self.params, z.unsqueeze(0))
            noise = Anisotropic(Gaussian(self.scale), sigma[0], mu[0])
        counts = count_classes(
            self.model, z, noise, n, num_classes=self.num_classes, batch_size=batch_size,
            generator=generator,
        )  # fmt: skip
        return counts.cpu().numpy()
