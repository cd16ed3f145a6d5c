"""Certificates of the float32 model from bfloat16 counts (rsutils.core.reference_precision).

The constructed case: a base model that says class 0 when the first coordinate of its
input is below ``t_ref`` in float32 and below ``t_fast > t_ref`` under bfloat16 autocast.
Under N(0, 1) noise at 0, the float32 model's ``p_A = Φ(t_ref)`` sits exactly at the
radius ``t_ref`` while the fast one looks better, ``Φ(t_fast)``: every disagreement is
one that counts against the float32 model (the worst case of the bound).
"""

import numpy as np
import pytest
import torch
from scipy.stats import beta, norm
from torch import nn

from rsutils.core.confidence import clopper_pearson_lower, clopper_pearson_upper
from rsutils.core.inference import InferenceModel
from rsutils.core.noise import Gaussian
from rsutils.core.reference_precision import (
    ReferenceSmooth,
    reference_bound,
    split_alpha,
)
from rsutils.core.smooth import ABSTAIN, Smooth

X = torch.zeros(1)
T_REF = 0.5  # p_A(fp32) = Φ(0.5): the float32 classifier's radius is exactly 0.5
SHIFT = 0.05  # P(fast in A, fp32 not)


class PrecisionThreshold(nn.Module):
    """Class 0 iff ``x[0] < t``, with ``t = t_ref`` in float32 and ``t_fast`` under autocast."""

    def __init__(self, t_ref: float, t_fast: float) -> None:
        super().__init__()
        self.register_buffer("t", torch.tensor([t_ref, t_fast]))
        self.eval()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        fast = torch.is_autocast_enabled(x.device.type)
        z = x.reshape(len(x), -1)[:, 0].float()
        return torch.stack([self.t[int(fast)] - z, torch.zeros_like(z)], dim=1)


def worst_case(shift: float = SHIFT) -> PrecisionThreshold:
    t_fast = float(norm.ppf(norm.cdf(T_REF) + shift))
    return PrecisionThreshold(T_REF, t_fast)


def smooth_of(model: nn.Module, **options) -> ReferenceSmooth:
    options = {"draws": 500, "fast": "bf16", **options}
    return ReferenceSmooth(model, 2, Gaussian(1.0), input_range=None, **options)


@pytest.mark.parametrize(
    ("count", "n", "d", "m", "alpha", "share"),
    [
        (900, 1000, 3, 200, 0.001, 0.5),
        (1000, 1000, 0, 1000, 0.05, 0.5),
        (10_000, 10_000, 12, 1000, 0.001, 0.8),
        (700, 1000, 50, 500, 0.05, 0.3),
        (0, 100, 0, 10, 0.01, 0.5),
    ],
)
def test_the_bound_is_the_difference_of_two_clopper_pearson_bounds(
    count, n, d, m, alpha, share
) -> None:
    bound = reference_bound(count, n, d, m, alpha, share)
    alpha_fast, alpha_d = alpha * share, alpha * (1 - share)
    fast = beta.ppf(alpha_fast, count, n - count + 1) if count else 0.0
    upper = beta.ppf(1 - alpha_d, d + 1, m - d) if d < m else 1.0
    assert bound.fast_pA_lower == pytest.approx(fast, rel=1e-12, abs=1e-15)
    assert bound.d_upper == pytest.approx(upper, rel=1e-12)
    assert bound.pA_lower == pytest.approx(max(0.0, fast - upper), rel=1e-12, abs=1e-15)
    assert split_alpha(alpha, share) == pytest.approx((alpha_fast, alpha_d))


def test_the_bound_without_paired_draws_and_at_all_disagreements() -> None:
    assert reference_bound(100, 100, 0, 0, 0.01).d_upper == 1.0
    assert reference_bound(100, 100, 10, 10, 0.01).pA_lower == 0.0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((10, 10, 0, 5, 0.01, 1.0), r"fast_share must lie strictly between 0 and 1"),
        ((10, 10, 0, 5, 0.01, 0.0), r"fast_share must lie strictly between 0 and 1"),
        ((10, 10, 6, 5, 0.01, 0.5), r"need 0 <= disagreements <= m, got 6 of 5"),
        ((10, 10, 0, -1, 0.01, 0.5), r"m must be a non-negative integer"),
        ((10, 10, 0, 5, 1.5, 0.5), r"alpha"),
    ],
)
def test_bad_bounds_are_refused(args, message) -> None:
    with pytest.raises(ValueError, match=message):
        reference_bound(*args)


def test_identical_models_give_the_upper_bound_of_zero_disagreements_exactly() -> None:
    smooth = smooth_of(PrecisionThreshold(T_REF, T_REF), draws=400, fast_share=0.5)
    cert = smooth.certify(X, n0=50, n=2000, alpha=0.01, seed=3, index=2)
    assert (cert.m, cert.disagreements, cert.differ) == (400, 0, 0)
    assert cert.d_upper == float(clopper_pearson_upper(0, 400, 0.005))
    assert cert.d_upper == pytest.approx(1 - 0.005 ** (1 / 400), rel=1e-12)
    assert cert.fast_pA_lower == float(clopper_pearson_lower(cert.count, 2000, 0.005))
    assert cert.pA_lower == cert.fast_pA_lower - cert.d_upper
    assert cert.radius == pytest.approx(norm.ppf(cert.pA_lower))


