"""The audit's calibration: a margin loss that survives saturation, and a positive control.

The constructed case is a linear base classifier under isotropic Gaussian noise
(:class:`~rsutils.checks.classifiers.LinearClassifier`, parameters frozen at
``mu = 0``, ``sigma = 1``): its smoothed decision boundary is the hyperplane itself, at
the exact distance ``d`` from ``x``, and CERTIFY's ``R = λΦ⁻¹(pA_lower)`` lies below
``d``. With ``λ = 0.5``, ``d = 1`` and ``n = 10,000``, ``R ≈ 0.97``, so the shell
``[1.5R, 1.98R]`` lies wholly beyond the boundary (contradictions exist there, and
``G`` is the other class with probability ``Φ((‖δ‖ − d)/λ)`` along ``−w``), while the
certified ball of radius ``R`` holds none.
"""

import numpy as np
import pytest
import torch
from scipy.stats import binomtest, norm

from rsutils.anisotropic.soundness.audit import (
    ATTACK_SEARCHES,
    AuditSettings,
    DeployedClassifier,
    FrozenParams,
    Region,
    attack_in_region,
    attack_objective,
    audit_certificate,
    record_from_dict,
    record_to_dict,
    summarize_audits,
)
from rsutils.checks.classifiers import LinearClassifier
from rsutils.core.noise import Gaussian
from rsutils.core.smooth import Smooth

DIM, SCALE, DISTANCE = 20, 0.5, 1.0
W = torch.zeros(DIM, dtype=torch.float64)
W[0] = 1.0
MODEL = LinearClassifier(W)
X = DISTANCE * W  # class 1, at distance 1 from the boundary w·z = 0
PARAMS = FrozenParams(torch.zeros(DIM, dtype=torch.float64), torch.ones(DIM, dtype=torch.float64))
DEPLOYED = DeployedClassifier(MODEL, PARAMS, SCALE, 2)
SETTINGS = AuditSettings(n_verify=2000, boundary=4, steps=20, draws=8, losses=("ce", "margin"))


@pytest.fixture(scope="module")
def radius() -> float:
    """CERTIFY's R at X: below the exact distance 1, above 1/1.5 (so 1.5R > 1)."""
    cert = Smooth(MODEL, 2, Gaussian(SCALE), input_range=None).certify(X, 100, 10_000, 0.001)
    assert cert.prediction == 1
    assert DISTANCE / 1.5 < cert.radius < DISTANCE  # the shell lies beyond the boundary
    return float(cert.radius)


def audit(R: float, **changes) -> object:
    return audit_certificate(DEPLOYED, X, 1, R, SETTINGS.replace(**changes))


def test_the_shell_beyond_the_certificate_is_contradicted_by_both_attacks(radius) -> None:
    record = audit(radius, region_scale=(1.5, 2.0))
    assert record.region_scale == (1.5, 2.0) and record.R == radius
    attacks = {p.search: p for p in record.points if p.search != "boundary"}
    assert set(attacks) == {"attack", "margin attack"}
    for point in attacks.values():
        assert point.verdict.verdict == "contradiction" and point.verdict.top == 0
        assert 1.5 * (1 - 1e-9) <= point.region_fraction <= 1.98 * (1 + 1e-9)
        # the exact probability of the other class at the point is above 1/2
        z = X + torch.from_numpy(point.delta)
        assert norm.cdf(-float(MODEL.score(z)) / SCALE) > 0.5
    for point in record.points:  # boundary points on the outer sphere of the shell
        if point.search == "boundary":
            assert point.region_fraction == pytest.approx(1.98)
    assert record.contradicted


def test_the_certified_ball_holds_no_contradiction(radius) -> None:
    """The same search inside R finds nothing: the certificate is sound for this G."""
    record = audit(radius)
    assert record.region_scale is None and not record.contradicted
    for point in record.points:
        assert point.region_fraction == pytest.approx(0.99)
        assert point.verdict.verdict != "contradiction"


