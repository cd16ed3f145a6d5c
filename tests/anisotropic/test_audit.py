"""The audit of certification-wise certificates, on a case whose answer is known in closed form.

The case: 2-D inputs, the linear classifier ``f(z) = 1[z₁ > 0]``, and noise parameters
``mu(z) = (−z₂, 0)``, ``sigma(z) = (1, 10 + z₂²/10)``. At ``x = (2, 0)`` the frozen
classifier g_x has ``P(class 1) = Φ(2)`` and a certified region that reaches far
along z₂ (``sigma₂(x) = 10``). The deployed classifier G at ``z`` has
``P(class 1) = Φ(z₁ − z₂)`` (its offset moves z across the decision boundary), so G
is class 0 on much of that region. Theorem 7 holds for g_x: with frozen parameters
the exact probability of class 1 stays above 1/2 on the whole region.
"""

import math

import numpy as np
import pandas as pd
import pytest
import torch
from scipy.stats import beta, binom, binomtest
from scipy.stats import norm as normal
from torch import nn

from rsutils.anisotropic.audit import (
    _project,
    attack_in_region,
    audit_certificate,
    boundary_points,
    classify_counts,
    deployed_counts,
    frozen,
    noise_params,
    summarize_audits,
    verify_point,
)
from rsutils.anisotropic.noise import Anisotropic
from rsutils.checks.classifiers import LinearClassifier
from rsutils.core.noise import Gaussian
from rsutils.core.sampling import image_generator
from rsutils.core.smooth import Smooth

X = torch.tensor([2.0, 0.0], dtype=torch.float64)
SCALE = 1.0


