"""Comparisons decided by construction: the ceiling of a certificate (Gaussian, and
shrunk by 1 + L for the deployed classifier) and a σ with no shape, each checked
against closed forms, and the verdict that rests on them made "not testable here"."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch
from scipy.stats import binom, norm

from rsutils.anisotropic.generators import CertificationWiseGenerator
from rsutils.anisotropic.soundness.local import CEILING, local_sound_log
from rsutils.anisotropic.soundness.sound import ConstantScale, sound_log
from rsutils.book.audit.decided import (
    attainable_acr,
    ceiling_decides,
    ceiling_reason,
    shape_reason,
    unless_decided,
)
from rsutils.book.audit.verdicts import ClaimVerdict

ALPHA, N = 0.001, 1_000


def certify_log(sigma: float, counts, *, alm_factor: float = 1.0, n: int = N) -> pd.DataFrame:
    """A CERTIFY log whose images drew ``counts`` of ``n`` draws in the true class: the
    Clopper–Pearson lower bound (the beta quantile, from scipy) and the radius
    σ·Φ⁻¹(pA_lower) where it exceeds one half, 0 (abstained) elsewhere."""
    counts = np.asarray(counts)
    p_lower = np.array([_lower(k, n) for k in counts])
    certified = p_lower > 0.5
    radius = np.where(certified, sigma * norm.ppf(p_lower), 0.0)
    return pd.DataFrame(
        {
            "idx": np.arange(len(counts)), "label": 0, "predict": np.where(certified, 0, -1),
            "radius": radius, "correct": certified.astype(int), "count": counts, "n": n,
            "alpha": ALPHA, "pA_lower": p_lower, "scale": sigma, "alm": radius * alm_factor,
        }
    )  # fmt: skip


def _lower(k: int, n: int) -> float:
    from scipy.stats import beta

    return float(beta.ppf(ALPHA, k, n - k + 1)) if k > 0 else 0.0


def test_the_attainable_acr_is_the_gaussian_ceiling() -> None:
    """Every image at n of n draws: σ·Φ⁻¹(α^(1/n)), whatever the counts drawn."""
    log = certify_log(0.5, [700, 900, 990, 300])
    assert attainable_acr(log) == pytest.approx(0.5 * norm.ppf(ALPHA ** (1 / N)), rel=1e-9)
    assert attainable_acr(log) > log["radius"].max()


def test_the_deployed_ceiling_is_shrunk_by_one_plus_l() -> None:
    log = certify_log(0.5, [700, 900, 990])
    lipschitz = 93.5
    sound = sound_log(log, lipschitz)
    ceiling = 0.5 * norm.ppf(ALPHA ** (1 / N)) / (1 + lipschitz)
    assert attainable_acr(sound) == pytest.approx(ceiling, rel=1e-9)
    assert attainable_acr(sound, "alm") == pytest.approx(ceiling, rel=1e-9)


def test_a_local_sound_log_is_bounded_by_its_images_largest_radii() -> None:
    """A log certified with local radii states each image's largest radius; the
    attainable ACR is their mean, and it bounds the ACR of the log's certificates."""
    log = certify_log(0.5, [700, 900, 990, 300])
    generator = ConstantScale(CertificationWiseGenerator(1, width=4, growth=4), 1.0)
    images = torch.rand(4, 1, 6, 6, generator=torch.Generator().manual_seed(0))
    sound = local_sound_log(log, generator, images, 93.5)
    assert attainable_acr(sound) == pytest.approx(sound[CEILING].mean(), rel=1e-12)
    assert attainable_acr(sound) >= sound["radius"].mean()
    # an offset that does not move yet (μ ≡ 0 at the start) keeps the Gaussian ceiling
    assert attainable_acr(sound) == pytest.approx(attainable_acr(log), rel=2e-3)


def test_no_certified_image_has_no_ceiling_to_read() -> None:
    assert np.isnan(attainable_acr(certify_log(0.5, [100, 200])))


def test_a_ceiling_below_the_control_decides_the_comparison() -> None:
    """The control certifies every image at counts drawn from p = 0.999 (its ACR about
    1.1); the method's ceiling at 1 + L = 94.5 is 0.5·Φ⁻¹(α^(1/n))/94.5 ≈ 0.013:
    "falls" is forced."""
    rng = np.random.default_rng(0)
    counts = binom.rvs(N, 0.999, size=20, random_state=rng)
    control = certify_log(0.5, counts)
    method = sound_log(certify_log(0.5, counts), 93.5)
    replicates = [{"method": method, "control": control}] * 3
    assert ceiling_decides(replicates, "method", "control", column="radius", margin=0.02)
    columns = ("radius", "alm")
    why = ceiling_reason(replicates, "method", ["control"], columns=columns, margin=0.02)
    ceiling = 0.5 * norm.ppf(ALPHA ** (1 / N)) / 94.5
    assert why.startswith(f"method cannot reach an ACR above {ceiling:.3g} (every image")
    assert why.endswith("2 of 2 comparisons fall by construction")
    # without the bound the method could match the control: the comparison is open
    open_ = [{"method": certify_log(0.5, counts), "control": control}]
    assert not ceiling_decides(open_, "method", "control", column="radius", margin=0.02)
    assert ceiling_reason(open_, "method", ["control"], margin=0.02) == ""


def test_one_open_replicate_keeps_the_comparison_open() -> None:
    control = certify_log(0.5, [999] * 10)
    shrunk = sound_log(control, 93.5)
    replicates = [{"m": shrunk, "c": control}, {"m": control, "c": control}]
    assert not ceiling_decides(replicates, "m", "c", column="radius", margin=0.02)


def test_the_margin_counts_against_deciding() -> None:
    """A ceiling exactly the margin below the control's ACR does not decide."""
    control = certify_log(0.5, [999] * 10)
    ceiling = attainable_acr(sound_log(control, 1.0))
    acr = float(control["radius"].mean())
    replicates = [{"m": sound_log(control, 1.0), "c": control}]
    gap = acr - ceiling
    assert ceiling_decides(replicates, "m", "c", column="radius", margin=gap * 0.99)
    assert not ceiling_decides(replicates, "m", "c", column="radius", margin=gap * 1.01)


def test_a_shapeless_sigma_decides_the_alm_gain() -> None:
    flat = [{"g": certify_log(0.5, [900, 990], alm_factor=1.0)}] * 2
    assert "has no shape" in shape_reason(flat, "g")
    assert "0.00%" in shape_reason(flat, "g")
    barely = [{"g": certify_log(0.5, [900, 990], alm_factor=1.009)}]
    assert "0.90%" in shape_reason(barely, "g")
    shaped = [flat[0], {"g": certify_log(0.5, [900, 990], alm_factor=1.5)}]
    assert shape_reason(shaped, "g") == ""  # one replicate with a shape suffices
    none = [{"g": certify_log(0.5, [100, 200])}]
    assert (
        shape_reason(none, "g") == "g certified no image on any model: its σ's shape cannot be read"
    )


def test_a_decided_comparison_makes_the_verdict_not_testable() -> None:
    for verdict in ClaimVerdict:
        assert unless_decided("", verdict) is verdict
        assert unless_decided("a reason", verdict) is ClaimVerdict.NOT_TESTABLE
