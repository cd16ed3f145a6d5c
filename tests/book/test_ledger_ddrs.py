"""The rules of the data-dependent smoothing paper's ledger: each fires on a hand-made
row and stays quiet on a sound one; the real ledger's verdicts are pinned."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from rsutils.book.audit.ledger import COLUMNS, LedgerContext, check_ledger, ledger
from rsutils.book.audit.ledger.cohen import (
    ACR_PER_IMAGE,
    released_best,
    released_best_per_image,
)
from rsutils.book.audit.ledger.ddrs import count_fits, difference_range

CIFAR_ROWS = "CIFAR-10 0.25|CIFAR-10 0.50|CIFAR-10 1.00"


def row(**fields: str) -> dict[str, str]:
    return {column: "" for column in COLUMNS} | {"id": "x", "unit": "points"} | fields


def judged(*rows: dict[str, str], root: Path | None = None) -> list[tuple[str, str]]:
    frame = pd.DataFrame([r | {"id": f"r{i}"} if r["id"] == "x" else r for i, r in enumerate(rows)])
    checked = check_ledger(frame, LedgerContext(frame, reference_root=root))
    return list(zip(checked["found"], checked["verdict"], strict=True))


def verdicts(*rows: dict[str, str], root: Path | None = None) -> list[str]:
    return [said for _, said in judged(*rows, root=root)]


def test_printed_numbers_bound_a_difference_and_a_count() -> None:
    assert difference_range("8.7", "8.67") == pytest.approx((-0.085, 0.025))
    assert not count_fits("40.1", 500)  # 200.5 images
    assert count_fits("29.2", 500)  # 146 images
    assert count_fits("40.1", 10_000)


def test_a_percent_difference_is_read_as_points_not_as_a_relative_change() -> None:
    points = row(check="points", value="7.7", **{"from": "40.1", "to": "47.8"})
    relative = points | {"value": "19.2"}  # (47.8 − 40.1)/40.1 = 19.2 %
    assert verdicts(points, relative) == ["holds", "does not hold"]
    assert judged(points)[0][0] == "7.7 points (as a relative change: 19.2%)"


@pytest.mark.parametrize(
    ("check", "start", "end", "expected"),
    [
        ("greater", "0.7", "1.4", "holds"),
        ("greater", "1.4", "0.7", "does not hold"),
        ("greater", "0.7", "0.7", "does not hold"),  # not shown by the printed numbers
        ("less", "0.193", "0.173", "holds"),
        ("less", "0.173", "0.193", "does not hold"),
    ],
)
def test_an_order_word_needs_every_reading_of_the_numbers(check, start, end, expected) -> None:
    assert verdicts(row(check=check, **{"from": start, "to": end})) == [expected]


@pytest.mark.parametrize(
    ("value", "expected"), [("8.67", "holds"), ("9.0", "holds"), ("8.5", "does not hold")]
)
def test_comparable_or_better_reads_another_row(value: str, expected: str) -> None:
    macer_ds = row(id="ds", check="not_checkable", value="8.7", reason="stated")
    claim = row(id="ds2", check="comparable_or_better", value=value, **{"from": "ds"})
    assert verdicts(macer_ds, claim)[1] == expected


def test_a_gain_outweighs_the_drop_it_is_set_against() -> None:
    gain = row(check="outweighs", value="0.173", **{"from": "0.193", "to": "0.173"})
    assert verdicts(gain, gain | {"value": "0.01"}) == ["holds", "does not hold"]


def test_a_zero_above_the_ceiling_is_forced_by_the_certificate() -> None:
    zero = row(check="ceiling_zero", **{"from": "0.25"}, column="1.0")
    found, said = judged(zero)[0]
    ceiling = 0.25 * norm.ppf(0.001 ** (1 / 100_000))
    assert said == "holds"
    assert found.startswith(f"ceiling {ceiling:.3f}")
    assert verdicts(zero | {"from": "0.5"}) == ["not checkable"]  # 1.906 > 1.0


def test_another_papers_table_neither_confirms_nor_refutes_a_number_of_ddrss_runs() -> None:
    """DDRS's Cohen rows on CIFAR-10 are its own runs: Cohen et al.'s table is shown
    beside them, equal, lower or absent, and judges none (an earlier rule said "does
    not hold" at 40.1 and "not printed" at 0.75, where DDRS cites no table)."""
    envelope = row(check="cohen_table_envelope", value="43.0", tables="cohen2019_tables_1_3",
                   rows=CIFAR_ROWS, column="0.5", reason="DDRS's own runs")  # fmt: skip
    found = judged(envelope, envelope | {"value": "40.1"}, envelope | {"column": "0.75"})
    assert [said for _, said in found] == ["not checkable"] * 3
    assert (
        found[0][0]
        == "43% (Cohen et al. print 0.43: CIFAR-10 0.50); stated − printed = +0.0 points"
    )
    assert found[1][0].endswith("stated − printed = −2.9 points")
    assert found[2][0] == "the table prints no radius 0.75"
    with pytest.raises(ValueError, match="say why"):
        judged(envelope | {"reason": ""})


def write_cifar(release, curves: dict[str, dict[float, float]]) -> None:
    for sigma, curve in curves.items():
        release.certify("cifar10", sigma, sigma, release.curve(curve))


@pytest.mark.parametrize(("stated", "expected"), [("43.0", "holds"), ("30.0", "does not hold")])
def test_cohen_numbers_against_the_released_logs(fake_release, stated, expected) -> None:
    curves = {"0.25": {0.0: 0.7, 0.5: 0.43}, "0.50": {0.0: 0.6, 0.5: 0.40}, "1.00": {0.25: 0.2}}
    write_cifar(fake_release, curves)
    claim = row(check="cohen_logs", value=stated, rows="cifar10", column="0.5", unit="%")
    found, said = judged(claim, root=fake_release.root)[0]
    assert said == expected
    assert found.startswith("released: 43.0% (σ = 0.25, 500 images, SE 2.2%)")


def test_an_implied_acr_against_the_best_released_model(fake_release) -> None:
    # every image of the σ = 0.50 model certified at 1.0: ACR 1.0, no spread
    write_cifar(fake_release, {"0.50": {1.0: 1.0}, "1.00": {0.0: 1.0, 2.0: 0.25}})
    implied = row(check="implied_cohen_logs", value="0.3", rows="cifar10", column="ACR",
                  **{"from": "1.3"}, unit="ACR")  # fmt: skip
    found, said = judged(implied, root=fake_release.root)[0]
    assert said == "holds"
    assert found.startswith(
        "implied 1.3 − 0.3 = 1; released, read as the largest ACR of one released model: "
        "1.000 (σ = 0.50"
    )
    assert verdicts(implied | {"from": "1.5"}, root=fake_release.root) == ["does not hold"]


def two_models(release, images: int = 200) -> None:
    """Two CIFAR-10 models that certify different images: σ = 0.50 the first half at 1.0,
    σ = 1.00 the second half at 2.0 (ACR 0.5 and 1.0; each image's best: 1.5)."""
    half = images // 2
    for sigma, radius, first in (("0.50", 1.0, True), ("1.00", 2.0, False)):
        right = [first] * half + [not first] * half
        log = pd.DataFrame({"idx": range(images), "label": 0, "predict": 0, "time": 1.0,
                            "radius": [radius if r else 0.1 for r in right],
                            "correct": [int(r) for r in right]})  # fmt: skip
        release.certify("cifar10", sigma, sigma, log)


def test_the_acr_of_each_images_best_sigma(fake_release) -> None:
    for sigma in ("0.12", "0.25"):  # nothing right: they add nothing to any image
        fake_release.certify("cifar10", sigma, sigma, fake_release.curve({}, images=200))
    two_models(fake_release)
    best = released_best_per_image("cifar10", fake_release.root)
    assert (best.value, best.images, best.sigma) == (1.5, 200, "0.12, 0.25, 0.50, 1.00")
    spread = np.std([1.0] * 100 + [2.0] * 100, ddof=1)
    assert best.standard_error == pytest.approx(spread / np.sqrt(200))
    assert released_best("cifar10", ACR_PER_IMAGE, fake_release.root) == best
    assert released_best("cifar10", "ACR", fake_release.root).value == 1.0
    # an image a log lacks takes the best of the logs that hold it
    short = fake_release.curve({3.0: 1.0}, images=2).assign(idx=[0, 200])
    fake_release.certify("cifar10", "0.25", "0.25", short)
    best = released_best_per_image("cifar10", fake_release.root)
    assert best.images == 201  # image 0 now best at 3.0, image 200 new
    assert best.value == pytest.approx((3.0 + 99 * 1.0 + 100 * 2.0 + 3.0) / 201)


def test_the_verdict_on_an_acr_names_its_reading(fake_release) -> None:
    """The same implied ACR holds as the mean of each image's best radius and fails as
    one model's ACR; what the rule finds says which reading it used and gives the others
    (an earlier rule judged DDRS's ImageNet ACR by one model's alone)."""
    for sigma in ("0.12", "0.25"):
        fake_release.certify("cifar10", sigma, sigma, fake_release.curve({}, images=200))
    two_models(fake_release)
    implied = row(check="implied_cohen_logs", value="0.3", rows="cifar10",
                  column=ACR_PER_IMAGE, **{"from": "1.8"}, unit="ACR")  # fmt: skip
    found, said = judged(implied, root=fake_release.root)[0]
    assert said == "holds"
    assert found.startswith(
        "implied 1.8 − 0.3 = 1.5; released, read as the mean over images of each image's "
        "best certified radius over the released models: 1.500"
    )
    assert "the largest ACR of one released model: 1.000 (σ = 1.00)" in found
    assert "area under the envelope" in found
    one_model = implied | {"column": "ACR"}
    assert verdicts(one_model, root=fake_release.root) == ["does not hold"]


def test_a_missing_release_makes_the_log_rules_not_checkable(tmp_path: Path) -> None:
    claim = row(check="cohen_logs", value="40.1", rows="cifar10", column="0.5", unit="%")
    assert verdicts(claim, root=tmp_path / "empty") == ["not checkable"]


def test_the_real_ledger_verdicts(reference: Path) -> None:
    rows = ledger("alfarra2022")
    checked = check_ledger(rows, LedgerContext(rows, reference)).set_index("id")
    assert checked["verdict"].value_counts().to_dict() == {"not checkable": 22, "holds": 20}
    # statements about Cohen's rows that an earlier rule called failures
    assert checked.loc["ddrs-cohen-cifar-0.5-logs", "verdict"] == "holds"
    for table_row in ("ddrs-cohen-cifar-0.5-table", "ddrs-cohen-cifar-0.75-table"):
        assert checked.loc[table_row, "verdict"] == "not checkable"
        assert "DDRS does not say whose CIFAR-10 models" in checked.loc[table_row, "reason"]
    # the ImageNet ACR DDRS implies for Cohen (1.098) is each image's best over σ, 1.105,
    # and far above the best single model's, 0.875
    acr = checked.loc["ddrs-cohen-acr-imagenet"]
    assert acr["verdict"] == "holds" and acr["column"] == ACR_PER_IMAGE
    found = acr["found"]
    assert "read as the mean over images of each image's best certified radius" in found
    assert math.isclose(float(found.split("models: ")[1].split(" ")[0]), 1.105, abs_tol=0.001)
    assert "the largest ACR of one released model: 0.875 (σ = 1.00)" in found
    assert (checked["chosen"] != "").sum() == 30  # where the test set chose the number
