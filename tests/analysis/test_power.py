"""The power of a replicated comparison, checked against closed forms and the test itself."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import nct, norm
from scipy.stats import t as student

from rsutils.analysis.components import VarianceComponents
from rsutils.analysis.differences import (
    replicated_comparisons,
    replicated_difference,
)
from rsutils.analysis.margins import Margins
from rsutils.analysis.power import (
    NORMAL_DF,
    comparison_power,
    images_for_power,
    images_for_simulated_power,
    power_approx,
    power_from_mean_squares,
    power_simulated,
    simulated_differences,
)

IMAGES_DOMINATE = VarianceComponents(models=0.0004, images=0.09, residual=0.01)
MODELS_DOMINATE = VarianceComponents(models=0.01, images=0.0, residual=0.0)


def test_the_variance_of_the_mean_is_equation_one() -> None:
    parts = VarianceComponents(models=0.5, images=2.0, residual=4.0)
    assert parts.variance_of_mean(5, 200) == pytest.approx(0.5 / 5 + 2.0 / 200 + 4.0 / 1000)


def test_the_components_come_back_from_a_large_table() -> None:
    """k = 400 models × N = 400 images: each estimate within four of its standard
    errors (MSA's is σ²_e + Nσ²_a times sqrt(2/(k − 1)), divided by N; the others so)."""
    truth = VarianceComponents(models=0.3, images=0.2, residual=1.0)
    k = n = 400
    d = simulated_differences(0.0, truth, (1, k, n), seed=1)[0]
    found = VarianceComponents.from_differences(d)
    se_models = (truth.residual + n * truth.models) * math.sqrt(2 / (k - 1)) / n
    se_images = (truth.residual + k * truth.images) * math.sqrt(2 / (n - 1)) / k
    se_residual = truth.residual * math.sqrt(2 / ((k - 1) * (n - 1)))
    assert abs(found.models - truth.models) < 4 * se_models
    assert abs(found.images - truth.images) < 4 * se_images
    assert abs(found.residual - truth.residual) < 4 * se_residual


def test_one_model_gives_all_the_variance_to_the_images() -> None:
    d = np.array([[0.0, 1.0, 0.0, 1.0]])
    assert VarianceComponents.from_differences(d) == VarianceComponents(0.0, d.var(ddof=1), 0.0)


def test_at_no_effect_the_power_is_the_level() -> None:
    for tests in (1, 4):
        found = power_approx(0.0, IMAGES_DOMINATE, models=5, images=200, tests=tests)
        assert found == pytest.approx(0.05 / tests, rel=1e-9)


def test_with_one_model_and_images_alone_it_is_the_one_sample_t_power() -> None:
    parts = VarianceComponents(models=0.0, images=0.25, residual=0.0)
    n, effect = 40, 0.1
    shift, critical = effect / math.sqrt(0.25 / n), student.ppf(0.975, n - 1)
    exact = nct.sf(critical, n - 1, shift) + nct.cdf(-critical, n - 1, shift)
    assert power_approx(effect, parts, models=1, images=n) == pytest.approx(exact, rel=1e-12)


def test_with_many_images_it_is_the_normal_power() -> None:
    parts = VarianceComponents(models=0.0, images=0.25, residual=0.0)
    n, effect = 100_000, 0.004
    shift, z = effect / math.sqrt(0.25 / n), norm.ppf(0.975)
    normal = norm.cdf(shift - z) + norm.cdf(-shift - z)
    assert power_approx(effect, parts, models=1, images=n) == pytest.approx(normal, abs=1e-3)


def test_images_cannot_lower_the_models_floor() -> None:
    """With the variance all in the models, 5 models detect δ = 0.05 with the power of a
    t test on 4 degrees of freedom whatever the images, and more images never reach 0.8."""
    few, many = (power_approx(0.05, MODELS_DOMINATE, models=5, images=n) for n in (50, 50_000))
    assert few == pytest.approx(many, rel=1e-9)
    assert images_for_power(0.05, MODELS_DOMINATE, models=5) is None


def test_the_fewest_images_for_a_power_is_the_first_that_reaches_it() -> None:
    n = images_for_power(0.05, IMAGES_DOMINATE, models=5, tests=2)
    assert n is not None
    at = power_approx(0.05, IMAGES_DOMINATE, models=5, images=n, tests=2)
    before = power_approx(0.05, IMAGES_DOMINATE, models=5, images=n - 1, tests=2)
    assert before < 0.8 <= at


def test_a_family_can_put_an_effect_beyond_any_number_of_images() -> None:
    """Holm's strictest level in a family of 10 asks t_(4; 0.9975) ≈ 5.6 standard
    errors of five models, and the models' floor sqrt(σ²_models / 5) ≈ 0.009 leaves
    δ = 0.03 at 3.4 of them: no number of images reaches 0.8."""
    assert images_for_power(0.03, IMAGES_DOMINATE, models=5, tests=10) is None


def test_the_simulated_power_is_the_rejection_rate_of_the_books_test() -> None:
    """A few of the simulated tables judged one by one by replicated_difference (the
    function every verdict calls): its p-value is below the level exactly where the
    simulation counted a rejection (the same tables: same shape, effect and seed)."""
    effect, k, n, draws = 0.08, 3, 30, 12
    share, _ = power_simulated(effect, IMAGES_DOMINATE, models=k, images=n, draws=draws, seed=5)
    table = simulated_differences(effect, IMAGES_DOMINATE, (draws, k, n), seed=5)
    rejected = 0
    for d in table:
        logs = [(_log(np.zeros(n)), _log(row)) for row in d]
        rejected += replicated_difference(logs, column="radius").p_difference < 0.05
    assert 0 < rejected < draws  # both outcomes met, so the match is not by default
    assert share == rejected / draws


def _log(radius: np.ndarray) -> pd.DataFrame:
    """A log whose ACR difference to a log of zeros is ``radius``'s mean."""
    return pd.DataFrame({"idx": np.arange(len(radius)), "correct": 1, "radius": radius})


def test_simulation_and_closed_form_agree_where_the_test_is_exact() -> None:
    """Where the models' part dominates, Banerjee's interval is the t interval on k − 1
    degrees of freedom, as is the closed form: they agree within four Monte Carlo
    standard errors."""
    args = {"models": 5, "images": 100}
    share, se = power_simulated(0.08, MODELS_DOMINATE, **args, draws=4000, seed=2)
    assert abs(share - power_approx(0.08, MODELS_DOMINATE, **args)) < 4 * se


def test_the_books_test_is_conservative_where_the_models_do_not_vary() -> None:
    """With no model variance Banerjee's interval still pays the t quantile of k − 1
    degrees of freedom on the models' part MSA/(kN), which then carries the residual:
    where the residual dominates, its power is well below the closed form's (by more
    than four Monte Carlo standard errors)."""
    parts = VarianceComponents(models=0.0, images=0.01, residual=0.09)
    args = {"models": 5, "images": 200}
    share, se = power_simulated(0.03, parts, **args, draws=4000, seed=3)
    assert share < power_approx(0.03, parts, **args) - 4 * se


def test_bad_designs_and_levels_are_refused() -> None:
    with pytest.raises(ValueError, match="≥ 1 model and ≥ 2 images"):
        power_approx(0.1, IMAGES_DOMINATE, models=0, images=10)
    with pytest.raises(ValueError, match="0 < alpha < 1"):
        power_approx(0.1, IMAGES_DOMINATE, models=2, images=10, alpha=1.5)
    with pytest.raises(ValueError, match="finite number ≥ 0"):
        VarianceComponents(models=-1.0, images=0.0, residual=0.0)
    with pytest.raises(ValueError, match="power must lie"):
        images_for_power(0.1, IMAGES_DOMINATE, models=2, power=1.0)


def test_simulated_tables_share_each_models_and_each_images_part() -> None:
    """With one part at a time: a model's part is the same across its images, an image's
    across the models, and the residual differs cell by cell."""
    shape = (2, 3, 4)
    models = simulated_differences(1.0, VarianceComponents(1.0, 0.0, 0.0), shape, seed=0)
    images = simulated_differences(1.0, VarianceComponents(0.0, 1.0, 0.0), shape, seed=0)
    cells = simulated_differences(1.0, VarianceComponents(0.0, 0.0, 1.0), shape, seed=0)
    assert (models == models[:, :, :1]).all() and not (models == models[:, :1, :]).all()
    assert (images == images[:, :1, :]).all() and not (images == images[:, :, :1]).all()
    assert len(np.unique(cells)) == cells.size
    assert (simulated_differences(0.3, VarianceComponents(0, 0, 0), shape) == 0.3).all()


def test_each_comparison_gets_the_power_of_its_own_design_and_family() -> None:
    """A table of two comparisons, 5 models × 40 images: each row's power is
    power_simulated at its margin and its family's level α/tests; a row on which every
    image agreed has no spread, so its power is unknown (nan), not 1."""
    rng = np.random.default_rng(3)
    images = 40
    base = pd.DataFrame({"idx": np.arange(images), "correct": 1})
    replicates = []
    for _ in range(5):
        control = base.assign(radius=rng.uniform(0.2, 1.0, images))
        method = control.assign(radius=control.radius + rng.normal(0.05, 0.1, images))
        replicates.append({"method": method, "control": control})
    table = replicated_comparisons(
        replicates,
        [("method", "control")],
        measures={"ACR": "radius", "at 0.1": ("radius", 0.1)},
        margin=Margins(acr=0.02, accuracy=0.01),
    )
    found = comparison_power(table, draws=500, seed=2)
    acr = table.loc[("method", "control", "ACR")]
    expected, se = power_simulated(
        0.02, acr["components"], models=5, images=images, tests=int(acr["tests"]),
        draws=500, seed=2,
    )  # fmt: skip
    row = found.loc[("method", "control", "ACR")]
    assert (row["effect"], row["power"], row["power se"]) == (0.02, expected, se)
    needed = images_for_power(0.02, acr["components"], models=5, tests=int(acr["tests"]))
    assert row["images for power"] == needed
    agreed = found.loc[("method", "control", "at 0.1")]  # all certified by both at 0.1?
    at_01 = table.loc[("method", "control", "at 0.1"), "components"]
    assert math.isnan(agreed["power"]) == (at_01.variance_of_mean(5, images) == 0)
    larger = comparison_power(table, effects=0.2, draws=500, seed=2)
    assert larger.loc[("method", "control", "ACR"), "power"] > row["power"]
    with pytest.raises(ValueError, match="judged with a margin"):
        comparison_power(table.drop(columns="components"))


def test_the_power_reads_the_normal_where_the_t_is_the_normal() -> None:
    """At many images the noncentral t of scipy returns nan for a large shift; past
    NORMAL_DF degrees of freedom the power is the normal one, continuous with the t's."""
    parts = VarianceComponents(models=0.0, images=0.15, residual=0.0)
    at_edge = power_approx(0.01, parts, models=1, images=NORMAL_DF, tests=80)
    past = power_approx(0.01, parts, models=1, images=NORMAL_DF + 2, tests=80)
    assert abs(at_edge - past) < 1e-3
    many = power_approx(0.01, parts, models=1, images=100_000, tests=80)
    critical = norm.ppf(1 - 0.05 / 160)
    shift = 0.01 / math.sqrt(0.15 / 100_000)
    assert many == pytest.approx(norm.sf(critical - shift) + norm.cdf(-critical - shift))
    assert images_for_power(0.01, parts, models=1, tests=80) is not None


#: The components of an ALM comparison of the cpu book (pattern ℓ2 at geometric mean 1
#: against isotropic noise), where scipy's noncentral t returned nan at 500 images.
ALM_COMPARISON = VarianceComponents(models=0.0, images=0.0019273, residual=0.0028131)


def test_the_power_has_no_nan_where_scipys_far_tail_does() -> None:
    """scipy's nct.cdf(-c, df, nc) is nan for some large nc at moderate df (its value
    there is below 1e-20): the power reads the normal's tail instead, so it rises with
    the images to 1 and the images for 80% are the first design that reaches it, not
    one after a nan that counted as 'not enough'."""
    assert math.isnan(nct.cdf(-3.3, 50, 20))  # the scipy behaviour this guards against
    test = {"models": 5, "tests": 6}
    powers = [power_approx(0.02, ALM_COMPARISON, images=n, **test) for n in range(100, 2001, 50)]
    assert not any(map(math.isnan, powers))
    assert powers == sorted(powers) and powers[-1] == pytest.approx(1.0)
    n = images_for_power(0.02, ALM_COMPARISON, **test)
    assert n is not None and n < 2000  # before the fix, a nan ended the search at 6,419
    assert power_approx(0.02, ALM_COMPARISON, images=n - 1, **test) < 0.8
    assert power_approx(0.02, ALM_COMPARISON, images=n, **test) >= 0.8


@pytest.mark.parametrize(
    ("parts", "models", "images"),
    [
        (IMAGES_DOMINATE, 1, 50),
        (IMAGES_DOMINATE, 3, 40),
        (IMAGES_DOMINATE, 5, 200),
        (ALM_COMPARISON, 5, 100),
        (MODELS_DOMINATE, 5, 40),
    ],
)
def test_the_mean_squares_give_the_tables_power(parts, models, images) -> None:
    """Drawn from the grand mean and the three mean squares (a normal and three scaled
    χ²), the power is the tables' own: the two estimates, each from 4,000 draws, differ
    by less than four standard errors of their difference."""
    test = {"models": models, "images": images, "tests": 2, "draws": 4000}
    tables, se = power_simulated(0.05, parts, seed=3, **test)
    squares = power_from_mean_squares(0.05, parts, seed=3, **test)
    both = math.sqrt(se**2 + squares * (1 - squares) / 4000)
    assert abs(tables - squares) < 4 * max(both, 1 / 4000)


def test_the_images_for_the_books_test_are_the_design_that_reaches_it() -> None:
    """Where the models do not vary the closed form overstates the power of Banerjee's
    interval: on the ALM comparison it names fewer images than the design whose power,
    simulated on whole tables, is short of 80%; the simulated search names a design
    that reaches 80% on whole tables and one a fifth smaller that does not."""
    test = {"models": 5, "tests": 6}
    closed = images_for_power(0.02, ALM_COMPARISON, **test)
    n = images_for_simulated_power(0.02, ALM_COMPARISON, **test)
    assert closed is not None and n is not None and closed < n
    short, se = power_simulated(0.02, ALM_COMPARISON, images=closed, draws=4000, **test)
    assert short + 4 * se < 0.8
    at, se = power_simulated(0.02, ALM_COMPARISON, images=n, draws=4000, seed=5, **test)
    assert at > 0.8 - 4 * se
    below, se = power_simulated(0.02, ALM_COMPARISON, images=4 * n // 5, draws=4000, **test)
    assert below + 4 * se < 0.8
    assert images_for_simulated_power(0.05, MODELS_DOMINATE, models=5) is None