class Shifting(nn.Module):
    """``mu(z) = (−z₂, 0)``, ``sigma(z) = (1, 10 + z₂²/10)``: differentiable, sigma > 0."""

    def forward(self, z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        second = z[:, 1]
        mu = torch.stack([-second, torch.zeros_like(second)], dim=1)
        sigma = torch.stack([torch.ones_like(second), 10.0 + second**2 / 10], dim=1)
        return mu, sigma


def line() -> LinearClassifier:
    return LinearClassifier(torch.tensor([1.0, 0.0]))


def deployed_pA(z: torch.Tensor) -> float:
    """Exact P(G's base classifier says class 1) at z: Φ((z₁ + mu₁(z))/(λ·sigma₁(z)))."""
    return float(normal.cdf((float(z[0]) - float(z[1])) / SCALE))


def frozen_pA(z: torch.Tensor) -> float:
    """Exact P(class 1) under g_x at z: Φ((z₁ + mu₁(x))/(λ·sigma₁(x))) with mu(x) = 0."""
    return float(normal.cdf(float(z[0]) / SCALE))


@pytest.fixture(scope="module")
def certificate():
    mu, sigma = Shifting()(X.unsqueeze(0))
    noise = Anisotropic(Gaussian(SCALE), sigma[0], mu[0])
    cert = Smooth(line(), 2, noise, input_range=None).certify(X, 100, 10_000, 0.001, seed=0)
    assert cert.prediction == 1
    return cert


def audit(params, R, **options):
    settings = {"scale": SCALE, "alpha": 0.001, "n_verify": 2000, "boundary": 8, "steps": 20}
    return audit_certificate(line(), params, X, 1, R, **{**settings, **options})


def test_the_constructed_case_has_a_contradiction_in_closed_form(certificate) -> None:
    R = certificate.region_radius
    assert 1.5 < R < 2.0  # Φ⁻¹ of a lower bound on Φ(2)
    delta = torch.tensor([0.0, 0.9 * 10.0 * R], dtype=torch.float64)  # ‖δ ⊘ sigma(x)‖ = 0.9 R
    z = X + delta
    assert frozen_pA(z) > 0.97  # g_x keeps class 1 there (Theorem 7)
    assert deployed_pA(z) < 1e-40  # G is class 0 there


def test_the_audit_finds_a_contradiction_and_every_verdict_is_true(certificate) -> None:
    record = audit(Shifting(), certificate.region_radius)
    assert record.contradicted
    attack = [p for p in record.points if p.search == "attack"]
    assert [p.verdict.verdict for p in attack] == ["contradiction"]
    for point in record.points:
        z = X + torch.from_numpy(point.delta)
        exact = deployed_pA(z)
        if point.verdict.verdict == "contradiction":
            assert point.verdict.top == 0 and exact < 0.5
        if point.verdict.verdict == "agrees":
            assert exact > 0.5
        assert frozen_pA(z) > 0.5  # the same point is fine for g_x
        assert point.region_fraction == pytest.approx(0.99)
        # diagnostics in closed form: |mu₁(z) − mu₁(x)| = |δ₂|, sigma changes by δ₂²/10
        d = point.delta
        assert point.mu_ratio == pytest.approx(abs(d[1]) / np.linalg.norm(d))
        assert point.sigma_change == pytest.approx(d[1] ** 2 / 10)


def test_frozen_parameters_give_no_contradiction(certificate) -> None:
    """Theorem 7: g_x keeps class 1 on its region; the same audit finds nothing."""
    control = frozen(Shifting(), X)
    record = audit(control, certificate.region_radius)
    assert not record.contradicted
    for point in record.points:
        z = X + torch.from_numpy(point.delta)
        assert frozen_pA(z) > 0.5
        assert point.mu_ratio == 0.0 and point.sigma_change == 0.0
        assert point.pA_frozen == point.pA_deployed  # the same draws, the same parameters


def test_the_l2_ball_inside_the_region_is_contradicted_too(certificate) -> None:
    R = certificate.region_radius
    record = audit(Shifting(), R, ball=True)
    assert record.region == "ball" and record.contradicted
    for point in record.points:
        assert np.linalg.norm(point.delta) == pytest.approx(0.99 * 1.0 * R)  # min sigma(x) = 1
        if point.verdict.verdict == "contradiction":
            assert deployed_pA(X + torch.from_numpy(point.delta)) < 0.5


def test_the_audit_is_deterministic(certificate) -> None:
    R = certificate.region_radius
    first, second = audit(Shifting(), R, seed=3), audit(Shifting(), R, seed=3)
    assert first.rows() == second.rows()
    for a, b in zip(first.points, second.points, strict=True):
        assert np.array_equal(a.delta, b.delta) and a.verdict == b.verdict
    other = audit(Shifting(), R, seed=4)
    assert not np.array_equal(first.points[0].delta, other.points[0].delta)


def test_a_zero_radius_claims_nothing() -> None:
    record = audit(Shifting(), 0.0)
    assert record.points == () and not record.contradicted


def test_the_box_keeps_every_candidate_in_range_and_in_region() -> None:
    model = LinearClassifier(torch.tensor([1.0, -1.0]))
    x = torch.tensor([0.7, 0.2], dtype=torch.float64)
    R = 1.5
    record = audit_certificate(
        model, Shifting(), x, 1, R, scale=0.1, n_verify=200, boundary=6, steps=10,
        input_range=(0.0, 1.0),
    )  # fmt: skip
    sigma = Shifting()(x.unsqueeze(0))[1][0].numpy()
    for point in record.points:
        z = x.numpy() + point.delta
        assert np.all((z >= 0) & (z <= 1))
        assert np.linalg.norm(point.delta / sigma) < 0.99 * R * (1 + 1e-9)


# ---------------------------------------------------------------------- verify_point


def test_the_clopper_pearson_bound_is_scipys_beta_quantile() -> None:
    alpha = 0.001
    agrees = classify_counts([300, 700], 1, alpha)
    assert agrees.top_lower == pytest.approx(beta.ppf(alpha, 700, 301), rel=1e-12)
    assert agrees.verdict == "agrees" and agrees.level == alpha
    # two classes: the only other class is tested at alpha
    other = classify_counts([700, 300], 1, alpha)
    assert other.top_lower == pytest.approx(beta.ppf(alpha, 700, 301), rel=1e-12)
    assert other.verdict == "contradiction"
    # more classes: the selected other class is tested at alpha / 2
    three = classify_counts([700, 300, 0], 1, alpha)
    assert three.level == alpha / 2
    assert three.top_lower == pytest.approx(beta.ppf(alpha / 2, 700, 301), rel=1e-12)
    # a single vote is never a verdict
    assert classify_counts([1, 0], 1, alpha).verdict == "ambiguous"
    assert classify_counts([0, 1], 1, alpha).verdict == "ambiguous"


@pytest.mark.parametrize("classes", [2, 3, 4])
def test_no_contradiction_without_a_lower_bound_above_one_half(classes) -> None:
    n, alpha = 12, 0.05
    for counts in np.ndindex(*[n + 1] * (classes - 1)):
        if sum(counts) > n:
            continue
        full = np.array([*counts, n - sum(counts)])
        for c in range(classes):
            result = classify_counts(full, c, alpha)
            bounds = [beta.ppf(result.level, k, n - k + 1) if k else 0.0 for k in full]
            others = [b for k, b in enumerate(bounds) if k != c]
            assert (result.verdict == "contradiction") == (max(others) > 0.5)
            assert (result.verdict == "agrees") == (beta.ppf(alpha, full[c], n - full[c] + 1) > 0.5)


@pytest.mark.parametrize("n", [100, 1000, 10_000])
def test_a_false_contradiction_is_rarer_than_alpha_at_the_worst_probabilities(n) -> None:
    """Exact: two classes other than c at probability 1/2 each (the worst case of the
    union over classes) claim a contradiction with probability ≤ alpha."""
    alpha = 0.01
    counts = np.arange(n // 2 + 1, n + 1)
    threshold = int(counts[beta.ppf(alpha / 2, counts, n - counts + 1) > 0.5][0])
    assert classify_counts([threshold, n - threshold, 0], 2, alpha).verdict == "contradiction"
    assert classify_counts([threshold - 1, n - threshold + 1, 0], 2, alpha).verdict == "ambiguous"
    false_claim = 2 * binom.sf(threshold - 1, n, 0.5)
    assert false_claim <= alpha


class HalfPlane(nn.Module):
    """f(z) = 1[z₁ > 0] on inputs of shape (2,)."""

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return torch.stack([-z[:, 0], z[:, 0]], dim=1)


class Constant(nn.Module):
    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return torch.tensor([0.0, 1.0]).expand(z.shape[0], 2)


def unit(z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.zeros_like(z), torch.ones_like(z)


def test_a_fifty_fifty_classifier_is_never_a_contradiction() -> None:
    z = torch.zeros(2)
    for seed in range(20):
        for c in (0, 1):
            generator = torch.Generator().manual_seed(seed)
            result = verify_point(
                HalfPlane().eval(), unit, z, c, scale=1.0, n=1000, alpha=0.001,
                generator=generator, num_classes=2,
            )  # fmt: skip
            assert result.verdict == "ambiguous"
            assert result.top_lower <= 0.5


def test_a_constant_classifier_always_agrees() -> None:
    for seed in range(5):
        generator = torch.Generator().manual_seed(seed)
        result = verify_point(
            Constant().eval(), unit, torch.zeros(2), 1, scale=1.0, n=100, alpha=0.001,
            generator=generator, num_classes=2,
        )  # fmt: skip
        assert result.verdict == "agrees" and result.counts == (0, 100)
        assert result.top_lower == pytest.approx(0.001 ** (1 / 100))


def test_deployed_counts_are_smooths_counts_with_the_parameters_of_z() -> None:
    model, params = line(), Shifting()
    z = torch.tensor([0.5, 0.3], dtype=torch.float64)
    mu, sigma = params(z.unsqueeze(0))
    smooth = Smooth(model, 2, Anisotropic(Gaussian(0.5), sigma[0], mu[0]), input_range=None)
    expected = smooth.sample_counts(z, 5000, seed=7)
    for batch_size in (1000, 333):
        generator = image_generator(7, 0, "estimate", torch.device("cpu"))
        counts = deployed_counts(
            model, params, z, 0.5, 5000, generator=generator, batch_size=batch_size,
            num_classes=2,
        )  # fmt: skip
        assert np.array_equal(counts, expected)
    exact = normal.cdf((0.5 - 0.3) / 0.5)
    assert abs(expected[1] / 5000 - exact) < 4 * math.sqrt(exact * (1 - exact) / 5000)


# ---------------------------------------------------------------------- search


@pytest.mark.parametrize("ball", [False, True], ids=["ellipsoid", "ball"])
def test_boundary_points_lie_at_shrink_times_the_boundary(ball) -> None:
    sigma = torch.rand(1, 4, 4, generator=torch.Generator().manual_seed(0)) + 0.1
    R = 0.7
    deltas = boundary_points(sigma, R, 50, torch.Generator().manual_seed(1), ball=ball)
    assert deltas.shape == (50, 1, 4, 4)
    axes = sigma.min() if ball else sigma
    scaled = (deltas / axes).flatten(1).norm(dim=1)
    assert torch.allclose(scaled, torch.full((50,), 0.99 * R), rtol=1e-6)
    # directions are spread out, not one point repeated
    assert torch.linalg.matrix_rank(deltas.flatten(1)) == 16


class MLP(nn.Module):
    def __init__(self, d: int, out: int, seed: int, gain: float = 1.0) -> None:
        super().__init__()
        torch.manual_seed(seed)
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(d, 16), nn.Tanh(), nn.Linear(16, out))
        with torch.no_grad():
            self.net[-1].weight.mul_(gain)
        self.eval()

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return self.net(z)


class MLPParams(nn.Module):
    """Random differentiable noise parameters: ``mu`` and ``softplus + 0.05`` as sigma."""

    def __init__(self, shape: tuple[int, ...], seed: int) -> None:
        super().__init__()
        self.shape, d = shape, math.prod(shape)
        self.net = MLP(d, 2 * d, seed + 100)

    def forward(self, z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        mu, raw = self.net(z).chunk(2, dim=1)
        sigma = nn.functional.softplus(raw) + 0.05
        return mu.reshape(z.shape), sigma.reshape(z.shape)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("ball", [False, True], ids=["ellipsoid", "ball"])
@pytest.mark.parametrize("box", [None, (0.0, 1.0)], ids=["region", "box"])
@pytest.mark.parametrize("gain", [1.0, 1e6, 0.0], ids=["plain", "huge", "zero"])
def test_the_attack_ends_strictly_inside_the_region(seed, ball, box, gain) -> None:
    shape = (1, 2, 3)
    model, params = MLP(6, 3, seed, gain), MLPParams(shape, seed)
    x = torch.rand(3, *shape, generator=torch.Generator().manual_seed(seed))
    sigma_x = noise_params(params, x)[1].detach()
    R = torch.tensor([0.5, 2.0, 4.0])
    delta = attack_in_region(
        model, params, x, [0, 1, 2], sigma_x, R, scale=0.5, steps=8, draws=4,
        generator=torch.Generator().manual_seed(seed), ball=ball, input_range=box,
    )  # fmt: skip
    assert delta.shape == x.shape
    axes = sigma_x.flatten(1).amin(dim=1).reshape(-1, 1, 1, 1) if ball else sigma_x
    scaled = (delta / axes).flatten(1).norm(dim=1)
    assert bool((scaled <= 0.99 * R * (1 + 1e-6)).all())
    if box is not None:  # up to the rounding of the sum
        assert bool(((x + delta >= -1e-6) & (x + delta <= 1 + 1e-6)).all())
    if gain == 1.0:  # the ascent moves (a zero or saturated gradient leaves δ = 0)
        assert bool((scaled > (0.0 if box else 0.5) * R).all())


def noisy_loss(delta: torch.Tensor, params, draws: int = 20_000) -> float:
    """Cross-entropy of class 1 averaged over fixed draws, at X + δ."""
    z = (X + delta).unsqueeze(0)
    mu, sigma = params(z)
    eps = torch.randn(draws, 2, generator=torch.Generator().manual_seed(99), dtype=z.dtype)
    logits = line()(z + mu + sigma * SCALE * eps)
    return float(nn.functional.cross_entropy(logits, torch.ones(draws, dtype=torch.long)))


def test_the_attack_increases_the_loss_on_the_linear_example(certificate) -> None:
    params = Shifting()
    sigma_x = params(X.unsqueeze(0))[1]
    R = certificate.region_radius
    delta = attack_in_region(
        line(), params, X.unsqueeze(0), 1, sigma_x, R, scale=SCALE, steps=20, draws=8,
        generator=torch.Generator().manual_seed(0),
    )[0]  # fmt: skip
    assert noisy_loss(delta, params) > noisy_loss(torch.zeros(2, dtype=torch.float64), params) + 5
    assert deployed_pA(X + delta) < 1e-6


def test_with_frozen_parameters_the_attack_finds_the_exact_worst_direction(certificate) -> None:
    """For a linear f and frozen parameters the worst δ has δ ⊘ sigma ∝ −sigma ⊙ w."""
    control = frozen(Shifting(), X)
    R = certificate.region_radius
    delta = attack_in_region(
        line(), control, X.unsqueeze(0), 1, control.sigma.unsqueeze(0), R, scale=SCALE,
        steps=30, draws=16, generator=torch.Generator().manual_seed(0),
    )[0]  # fmt: skip
    u = delta / control.sigma
    worst = -control.sigma * torch.tensor([1.0, 0.0], dtype=torch.float64)
    cosine = float(u @ worst / (u.norm() * worst.norm()))
    assert cosine > 0.999 and float(u.norm()) == pytest.approx(0.99 * R)


def dykstra(v, radius, lower, upper, iterations=3000):
    """Projection onto ball ∩ box by Dykstra's alternating projections (slow, reference)."""
    x, p, q = v.clone(), torch.zeros_like(v), torch.zeros_like(v)
    for _ in range(iterations):
        y = torch.clamp(x + p, lower, upper)
        p = x + p - y
        w = y + q
        x = w * min(1.0, radius / float(w.norm()))
        q = y + q - x
    return x


def test_the_projection_onto_ball_and_box_is_exact() -> None:
    generator = torch.Generator().manual_seed(0)
    for _ in range(5):
        v = 3 * torch.randn(1, 6, generator=generator, dtype=torch.float64)
        lower = -torch.rand(1, 6, generator=generator, dtype=torch.float64)
        upper = torch.rand(1, 6, generator=generator, dtype=torch.float64) * 2
        radius = torch.tensor([1.0], dtype=torch.float64)
        ours = _project(v, radius, lower, upper)
        assert float(ours.norm()) <= 1.0 and bool(((ours >= lower) & (ours <= upper)).all())
        assert torch.allclose(ours[0], dykstra(v[0], 1.0, lower[0], upper[0]), atol=1e-6)


# ---------------------------------------------------------------------- checks, summary


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"R": -1.0}, "R must be finite"),
        ({"R": float("inf")}, "R must be finite"),
        ({"R": float("nan")}, "R must be finite"),
        ({"alpha": 0.0}, "alpha"),
        ({"alpha": 1.0}, "alpha"),
        ({"n_verify": 0}, "n_verify"),
        ({"draws": 0}, "draws"),
        ({"boundary": -1}, "boundary"),
        ({"c": 2}, "class label"),
        ({"shrink": 1.0}, "shrink"),
        ({"seed": -1}, "seed"),
        ({"input_range": (0.0, 1.0)}, "outside input_range"),
        ({"params": lambda z: (z[:, :1], z)}, "shape"),
        ({"params": lambda z: (z, -torch.ones_like(z))}, "sigma <= 0"),
    ],
)
def test_bad_arguments_are_clear_value_errors(change, message) -> None:
    defaults = {"params": Shifting(), "c": 1, "R": 1.0, "n_verify": 10, "boundary": 1}
    arguments = {**defaults, "scale": 1.0, "steps": 1, **change}
    params, c, R = arguments.pop("params"), arguments.pop("c"), arguments.pop("R")
    with pytest.raises(ValueError, match=message):
        audit_certificate(line(), params, X, c, R, **arguments)


