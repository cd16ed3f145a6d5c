"""Intervals over replicate models and images, the equivalence test and the verdict rule.

The synthetic data follow the crossed model of :mod:`rsutils.analysis.differences`:
d[m, i] = δ + a[m] + b[i] + e[m, i] with normal parts of known spread, so the true
difference δ is known. Coverage over R repetitions is a binomial proportion: a
tolerance of 3 standard errors sqrt(0.95 · 0.05 / R) around the level.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import t as student
from scipy.stats import ttest_1samp

from rsutils.analysis.differences import (
    crossed_interval,
    interval_from_mean_squares,
    replicated_comparisons,
    replicated_difference,
)
from rsutils.analysis.margins import Margins
from rsutils.analysis.metrics import ACRDifference, acr_difference
from rsutils.analysis.verdicts import Verdict, holm_family, judge, judge_magnitude, judge_p

DELTA = 0.1


def crossed(seed: int, reps: int, k: int, n: int, models: float, images: float, noise: float,
            delta: float = DELTA) -> np.ndarray:  # fmt: skip
    """``reps`` data sets of k models × n images with the given standard deviations."""
    rng = np.random.default_rng(seed)
    return (
        delta
        + rng.normal(0, models, (reps, k, 1))
        + rng.normal(0, images, (reps, 1, n))
        + rng.normal(0, noise, (reps, k, n))
    )


def coverage(d: np.ndarray, method: str = "banerjee", truth: float = DELTA) -> float:
    found = crossed_interval(d, method=method)
    return float(np.mean((found.low <= truth) & (truth <= found.high)))


def tolerance(reps: int, level: float = 0.95) -> float:
    return 3 * np.sqrt(level * (1 - level) / reps)


REPS = 2_000


@pytest.mark.parametrize(("k", "n"), [(3, 50), (3, 200), (5, 100)])
def test_the_interval_covers_at_its_level_when_the_models_vary_most(k: int, n: int) -> None:
    """The models' part dominates: the interval is the exact t on k − 1 degrees of freedom.

    A model variance divided by N instead of k (or no t correction) fails here.
    """
    d = crossed(k * n, REPS, k, n, models=1.0, images=0.3, noise=0.3)
    assert abs(coverage(d) - 0.95) <= tolerance(REPS)


@pytest.mark.parametrize(
    ("k", "n", "models", "images", "noise"),
    [
        (3, 200, 0.0, 0.3, 0.3),  # no model variance
        (5, 50, 0.0, 0.0, 0.3),  # noise only
        (3, 100, 0.05, 0.3, 0.3),  # models and images alike
        (5, 200, 0.05, 0.0, 0.3),  # models and noise
        (3, 50, 0.3, 0.3, 0.3),  # large model variance
    ],
)
def test_the_interval_never_covers_below_its_level(
    k: int, n: int, models: float, images: float, noise: float
) -> None:
    """Banerjee's interval is conservative when parts share the variance: one-sided."""
    d = crossed(k + n, REPS, k, n, models, images, noise)
    assert coverage(d) >= 0.95 - tolerance(REPS)


def test_satterthwaite_covers_below_its_level_with_three_models() -> None:
    """The reason it is not the default: its degrees of freedom are estimated from MSA."""
    reps = 4_000
    d = crossed(7, reps, 3, 50, models=0.3, images=0.3, noise=0.3)
    assert coverage(d, "satterthwaite") < 0.95 - tolerance(reps)
    assert coverage(d, "banerjee") >= 0.95 - tolerance(reps)


def test_both_intervals_follow_the_mean_squares() -> None:
    """Against the ANOVA written out with loops, on one data set."""
    d = crossed(3, 1, 4, 30, models=0.2, images=0.3, noise=0.4)[0]
    k, n = d.shape
    grand = d.mean()
    msa = n * sum((d[m].mean() - grand) ** 2 for m in range(k)) / (k - 1)
    msb = k * sum((d[:, i].mean() - grand) ** 2 for i in range(n)) / (n - 1)
    mse = sum(
        (d[m, i] - d[m].mean() - d[:, i].mean() + grand) ** 2 for m in range(k) for i in range(n)
    ) / ((k - 1) * (n - 1))
    assert msa > mse and msb > mse  # both components positive in this data set
    images = (msb - mse) / (k * n)
    t_models, t_images = student.ppf(0.975, k - 1), student.ppf(0.975, n - 1)
    half = np.sqrt(t_models**2 * msa / (k * n) + t_images**2 * images)
    found = crossed_interval(d)
    assert found.mean == pytest.approx(grand)
    assert (found.low, found.high) == pytest.approx((grand - half, grand + half))
    assert found.standard_error**2 == pytest.approx(msa / (k * n) + images)
    variance = (msa + msb - mse) / (k * n)
    pieces = msa**2 / (k - 1) + msb**2 / (n - 1) + mse**2 / ((k - 1) * (n - 1))
    df = (msa + msb - mse) ** 2 / pieces
    found = crossed_interval(d, method="satterthwaite")
    assert found.df == pytest.approx(df)
    assert found.high - grand == pytest.approx(student.ppf(0.975, df) * np.sqrt(variance))


