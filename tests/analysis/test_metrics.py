"""Certified accuracy, its high-probability bound, ACR, envelopes and re-certification."""

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binom, norm

from rsutils import certified_accuracy, certified_accuracy_lower_bound, read_log
from rsutils.analysis.metrics import (
    accuracy_table,
    acr_difference,
    average_certified_radius,
    best_accuracy_table,
    envelope,
    recertify,
)
from rsutils.core.confidence import clopper_pearson_lower
from rsutils.core.noise import Gaussian

LOG = pd.DataFrame(
    {
        "idx": [0, 1, 2, 3],
        "label": [1, 2, 3, 4],
        "predict": [1, 2, -1, 5],
        "radius": [0.2, 0.9, 0.0, 1.5],
        "correct": [1, 1, 0, 0],
    }
)


def test_certified_accuracy_counts_correct_rows_at_or_above_each_radius() -> None:
    np.testing.assert_allclose(
        certified_accuracy(LOG, [0.0, 0.2, 0.5, 0.9, 1.0]), [0.5, 0.5, 0.25, 0.25, 0]
    )


def test_acr_counts_wrong_and_abstained_as_zero() -> None:
    assert average_certified_radius(LOG) == pytest.approx((0.2 + 0.9) / 4)


def test_lower_bound_subtracts_the_binomial_quantile_of_false_certificates() -> None:
    m = 500
    df = pd.DataFrame({"correct": np.ones(m, int), "radius": np.linspace(0, 2, m)})
    radii = [0.0, 1.0]
    slack = binom.ppf(0.999, m, 0.001) / m
    np.testing.assert_allclose(
        certified_accuracy_lower_bound(df, radii, alpha=0.001, rho=0.001),
        certified_accuracy(df, radii) - slack,
    )


def test_envelope_and_table_layout() -> None:
    np.testing.assert_array_equal(envelope({"a": [0.9, 0.1], "b": [0.5, 0.4]}), [0.9, 0.4])
    table = accuracy_table({"σ = 0.25": LOG}, [0.0, 0.5])
    assert list(table.columns) == ["r = 0", "r = 0.5", "ACR"]
    assert table.loc["σ = 0.25", "r = 0.5"] == 0.25


def test_best_table_takes_the_best_log_per_radius_and_acr() -> None:
    other = LOG.assign(radius=[0.1, 0.3, 0.0, 0.0], correct=[1, 1, 1, 0])
    table = best_accuracy_table({"Cohen": {0.25: LOG, 0.5: other}, "none": {}}, [0.0, 0.5])
    assert list(table.index) == ["Cohen"]
    assert table.loc["Cohen", "r = 0"] == 0.75  # from `other`
    assert table.loc["Cohen", "r = 0.5"] == 0.25  # from LOG
    assert table.loc["Cohen", "ACR"] == pytest.approx(max((0.2 + 0.9) / 4, (0.1 + 0.3) / 4))


def test_read_log_accepts_both_of_cohens_time_formats(tmp_path) -> None:
    for time, seconds in (("0:02:31.5", 151.5), ("15.4", 15.4)):
        path = tmp_path / "log.tsv"
        path.write_text(f"idx\tlabel\tpredict\tradius\tcorrect\ttime\n0\t3\t3\t0.5\t1\t{time}\n")
        assert read_log(path)["time"].iloc[0] == pytest.approx(seconds)


def test_read_log_rejects_other_tables(tmp_path) -> None:
    path = tmp_path / "other.tsv"
    path.write_text("a\tb\n1\t2\n")
    with pytest.raises(ValueError, match=r"not a certification log"):
        read_log(path)


def test_recertify_at_the_original_alpha_reproduces_the_log_and_is_monotone() -> None:
    sigma, n = 0.5, 1000
    counts = np.array([1000, 990, 700, 600, 400])
    pA = clopper_pearson_lower(counts, n, 0.001)
    radius = np.where(pA >= 0.5, sigma * norm.ppf(np.clip(pA, 0.5, 1)), 0.0)
    df = pd.DataFrame(
        {"idx": range(5), "label": [1] * 5, "selected": [1, 1, 1, 2, 1], "count": counts, "n": n}
    )
    same = recertify(df, 0.001, Gaussian(sigma))
    np.testing.assert_allclose(same["radius"], radius)
    np.testing.assert_array_equal(same["predict"], [1, 1, 1, 2, -1])
    np.testing.assert_array_equal(same["correct"], [1, 1, 1, 0, 0])
    looser = recertify(df, 0.1, Gaussian(sigma))
    assert np.all(looser["radius"] >= same["radius"])


def test_recertify_needs_our_columns() -> None:
    with pytest.raises(ValueError, match=r"only rsutils logs have"):
        recertify(LOG, 0.01, Gaussian(0.25))


def test_recertify_an_anisotropic_log_updates_region_radius_and_alm() -> None:
    import torch
    from scipy.stats import gmean

    from rsutils.anisotropic.noise import Anisotropic

    sigma = torch.tensor([0.5, 1.0, 2.0])
    counts = np.array([990, 700, 400])
    df = pd.DataFrame(
        {
            "idx": range(3),
            "label": [1] * 3,
            "selected": [1] * 3,
            "count": counts,
            "n": 1000,
            "region_radius": 0.0,
            "alm": 0.0,
        }
    )
    out = recertify(df, 0.001, Anisotropic(Gaussian(0.5), sigma))
    R = np.where(out["predict"] >= 0, 0.5 * norm.ppf(np.clip(out["pA_lower"], 0.5, 1)), 0.0)
    np.testing.assert_allclose(out["region_radius"], R)
    np.testing.assert_allclose(out["radius"], 0.5 * R)
    np.testing.assert_allclose(out["alm"], gmean(sigma.numpy()) * R, rtol=1e-6)
    assert out["alm"].iloc[2] == 0.0  # abstained


