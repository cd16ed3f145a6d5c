"""The published sequential designs for "is ``pA > p0``?": what they share.

Chapter 08 compares its own procedures with published ones *on the same draws*. Each
design is a function that takes ``hits``, the tested class's outcomes (1 = the base
classifier answered that class) in the order they were drawn, of length ``n_max`` (the
most draws the comparison allows), reads a prefix of it as the design would, and returns
a :class:`PublishedDecision`: whether it certified ``pA > p0`` and how many draws it
read. For Gaussian ℓ2 smoothing at radius ``r``, ``p0 = Φ(r/σ)``. One module per paper:

- :mod:`rsutils.sequential.horvath`: Horváth, Müller, Fischer and Vechev (ICLR 2022),
  "adaptive sampling" in stages, alpha split over the stages by Bonferroni;
- :mod:`rsutils.sequential.voracek`: Voráček (NeurIPS 2024), his betting confidence
  sequence (Algorithm 2, the same process as this library's Jeffreys mixture) and his
  union-bound sequence (Algorithm 1 with the settings of his experiments).

Guarantee (all of them): if the draws are i.i.d. Bernoulli(``pA``) with ``pA ≤ p0``, the
probability of ``certified`` is at most ``alpha``, whatever the stream's length; none
can certify with fewer draws than the fixed-``n`` floor ``ceil(ln alpha / ln p0)``
(:func:`~rsutils.core.confidence.min_samples_for_radius`). A design that reaches the end
of ``hits`` undecided answers *not certified* with ``settled=False``.

:class:`PublishedTest` makes each design a test of
:class:`~rsutils.sequential.decisions.Decide`, one class each in the design's module,
registered in :data:`~rsutils.sequential.procedure.TESTS` (``--test horvath-staged`` and
so on), so it runs, replays and is checked as every procedure is; each states its exact
rule (:meth:`PublishedTest.rules`), from which
:func:`~rsutils.sequential.coverage.all_hits_draws` gives what it spends on a stream of
hits only (``pA = 1``), the cheapest it can ever certify. Each radius ``r`` is its own
test of ``pA > p0`` with ``p0`` the least probability that certifies it
(:func:`~rsutils.sequential.decisions.threshold_pA`); a radius no ``pA < 1`` certifies is
answered *not certified* after no draw. The designs read a stream draw by draw, so the
test reads the tested class's hits among all ``n_max`` draws and states in each decision
the draws the design read: live, the model runs on all ``n_max`` draws (the designs are
run here as the book's comparisons, on recorded draws). The input checks and the
per-entry Clopper–Pearson bounds the designs share are here too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike
from scipy.stats import beta as beta_distribution

from rsutils.core.confidence import check_alpha
from rsutils.core.smooth import Smooth
from rsutils.sequential.decisions import Decision, threshold_pA
from rsutils.sequential.draws import Draws
from rsutils.sequential.rules import Rules

__all__ = [
    "PublishedDecision",
    "PublishedTest",
    "check_draws",
    "check_hits",
    "check_p0",
    "cp_lower",
    "cp_upper",
]


@dataclass(frozen=True)
class PublishedDecision:
    """What one published design answered on one recorded stream.

    ``certified`` says whether it certified ``pA > p0``; ``draws`` is how many of the
    stream's draws it had read when it stopped (the forward passes it spent: a staged
    design reads whole stages). ``lower``/``upper`` are its bounds on ``pA`` at the stop,
    at the level it spent there; ``looks`` counts the tests it made (stages, or
    recomputed bounds, or draws for the betting sequence). ``settled`` is False when the
    stream ran out before the design answered (it then answers *not certified*).
    """

    design: str
    certified: bool
    draws: int
    lower: float
    upper: float
    looks: int
    settled: bool


def cp_lower(counts: np.ndarray, trials: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """:func:`~rsutils.core.confidence.clopper_pearson_lower` with one level per entry:
    the ``levels`` quantile of ``Beta(k, n − k + 1)``, 0 at ``k = 0``."""
    k = np.asarray(counts, dtype=float)
    n = np.asarray(trials, dtype=float)
    with np.errstate(invalid="ignore"):
        bound = beta_distribution.ppf(levels, k, n - k + 1)
    return np.where(k == 0, 0.0, bound)


def cp_upper(counts: np.ndarray, trials: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """The one-sided upper bound, per entry: the lower bound of the misses, reflected."""
    n = np.asarray(trials, dtype=float)
    return 1.0 - cp_lower(n - np.asarray(counts, dtype=float), n, levels)


def check_hits(hits: ArrayLike) -> np.ndarray:
    """``hits`` as a 1-D int64 array of 0/1 outcomes, or a ``ValueError``."""
    x = np.asarray(hits)
    if x.ndim != 1 or x.size == 0 or not np.all((x == 0) | (x == 1)):
        raise ValueError(
            "hits must be a non-empty 1-D array of 0/1 (or bool) outcomes, the tested "
            f"class's draws in stream order; got shape {x.shape}"
        )
    return x.astype(np.int64)


def check_p0(p0: float) -> None:
    """Refuse a ``p0`` that is not a number strictly between 0 and 1."""
    if isinstance(p0, bool) or not isinstance(p0, int | float | np.floating):
        raise ValueError(f"p0 must be a number in (0, 1), e.g. norm.cdf(r / sigma); got {p0!r}")
    if not 0.0 < float(p0) < 1.0:
        raise ValueError(
            f"p0 must lie strictly between 0 and 1 (the pA a radius needs, Φ(r/σ)), got {p0!r}"
        )


def check_draws(name: str, value: object) -> int:
    """``value`` as a positive whole number of draws, or a ``ValueError`` naming it."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise ValueError(f"{name} must be a positive whole number of draws, got {value!r}")
    return int(value)