@pytest.mark.parametrize("images", [0.0, 0.3])
def test_the_half_width_is_at_most_the_models_t_times_the_standard_error(images) -> None:
    """Also when the images' part is estimated barely above 0 (no image effect)."""
    d = crossed(41, REPS, 3, 100, models=0.02, images=images, noise=0.3)
    found = crossed_interval(d)
    half = found.high - found.mean
    assert np.all(half <= student.ppf(0.975, 2) * found.standard_error * (1 + 1e-12))
    assert np.all(half >= student.ppf(0.975, 99) * found.standard_error * (1 - 1e-12))


# The equivalence test: TOST at level α = 0.05 is the 90% interval inside (−m, m).

MARGIN = 0.1


@pytest.mark.parametrize(("k", "n", "models"), [(3, 200, 0.005), (5, 200, 0.01)])
def test_equivalence_at_the_margin_is_declared_at_most_at_the_level(
    k: int, n: int, models: float
) -> None:
    """True difference exactly at +m: declared equivalent with probability ≤ α."""
    d = crossed(11 * k, REPS, k, n, models, images=0.3, noise=0.3, delta=MARGIN)
    found = crossed_interval(d, confidence=0.90)
    declared = np.mean((found.low > -MARGIN) & (found.high < MARGIN))
    assert declared <= 0.05 + tolerance(REPS, 0.05)


def test_a_zero_difference_with_little_noise_is_declared_equivalent() -> None:
    d = crossed(13, REPS, 3, 200, models=0.005, images=0.05, noise=0.05, delta=0.0)
    found = crossed_interval(d, confidence=0.90)
    assert np.mean((found.low > -MARGIN / 2) & (found.high < MARGIN / 2)) >= 0.99


@pytest.mark.parametrize("method", ["banerjee", "satterthwaite", "bootstrap"])
def test_the_tost_p_value_is_below_alpha_exactly_when_the_interval_is_inside(method) -> None:
    rng = np.random.default_rng(5)
    agree = 0
    for case in range(40):
        delta = rng.uniform(-0.1, 0.1)
        pairs = _pairs(crossed(case, 1, 3, 40, 0.02, 0.1, 0.1, delta=delta)[0])
        found = replicated_difference(pairs, margin=0.08, method=method)
        inside = -0.08 < found.equivalence[0] and found.equivalence[1] < 0.08
        agree += (found.p_equivalent < 0.05) == inside
        assert found.verdict.within_margin == inside
    assert agree >= (40 if method != "bootstrap" else 38)  # percentiles: up to ties


def test_the_satterthwaite_tost_p_value_is_the_larger_one_sided_t_p_value() -> None:
    pairs = _pairs(crossed(3, 1, 3, 60, 0.02, 0.1, 0.1, delta=0.03)[0])
    found = replicated_difference(pairs, margin=0.1, method="satterthwaite")
    t_low = (found.difference + 0.1) / found.standard_error
    t_high = (found.difference - 0.1) / found.standard_error
    expected = max(student.sf(t_low, found.df), student.cdf(t_high, found.df))
    assert found.p_equivalent == pytest.approx(expected, rel=1e-6)


# The verdict rule.


