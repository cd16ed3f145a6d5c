"""A test of ``pA > p0`` as thresholds on the count at each look: what each test states of itself.

Every test of :class:`~rsutils.sequential.decisions.Decide` (the tests of
:data:`~rsutils.sequential.procedure.TESTS`) decides one ``p0`` by comparing the count of
draws in the tested class with two numbers at each look: at or above one it certifies,
at or below the other it stops *not certified*, in between it reads on. Each test
returns this :class:`LookRule` at a ``p0`` from its own decision functions
(:meth:`~rsutils.sequential.procedure.Test.rules`); a randomised test a mixture of them
(:data:`Rules`) over the intervals of its uniform ``u`` on which they are fixed.
:func:`~rsutils.sequential.coverage.certify_probability` computes the exact probability
of a false certificate from it, and
:func:`~rsutils.sequential.coverage.all_hits_draws` the draws a test needs when every
draw falls in the class.

Written once here for the tests that compare one-sided Clopper–Pearson bounds with
``p0`` (:func:`clopper_pearson_rules`), and the bisection for a least count
(:func:`least_count`) the others share.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rsutils.core.confidence import clopper_pearson_lower, clopper_pearson_upper

__all__ = [
    "LookRule",
    "Rules",
    "clopper_pearson_look",
    "clopper_pearson_rules",
    "least_count",
]


@dataclass(frozen=True)
class LookRule:
    """A test of ``pA > p0`` at one ``p0`` as thresholds on the count at each look.

    At look ``j``, after ``looks[j]`` draws, the test certifies when the count is at
    least ``certify_from[j]`` (more than the look's draws: never), else stops *not
    certified* when it is at most ``stop_up_to[j]`` (-1: never), else reads on; after
    the last look it answers *not certified*. With ``fresh`` each look counts only the
    draws since the previous look (a staged design's fresh stages), else all of them.
    """

    looks: tuple[int, ...]
    certify_from: tuple[int, ...]
    stop_up_to: tuple[int, ...]
    fresh: bool = False

    def __post_init__(self) -> None:
        sizes = {len(self.looks), len(self.certify_from), len(self.stop_up_to)}
        if len(sizes) != 1 or not self.looks:
            raise ValueError("need one certifying and one stopping count per look, and a look")
        if self.looks[0] < 1 or any(b <= a for a, b in itertools.pairwise(self.looks)):
            raise ValueError(f"looks must be positive and increase strictly, got {self.looks}")

    def trials(self, look: int) -> int:
        """The draws the count at ``look`` (0-based) counts."""
        previous = self.looks[look - 1] if look else 0
        return self.looks[look] - previous if self.fresh else self.looks[look]

    def all_hits_draws(self) -> int:
        """The draws after which the rule certifies when every draw falls in the class
        (each look's count is then its :meth:`trials`), 0 if it stops or reaches the
        end without certifying."""
        for j, look in enumerate(self.looks):
            count = self.trials(j)
            if count >= self.certify_from[j]:
                return look
            if count <= self.stop_up_to[j]:
                return 0
        return 0


#: A test's rule at ``p0``: ``(weight, rule)`` pairs, the weights (the chance of each
#: rule under the test's randomisation) adding up to 1; one pair if not randomised.
Rules = tuple[tuple[float, LookRule], ...]


def least_count(trials: int, holds: Callable[[int], bool]) -> int:
    """The least count in ``[0, trials]`` at which ``holds`` (monotone: once true, true
    for every larger count), by bisection; ``trials + 1`` if none."""
    low, high = 0, trials + 1
    while low < high:
        middle = (low + high) // 2
        if holds(middle):
            high = middle
        else:
            low = middle + 1
    return low


def clopper_pearson_look(
    n: int, level: float, stop_level: float | None, p0: float
) -> tuple[int, int]:
    """At a look at a count of ``n`` draws: the least count whose one-sided
    Clopper–Pearson lower bound at ``level`` reaches ``p0`` (certified), and the greatest
    whose upper bound at ``stop_level`` lies below ``p0`` (stopped; -1 if none, or
    without a ``stop_level``)."""
    certify = least_count(n, lambda k: clopper_pearson_lower(k, n, level) >= p0)
    if stop_level is None:
        return certify, -1
    return certify, least_count(n, lambda k: clopper_pearson_upper(k, n, stop_level) >= p0) - 1


def clopper_pearson_rules(
    looks: Sequence[int],
    levels: Sequence[float],
    stop_levels: Sequence[float | None],
    p0: float,
    fresh: bool = False,
) -> Rules:
    """The rule of a test that, at each of ``looks``, certifies when the Clopper–Pearson
    lower bound at the look's level reaches ``p0`` and stops when the upper bound at its
    stop level lies below it (:func:`clopper_pearson_look`); ``fresh`` as in
    :class:`LookRule`."""
    looks = [int(n) for n in looks]
    trials = [b - a for a, b in zip([0, *looks], looks, strict=False)] if fresh else looks
    per_look = [
        clopper_pearson_look(n, level, stop_level, p0)
        for n, level, stop_level in zip(trials, levels, stop_levels, strict=True)
    ]
    certify, stop = (tuple(column) for column in zip(*per_look, strict=True))
    return ((1.0, LookRule(tuple(looks), certify, stop, fresh)),)
