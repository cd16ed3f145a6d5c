"""Which level alpha each released log's certificates imply: hand-made logs of every
class, then the counts on Cohen et al.'s own logs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import beta, norm

from rsutils import ABSTAIN
from rsutils.analysis.printed import count_range
from rsutils.book.audit.released_alpha import (
    alpha_evidence,
    ceiling_verdict,
    draws_matching_ceiling,
    log_label,
    more_draws_evidence,
    radii_verdict,
    released_alpha_evidence,
)

N = 100_000


def printed_certificates(counts, alpha: float, sigma: float, n: int = N) -> list[float]:
    """CERTIFY's radii for these counts of ``n`` draws, printed as the release prints
    them (scipy's beta quantile: independent of rsutils.core.confidence)."""
    bound = beta.ppf(alpha, np.asarray(counts), n - np.asarray(counts) + 1)
    return [float(f"{r:.3}") for r in sigma * norm.ppf(bound)]


def log_of(radii: list[float], abstentions: int = 2) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "predict": [1] * len(radii) + [ABSTAIN] * abstentions,
            "radius": radii + [0.0] * abstentions,
        }
    )


def small_radius_fitting_one_level(run_alpha: float, other: float, sigma: float) -> float:
    """A printed certificate near radius 0 that some count gives at ``run_alpha`` and no
    count gives at ``other`` (there, consecutive counts lie further apart than the
    printed unit)."""
    for k in range(50_200, 51_000):
        (radius,) = printed_certificates([k], run_alpha, sigma)
        least, greatest = count_range([radius], sigma, N, other)
        if radius > 0 and greatest[0] < least[0]:
            return radius
    raise AssertionError("no such radius in the range searched")


#: Inputs on which every draw agreed (k = N), nearly so, and a middle one.
COUNTS = [N, N, N, N - 1, 90_000]


def test_a_log_run_at_the_stated_level_piles_at_its_ceiling() -> None:
    evidence = alpha_evidence(log_of(printed_certificates(COUNTS, 0.001, 0.25)), 0.25)
    assert evidence["certificates"] == 5
    assert evidence["at 0.001 ceiling"] == 3 and evidence["above 0.001 ceiling"] == 0
    assert evidence["at 0.01 ceiling"] == 0 and evidence["above 0.01 ceiling"] == 0
    # 0.953 (k = N at 0.001) and 0.935 are between the 0.01 certificates 0.941 and 0.955.
    assert evidence["no count at 0.01"] == 4 and evidence["no count at 0.001"] == 0
    assert evidence["ceilings say"] == evidence["radii say"] == "α = 0.001"
    assert evidence["implied α"] == "α = 0.001"


def test_a_log_run_at_one_percent_reaches_its_ceiling() -> None:
    evidence = alpha_evidence(log_of(printed_certificates(COUNTS, 0.01, 0.25)), 0.25)
    assert evidence["at 0.01 ceiling"] == 3 and evidence["above 0.001 ceiling"] == 4
    assert evidence["at 0.001 ceiling"] == 0 and evidence["above 0.01 ceiling"] == 0
    assert evidence["no count at 0.001"] == 4 and evidence["no count at 0.01"] == 0
    assert evidence["ceilings say"] == evidence["implied α"] == "α = 0.01"


def test_certificates_far_below_both_ceilings_tell_nothing() -> None:
    radii = printed_certificates([80_000, 90_000, 95_000], 0.01, 0.25)
    evidence = alpha_evidence(log_of(radii), 0.25)
    assert evidence["ceilings say"] == evidence["radii say"] == "undecidable"
    assert evidence["implied α"] == "undecidable"


@pytest.mark.parametrize("run_alpha, other", [(0.01, 0.001), (0.001, 0.01)])
def test_the_printed_radii_decide_where_the_ceilings_cannot(run_alpha, other) -> None:
    radius = small_radius_fitting_one_level(run_alpha, other, 1.0)
    radii = [*printed_certificates([90_000], run_alpha, 1.0), radius]
    evidence = alpha_evidence(log_of(radii), 1.0)
    assert evidence["ceilings say"] == "undecidable"
    assert evidence[f"no count at {other:g}"] == 1
    assert evidence["radii say"] == evidence["implied α"] == f"α = {run_alpha:g}"


def test_certificates_above_both_ceilings_fit_neither_level() -> None:
    evidence = alpha_evidence(log_of([3.99 * 0.25]), 0.25)
    assert evidence["above 0.01 ceiling"] == 1
    assert evidence["ceilings say"] == evidence["radii say"] == "neither"


def test_two_tests_that_disagree_are_reported_as_such() -> None:
    """At sigma = 0.5 the 0.001 ceiling prints 1.91, which 0.01 also prints (k = N - 1):
    the ceilings say 0.001, a small radius that only 0.01 gives says 0.01."""
    (ceiling,) = printed_certificates([N], 0.001, 0.5)
    assert ceiling == printed_certificates([N - 1], 0.01, 0.5)[0] == 1.91
    radii = [ceiling, small_radius_fitting_one_level(0.01, 0.001, 0.5)]
    evidence = alpha_evidence(log_of(radii), 0.5)
    assert evidence["ceilings say"] == "α = 0.001" and evidence["radii say"] == "α = 0.01"
    assert evidence["implied α"] == "conflicting"