def test_the_default_loss_keeps_the_attack_it_had(radius) -> None:
    """Adding the margin loss does not move the cross-entropy attack (its own stream)."""
    both = audit(radius)
    alone = audit(radius, losses=("ce",))
    assert [p.search for p in alone.points] == ["boundary"] * 4 + ["attack"]
    assert [p.search for p in both.points] == ["boundary"] * 4 + ["attack", "margin attack"]
    assert np.array_equal(alone.points[-1].delta, both.points[-2].delta)
    assert ATTACK_SEARCHES == {"ce": "attack", "margin": "margin attack"}


def test_a_record_keeps_its_region_scale_through_serialisation(radius) -> None:
    record = audit(radius, region_scale=(1.5, 2.0), boundary=1, steps=2)
    values = record_to_dict(record)
    assert values["region_scale"] == [1.5, 2.0]
    assert record_from_dict(values).region_scale == (1.5, 2.0)
    del values["region_scale"]  # a record cached before the field existed
    assert record_from_dict(values).region_scale is None


SATURATED = LinearClassifier(1000.0 * W)  # logits ±1000·(1 + noise): softmax is exactly one-hot


def test_the_margin_gradient_survives_where_the_cross_entropy_gradient_underflows() -> None:
    """At X the class-1 logit exceeds the other by 2000·(1 ± 0.05·ε): exp(−that) is 0 in
    float64, so the cross-entropy's gradient is exactly zero. The margin's is
    ``−2w`` on every draw, in closed form."""
    gradients = {}
    for loss in ("ce", "margin"):
        z = X.unsqueeze(0).clone().requires_grad_(True)
        value = attack_objective(
            DeployedClassifier(SATURATED, PARAMS, 0.05, 2), z, torch.tensor([1]), draws=16,
            generator=torch.Generator().manual_seed(0), loss=loss,
        )  # fmt: skip
        (gradients[loss],) = torch.autograd.grad(value.sum(), z)
    assert bool((gradients["ce"] == 0).all())
    assert torch.allclose(gradients["margin"][0], -2 * SATURATED.w)


def test_only_the_margin_attack_moves_on_saturated_logits() -> None:
    R = 0.9
    ends = {}
    for loss in ("ce", "margin"):
        ends[loss] = attack_in_region(
            DeployedClassifier(SATURATED, PARAMS, 0.05, 2),
            Region(X.unsqueeze(0), 1, PARAMS.sigma.unsqueeze(0), R),
            AuditSettings(steps=10, draws=8), generator=torch.Generator().manual_seed(0),
            loss=loss,
        )[0]  # fmt: skip
    assert bool((ends["ce"] == 0).all())  # stuck at x: no gradient to follow
    margin = ends["margin"]
    assert float(margin.norm()) == pytest.approx(0.99 * R)
    assert float(margin @ -W) / float(margin.norm()) > 0.999  # straight at the boundary


def test_a_bad_loss_is_refused() -> None:
    with pytest.raises(ValueError, match=r"loss must be one of \('ce', 'margin'\), got 'hinge'"):
        attack_in_region(
            DEPLOYED, Region(X.unsqueeze(0), 1, PARAMS.sigma.unsqueeze(0), 1.0),
            AuditSettings(steps=1, draws=1), generator=torch.Generator(), loss="hinge",
        )  # fmt: skip


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("box", [None, (0.0, 1.0)], ids=["region", "box"])
@pytest.mark.parametrize("ball", [False, True], ids=["ellipsoid", "ball"])
def test_the_shell_attack_stays_in_the_shell_or_at_the_boxs_farthest_point(seed, box, ball) -> None:
    """Never beyond shrink·outer·R; below inner·R only where the box stops the direction,
    and then every moving coordinate sits at its bound."""
    generator = torch.Generator().manual_seed(seed)
    d = 6
    w = torch.randn(d, generator=generator, dtype=torch.float64)
    x = torch.rand(3, d, generator=generator, dtype=torch.float64)
    sigma = 0.2 + torch.rand(3, d, generator=generator, dtype=torch.float64)
    R = torch.tensor([0.1, 0.5, 3.0], dtype=torch.float64)
    params = FrozenParams(torch.zeros(d, dtype=torch.float64), torch.ones(d, dtype=torch.float64))
    delta = attack_in_region(
        DeployedClassifier(LinearClassifier(w), params, 0.3, 2), Region(x, [0, 1, 0], sigma, R),
        AuditSettings(steps=6, draws=4, ball=ball, input_range=box, region_scale=(1.5, 2.0)),
        generator=generator,
    )  # fmt: skip
    axes = sigma.amin(dim=1, keepdim=True).expand_as(sigma) if ball else sigma
    u = delta / axes
    norms = u.norm(dim=1)
    assert bool((norms <= 1.98 * R * (1 + 1e-9)).all())
    if box is None:
        assert bool((norms >= 1.5 * R * (1 - 1e-9)).all())
        return
    assert bool(((x + delta >= -1e-9) & (x + delta <= 1 + 1e-9)).all())
    lower, upper = -x / axes, (1 - x) / axes
    for row in range(3):
        if norms[row] < 1.5 * R[row] * (1 - 1e-9):
            moving = u[row] != 0
            at_bound = torch.isclose(u[row], upper[row]) | torch.isclose(u[row], lower[row])
            assert bool(at_bound[moving].all()), row
    assert bool((norms[:2] >= 1.5 * R[:2] * (1 - 1e-9)).all())  # small radii fit the box