@pytest.mark.parametrize(
    ("low", "high", "margin", "equivalence", "verdict"),
    [
        (0.01, 0.2, None, None, "rises"),
        (-0.2, -0.01, None, None, "falls"),
        (-0.1, 0.2, None, None, "undecided"),
        (0.0, 0.2, None, None, "undecided"),  # touching 0 is not a rise
        (-0.03, 0.03, 0.05, (-0.02, 0.02), "equivalent within ±0.05"),
        (0.01, 0.03, 0.05, (0.012, 0.028), "rises, within ±0.05"),  # real, but small
        (-0.03, -0.01, 0.05, (-0.028, -0.012), "falls, within ±0.05"),
        (0.0, 0.03, 0.05, (0.002, 0.028), "equivalent within ±0.05"),  # touching 0: no sign
        (0.02, 0.08, 0.05, (0.025, 0.07), "rises"),  # not inside: the sign
        (-0.04, 0.06, 0.05, (-0.03, 0.05), "undecided"),  # touching the margin is not inside
        (-0.2, 0.3, 0.25, (-0.15, 0.2), "equivalent within ±0.25"),
    ],
)
def test_judge(low, high, margin, equivalence, verdict) -> None:
    found = judge(low, high, margin=margin, equivalence=equivalence)
    assert str(found) == verdict and found == Verdict.parse(verdict)
    assert found.family is None  # judged alone


def test_judge_asks_for_both_margin_and_equivalence_interval() -> None:
    with pytest.raises(ValueError, match="pass equivalence="):
        judge(-0.1, 0.1, margin=0.05)
    with pytest.raises(ValueError, match="pass margin="):
        judge(-0.1, 0.1, equivalence=(-0.05, 0.05))
    with pytest.raises(ValueError, match="positive number"):
        judge(-0.1, 0.1, margin=0.0, equivalence=(0, 0))
    with pytest.raises(ValueError, match="low ≤ high"):
        judge(0.2, 0.1)


def test_acr_difference_speaks_the_verdict_rules_words() -> None:
    assert str(ACRDifference(0.0, -0.1, 0.1, 0.95).verdict) == "undecided"
    assert str(ACRDifference(0.1, 0.05, 0.2, 0.95).verdict) == "rises"
    assert str(ACRDifference(-0.1, -0.2, -0.05, 0.95).verdict) == "falls"


# From logs.


def _pairs(d: np.ndarray, seed: int = 0) -> list[tuple[pd.DataFrame, pd.DataFrame]]:
    """Control and method logs whose radii differ by d[m] per image, rows shuffled."""
    rng = np.random.default_rng(seed)
    pairs = []
    for row in d:
        base = rng.uniform(1, 2, row.size)
        control = pd.DataFrame({"idx": np.arange(row.size), "correct": 1, "radius": base})
        method = control.assign(radius=base + row).sample(frac=1, random_state=0)
        pairs.append((control, method))
    return pairs


def test_replicated_difference_pairs_by_image_and_model() -> None:
    d = crossed(17, 1, 3, 80, 0.05, 0.2, 0.2)[0]
    found = replicated_difference(_pairs(d), margin=0.05)
    expected = crossed_interval(d)
    assert (found.difference, found.low, found.high) == pytest.approx(
        (expected.mean, expected.low, expected.high)
    )
    eq = crossed_interval(d, confidence=0.90)
    assert found.equivalence == pytest.approx((eq.low, eq.high))
    assert found.per_model == pytest.approx(d.mean(axis=1))
    assert (found.models, found.images, found.images_only) == (3, 80, False)


def test_replicated_difference_measures_certified_accuracy_at_a_radius() -> None:
    control = pd.DataFrame(
        {"idx": [0, 1, 2, 3], "correct": [1, 1, 0, 1], "alm": [0.2, 0.6, 0.9, 0.5]}
    )
    method = control.assign(correct=[1, 1, 1, 1], alm=[0.6, 0.6, 0.9, 0.1])
    found = replicated_difference([(control, method)], column="alm", radius=0.5)
    assert found.difference == pytest.approx((1 + 0 + 1 - 1) / 4)  # as certified_accuracy


def test_one_replicate_falls_back_to_the_images() -> None:
    d = crossed(19, 1, 1, 120, 0.0, 0.3, 0.3)[0]
    pairs = _pairs(d)
    t_interval = ttest_1samp(d[0], 0.0).confidence_interval(0.95)
    for method in ("banerjee", "satterthwaite"):
        found = replicated_difference(pairs, method=method)
        assert found.images_only and found.df == 119
        assert (found.low, found.high) == pytest.approx((t_interval.low, t_interval.high))
    found = replicated_difference(pairs, method="bootstrap", seed=4)
    paired = acr_difference(*pairs[0], seed=4)
    assert (found.difference, found.low, found.high) == pytest.approx(
        (paired.difference, paired.low, paired.high)
    )