def test_the_summary_has_a_row_per_image_and_search_and_an_exact_interval(certificate) -> None:
    R = certificate.region_radius
    records = [
        audit(Shifting(), R, index=0, n_verify=500),
        audit(frozen(Shifting(), X), R, index=1, n_verify=500),
        audit(frozen(Shifting(), X), R, index=2, n_verify=500),
    ]
    summary = summarize_audits(records)
    table = summary.table
    assert list(zip(table["index"], table["search"], strict=True)) == [
        (0, "attack"), (0, "boundary"), (1, "attack"), (1, "boundary"), (2, "attack"),
        (2, "boundary"),
    ]  # fmt: skip
    assert table["points"].tolist() == [1, 8] * 3
    assert (table["contradictions"] + table["agrees"] + table["ambiguous"] == table["points"]).all()
    assert table.loc[table["index"] > 0, "contradictions"].sum() == 0
    assert (summary.images, summary.contradicted) == (3, 1)
    interval = binomtest(1, 3).proportion_ci(0.95, method="exact")
    assert (summary.low, summary.high) == (
        pytest.approx(interval.low),
        pytest.approx(interval.high),
    )
    assert summary.rate == pytest.approx(1 / 3)
    assert summary.row() == {
        "images": 3,
        "with a contradiction": 1,
        "rate": 0.333,
        "95% interval": f"[{interval.low:.2f}, {interval.high:.2f}]",
    }
    with pytest.raises(ValueError, match="at least one"):
        summarize_audits([])
    empty = summarize_audits([audit(Shifting(), 0.0)])
    assert empty.table.empty and (empty.images, empty.contradicted) == (1, 0)


