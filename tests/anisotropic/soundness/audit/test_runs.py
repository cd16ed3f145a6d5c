"""audit_certificate and audit_log on the exact case: every verdict checked in closed form."""

import numpy as np
import pandas as pd
import pytest
import torch

from rsutils.anisotropic.soundness.audit import (
    AuditSettings,
    DeployedClassifier,
    audit_certificate,
    audit_log,
    boundary_points,
    frozen,
)
from rsutils.checks.classifiers import LinearClassifier
from rsutils.checks.shifting import (
    ShiftingParams,
    deployed_pA,
    example_input,
    frozen_pA,
    shifting_classifier,
)
from rsutils.core.streams import stream_generator

X = example_input()
SCALE = 1.0
SETTINGS = AuditSettings(alpha=0.001, n_verify=2000, boundary=8, steps=20)
DEPLOYED = DeployedClassifier(shifting_classifier(), ShiftingParams(), SCALE, 2)


def audit(params, R, *, index=0, **changes):
    settings = SETTINGS.replace(**changes)
    deployed = DeployedClassifier(shifting_classifier(), params, SCALE, 2)
    return audit_certificate(deployed, X, 1, R, settings, index=index)


def test_the_constructed_case_has_a_contradiction_in_closed_form(certificate) -> None:
    R = certificate.region_radius
    assert 1.5 < R < 2.0  # Φ⁻¹ of a lower bound on Φ(2)
    delta = torch.tensor([0.0, 0.9 * 10.0 * R], dtype=torch.float64)  # ‖δ ⊘ sigma(x)‖ = 0.9 R
    z = X + delta
    assert frozen_pA(X, z, SCALE) > 0.97  # g_x keeps class 1 there (Theorem 7)
    assert deployed_pA(z, SCALE) < 1e-40  # G is class 0 there


def test_the_audit_finds_a_contradiction_and_every_verdict_is_true(certificate) -> None:
    record = audit(ShiftingParams(), certificate.region_radius)
    assert record.contradicted
    attack = [p for p in record.points if p.search == "attack"]
    assert [p.verdict.verdict for p in attack] == ["contradiction"]
    for point in record.points:
        z = X + torch.from_numpy(point.delta)
        exact = deployed_pA(z, SCALE)
        if point.verdict.verdict == "contradiction":
            assert point.verdict.top == 0 and exact < 0.5
        if point.verdict.verdict == "agrees":
            assert exact > 0.5
        assert frozen_pA(X, z, SCALE) > 0.5  # the same point is fine for g_x
        assert point.region_fraction == pytest.approx(0.99)
        # diagnostics in closed form: |mu₁(z) − mu₁(x)| = |δ₂|, sigma changes by δ₂²/10
        d = point.delta
        assert point.mu_ratio == pytest.approx(abs(d[1]) / np.linalg.norm(d))
        assert point.sigma_change == pytest.approx(d[1] ** 2 / 10)


def test_frozen_parameters_give_no_contradiction(certificate) -> None:
    """Theorem 7: g_x keeps class 1 on its region; the same audit finds nothing."""
    control = frozen(ShiftingParams(), X)
    record = audit(control, certificate.region_radius)
    assert not record.contradicted
    for point in record.points:
        z = X + torch.from_numpy(point.delta)
        assert frozen_pA(X, z, SCALE) > 0.5
        assert point.mu_ratio == 0.0 and point.sigma_change == 0.0
        assert point.pA_frozen == point.pA_deployed  # the same draws, the same parameters


def test_the_l2_ball_inside_the_region_is_contradicted_too(certificate) -> None:
    R = certificate.region_radius
    record = audit(ShiftingParams(), R, ball=True)
    assert record.region == "ball" and record.contradicted
    for point in record.points:
        assert np.linalg.norm(point.delta) == pytest.approx(0.99 * 1.0 * R)  # min sigma(x) = 1
        if point.verdict.verdict == "contradiction":
            assert deployed_pA(X + torch.from_numpy(point.delta), SCALE) < 0.5


def test_the_audit_is_deterministic(certificate) -> None:
    R = certificate.region_radius
    first, second = audit(ShiftingParams(), R, seed=3), audit(ShiftingParams(), R, seed=3)
    assert first.rows() == second.rows()
    for a, b in zip(first.points, second.points, strict=True):
        assert np.array_equal(a.delta, b.delta) and a.verdict == b.verdict
    other = audit(ShiftingParams(), R, seed=4)
    assert not np.array_equal(first.points[0].delta, other.points[0].delta)