def test_the_bootstrap_is_seeded_and_too_narrow_with_three_models() -> None:
    pairs = _pairs(crossed(23, 1, 3, 50, 0.3, 0.3, 0.3)[0])
    first = replicated_difference(pairs, method="bootstrap", seed=1)
    assert first == replicated_difference(pairs, method="bootstrap", seed=1)
    assert first.low != replicated_difference(pairs, method="bootstrap", seed=2).low
    reps, covered = 100, 0  # the stated reason the t interval is the default
    for rep, d in enumerate(crossed(29, reps, 3, 30, models=1.0, images=0.3, noise=0.3)):
        found = replicated_difference(_pairs(d), method="bootstrap", seed=rep)
        covered += found.low <= DELTA <= found.high
    assert covered / reps < 0.95 - tolerance(reps)


def test_replicated_comparisons_tabulate_each_pair_and_measure() -> None:
    d = crossed(31, 1, 3, 60, 0.01, 0.05, 0.05, delta=0.3)[0]
    replicates = [{"ours": method, "control": control} for control, method in _pairs(d)]
    measures = {"radius": "radius", "certified at 1.5": ("radius", 1.5)}
    pairs = [("ours", "control")]
    table = replicated_comparisons(replicates, pairs, measures=measures, margin=0.05)
    assert table.index.tolist() == [("ours", "control", name) for name in measures]
    assert list(table.columns) == [
        "gain", "low", "high", "per model", "models", "images", "p", "margin",
        "p equivalent", "components", "tests", "verdict",
    ]  # fmt: skip
    row = table.loc[("ours", "control", "radius")]
    found = replicated_difference([(r["control"], r["ours"]) for r in replicates], margin=0.05)
    assert (row.gain, row.low, str(row.verdict)) == (found.difference, found.low, "rises")
    assert (row.models, row.images, row.tests) == (3, 60, 4)  # 2 rows × (sign, TOST)
    assert row["per model"] == " ".join(f"{v:+.3f}" for v in found.per_model)
    with pytest.raises(ValueError, match=r"replicates\[1\] has no log for \['ours'\]"):
        replicated_comparisons([replicates[0], {"control": d}], [("ours", "control")])


def test_bad_input_names_the_fix() -> None:
    pairs = _pairs(crossed(37, 1, 2, 10, 0.1, 0.1, 0.1)[0])
    control, method = pairs[0]
    with pytest.raises(ValueError, match=r"pass one \(control_log, method_log\) pair"):
        replicated_difference([])
    with pytest.raises(ValueError, match="certify the same test images with both"):
        replicated_difference([(control, method.iloc[1:])])
    with pytest.raises(ValueError, match="every replicate must certify the same test images"):
        replicated_difference([pairs[0], (control.iloc[1:], method[method.idx > 0])])
    with pytest.raises(ValueError, match="one row per test image"):
        replicated_difference([(pd.concat([control, control]), pd.concat([method, method]))])
    with pytest.raises(ValueError, match="lacks the columns"):
        replicated_difference(pairs, column="alm")
    with pytest.raises(ValueError, match="at least two test images"):
        replicated_difference([(control.iloc[:1], method[method.idx == 0])])
    with pytest.raises(ValueError, match="method must be one of"):
        replicated_difference(pairs, method="jackknife")
    with pytest.raises(ValueError, match="confidence must lie"):
        replicated_difference(pairs, confidence=95)
    with pytest.raises(ValueError, match="positive number"):
        replicated_difference(pairs, margin=-0.05)


# The p-value form of the rule, Holm's family correction, margins per measure.


@pytest.mark.parametrize("method", ["banerjee", "satterthwaite", "bootstrap"])
def test_the_difference_p_value_is_below_alpha_exactly_when_the_interval_excludes_0(
    method,
) -> None:
    rng = np.random.default_rng(7)
    agree = 0
    for case in range(40):
        delta = rng.uniform(-0.08, 0.08)
        pairs = _pairs(crossed(100 + case, 1, 3, 40, 0.02, 0.1, 0.1, delta=delta)[0])
        found = replicated_difference(pairs, margin=0.08, method=method, seed=case)
        excludes = found.low > 0 or found.high < 0
        agree += (found.p_difference < 0.05) == excludes
        raw = judge_p(
            found.difference, found.p_difference, margin=0.08, p_equivalent=found.p_equivalent
        )
        agree += raw == found.verdict
    assert agree >= (80 if method != "bootstrap" else 76)  # percentiles: up to ties


