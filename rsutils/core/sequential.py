"""Sequential CERTIFY for one question: is ``x`` certified at radius ``r``?

CERTIFY spends the same ``n`` estimation draws on every input, though for most inputs
the answer at a given radius is plain after a few dozen. :func:`decide` looks at the
counts of one seeded stream after ``n_1 < n_2 < … < n_K`` draws (a
:class:`LookSchedule`) and stops at the first look whose answer is settled:

- *certified* when the one-sided Clopper–Pearson lower bound on ``pA`` at level
  ``alpha_k`` certifies ``r`` (CERTIFY's rule at that look);
- *not certified* when even the upper bound at level ``alpha_k`` cannot, or at the
  last look.

Guarantee (alpha spending): the levels sum to at most ``alpha``, so with probability at
least ``1 - alpha`` no look's lower bound exceeds the true ``pA``, whatever the stopping
rule (the union bound over looks). Hence if the answer is *certified*, then with
probability at least ``1 - alpha`` over the noise the smoothed classifier predicts the
selected class everywhere within ``r`` of ``x`` — the guarantee of CERTIFY
(Cohen et al., Proposition 2) for the radius asked. Stopping early for *not certified*
never makes a false certificate; it may only miss a true one.

No valid test can be cheaper than a floor: with ``m`` draws all in class A, a level-
``alpha`` test may only certify ``pA > p`` if ``p^m <= alpha``, so for Gaussian noise
radius ``r`` needs at least :func:`~rsutils.core.confidence.min_samples_for_radius`
draws, whichever procedure is used.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Protocol

import numpy as np
import torch

from rsutils.core.confidence import check_alpha, clopper_pearson_lower, clopper_pearson_upper
from rsutils.core.confidence_sequence import (
    randomized_clopper_pearson_lower,
    randomized_clopper_pearson_pvalue,
)
from rsutils.core.noise import NoiseFamily
from rsutils.core.settings import check_count
from rsutils.core.smooth import ABSTAIN, Smooth
from rsutils.core.streams import derived_seed, draw_seed

__all__ = [
    "Counter",
    "Decision",
    "LookSchedule",
    "Schedule",
    "certifies",
    "check_radius",
    "decide",
    "decide_radii",
    "randomization",
    "settle_looks",
    "threshold_pA",
]


class Counter(Protocol):
    """Class counts over growing prefixes of one stream of draws
    (:class:`~rsutils.core.sampling.PrefixCounter`, or recorded draws replayed by
    :class:`~rsutils.core.record.RecordedCounter`)."""

    def advance(self, to: int) -> torch.Tensor | np.ndarray: ...


class Schedule(Protocol):
    """When a sequential procedure looks at its draws and what it tests there:
    :class:`LookSchedule` (levels spent over looks) or
    :class:`~rsutils.core.anytime.AnytimeSchedule` (a confidence sequence)."""

    @property
    def alpha(self) -> float: ...

    @property
    def n_max(self) -> int: ...

    def settle(
        self,
        smooth: Smooth,
        counter: Counter,
        tested: int,
        radii: Sequence[float],
        *,
        dim: int,
        n0: int,
        seed: int,
        index: int,
    ) -> list[Decision]: ...


@dataclass(frozen=True)
class LookSchedule:
    """Prefix lengths ``looks`` of one stream of draws, and the level spent at each.

    ``looks`` increase strictly; ``alphas[k]`` is the level of the test at ``looks[k]``
    and their sum, :attr:`alpha`, is the procedure's failure probability. With
    ``randomized`` each look's lower bound is the randomised Clopper–Pearson bound
    (:func:`~rsutils.core.confidence_sequence.randomized_clopper_pearson_lower`) with one
    uniform ``u`` per input (:func:`randomization`), stated in every decision: its
    test has level exactly ``alpha_k``, never certifies less than Clopper–Pearson's,
    and can certify below the floor of non-randomised tests.
    """

    looks: tuple[int, ...]
    alphas: tuple[float, ...]
    randomized: bool = False

    def __post_init__(self) -> None:
        if not self.looks or len(self.looks) != len(self.alphas):
            raise ValueError(
                f"need one level per look, got {len(self.looks)} looks and "
                f"{len(self.alphas)} levels"
            )
        for look in self.looks:
            check_count("a look", look)
        if any(b <= a for a, b in zip(self.looks, self.looks[1:], strict=False)):
            raise ValueError(f"looks must increase strictly, got {self.looks}")
        if any(not a > 0 for a in self.alphas):
            raise ValueError(f"every look's level must be positive, got {self.alphas}")
        check_alpha(self.alpha)

    @property
    def alpha(self) -> float:
        """The overall failure probability (the levels' sum)."""
        return float(math.fsum(self.alphas))

    @property
    def n_max(self) -> int:
        """The draws of the last look, the most the procedure ever spends."""
        return self.looks[-1]

    def settle(
        self,
        smooth: Smooth,
        counter: Counter,
        tested: int,
        radii: Sequence[float],
        *,
        dim: int,
        n0: int,
        seed: int,
        index: int,
    ) -> list[Decision]:
        """:func:`settle_looks` with this schedule."""
        return settle_looks(
            smooth, counter, tested, radii, self, dim=dim, n0=n0, seed=seed, index=index
        )

    @classmethod
    def geometric(
        cls,
        n_max: int,
        alpha: float,
        *,
        first: int = 32,
        growth: float = 2.0,
        final_share: float = 0.5,
        randomized: bool = False,
    ) -> LookSchedule:
        """Looks at ``first``, ``first·growth``, … below ``n_max``, and at ``n_max``.

        The last look gets ``final_share`` of ``alpha``, so that an input that needs all
        ``n_max`` draws loses little against CERTIFY at level ``alpha``; the earlier
        looks share the rest equally. With one look it is CERTIFY at ``alpha``.
        """
        check_count("n_max", n_max)
        check_count("first", first)
        check_alpha(alpha)
        if not growth > 1:
            raise ValueError(f"growth must exceed 1, got {growth!r}")
        if not 0 < final_share <= 1:
            raise ValueError(f"final_share must lie in (0, 1], got {final_share!r}")
        looks: list[int] = []
        size = float(first)
        while round(size) < n_max:
            if not looks or round(size) > looks[-1]:
                looks.append(round(size))
            size *= growth
        looks.append(n_max)
        if len(looks) == 1:
            return cls((n_max,), (alpha,), randomized)
        early = alpha * (1 - final_share) / (len(looks) - 1)
        levels = (early,) * (len(looks) - 1) + (alpha * final_share,)
        return cls(tuple(looks), levels, randomized)


@dataclass(frozen=True)
class Decision:
    """The answer of :func:`decide` for one input and one radius.

    ``certified`` says whether ``selected`` is certified at ``radius``; ``count`` of
    the ``draws`` estimation draws fell in it, and ``pA_lower``/``pA_upper`` are the
    bounds at level ``alpha_spent`` of the stopping ``look`` (1-based). ``n0``
    selection draws came first; ``seed`` and ``index`` reproduce the noise. In the
    evaluation of a true label (:func:`~rsutils.core.evaluation.decide_label`)
    ``selected`` is that label and ``n0`` is 0. ``u`` is the randomisation of a
    randomised test (``None`` for a non-randomised one): the certificate holds at its
    level only for ``u`` drawn as :func:`randomization` draws it, before the counts.
    """

    certified: bool
    radius: float
    selected: int
    count: int
    draws: int
    look: int
    pA_lower: float
    pA_upper: float
    n0: int
    alpha: float
    alpha_spent: float
    seed: int
    index: int
    u: float | None = None

    @property
    def prediction(self) -> int:
        """The certified class, or :data:`~rsutils.core.smooth.ABSTAIN` if not certified."""
        return self.selected if self.certified else ABSTAIN

    @property
    def forward_passes(self) -> int:
        """Noisy copies the base model classified, selection and estimation draws together."""
        return self.n0 + self.draws

    def as_dict(self) -> dict[str, object]:
        return {**asdict(self), "prediction": self.prediction}


def certifies(smooth: Smooth, p: float, radius: float, dim: int) -> bool:
    """Whether CERTIFY with ``pA_lower = p`` certifies ``radius`` for an input of ``dim``
    numbers (it answers a class, and its radius is at least ``radius``)."""
    if p < 0.5:
        return False
    return bool(smooth.noise.radius(p, norm=smooth.norm, dim=dim) >= radius)


def decide(
    smooth: Smooth,
    x: torch.Tensor,
    radius: float,
    n0: int,
    schedule: Schedule,
    batch_size: int = 1000,
    seed: int | None = None,
    index: int = 0,
) -> Decision:
    """Is ``x`` certified at ``radius``? Sequential CERTIFY (see the module's text).

    ``n0`` draws select the class as in CERTIFY (the same stream, so the class is
    CERTIFY's); the estimation draws are prefixes of CERTIFY's stream of
    ``schedule.n_max`` draws, so an input that reaches the last look has CERTIFY's count
    at ``n = schedule.n_max``.

    Guarantee: if ``certified``, then with probability at least ``1 - schedule.alpha``
    the smoothed classifier predicts ``selected`` everywhere within ``radius`` of ``x``.
    """
    return decide_radii(smooth, x, [radius], n0, schedule, batch_size, seed, index)[0]


def decide_radii(
    smooth: Smooth,
    x: torch.Tensor,
    radii: Sequence[float],
    n0: int,
    schedule: Schedule,
    batch_size: int = 1000,
    seed: int | None = None,
    index: int = 0,
) -> list[Decision]:
    """:func:`decide` at each of ``radii``, from one pass over the stream.

    Each decision is the one :func:`decide` returns for that radius alone (the same
    draws, the same looks), and its ``draws`` are what it alone would spend; the
    stream is drawn once, up to the latest look any of them needs.
    """
    radii = [check_radius(r) for r in radii]
    check_count("n0", n0)
    seed = draw_seed() if seed is None else seed
    selection = smooth.sample_counts(x, n0, batch_size, seed=seed, index=index, phase="select")
    selected = int(np.argmax(selection))
    counter = smooth.prefix_counter(x, schedule.n_max, batch_size, seed=seed, index=index)
    return schedule.settle(
        smooth, counter, selected, radii, dim=x.numel(), n0=n0, seed=seed, index=index
    )


def settle_looks(
    smooth: Smooth,
    counter: Counter,
    tested: int,
    radii: Sequence[float],
    schedule: LookSchedule,
    *,
    dim: int,
    n0: int,
    seed: int,
    index: int,
) -> list[Decision]:
    """The looks of ``schedule`` at class ``tested``'s count in ``counter``'s prefixes.

    The rule of :func:`decide` for each of ``radii`` (checked by the caller): at look
    ``k``, *certified* if the Clopper–Pearson lower bound at level ``alpha_k`` certifies
    the radius, *not certified* if the upper bound cannot or at the last look. The
    counter is advanced only to the latest look some radius needs; ``n0``, ``seed`` and
    ``index`` are recorded in the decisions of an input of ``dim`` numbers. A
    randomised schedule's lower bounds use the input's :func:`randomization` (its
    upper bounds, which only stop early, stay Clopper–Pearson's).
    """
    last = len(schedule.looks)
    u = randomization(seed, index) if schedule.randomized else None
    thresholds = [threshold_pA(smooth, r, dim) for r in radii] if u is not None else []
    decisions: dict[int, Decision] = {}
    for look, (n, level) in enumerate(zip(schedule.looks, schedule.alphas, strict=True), 1):
        count = int(counter.advance(n)[tested])
        lower = float(clopper_pearson_lower(count, n, level))
        upper = float(clopper_pearson_upper(count, n, level))
        randomized_lower = False  # the recorded bound of a randomised look, once computed
        for position, radius in enumerate(radii):
            if position in decisions:
                continue
            if u is None:
                certified = certifies(smooth, lower, radius, dim)
            else:  # the randomised bound reaches the threshold: its p-value there <= level
                pvalue = randomized_clopper_pearson_pvalue(count, n, thresholds[position], u)
                certified = bool(pvalue <= level and thresholds[position] < 1)
            if certified or look == last or not certifies(smooth, upper, radius, dim):
                if u is not None and not randomized_lower:
                    lower = float(randomized_clopper_pearson_lower(count, n, level, u))
                    randomized_lower = True
                decisions[position] = Decision(
                    certified=certified,
                    radius=radius,
                    selected=tested,
                    count=count,
                    draws=n,
                    look=look,
                    pA_lower=lower,
                    pA_upper=upper,
                    n0=n0,
                    alpha=schedule.alpha,
                    alpha_spent=level,
                    seed=seed,
                    index=index,
                    u=u,
                )
        if len(decisions) == len(radii):
            break
    return [decisions[position] for position in range(len(radii))]


def randomization(seed: int, index: int) -> float:
    """The uniform ``u`` of input ``index``'s randomised test in run ``seed``.

    Drawn from its own stream (``randomize``), so it is independent of the input's
    draws and fixed before any of them is seen: a reader with the seed redraws it.
    """
    return float(np.random.default_rng(derived_seed(seed, index, "randomize")).random())


def threshold_pA(smooth: Smooth, radius: float, dim: int) -> float:
    """The least ``pA`` that certifies ``radius`` for an input of ``dim`` numbers.

    CERTIFY with ``pA_lower = p`` certifies ``radius`` exactly when ``p >=`` this
    (:func:`certifies`); ``1/2`` at radius 0, 1 if no ``p < 1`` does. Found by
    bisection to within float64 resolution, rounded up, so that testing ``pA >`` it
    is never weaker than the radius asks; remembered per noise, norm, size and radius.
    """
    return _threshold(smooth.noise, smooth.norm, dim, check_radius(radius))


@functools.lru_cache(maxsize=4096)
def _threshold(noise: NoiseFamily, norm: str, dim: int, radius: float) -> float:
    def certifies_at(p: float) -> bool:
        return bool(noise.radius(p, norm=norm, dim=dim) >= radius)

    low, high = 0.5, 1.0
    if certifies_at(low):
        return low
    for _ in range(64):
        middle = 0.5 * (low + high)
        if middle in (low, high):
            break
        low, high = (low, middle) if certifies_at(middle) else (middle, high)
    return high


def check_radius(radius: object) -> float:
    """``radius`` as a float if it is a finite number >= 0, else a ``ValueError``."""
    if isinstance(radius, bool) or not isinstance(radius, int | float | np.floating):
        raise ValueError(f"a radius must be a number >= 0, got {radius!r}")
    if not (math.isfinite(radius) and radius >= 0):
        raise ValueError(f"a radius must be a finite number >= 0, got {radius!r}")
    return float(radius)