def test_audit_log_audits_the_correct_certificates_with_a_region(certificate) -> None:
    from rsutils.anisotropic.audit import audit_log

    images = torch.stack([X, X, X])
    R = certificate.region_radius
    log = pd.DataFrame(
        {
            "idx": [2, 0, 1],
            "predict": [1, 1, 0],
            "correct": [1, 1, 0],
            "region_radius": [R, 0.0, R],
        }
    )
    settings = {"scale": SCALE, "alpha": 0.001, "n_verify": 2000, "boundary": 2, "steps": 20}
    records = audit_log(line(), Shifting(), images, log, **settings)
    assert [r.index for r in records] == [2]  # idx 0 has R = 0, idx 1 is wrong
    assert records[0].contradicted
    frozen_records = audit_log(line(), Shifting(), images, log, freeze=True, **settings)
    assert not frozen_records[0].contradicted
    assert audit_log(line(), Shifting(), images, log, limit=0, **settings) == []


def test_a_record_survives_a_weights_only_round_trip(certificate, tmp_path) -> None:
    from rsutils.anisotropic.audit import record_from_dict, record_to_dict

    record = audit(Shifting(), certificate.region_radius, boundary=2, steps=3, n_verify=200)
    torch.save(record_to_dict(record), tmp_path / "r.pt")
    back = record_from_dict(torch.load(tmp_path / "r.pt", weights_only=True))
    assert back.rows() == record.rows() and back.contradicted == record.contradicted
    for a, b in zip(back.points, record.points, strict=True):
        assert np.array_equal(a.delta, b.delta) and a.verdict == b.verdict