def test_the_audit_draws_from_the_registrys_streams_of_seed_and_index(certificate) -> None:
    """Boundary points come from the ``boundary`` stream of ``(seed, index, point 0)``, and
    the speed setting ``batch_size`` changes nothing."""
    R = certificate.region_radius
    record = audit(ShiftingParams(), R, index=5, seed=3, steps=0)
    sigma_x = frozen(ShiftingParams(), X).sigma
    generator = stream_generator(3, 5, "boundary", 0, device="cpu")
    expected = boundary_points(sigma_x, R, 8, generator).numpy()
    assert np.array_equal(np.stack([p.delta for p in record.points]), expected)
    assert record.index == 5 and record.seed == 3
    faster = audit(ShiftingParams(), R, index=5, seed=3, steps=0, batch_size=333)
    assert faster.rows() == record.rows()
    elsewhere = audit(ShiftingParams(), R, index=6, seed=3, steps=0)
    assert not np.array_equal(elsewhere.points[0].delta, record.points[0].delta)


def test_a_zero_radius_claims_nothing() -> None:
    record = audit(ShiftingParams(), 0.0)
    assert record.points == () and not record.contradicted


def test_the_box_keeps_every_candidate_in_range_and_in_region() -> None:
    model = LinearClassifier(torch.tensor([1.0, -1.0]))
    x = torch.tensor([0.7, 0.2], dtype=torch.float64)
    R = 1.5
    settings = AuditSettings(n_verify=200, boundary=6, steps=10, input_range=(0.0, 1.0))
    record = audit_certificate(
        DeployedClassifier(model, ShiftingParams(), 0.1, 2), x, 1, R, settings
    )
    sigma = ShiftingParams()(x.unsqueeze(0))[1][0].numpy()
    for point in record.points:
        z = x.numpy() + point.delta
        assert np.all((z >= 0) & (z <= 1))
        assert np.linalg.norm(point.delta / sigma) < 0.99 * R * (1 + 1e-9)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"R": -1.0}, "R must be finite"),
        ({"R": float("inf")}, "R must be finite"),
        ({"R": float("nan")}, "R must be finite"),
        ({"c": 2}, "class label"),
        ({"index": -1}, "index must be a non-negative integer"),
        ({"scale": 0.0}, "sigma"),
        ({"settings": SETTINGS.replace(input_range=(0.0, 1.0))}, "outside input_range"),
        ({"params": lambda z: (z[:, :1], z)}, "shape"),
        ({"params": lambda z: (z, -torch.ones_like(z))}, "sigma <= 0"),
    ],
)
def test_bad_arguments_are_clear_value_errors(change, message) -> None:
    arguments = {"params": ShiftingParams(), "c": 1, "R": 1.0, "scale": 1.0, "index": 0}
    arguments["settings"] = AuditSettings(n_verify=10, boundary=1, steps=1)
    arguments |= change
    with pytest.raises(ValueError, match=message):
        deployed = DeployedClassifier(
            shifting_classifier(), arguments["params"], arguments["scale"], 2
        )
        claim = (X, arguments["c"], arguments["R"], arguments["settings"])
        audit_certificate(deployed, *claim, index=arguments["index"])


def test_settings_must_be_audit_settings() -> None:
    with pytest.raises(TypeError, match=r"settings must be an AuditSettings, e\.g\."):
        audit_certificate(DEPLOYED, X, 1, 1.0, {})  # type: ignore[arg-type]


def test_the_audit_takes_a_deployed_classifier() -> None:
    with pytest.raises(TypeError, match=r"audit a DeployedClassifier\(model, params, scale"):
        audit_certificate(shifting_classifier(), X, 1, 1.0, SETTINGS)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="params must map a batch z to"):
        DeployedClassifier(shifting_classifier(), 0.5, SCALE, 2)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="num_classes"):
        DeployedClassifier(shifting_classifier(), ShiftingParams(), SCALE, 1)


def log_of(R: float) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "idx": [2, 0, 1],
            "predict": [1, 1, 0],
            "correct": [1, 1, 0],
            "region_radius": [R, 0.0, R],
        }
    )


def test_audit_log_audits_the_correct_certificates_with_a_region(certificate) -> None:
    images = torch.stack([X, X, X])
    log = log_of(certificate.region_radius)
    settings = SETTINGS.replace(boundary=2)
    params = ShiftingParams()
    deployed = DeployedClassifier(shifting_classifier(), params, SCALE, 2)
    records = audit_log(deployed, images, log, settings)
    assert [r.index for r in records] == [2]  # idx 0 has R = 0, idx 1 is wrong
    assert records[0].contradicted
    assert records[0].rows() == audit(params, certificate.region_radius, index=2, boundary=2).rows()
    frozen_records = audit_log(deployed, images, log, settings, freeze=True)
    assert not frozen_records[0].contradicted
    assert audit_log(deployed, images, log, settings, limit=0) == []


def test_audit_log_refuses_bad_arguments_before_auditing() -> None:
    with pytest.raises(ValueError, match="limit must be a non-negative integer"):
        audit_log(DEPLOYED, X[None], log_of(1.0), SETTINGS, limit=-1)
    with pytest.raises(ValueError, match="sigma"):
        DeployedClassifier(shifting_classifier(), ShiftingParams(), -1.0, 2)
