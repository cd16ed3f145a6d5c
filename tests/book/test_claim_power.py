"""A claim's power: the median, range and unknowns of its comparisons' powers, each the
library's comparison_power, and the sentence the findings page prints."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from rsutils.analysis.differences import replicated_comparisons
from rsutils.analysis.margins import Margins
from rsutils.analysis.power import comparison_power
from rsutils.book.audit.claim_power import TARGET_POWER, ClaimPower, claim_power

MARGINS = Margins(acr=0.02, accuracy=0.01)


def replicates(images: int = 40, models: int = 5, seed: int = 0) -> list[dict[str, pd.DataFrame]]:
    """Three methods against one control; 'same' certifies exactly the control's radii."""
    rng = np.random.default_rng(seed)
    found = []
    for _ in range(models):
        control = pd.DataFrame({"idx": np.arange(images), "correct": 1})
        control["radius"] = rng.uniform(0.2, 1.0, images)
        found.append(
            {
                "control": control,
                "small": control.assign(radius=control.radius + rng.normal(0.01, 0.1, images)),
                "large": control.assign(radius=control.radius + rng.normal(0.3, 0.1, images)),
                "same": control,
            }
        )
    return found


def test_the_claim_power_sums_up_its_comparisons() -> None:
    pairs = [("small", "control"), ("large", "control")]
    table = replicated_comparisons(replicates(), pairs, measures={"ACR": "radius"}, margin=MARGINS)
    said = claim_power(table, draws=400, seed=1)
    each = comparison_power(table, power=TARGET_POWER, draws=400, seed=1)
    assert said.comparisons == 2 and said.unknown == 0 and said.models == 5
    # an even count: the lower of the two middle powers, one comparison's own
    assert said.median == each["power"].min() < each["power"].max()
    assert (said.low, said.high) == (each["power"].min(), each["power"].max())
    text = str(said)
    assert text.startswith(f"{said.median:.2f} (lower median of 2, {said.low:.2f}–{said.high:.2f})")
    # the lower of the two powers stands for the median: the small method's, whose
    # models vary (σ²_models ≈ 1e-4, a floor of σ²_models/5 on the variance that no
    # number of images lowers, too high for 0.02 at Holm's α/4)
    components = table.loc[("small", "control", "ACR"), "components"]
    assert components.models > 0 and said.images_needed is None
    assert text.endswith("80% needs more models, not images")
    large = comparison_power(table.iloc[1:], draws=400, seed=1).iloc[0]
    assert large["images for power"] > 40  # the large method's models do not vary


def test_a_comparison_that_saw_no_spread_is_counted_unknown_not_powerful() -> None:
    """'same' against the control: every image agrees, the accuracy and the ACR."""
    measures = {"ACR": "radius", "at 0.1": ("radius", 0.1)}
    same = replicated_comparisons(
        replicates(), [("same", "control")], measures=measures, margin=MARGINS
    )
    said = claim_power(same, draws=200)
    assert said.unknown == said.comparisons == 2 and math.isnan(said.median)
    assert str(said) == "unknown: none of 2 comparisons saw a spread"
    mixed = replicated_comparisons(
        replicates(), [("same", "control"), ("large", "control")], measures={"ACR": "radius"},
        margin=MARGINS,
    )  # fmt: skip
    said = claim_power(mixed, draws=200)
    assert said.unknown == 1 and "; 1 with no spread seen" in str(said)


def test_no_comparisons_is_refused() -> None:
    with pytest.raises(ValueError, match="no comparisons"):
        claim_power(pd.DataFrame())


def test_the_sentence_says_when_images_cannot_reach_the_target() -> None:
    said = ClaimPower(3, 0, 0.1, 0.05, 0.2, 5, None)
    assert str(said) == "0.10 (median of 3, 0.05–0.20); 80% needs more models, not images"
    assert said.brief() == "0.10; 80% needs more models"
    said = ClaimPower(1, 0, 0.3, 0.3, 0.3, 5, 1234)
    assert str(said) == "0.30 (median of 1); 80% needs 1,234 images at 5 models"
    assert said.brief() == "0.30; 80% needs 1,234 images" and said.needs == "1,234 images"
    assert str(ClaimPower(1, 0, 0.3, 0.3, 0.3, 1, 99)).endswith("99 images at 1 model")
    assert str(ClaimPower(3, 1, 0.2, 0.2, 0.4, 5, 50)).startswith("0.20 (lower median of 2,")
    unknown = ClaimPower(2, 2, *[float("nan")] * 3, 5, None)
    assert unknown.brief() == "unknown (no spread seen)" and unknown.needs == "unknown"


def test_a_larger_design_is_the_same_comparisons_with_more_images() -> None:
    """images_factor keeps each comparison's models and variance components and
    multiplies its images (rounded up): a planned design, before it is run."""
    table = replicated_comparisons(
        replicates(), [("small", "control")], measures={"ACR": "radius"}, margin=MARGINS
    )
    assert claim_power(table, draws=400, images_factor=1) == claim_power(table, draws=400)
    larger = claim_power(table, draws=400, seed=2, images_factor=2.5)
    by_hand = comparison_power(table.assign(images=100), draws=400, seed=2).iloc[0]
    assert larger.median == by_hand["power"] and larger.models == 5
    # the small method's models vary: more images raise its power towards the models'
    # floor, never past it, so no number of images reaches 80% at either design
    powers = [claim_power(table, draws=400, images_factor=f).median for f in (0.5, 1, 4, 16)]
    assert powers == sorted(powers) and powers[0] < powers[-1] < TARGET_POWER
    assert larger.images_needed is None
    for bad in (0, -1.0):
        with pytest.raises(ValueError, match="images_factor must be positive"):
            claim_power(table, images_factor=bad)
