"""A smoothed classifier whose noise level is chosen per input, certified soundly.

:class:`DataDependentSmooth` is DDRS's "Cohen-DS" as one object: for each input,
sigma ascent (:mod:`rsutils.ddrs.sigma_ascent`) picks the noise level, CERTIFY runs
at that level, and a :class:`~rsutils.memory.balls.CertificateMemory` turns the Monte
Carlo certificate into one consistent with every earlier answer.

>>> from rsutils import CertificateMemory, DataDependentSmooth, SigmaAscent
>>> memory = CertificateMemory("answers.sqlite")               # doctest: +SKIP
>>> ascent = SigmaAscent(sigma0=0.25)
>>> smooth = DataDependentSmooth(model, 10, ascent, memory)    # doctest: +SKIP
>>> answer = smooth.certify(x, n0=100, n=100_000, alpha=0.001, # doctest: +SKIP
...                         seed=0, index=7)
>>> answer.prediction, answer.radius, answer.scale              # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from rsutils.core.devices import model_device, model_dtype
from rsutils.core.inference import check_inference_mode, inference_model
from rsutils.core.noise import make_noise
from rsutils.core.smooth import Certificate, Smooth
from rsutils.core.smoothed import check_algorithm, inference_setting
from rsutils.core.streams import draw_seed, image_generator
from rsutils.core.validation import (
    DEFAULT_INPUT_RANGE,
    check_input,
    check_input_range,
    check_model,
)
from rsutils.ddrs.sigma_ascent import SigmaAscent, SigmaResult, optimize_sigma
from rsutils.memory.balls import CertificateMemory

__all__ = ["DataDependentAnswer", "DataDependentSmooth"]


@dataclass(frozen=True)
class DataDependentAnswer:
    """The answer at one input: ``prediction`` and ``radius`` are the memory's (CERTIFY's
    when there is no memory), ``scale`` the input's noise level, ``certificate`` the
    Monte Carlo certificate at that level, ``action`` what the memory did (``"none"``
    without a memory)."""

    prediction: int
    radius: float
    scale: float
    certificate: Certificate
    action: str


class DataDependentSmooth:
    """Data-dependent smoothing of ``model`` (in eval mode) with settings ``ascent``.

    A :class:`~rsutils.core.smoothed.SmoothedClassifier` whose answers carry each
    input's own scale (so its ``logged_scale`` is ``None``).

    Without a ``memory`` the answers are CERTIFY's at each input's own noise level:
    each is a true statement about a fixed-sigma smoothed classifier, but together
    they can contradict each other (see :mod:`rsutils.memory`). The memory's
    balls must be those of the certificate (ℓ2 for Gaussian noise, ℓ1 for uniform
    noise). ``input_range`` is that of :class:`~rsutils.core.smooth.Smooth`.

    ``inference`` is the numerical mode of the base model in CERTIFY
    (:mod:`rsutils.core.inference`): the certificates are then about the model as run
    in that mode. Sigma ascent always runs the model as given (float32), since it only
    chooses each input's noise level: any rule may choose it.
    """

    def __init__(
        self,
        model: nn.Module,
        num_classes: int,
        ascent: SigmaAscent,
        memory: CertificateMemory | None = None,
        *,
        input_range: tuple[float, float] | None = DEFAULT_INPUT_RANGE,
        inference: str = "fp32",
    ) -> None:
        if memory is not None and memory.norm != ascent.norm:
            raise ValueError(
                f"the memory holds {memory.norm} balls but {ascent.family} noise "
                f"certifies {ascent.norm} balls; open it with norm={ascent.norm!r}"
            )
        self.model, self.num_classes = model, num_classes
        self.inference = check_inference_mode(inference)
        self._certified_model = inference_model(model, inference)  # wrapped once
        self.input_range = check_input_range(input_range)
        self.ascent, self.memory = ascent, memory

    @property
    def norm(self) -> str:
        """The threat norm of the certificates, the one sigma ascent's surrogate stands for."""
        return self.ascent.norm

    @property
    def device(self) -> torch.device:
        return model_device(self.model)

    @property
    def noise_description(self) -> str:
        """The noise family, with the sigma ascent that chooses each input's scale."""
        return f"DataDependent({self.ascent!r})"

    @property
    def logged_scale(self) -> None:
        """Always ``None``, since each input has its own scale, which its answer carries."""
        return None

    @property
    def anisotropic(self) -> bool:
        """Never true, since the certificates are balls, at each input's own scale."""
        return False

    def identity(self, algorithm: str = "certify") -> dict[str, Any]:
        """``method`` (``"ds"``), the sigma ascent's settings and the inference mode
        unless fp32; the same for CERTIFY and PREDICT (the ascent fixes the norm)."""
        check_algorithm(algorithm)
        ascent = {"method": "ds", "ascent": self.ascent.as_dict()}
        return {**ascent, **inference_setting(self.inference)}

    def scales(self, x: torch.Tensor, seed: int, indices: Sequence[int]) -> list[float]:
        """Sigma ascent for a batch ``x`` of inputs with ids ``indices``: the scale of
        each (:meth:`ascend` returns the whole run).

        Each input's draws come from a generator seeded by ``(seed, index)``, so its
        scale does not depend on the rest of the batch.
        """
        return self.ascend(x, seed, indices).scale.tolist()

    def ascend(self, x: torch.Tensor, seed: int, indices: Sequence[int]) -> SigmaResult:
        """Sigma ascent for a batch ``x`` of inputs with ids ``indices``, as
        :meth:`scales` runs it, with the scale and the surrogate radius at every step."""
        check_model(self.model)
        check_input(x, self.input_range, batched=True)
        device, dtype = model_device(self.model), model_dtype(self.model)
        x = x.to(device=device, dtype=dtype)
        generators = [image_generator(seed, i, "sigma", device) for i in indices]
        return optimize_sigma(self.model, x, self.ascent, generators)

    def certify(
        self,
        x: torch.Tensor,
        n0: int,
        n: int,
        alpha: float,
        batch_size: int = 1000,
        seed: int | None = None,
        index: int = 0,
        *,
        scale: float | None = None,
        key: str | None = None,
    ) -> DataDependentAnswer:
        """Sigma ascent (unless ``scale`` is given), CERTIFY at that scale, memory.

        ``key`` identifies the query in the memory (a repeated key returns the stored
        answer); it defaults to none, so every call is a new admission.

        Guarantee: with a memory, stored regions of different classes never
        intersect and no stored input lies in a region of another class, and a query
        inside a stored region gets that region's class; so the answers are those of
        one classifier (the memory-enhanced one). Without a memory, each answer holds,
        with probability at least ``1 - alpha``, only for the smoothed classifier at
        that input's own noise level.

        Nine parameters: CERTIFY's own seven, in the order of
        :meth:`~rsutils.core.smooth.Smooth.certify` (Cohen et al.'s signature), and the
        scale and memory key of data-dependent smoothing.
        """
        seed = draw_seed() if seed is None else seed
        if scale is None:
            (scale,) = self.scales(x[None], seed, [index])
        smooth = self.smooth_at_scale(scale)
        cert = smooth.certify(x, n0, n, alpha, batch_size, seed=seed, index=index)
        if self.memory is None:
            return DataDependentAnswer(cert.prediction, cert.radius, scale, cert, "none")
        answer = self.memory.admit(x, cert.prediction, cert.radius, key=key)
        return DataDependentAnswer(answer.prediction, answer.radius, scale, cert, answer.action)

    def predict(
        self,
        x: torch.Tensor,
        n: int,
        alpha: float,
        batch_size: int = 1000,
        seed: int | None = None,
        index: int = 0,
        *,
        scale: float | None = None,
    ) -> int:
        """Sigma ascent (unless ``scale`` is given), then PREDICT at that scale.

        Guarantee: the answer differs from the class of the smoothed classifier at
        ``x``'s own noise level (the data-dependent classifier without a memory) with
        probability at most ``alpha``, unless it is ``ABSTAIN``. It does not consult the
        memory, whose answer only :meth:`certify` gives.
        """
        seed = draw_seed() if seed is None else seed
        if scale is None:
            (scale,) = self.scales(x[None], seed, [index])
        return self.smooth_at_scale(scale).predict(x, n, alpha, batch_size, seed, index)

    def smooth_at_scale(self, scale: float) -> Smooth:
        """The fixed-noise smoothed classifier at ``scale``, whose CERTIFY and PREDICT
        this classifier runs at an input of that scale (in its inference mode)."""
        noise = make_noise(self.ascent.family, scale)
        return Smooth(
            self._certified_model,
            self.num_classes,
            noise,
            norm=self.ascent.norm,
            input_range=self.input_range,
        )