def test_the_fast_counts_are_those_of_certify_in_the_fast_mode() -> None:
    """Same seed, same draws: selection and count equal Smooth's in bf16 at alpha_fast,
    and a second run gives the same certificate."""
    model = worst_case()
    smooth = smooth_of(model, fast_share=0.7)
    cert = smooth.certify(X, n0=50, n=3000, alpha=0.01, batch_size=128, seed=11, index=4)
    fast = Smooth(model, 2, Gaussian(1.0), input_range=None, inference="bf16")
    plain = fast.certify(X, n0=50, n=3000, alpha=0.007, seed=11, index=4)
    assert (cert.selected, cert.count, cert.fast_pA_lower) == (
        plain.selected,
        plain.count,
        plain.pA_lower,
    )
    assert cert == smooth.certify(X, n0=50, n=3000, alpha=0.01, seed=11, index=4)
    assert cert.disagreements == cert.differ > 0  # every disagreement is fast-in-A


def test_paired_labels_share_the_noise() -> None:
    fast, reference = smooth_of(worst_case()).paired_labels(X, 5000, seed=1, index=0)
    assert np.all(fast[reference == 0] == 0)  # the reference's A is inside the fast one's
    shift = np.mean((fast == 0) & (reference == 1))
    assert abs(shift - SHIFT) < 4 * np.sqrt(SHIFT * (1 - SHIFT) / 5000)


def test_an_abstaining_fast_bound_skips_the_paired_draws() -> None:
    cert = smooth_of(PrecisionThreshold(0.0, 0.0)).certify(X, 10, 200, 0.01, seed=0)
    assert cert.prediction == ABSTAIN and cert.m == 0 and cert.d_upper == 1.0


RUNS, ALPHA = 2000, 0.05


def false_certificate_rates() -> tuple[float, float]:
    """Over RUNS certificates of the worst case: the share of false float32 certificates
    (the bound above the true p of the answered class), and the share that the fast
    bound alone at the full alpha would have made."""
    model = worst_case()
    smooth = smooth_of(model, draws=500)
    truth = np.array([norm.cdf(T_REF), norm.sf(T_REF)])
    false = alone = 0
    for run in range(RUNS):
        cert = smooth.certify(X, n0=20, n=500, alpha=ALPHA, seed=20261202, index=run)
        false += cert.prediction != ABSTAIN and cert.pA_lower > truth[cert.prediction]
        fast_alone = float(clopper_pearson_lower(cert.count, cert.n, ALPHA))
        alone += fast_alone >= 0.5 and fast_alone > truth[cert.selected]
    return false / RUNS, alone / RUNS


def test_coverage_at_the_worst_case_and_the_fast_bound_alone_fails_it() -> None:
    """Within alpha + 3 s.e. for the float32 certificates; the fast bound alone (ignoring
    the disagreement) certifies the float32 model falsely far more often."""
    limit = ALPHA + 3 * np.sqrt(ALPHA * (1 - ALPHA) / RUNS)
    false, alone = false_certificate_rates()
    assert false <= limit
    assert alone > limit + 0.3


@pytest.mark.parametrize(
    ("make", "options", "message"),
    [
        (worst_case, {"fast": "fp32"}, r"fast must be a bfloat16 mode .*use Smooth"),
        (worst_case, {"fast": "channels_last"}, r"fast must be a bfloat16 mode"),
        (worst_case, {"fast": "bf17"}, r"unknown inference mode 'bf17'"),
        (lambda: InferenceModel(worst_case(), "bf16"), {}, r"already wrapped to run in 'bf16'"),
        (lambda: InferenceModel(worst_case(), "fp32"), {}, r"already wrapped to run in 'fp32'"),
        (lambda: worst_case().double(), {}, r"must be float32, got weights in torch.float64"),
        (worst_case, {"draws": 0}, r"draws must be a positive integer"),
        (worst_case, {"fast_share": 1.0}, r"fast_share must lie strictly between"),
    ],
)
def test_bad_options_are_refused(make, options, message) -> None:
    with pytest.raises(ValueError, match=message):
        smooth_of(make(), **options)


def test_identity_names_what_is_certified() -> None:
    smooth = smooth_of(worst_case(), draws=300, fast_share=0.25)
    assert smooth.identity() == {
        "noise": repr(Gaussian(1.0)),
        "norm": "l2",
        "inference": "bf16",
        "certifies": "fp32",
        "reference_draws": 300,
        "fast_share": 0.25,
    }


def test_it_is_a_smoothed_classifier_whose_predict_runs_in_float32() -> None:
    from rsutils.core.smoothed import SmoothedClassifier

    smooth = smooth_of(worst_case())
    assert isinstance(smooth, SmoothedClassifier)
    reference = Smooth(worst_case(), 2, Gaussian(1.0), input_range=None)
    expected = reference.predict(X, 300, 0.01, seed=5, index=1)
    assert smooth.predict(X, 300, 0.01, seed=5, index=1) == expected