@pytest.mark.parametrize(
    "counts, verdict",
    [
        ((3, 0, 0), "α = 0.001"),
        ((0, 2, 0), "α = 0.01"),
        ((5, 2, 0), "α = 0.01"),
        ((0, 2, 1), "neither"),
        ((0, 0, 0), "undecidable"),
    ],
)
def test_the_ceiling_rule(counts, verdict) -> None:
    assert ceiling_verdict(*counts) == verdict


def test_the_radii_rule_and_bad_counts() -> None:
    assert radii_verdict(0, 3) == "α = 0.001" and radii_verdict(3, 0) == "α = 0.01"
    assert radii_verdict(1, 1) == "neither" and radii_verdict(0, 0) == "undecidable"
    with pytest.raises(ValueError, match="negative"):
        ceiling_verdict(-1, 0, 0)
    with pytest.raises(ValueError, match="'predict' and 'radius'"):
        alpha_evidence(pd.DataFrame({"radius": [0.5]}), 0.25)


def test_a_log_is_named_by_dataset_and_its_two_sigmas() -> None:
    assert log_label(("cifar10", 0.25, "test", 0.5)) == "CIFAR-10 0.25/0.50"
    assert log_label(("imagenet", 0.5, "train", 0.5)) == "ImageNet 0.50/0.50 (train)"


def test_what_the_book_reports_of_each_released_log(reference: Path) -> None:
    """All six ImageNet logs and CIFAR-10 at 0.25 and 0.50 (own sigma) reach the 0.01
    ceiling; CIFAR-10 at 0.12 and the sigma = 1 model certified at 0.50 pile at the
    0.001 one; three CIFAR-10 logs stay below both, and the printed radii decide two
    of them (0.25 certified at 0.50: 0.001; 1.00 at 1.00: 0.01)."""
    table = released_alpha_evidence(root=reference).sort_index()  # .loc by label
    counts = ["at 0.001 ceiling", "above 0.001 ceiling", "at 0.01 ceiling"]
    counts.append("above 0.01 ceiling")
    assert table.loc[("imagenet", 0.25, "test", 0.25), counts].tolist() == [0, 128, 122, 0]
    assert table.loc[("imagenet", 0.50, "train", 0.50), counts].tolist() == [13, 88, 88, 0]
    assert table.loc[("cifar10", 0.12, "test", 0.12), counts].tolist() == [156, 0, 0, 0]
    assert table.loc[("cifar10", 1.00, "test", 0.50), counts].tolist() == [55, 0, 0, 0]
    assert (table["above 0.01 ceiling"] == 0).all()
    ceilings = table["ceilings say"].value_counts().to_dict()
    assert ceilings == {"α = 0.01": 8, "α = 0.001": 2, "undecidable": 3}
    assert (table.loc["imagenet", "ceilings say"] == "α = 0.01").all()
    implied = table["implied α"]
    assert implied.value_counts().to_dict() == {"α = 0.01": 9, "α = 0.001": 3, "undecidable": 1}
    assert implied[("cifar10", 0.25, "test", 0.50)] == "α = 0.001"
    assert implied[("cifar10", 1.00, "test", 1.00)] == "α = 0.01"
    assert implied[("cifar10", 0.12, "test", 0.50)] == "undecidable"
    assert table.loc[("cifar10", 0.12, "test", 0.12), "no count at 0.01"] == 184


def test_the_draws_whose_ceiling_prints_as_the_largest_certificate() -> None:
    """Every n′ of the range has a 0.001 ceiling that prints as the largest certificate,
    and the n′ just outside it do not (σ·Φ⁻¹(α^(1/n′)) rises with n′)."""
    sigma, largest = 0.25, printed_certificates([N], 0.01, 0.25)[0]  # 0.978
    span = draws_matching_ceiling(largest, sigma, 0.001)
    assert len(span) > 100

    def prints(n: int) -> float:
        return float(f"{sigma * norm.ppf(0.001 ** (1 / n)):.3}")

    assert prints(span.start) == prints(span.stop - 1) == largest
    assert prints(span.start - 1) != largest and prints(span.stop) != largest


def test_more_draws_at_the_stated_level_is_ruled_out_or_found() -> None:
    """A log certified at α = 0.01 with 100,000 draws, its top counts printed: no n′ at
    0.001 gives every radius a count. A log certified at 0.001 with n′ = 150,000 draws
    (the positive control): its own n′ is among those that fit."""
    sigma, counts = 0.25, [N, N, N - 1, N - 2, N - 3, 99_990, 99_950, 90_000]
    at_01 = log_of(printed_certificates(counts, 0.01, sigma))
    said = more_draws_evidence(at_01, sigma)
    assert said["draws that fit"] == 0 and said["more draws at 0.001"] == "ruled out"
    n_prime = 150_000
    more = [n_prime, n_prime, n_prime - 1, n_prime - 2, n_prime - 3, 149_000]
    at_001 = log_of(printed_certificates(more, 0.001, sigma, n=n_prime))
    said = more_draws_evidence(at_001, sigma)
    assert said["draws that fit"] >= 1 and said["more draws at 0.001"] == "not ruled out"
    span = draws_matching_ceiling(
        max(printed_certificates(more, 0.001, sigma, n_prime)), sigma, 0.001
    )
    assert n_prime in span