def test_missing_log_says_how_to_make_one(tmp_path) -> None:
    with pytest.raises(FileNotFoundError, match=r"python -m rsutils certify"):
        read_log(tmp_path / "none.tsv")


def _log(radii: np.ndarray, correct: np.ndarray | None = None) -> pd.DataFrame:
    correct = np.ones(len(radii), dtype=int) if correct is None else correct
    return pd.DataFrame({"idx": np.arange(len(radii)), "radius": radii, "correct": correct})


def test_an_acr_difference_of_identical_or_shifted_logs_is_exact() -> None:
    radii = np.random.default_rng(0).uniform(0, 1, 50)
    same = acr_difference(_log(radii), _log(radii))
    assert (same.difference, same.low, same.high) == (0.0, 0.0, 0.0)
    assert not same.verdict.decided and str(same.verdict) == "undecided"
    shifted = acr_difference(_log(radii), _log(radii + 0.1))
    assert shifted.difference == pytest.approx(0.1) and shifted.low == pytest.approx(0.1)
    assert shifted.verdict.rises and str(shifted.verdict) == "rises"
    assert acr_difference(_log(radii + 0.1), _log(radii)).verdict.falls


def test_an_acr_difference_counts_wrong_answers_as_zero_and_pairs_by_idx() -> None:
    a = _log(np.array([1.0, 1.0, 1.0]), np.array([1, 0, 1]))
    b = _log(np.array([0.5, 2.0, 1.0]))[::-1]  # another row order, the same inputs
    assert acr_difference(a, b).difference == pytest.approx((-0.5 + 2.0 + 0.0) / 3)
    with pytest.raises(ValueError, match="same inputs"):
        acr_difference(a, _log(np.ones(4)))


def test_the_acr_interval_has_the_normal_width_on_many_inputs() -> None:
    """For 2,000 inputs the bootstrap interval is close to mean ± 1.96 sd / sqrt(n)."""
    rng = np.random.default_rng(1)
    a, b = rng.uniform(0, 1, 2000), rng.uniform(0, 1.2, 2000)
    result = acr_difference(_log(a), _log(b))
    half_width = norm.ppf(0.975) * np.std(b - a, ddof=1) / np.sqrt(2000)
    assert (result.high - result.low) / 2 == pytest.approx(half_width, rel=0.05)
    assert result.low < result.difference < result.high


@pytest.mark.slow  # 200 bootstraps of 9,999 resamples
def test_the_acr_interval_covers_the_true_difference_at_its_level() -> None:
    """Coverage over 200 simulated pairs of logs: 0.95 within 3 binomial standard errors.

    The inputs' radii are skewed like certified radii (a point mass at 0 for wrong
    answers, a capped spread otherwise); the true ACR difference is known exactly.
    """
    rng = np.random.default_rng(2)
    trials, n, covered = 200, 200, 0
    p_a, p_b, cap = 0.8, 0.85, 0.8  # correct with probability p; radius uniform on [0, cap]
    true = (p_b - p_a) * cap / 2
    for seed in range(trials):
        a = rng.uniform(0, cap, n) * (rng.random(n) < p_a)
        b = rng.uniform(0, cap, n) * (rng.random(n) < p_b)
        result = acr_difference(_log(a), _log(b), seed=seed)
        covered += result.low <= true <= result.high
    standard_error = np.sqrt(0.95 * 0.05 / trials)
    assert abs(covered / trials - 0.95) <= 3 * standard_error


def test_certified_accuracy_interval_is_clopper_pearson_over_the_images() -> None:
    from scipy.stats import beta

    from rsutils.analysis.metrics import certified_accuracy_interval

    log = pd.DataFrame({"correct": [1, 1, 1, 0, 1], "radius": [0.1, 0.5, 0.9, 0.0, 0.3]})
    low, high = certified_accuracy_interval(log, [0.0, 0.4, 1.0], confidence=0.9)
    counts = [4, 2, 0]
    for k, lo, hi in zip(counts, low, high, strict=True):
        expected_low = 0.0 if k == 0 else beta.ppf(0.05, k, 5 - k + 1)
        expected_high = 1.0 if k == 5 else beta.ppf(0.95, k + 1, 5 - k)
        assert lo == pytest.approx(expected_low) and hi == pytest.approx(expected_high)


def test_acr_difference_measures_the_column_asked_for() -> None:
    a = pd.DataFrame({"idx": [0, 1], "correct": [1, 1], "radius": [0.5, 0.5], "alm": [0.5, 0.5]})
    b = a.assign(alm=[0.9, 0.9])
    from rsutils import acr_difference

    assert acr_difference(a, b).difference == 0.0
    assert acr_difference(a, b, column="alm").difference == pytest.approx(0.4)


def test_acr_comparisons_tabulates_acr_difference_per_pair_and_measure() -> None:
    from rsutils import acr_difference
    from rsutils.analysis.metrics import acr_comparisons

    rng = np.random.default_rng(0)
    base = pd.DataFrame({"idx": range(50), "correct": 1, "radius": rng.uniform(0, 1, 50)})
    base["alm"] = base["radius"]
    logs = {"a": base, "b": base.assign(radius=base.radius + 0.1, alm=base.alm - 0.1)}
    table = acr_comparisons(logs, [("b", "a")], measures={"radius": "radius", "ALM": "alm"})
    assert table.index.tolist() == [("b", "a", "radius"), ("b", "a", "ALM")]
    assert [str(v) for v in table.verdict] == ["rises", "falls"]
    expected = acr_difference(logs["a"], logs["b"], column="alm")
    assert table.loc[("b", "a", "ALM"), "low"] == pytest.approx(expected.low)