def texts(table: pd.DataFrame) -> list[str]:
    """The verdicts of ``table`` as their texts."""
    return [str(v) for v in table["verdict"]]


def _row_table(gains, ps, p_eqs=None, margin=0.05) -> pd.DataFrame:
    table = pd.DataFrame({"gain": gains, "p": ps})
    if p_eqs is not None:
        table["margin"], table["p equivalent"] = margin, p_eqs
    return table


def test_a_family_of_tests_is_judged_on_holm_adjusted_p_values() -> None:
    alone = holm_family(_row_table([0.1, 0.2, -0.1], [0.02, 0.001, 0.03]), adjust=False)
    assert texts(alone) == ["rises", "rises", "falls"]
    assert {v.family for v in alone["verdict"]} == {None}  # each row alone
    family = holm_family(_row_table([0.1, 0.2, -0.1], [0.02, 0.001, 0.03]))
    # Holm: 0.001·3 = 0.003, then 0.02·2 = 0.04, then 0.03·1 → max(0.04, 0.03) = 0.04
    assert texts(family) == ["rises", "rises", "falls"]
    assert family["tests"].tolist() == [3, 3, 3]
    assert {v.family for v in family["verdict"]} == {3}
    family = holm_family(_row_table([0.1, 0.2, -0.1], [0.03, 0.001, 0.04]))
    # 0.003, 0.06 (> 0.05: stop), 0.06
    assert texts(family) == ["undecided", "rises", "undecided"]


def test_equivalence_tests_count_in_the_family() -> None:
    table = _row_table([0.01, 0.02], [0.3, 0.01], p_eqs=[0.02, 0.02])
    assert texts(holm_family(table, adjust=False)) == [
        "equivalent within ±0.05", "rises, within ±0.05",
    ]  # fmt: skip
    family = holm_family(table)  # four tests: 0.01·4 = 0.04, then 0.02·3 = 0.06
    assert family["tests"].tolist() == [4, 4]
    assert texts(family) == ["undecided", "rises"]


def test_the_family_keeps_its_error_rate_under_the_global_null() -> None:
    """Twelve independent comparisons of methods that do not differ: the chance that any
    verdict claims a sign is at most α (to 3 binomial standard errors), while judging
    each alone claims one in about 1 − 0.95¹² ≈ 46% of the families."""
    rng = np.random.default_rng(41)
    reps, rows = 2_000, 12
    any_alone = any_family = 0
    for _ in range(reps):
        table = _row_table(rng.normal(size=rows), rng.uniform(size=rows))
        any_alone += any(v.decided for v in holm_family(table, adjust=False)["verdict"])
        any_family += any(v.decided for v in holm_family(table)["verdict"])
    assert any_family / reps <= 0.05 + tolerance(reps, 0.05)
    assert any_alone / reps > 0.4


def test_holm_family_refuses_a_table_without_p_values() -> None:
    with pytest.raises(ValueError, match="replicated_comparisons"):
        holm_family(pd.DataFrame({"gain": [0.1]}))


def test_margins_are_chosen_per_measure() -> None:
    d = crossed(43, 1, 3, 60, 0.01, 0.05, 0.05, delta=0.0)[0]
    replicates = [{"ours": method, "control": control} for control, method in _pairs(d)]
    measures = {"ACR": "radius", "at 1.5": ("radius", 1.5)}
    margins = Margins(acr=0.02, accuracy=0.3)
    table = replicated_comparisons(replicates, [("ours", "control")], measures=measures,
                                   margin=margins)  # fmt: skip
    assert table["margin"].tolist() == [0.02, 0.3]
    assert margins.scaled(2) == Margins(0.04, 0.6)
    with pytest.raises(ValueError, match="positive number"):
        Margins(acr=0.0, accuracy=0.05)


@pytest.mark.parametrize(
    ("low", "high", "equivalence", "verdict"),
    [
        (0.070, 0.085, (0.072, 0.083), "as stated, within ±0.01"),
        (0.005, 0.03, (0.007, 0.028), "below the stated"),  # a rise, far short of +7.7
        (0.09, 0.12, (0.092, 0.118), "above the stated"),
        (0.05, 0.10, (0.055, 0.095), "undecided"),
    ],
)
def test_a_stated_magnitude_is_tested_as_that_magnitude(low, high, equivalence, verdict) -> None:
    found = judge_magnitude(low, high, stated=0.077, margin=0.01, equivalence=equivalence)
    assert str(found) == verdict
    assert found.as_stated == verdict.startswith("as stated")
    assert found.decided == (verdict != "undecided")


