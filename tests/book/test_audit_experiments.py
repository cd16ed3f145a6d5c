"""The book's cached soundness audits: keyed by the certificates and the audit's identity."""

import json

import pandas as pd
import pytest
import torch

from rsutils import AuditSettings, CertifySettings, NPGConfig, TrainConfig, load_dataset
from rsutils.book.experiments import Experiments
from rsutils.cache import cache_dir

NPG = NPGConfig(base=TrainConfig(scale=0.5, epochs=1, batch_size=32), method="certification")
AUDIT = AuditSettings(alpha=0.01, n_verify=20, boundary=1, steps=1, draws=2, seed=3)


@pytest.fixture
def experiments(fake_fashion_mnist, monkeypatch, cnn) -> Experiments:
    """Experiments whose NPG pair and certificates are stand-ins (no training, no CERTIFY)."""
    monkeypatch.setenv("RSUTILS_DATA", str(fake_fashion_mnist))
    data = load_dataset("fashion-mnist", "test")
    settings = CertifySettings(n0=10, n=200, alpha=0.001, seed=0, batch_size=1000)
    runs = Experiments(data, [0, 3, 7], settings, device="cpu", progress=False)
    log = pd.DataFrame(
        {"idx": [0, 3, 7], "predict": [1, 2, 3], "correct": [1, 1, 0], "region_radius": 0.2}
    )

    def params(z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return 0.01 * z, 0.5 + z

    monkeypatch.setattr(Experiments, "certify_generated", lambda self, config: log)
    monkeypatch.setattr("rsutils.book.experiments.trained_npg", lambda *a, **k: (cnn, params))
    return runs


def _refuse(monkeypatch) -> None:
    def refuse(*args, **kwargs):
        raise AssertionError("a cached audit must not be recomputed")

    monkeypatch.setattr("rsutils.book.experiments.audit_log", refuse)


def test_audits_are_computed_once_then_read_from_the_cache(experiments, monkeypatch) -> None:
    records = experiments.audit_generated(NPG, AUDIT, limit=5)
    assert [r.index for r in records] == [0, 3]  # idx 7 is not correct
    assert {r.scale for r in records} == {NPG.scale}  # the certificates' λ
    assert {(r.alpha, r.seed, r.n_verify) for r in records} == {(0.01, 3, 20)}
    assert [len(r.points) for r in records] == [2, 2]  # one boundary point, one attack
    _refuse(monkeypatch)
    again = experiments.audit_generated(NPG, AUDIT.replace(batch_size=7), limit=5)  # speed only
    assert [r.rows() for r in again] == [r.rows() for r in records]
    searches = (AUDIT.replace(losses=("ce", "margin")), AUDIT.replace(region_scale=(1.5, 2.0)))
    for changed in (AUDIT.replace(seed=4), AUDIT.replace(ball=True), *searches):
        with pytest.raises(AssertionError, match="must not be recomputed"):
            experiments.audit_generated(NPG, changed, limit=5)
    with pytest.raises(AssertionError, match="must not be recomputed"):
        experiments.audit_generated(NPG, AUDIT, freeze=True, limit=5)


def test_the_cache_key_keeps_the_certificates_and_the_audits_settings_apart(experiments) -> None:
    experiments.audit_generated(NPG, AUDIT.replace(input_range=(0.0, 1.0)), limit=1)
    (sidecar,) = (cache_dir() / "audit-npg").glob("*.json")
    key = json.loads(sidecar.read_text())
    assert (key["alpha"], key["seed"], key["n0"], key["n"]) == (0.001, 0, 10, 200)  # CERTIFY's
    assert key["audit"] == {
        "alpha": 0.01,
        "n_verify": 20,
        "boundary": 1,
        "steps": 1,
        "draws": 2,
        "seed": 3,
        "shrink": 0.99,
        "ball": False,
        "input_range": [0.0, 1.0],
    }
    assert (key["freeze"], key["limit"], key["indices"]) == (False, 1, [0, 3, 7])


@pytest.mark.parametrize(
    ("settings", "limit", "error", "message"),
    [
        ({"alpha": 0.01}, 1, TypeError, "settings must be an AuditSettings"),
        (AUDIT, -1, ValueError, "limit must be a non-negative integer"),
    ],
)
def test_bad_arguments_are_refused_before_anything_is_written(
    experiments, settings, limit, error, message
) -> None:
    with pytest.raises(error, match=message):
        experiments.audit_generated(NPG, settings, limit=limit)
    assert not (cache_dir() / "audit-npg").exists()
