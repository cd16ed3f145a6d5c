"""The smoothed classifier g(x) = argmax_c P(f(x + ε) = c) and its two algorithms.

:meth:`Smooth.predict` is PREDICT and :meth:`Smooth.certify` is CERTIFY from
Cohen, Rosenfeld and Kolter (2019), for any noise family of :mod:`rsutils.core.noise`
(anisotropic noise of :mod:`rsutils.anisotropic` included). :class:`Smooth` is a
:class:`~rsutils.core.smoothed.SmoothedClassifier`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

from rsutils.core.confidence import check_alpha, clopper_pearson_lower, top_two_pvalue
from rsutils.core.devices import model_device, model_dtype
from rsutils.core.inference import check_inference_mode, inference_model
from rsutils.core.noise import NoiseFamily
from rsutils.core.radius import get_rule
from rsutils.core.sampling import PrefixCounter, count_classes
from rsutils.core.settings import check_count
from rsutils.core.smoothed import noise_identity
from rsutils.core.sound_sampling import DEFAULT_SAMPLER, SoundGaussian, with_sampler
from rsutils.core.streams import draw_seed, image_generator
from rsutils.core.validation import DEFAULT_INPUT_RANGE, check_input, check_input_range, check_model

__all__ = ["ABSTAIN", "Certificate", "Smooth"]

#: The label returned when the smoothed classifier abstains.
ABSTAIN = -1


@dataclass(frozen=True)
class Certificate:
    """The outcome of :meth:`Smooth.certify` for one input.

    ``prediction`` is the certified class or :data:`ABSTAIN`; ``radius`` the certified
    radius in ``norm`` (0.0 when abstaining); ``selected`` the class ĉA chosen from the
    ``n0`` selection draws (kept when abstaining, so that a log can be re-analysed at
    another ``alpha``); ``count`` the number of the ``n`` estimation draws that fell
    in ĉA; ``pA_lower`` the one-sided Clopper–Pearson lower bound on its probability.
    ``seed`` and ``index`` reproduce the noise exactly.

    For anisotropic noise ``mu + sigma ⊙ eps`` (:class:`~rsutils.anisotropic.noise.Anisotropic`)
    the certified region is ``‖δ ⊘ sigma‖_p < region_radius``, ``radius`` is the ℓp ball
    inside it (``min(sigma)·region_radius``) and ``alm`` is UCAN's ALM
    (``(∏ sigma_i)^(1/d)·region_radius``). For isotropic noise all three are equal.
    """

    prediction: int
    radius: float
    pA_lower: float
    selected: int
    count: int
    n: int
    n0: int
    alpha: float
    norm: str
    seed: int
    index: int
    region_radius: float = 0.0
    alm: float = 0.0

    @property
    def abstained(self) -> bool:
        return self.prediction == ABSTAIN

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


class Smooth:
    """A base classifier smoothed with a noise family.

    ``model`` maps a batch of inputs to logits of shape ``(B, num_classes)`` (or to
    integer labels of shape ``(B,)``); it must be in eval mode (every submodule), and
    inputs are in the space where the noise is added. ``input_range`` is that space's
    range, in whose units sigma is measured: pixels as floats in [0, 1] by default
    (normalisation inside the model); inputs outside it, integer inputs and non-finite
    inputs or model outputs are errors, never certificates. Pass the range of your
    own inputs, or ``None`` for any finite input. Sampling runs on the model's device.

    ``inference`` runs the base model's forward pass in a faster numerical mode
    (:data:`~rsutils.core.inference.INFERENCE_MODES`, e.g. ``"bf16_channels_last"``; see
    :mod:`rsutils.core.inference`). A lower precision is a different base classifier:
    the certificates are then exact for the model as run in that mode, not in fp32.

    ``sampler`` is how noisy inputs are made: ``"plain"`` (the default) adds float
    noise to ``x`` in floating point, which leaks ``x``'s low bits to the model
    (Voráček and Hein, 2023), so its certificates hold only for models that do not
    read them; ``"sound"`` (Gaussian noise, inputs quantised to 1/255) adds noise
    rounded to the input grid exactly, and its certificates hold for any model (see
    :mod:`rsutils.core.sound_sampling`). ``self.noise`` is then the
    :class:`~rsutils.core.sound_sampling.SoundGaussian` of the same sigma.
    """

    def __init__(
        self,
        model: nn.Module,
        num_classes: int,
        noise: NoiseFamily,
        *,
        norm: str | None = None,
        input_range: tuple[float, float] | None = DEFAULT_INPUT_RANGE,
        inference: str = "fp32",
        sampler: str = DEFAULT_SAMPLER,
    ) -> None:
        if not isinstance(model, nn.Module):
            raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
        self.inference = check_inference_mode(inference)
        self.input_range = check_input_range(input_range)
        if isinstance(num_classes, bool) or not isinstance(num_classes, int) or num_classes < 2:
            raise ValueError(f"num_classes must be an integer >= 2, got {num_classes!r}")
        if not isinstance(noise, NoiseFamily):
            raise TypeError(
                f"noise must be a noise family such as rsutils.Gaussian(sigma=0.25), got {noise!r}"
            )
        self.model = inference_model(model, inference)
        self.num_classes = num_classes
        self.noise = with_sampler(noise, sampler)
        #: ``"sound"`` when the noise is a SoundGaussian (passed or made), else ``"plain"``.
        self.sampler = "sound" if isinstance(self.noise, SoundGaussian) else "plain"
        self.norm = norm or noise.default_norm
        get_rule(noise.family, self.norm)  # fail now, not after sampling

    @property
    def device(self) -> torch.device:
        return model_device(self.model)

    @property
    def noise_description(self) -> str:
        """The noise's ``repr``, as a log records it (an anisotropic noise's names its
        content)."""
        return repr(self.noise)

    @property
    def logged_scale(self) -> float:
        """The noise's scale, which every row of a log records."""
        return self.noise.scale

    @property
    def anisotropic(self) -> bool:
        """Whether certificates are anisotropic regions, as the noise says
        (:attr:`~rsutils.core.noise.NoiseFamily.anisotropic`)."""
        return self.noise.anisotropic

    def identity(self, algorithm: str = "certify") -> dict[str, Any]:
        """The noise, the norm (for CERTIFY) and the inference mode unless fp32
        (:func:`~rsutils.core.smoothed.noise_identity`)."""
        return noise_identity(self.noise_description, self.norm, self.inference, algorithm)

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
        """CERTIFY: a class and a radius within which g is constant, or abstain.

        ``n0`` draws select the class ĉA; ``n`` fresh draws bound its probability from
        below (one-sided Clopper–Pearson at level ``alpha``). If ``pA_lower < 1/2`` the
        answer is :data:`ABSTAIN`; otherwise ``radius`` is the registry's radius at
        ``pA_lower`` with ``pB_upper = 1 - pA_lower`` (for anisotropic noise, the ℓp
        ball inside the certified region; see :class:`Certificate`).

        Guarantee (Cohen et al., Proposition 2): if the answer is a class, then with
        probability at least ``1 - alpha`` over the noise, g predicts it everywhere
        within ``radius`` of ``x`` (and, for anisotropic noise, on the whole region
        ``‖δ ⊘ sigma‖_p < region_radius``, UCAN Theorem 2).
        """
        check_count("n0", n0)
        check_count("n", n)
        check_alpha(alpha)
        x = self._prepare(x)
        seed = draw_seed() if seed is None else seed
        selection = self._counts(x, n0, batch_size, seed, index, "select")
        c_hat = int(np.argmax(selection))
        counts = self._counts(x, n, batch_size, seed, index, "estimate")
        return self.certificate(
            int(counts[c_hat]), n, c_hat, n0=n0, alpha=alpha, seed=seed, index=index, dim=x.numel()
        )

    def certificate(
        self,
        count: int,
        n: int,
        selected: int,
        *,
        n0: int,
        alpha: float,
        seed: int,
        index: int,
        dim: int,
    ) -> Certificate:
        """CERTIFY's answer when ``count`` of ``n`` estimation draws fell in ``selected``.

        The one-sided Clopper–Pearson bound at level ``alpha`` gives ``pA_lower``; when
        it (less what the sampler charges, :meth:`~rsutils.core.noise.NoiseFamily.charged_pA`)
        is below 1/2 the answer is :data:`ABSTAIN`, otherwise the class with the
        registry's radius for an input of ``dim`` numbers. The other arguments are
        recorded.
        """
        pA_lower = float(clopper_pearson_lower(count, n, alpha))
        common = {
            "pA_lower": pA_lower,
            "selected": selected,
            "count": count,
            "n": n,
            "n0": n0,
            "alpha": alpha,
            "norm": self.norm,
            "seed": seed,
            "index": index,
        }
        if self.noise.charged_pA(pA_lower, dim) < 0.5:
            return Certificate(prediction=ABSTAIN, radius=0.0, **common)
        noise, norm = self.noise, self.norm
        return Certificate(
            prediction=selected,
            radius=float(noise.radius(pA_lower, norm=norm, dim=dim)),
            region_radius=float(noise.region_radius(pA_lower, norm=norm, dim=dim)),
            alm=float(noise.alm(pA_lower, norm=norm, dim=dim)),
            **common,
        )

    def predict(
        self,
        x: torch.Tensor,
        n: int,
        alpha: float,
        batch_size: int = 1000,
        seed: int | None = None,
        index: int = 0,
    ) -> int:
        """PREDICT: the class of g at ``x``, or :data:`ABSTAIN`.

        Counts ``n`` draws and returns the top class if a two-sided binomial test
        rejects, at level ``alpha``, that the top two classes are equally likely.

        Guarantee (Cohen et al., Proposition 1): the answer differs from g(x) (without
        being :data:`ABSTAIN`) with probability at most ``alpha``.
        """
        check_count("n", n)
        check_alpha(alpha)
        x = self._prepare(x)
        seed = draw_seed() if seed is None else seed
        counts = self._counts(x, n, batch_size, seed, index, "predict")
        second, top = np.argsort(counts, kind="stable")[-2:]
        if top_two_pvalue(counts[top], counts[second]) > alpha:
            return ABSTAIN
        return int(top)

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
        """Counts of each class among ``num`` noisy copies of ``x`` (int64 array).

        The stream of draws is fixed by ``(seed, index, phase)``; ``phase`` is one of
        ``"select"``, ``"estimate"`` (CERTIFY's two samples), ``"predict"``, ``"sigma"``
        and ``"reference"`` (:data:`~rsutils.core.streams.PHASES`).
        """
        x = self._prepare(x)
        return self._counts(x, num, batch_size, seed, index, phase)

    def prefix_counter(
        self,
        x: torch.Tensor,
        total: int,
        batch_size: int = 1000,
        *,
        seed: int,
        index: int = 0,
        phase: str = "estimate",
        keep_labels: bool = False,
    ) -> PrefixCounter:
        """Counts over growing prefixes of the stream :meth:`sample_counts` draws.

        The counts after ``advance(total)`` equal ``sample_counts(x, total, ...)``
        with the same ``seed``, ``index`` and ``phase``; sequential procedures
        (:mod:`rsutils.sequential`) look at them after fewer draws. With
        ``keep_labels`` it keeps every draw's class (:mod:`rsutils.sequential.record`).
        """
        check_count("total", total)
        check_count("batch_size", batch_size)
        x = self._prepare(x)
        return PrefixCounter(
            self.model,
            x,
            self.noise,
            total,
            num_classes=self.num_classes,
            batch_size=batch_size,
            generator=image_generator(seed, index, phase, x.device),
            keep_labels=keep_labels,
        )

    def _counts(
        self, x: torch.Tensor, num: int, batch_size: int, seed: int, index: int, phase: str
    ) -> np.ndarray:
        check_count("num", num)
        check_count("batch_size", batch_size)
        generator = image_generator(seed, index, phase, x.device)
        counts = count_classes(
            self.model,
            x,
            self.noise,
            num,
            num_classes=self.num_classes,
            batch_size=batch_size,
            generator=generator,
        )
        return counts.cpu().numpy()

    def _prepare(self, x: torch.Tensor) -> torch.Tensor:
        check_model(self.model)
        check_input(x, self.input_range)
        return x.to(device=self.device, dtype=model_dtype(self.model))