class Pull(torch.nn.Module):
    """Logits ``(s, −s)`` with ``s = ‖z − centre‖²``: ascending the cross-entropy of
    class 0 pulls z towards ``centre``, so an unprojected ascent would end inside the
    shell's hole."""

    def __init__(self, centre: torch.Tensor) -> None:
        super().__init__()
        self.register_buffer("centre", centre)
        self.eval()

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        s = ((z - self.centre) ** 2).flatten(1).sum(dim=1)
        return torch.stack([s, -s], dim=1)


@pytest.mark.parametrize("box", [None, (0.0, 1.0)], ids=["region", "box"])
def test_a_shell_attack_pulled_inwards_is_pushed_back_out(box) -> None:
    d = 4
    x = torch.full((1, d), 0.5, dtype=torch.float64)
    centre = x + 0.01 * torch.tensor([1.0, -1.0, 0.5, 0.0], dtype=torch.float64)
    params = FrozenParams(torch.zeros(d, dtype=torch.float64), torch.ones(d, dtype=torch.float64))
    R = 0.2  # the shell [0.3, 0.396] fits the box [0, 1]⁴ around x = 0.5
    for region_scale in ((1.5, 2.0), None):
        delta = attack_in_region(
            DeployedClassifier(Pull(centre), params, 0.01, 2), Region(x, 0, torch.ones_like(x), R),
            AuditSettings(steps=10, draws=2, input_range=box, region_scale=region_scale),
            generator=torch.Generator().manual_seed(0),
        )[0]  # fmt: skip
        if region_scale is None:  # the ascent itself ends near the centre, inside 1.5R
            assert float((x[0] + delta - centre[0]).norm()) < 0.5 * R
        else:
            assert 1.5 * R * (1 - 1e-9) <= float(delta.norm()) <= 1.98 * R * (1 + 1e-9)


def test_the_summary_says_which_search_found_what(radius) -> None:
    shell = audit_certificate(
        DEPLOYED, X, 1, radius, SETTINGS.replace(region_scale=(1.5, 2.0)), index=0
    )
    inside = audit_certificate(DEPLOYED, X, 1, radius, SETTINGS, index=1)
    found = summarize_audits([shell, inside]).by_search()
    assert list(found.columns) == ["images", "with a contradiction", "rate", "low", "high"]
    assert sorted(found.index) == ["attack", "boundary", "margin attack"]
    for search in ("attack", "margin attack"):  # the shell's, never the ball's
        assert found.loc[search, ["images", "with a contradiction"]].tolist() == [2, 1]
        interval = binomtest(1, 2).proportion_ci(0.95, method="exact")
        assert found.loc[search, "low"] == pytest.approx(interval.low)
        assert found.loc[search, "high"] == pytest.approx(interval.high)
    boundary = any(
        p.verdict.verdict == "contradiction" for p in shell.points if p.search == "boundary"
    )
    assert found.loc["boundary", "with a contradiction"] == int(boundary)
