"""Holm's step-down correction against its definition."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from rsutils.analysis.multiplicity import holm


def by_definition(p: np.ndarray, alpha: float) -> np.ndarray:
    """Holm's rejections by the step-down rule: walk up the sorted p-values, rejecting
    while p₍ᵢ₎ ≤ α / (m − i + 1) (1-based i), and stop at the first that is not."""
    order, m = np.argsort(p, kind="stable"), len(p)
    rejected = np.zeros(m, dtype=bool)
    for i, j in enumerate(order):
        if p[j] > alpha / (m - i):
            break
        rejected[j] = True
    return rejected


def test_holm_rejects_what_the_step_down_rule_rejects() -> None:
    rng = np.random.default_rng(3)
    for _ in range(500):
        p = rng.uniform(0, 0.1, size=rng.integers(1, 8))
        for alpha in (0.01, 0.05):
            assert np.array_equal(holm(p) <= alpha, by_definition(p, alpha))


def test_holm_values_on_a_worked_example() -> None:
    # sorted 0.01, 0.02, 0.03, 0.5 → 0.04, 0.06, 0.06, 0.5
    assert holm([0.03, 0.01, 0.5, 0.02]) == pytest.approx([0.06, 0.04, 0.5, 0.06])
    assert holm([0.3]) == pytest.approx([0.3])
    assert holm([0.6, 0.7]) == pytest.approx([1.0, 1.0])  # capped at 1


def test_tests_not_made_stay_out_of_the_family() -> None:
    found = holm([0.01, np.nan, 0.02])
    assert np.isnan(found[1])
    assert found[[0, 2]] == pytest.approx([0.02, 0.02])


def test_every_adjusted_value_is_at_least_the_raw_one_and_keeps_the_order() -> None:
    rng = np.random.default_rng(5)
    p = rng.uniform(size=20)
    adjusted = holm(p)
    assert (adjusted >= p).all()
    for a, b in itertools.combinations(range(20), 2):
        if p[a] < p[b]:
            assert adjusted[a] <= adjusted[b]


def test_bad_p_values_are_refused() -> None:
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        holm([0.2, 1.2])
    with pytest.raises(ValueError, match="one-dimensional"):
        holm([[0.1]])