@pytest.mark.parametrize("method", ["banerjee", "satterthwaite", "bootstrap"])
def test_an_accuracy_on_which_every_image_agrees_is_bounded_not_a_point(method) -> None:
    """Method and control certify the same images on every model: the spread is 0, and
    an interval from it would be the point 0, "equivalent" at any margin. The bound is
    the Clopper–Pearson one on the share of images where they disagree, 0 seen of N:
    1 − (α/2)^(1/N) (0.088 for N = 40); equivalence within ±m needs (1 − m)^N < α."""
    rng = np.random.default_rng(0)
    images = 40
    log = pd.DataFrame({"idx": np.arange(images), "correct": rng.integers(0, 2, images)})
    log["radius"] = rng.uniform(0.1, 1.0, images)
    pairs = [(log, log.assign(radius=log.radius + 0.01))] * 3  # the same images at r = 0.05
    found = replicated_difference(pairs, radius=0.05, margin=0.01, method=method, seed=1)
    half, eq = 1 - 0.025 ** (1 / images), 1 - 0.05 ** (1 / images)
    assert (found.difference, found.low, found.high) == pytest.approx((0.0, -half, half))
    assert found.equivalence == pytest.approx((-eq, eq))
    assert found.p_equivalent == pytest.approx(0.99**images) and found.p_difference == 1.0
    assert not found.verdict.decided  # 40 images cannot show a difference below 1 point
    wide = replicated_difference(pairs, radius=0.05, margin=0.1, method=method, seed=1)
    assert wide.verdict.equivalent and wide.p_equivalent == pytest.approx(0.9**images)
    table = holm_family(
        pd.DataFrame({"gain": [0.0], "p": [found.p_difference], "margin": [0.01],
                      "p equivalent": [found.p_equivalent]})
    )  # fmt: skip
    assert not table["verdict"].iloc[0].decided  # the family sees the same p-values
    # the ACR of the same pairs has spread (0.01 on correct images): not this bound
    acr = replicated_difference(pairs, margin=0.02, method=method, seed=1)
    assert acr.high - acr.low < 0.01


def test_a_truncated_variance_of_zero_falls_back_to_the_images_spread() -> None:
    """Two models, ten images: each model certifies one image the control does not, not
    the same one. Every model has the same mean (MSA = 0) and MSB < MSE, so both of
    Banerjee's estimates are 0 and the interval would be the point 0.1, a certain rise
    from two discordant images. The fallback is the t interval of the per-image means."""
    d = np.zeros((2, 10))
    d[0, 3] = d[1, 5] = 1.0
    found = crossed_interval(d)
    per_image = d.mean(axis=0)
    t_interval = ttest_1samp(per_image, 0.0).confidence_interval(0.95)
    assert (found.low, found.high) == pytest.approx((t_interval.low, t_interval.high))
    assert found.low < 0 < found.high


@pytest.mark.parametrize("models", [1, 2, 5])
def test_the_interval_from_mean_squares_is_the_tables_interval(models: int) -> None:
    """Banerjee's interval reads only the grand mean and the three mean squares: given
    those of a table, interval_from_mean_squares returns crossed_interval's interval."""
    rng = np.random.default_rng(7)
    tables = rng.normal(0.1, 0.3, (4, models, 30)) + rng.normal(0, 0.2, (4, models, 1))
    whole = crossed_interval(tables, confidence=0.9)
    per_model, per_image = tables.mean(-1), tables.mean(-2)
    mean = tables.mean((-2, -1))
    msa = 30 * ((per_model - mean[:, None]) ** 2).sum(-1) / max(models - 1, 1)
    msb = models * ((per_image - mean[:, None]) ** 2).sum(-1) / 29
    rest = tables - per_model[..., None] - per_image[:, None, :] + mean[:, None, None]
    mse = (rest**2).sum((-2, -1)) / max((models - 1) * 29, 1)
    found = interval_from_mean_squares(
        mean, msa, msb, mse, models=models, images=30, confidence=0.9
    )
    for name in ("mean", "low", "high", "standard_error"):
        np.testing.assert_allclose(getattr(found, name), getattr(whole, name), rtol=1e-12)
