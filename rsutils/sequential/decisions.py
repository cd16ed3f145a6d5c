"""Is an input certified at radius ``r``? Decisions at given radii, by any test.

CERTIFY spends the same ``n`` estimation draws on every input, though for most inputs
the answer at a given radius is plain after a few dozen. :class:`Decide` asks, for each
of its ``radii``, whether the input is certified there, and hands the question to a
:class:`~rsutils.sequential.procedure.Test`: a schedule that spends ``alpha`` over a few
looks (:class:`~rsutils.sequential.spending.LookSchedule`), a confidence sequence
tested after every batch (:class:`~rsutils.sequential.sequence.AnytimeSchedule`), or a
published design (:mod:`rsutils.sequential.published`). One pass over the estimation
stream answers every radius, each decision counting the draws it alone would read.

The tested class is CERTIFY's: the most frequent among the ``n0`` selection draws,
from the same stream, so the class is CERTIFY's and an input that reaches the last look
has CERTIFY's count at ``n = n_max``. With ``true_label`` it is instead the input's
true label, with no selection draws: an *evaluation* procedure, for measuring certified
accuracy on a labelled test set (an image counts in the certified-accuracy curve only
when the certified class is its label, so both ways estimate the same curve). It
cannot serve a deployed classifier, which has no label to test.

Guarantee: each test's decisions are wrong with probability at most its ``alpha``:
if a decision is *certified*, then with probability at least ``1 - alpha`` over the
noise the smoothed classifier predicts the tested class everywhere within ``r`` of
``x`` (Cohen et al., Theorem 1, with ``p > threshold_pA(r)``). Each radius is its own
test at level ``alpha``. Stopping early for *not certified* never makes a false
certificate; it may only miss a true one.

No valid test can be cheaper than a floor: with ``m`` draws all in class A, a level-
``alpha`` test may only certify ``pA > p`` if ``p^m <= alpha``, so for Gaussian noise
radius ``r`` needs at least :func:`~rsutils.core.confidence.min_samples_for_radius`
draws, whichever test is used (a randomised test can go below it).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from rsutils.core.noise import NoiseFamily
from rsutils.core.smooth import ABSTAIN, Smooth
from rsutils.core.streams import derived_seed
from rsutils.sequential.draws import Draws
from rsutils.sequential.procedure import TESTS, Option, Test, register

__all__ = [
    "Decide",
    "Decision",
    "Decisions",
    "certifies",
    "check_radius",
    "decision_columns",
    "decisions_long",
    "randomization",
    "threshold_pA",
]


@dataclass(frozen=True)
class Decision:
    """The answer at one radius for one input.

    ``certified`` says whether ``selected`` is certified at ``radius``; ``count`` of
    the ``draws`` estimation draws fell in it, and ``pA_lower``/``pA_upper`` are the
    test's bounds at the stopping ``look`` (1-based), at level ``alpha_spent``. ``n0``
    selection draws came first (0 when a given label is tested, which is then
    ``selected``); ``seed`` and ``index`` reproduce the noise. ``u`` is the
    randomisation of a randomised test (``None`` for a non-randomised one): the
    certificate holds at its level only for ``u`` drawn as :func:`randomization`
    draws it, before the counts.
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


@dataclass(frozen=True)
class Decisions:
    """The decisions of one input at each radius asked, in order."""

    decisions: tuple[Decision, ...]

    def __iter__(self) -> Iterator[Decision]:
        return iter(self.decisions)

    def __getitem__(self, position: int) -> Decision:
        return self.decisions[position]

    def __len__(self) -> int:
        return len(self.decisions)

    @property
    def prediction(self) -> int:
        """The tested class if it is certified at some radius, else ABSTAIN."""
        certified = [d for d in self.decisions if d.certified]
        return certified[0].selected if certified else ABSTAIN

    @property
    def radius(self) -> float:
        """The largest radius certified (0.0 if none)."""
        return max((d.radius for d in self.decisions if d.certified), default=0.0)

    @property
    def forward_passes(self) -> int:
        """The whole pass's cost, selection draws and the most draws any radius read."""
        return max(d.forward_passes for d in self.decisions)

    def row(self, label: int) -> dict[str, Any]:
        """The log row (see :func:`decision_columns`) for an input of true ``label``."""
        first = self.decisions[0]
        values: dict[str, Any] = {"label": label, "selected": first.selected, "n0": first.n0}
        for decision in self.decisions:
            values[f"certified@{decision.radius:g}"] = int(decision.certified)
            values[f"draws@{decision.radius:g}"] = decision.draws
        values["seed"] = first.seed
        if first.u is not None:
            values["u"] = first.u
        return values