@dataclass(frozen=True)
class PublishedTest:
    """A published design as a test of :class:`~rsutils.sequential.decisions.Decide`,
    with at most ``n_max`` draws at level ``alpha`` and the design's default settings
    (see the module's text); a subclass per design gives its :meth:`decide` on a stream
    of hits and its :meth:`rules`.

    Each decision's ``look`` counts the design's tests, ``alpha_spent`` is ``alpha``,
    and its bounds are the design's at the stop.
    """

    #: The design's name in :data:`~rsutils.sequential.procedure.TESTS`.
    name: ClassVar[str]
    #: The designs are not randomised.
    randomized: ClassVar[bool] = False

    n_max: int
    alpha: float

    def __post_init__(self) -> None:
        check_draws("n_max", self.n_max)
        check_alpha(self.alpha)

    def identity(self) -> dict[str, Any]:
        return {"test": self.name, "n": self.n_max, "alpha": self.alpha}

    def decide(self, hits: np.ndarray, p0: float) -> PublishedDecision:
        """The design's answer on the stream ``hits`` for ``0 < p0 < 1``."""
        raise NotImplementedError

    def rules(self, p0: float) -> Rules:
        """The design's :meth:`decide` as thresholds on the count at each look."""
        raise NotImplementedError

    def settle(
        self, smooth: Smooth, draws: Draws, tested: int, radii: Sequence[float]
    ) -> list[Decision]:
        """The design's decision at each of ``radii`` for class ``tested``."""
        hits = draws.hits(tested, self.n_max)
        decisions = []
        for radius in radii:
            p0 = threshold_pA(smooth, radius, draws.dim)
            if p0 < 1:
                answer = self.decide(hits, p0)
            else:  # no pA < 1 certifies the radius: not certified, after no draw
                answer = PublishedDecision(self.name, False, 0, 0.0, 1.0, 0, True)
            decision = Decision(
                certified=answer.certified, radius=float(radius), selected=tested,
                count=int(hits[: answer.draws].sum()), draws=answer.draws,
                look=answer.looks, pA_lower=answer.lower, pA_upper=answer.upper,
                n0=draws.n0, alpha=self.alpha, alpha_spent=self.alpha,
                seed=draws.seed, index=draws.index,
            )  # fmt: skip
            decisions.append(decision)
        return decisions