@register
@dataclass(frozen=True)
class Decide:
    """Is each input certified at each of ``radii``, by ``test``? (See the module.)

    With ``true_label`` the input's label is tested, without selection draws
    (evaluation only). The guarantee is the test's, per radius.
    """

    name: ClassVar[str] = "decide"
    #: Options of the command line (``certify --procedure decide``).
    options: ClassVar[tuple[Option, ...]] = (
        Option(
            "radii",
            "the radii R asked, 'certified at radius R?' (looks up to --N draws)",
            takes="numbers",
            metavar="R",
        ),
        Option(
            "test",
            "the test of each radius, spending by default",
            takes="name",
            metavar="NAME",
            choices=TESTS,
        ),
        Option(
            "true_label",
            "evaluation only, is each input's true label certified at R? (no --N0 selection "
            "draws; measures certified accuracy, certifies nothing deployed)",
            takes="switch",
        ),
    )

    test: Test
    radii: tuple[float, ...]
    true_label: bool = False

    def __post_init__(self) -> None:
        radii = tuple(check_radius(r) for r in self.radii)
        if not radii:
            raise ValueError("ask at least one radius, e.g. radii=(0.25, 0.5)")
        if len({f"{r:g}" for r in radii}) != len(radii):
            raise ValueError(f"the radii must differ (as printed with :g), got {radii}")
        object.__setattr__(self, "radii", radii)

    @classmethod
    def from_options(
        cls, n_max: int, alpha: float, *, radii: Sequence[float],
        test: str | None = None, true_label: bool | None = None,
    ) -> Decide:  # fmt: skip
        """The procedure with the test named ``test`` (default ``"spending"``) of at most
        ``n_max`` draws at level ``alpha``."""
        name = test or "spending"
        if name not in TESTS:
            raise ValueError(f"unknown test {name!r}; known: {', '.join(sorted(TESTS))}")
        return cls(TESTS[name](n_max, alpha), tuple(radii), bool(true_label))

    @property
    def n_max(self) -> int:
        return self.test.n_max

    @property
    def alpha(self) -> float:
        return self.test.alpha

    @property
    def selects(self) -> bool:
        return not self.true_label

    def settle(self, smooth: Smooth, draws: Draws) -> Decisions:
        tested = draws.true_label if self.true_label else draws.selected
        return Decisions(tuple(self.test.settle(smooth, draws, tested, self.radii)))

    def identity(self) -> dict[str, Any]:
        tested = {"tested": "true label"} if self.true_label else {}
        return {**tested, **self.test.identity(), "radii": list(self.radii)}

    def columns(self) -> list[str]:
        return decision_columns(self.radii, self.test.randomized)

    def row(self, answer: Decisions, label: int) -> dict[str, Any]:
        return answer.row(label)


def decision_columns(radii: Sequence[float], randomized: bool = False) -> list[str]:
    """The columns of a :class:`Decide` log for these radii (with ``u``, the
    randomisation each input's decisions hold at, for a randomised test)."""
    per_radius = [f"{what}@{r:g}" for r in radii for what in ("certified", "draws")]
    return ["idx", "label", "selected", "time", "n0", *per_radius, *(["u"] * randomized), "seed"]


def decisions_long(log: pd.DataFrame, radii: Sequence[float]) -> pd.DataFrame:
    """One row per input and radius of a :class:`Decide` log: ``idx``, ``radius``,
    ``certified``, ``correct`` (certified with the true label) and ``forward_passes``
    (``n0`` + draws)."""
    parts = []
    for r in radii:
        certified = log[f"certified@{r:g}"].astype(bool)
        parts.append(
            pd.DataFrame(
                {
                    "idx": log["idx"],
                    "radius": float(r),
                    "certified": certified,
                    "correct": certified & (log["selected"] == log["label"]),
                    "forward_passes": log["n0"] + log[f"draws@{r:g}"],
                }
            )
        )
    return pd.concat(parts, ignore_index=True)


def certifies(smooth: Smooth, p: float, radius: float, dim: int) -> bool:
    """Whether CERTIFY with ``pA_lower = p`` certifies ``radius`` for an input of ``dim``
    numbers (it answers a class, and its radius is at least ``radius``)."""
    return _certifies(smooth.noise, smooth.norm, dim, float(p), float(radius))


@functools.lru_cache(maxsize=65536)
def _certifies(noise: NoiseFamily, norm: str, dim: int, p: float, radius: float) -> bool:
    if p < 0.5:
        return False
    return bool(noise.radius(p, norm=norm, dim=dim) >= radius)


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
