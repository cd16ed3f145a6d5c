"""Behind the anisotropic memory, the deployed classifier never contradicts a stored region."""

from __future__ import annotations

import pandas as pd
import pytest
import torch

from rsutils import Gaussian
from rsutils.anisotropic.generated import GeneratedSmooth
from rsutils.anisotropic.generators import NoiseGenerator
from rsutils.anisotropic.soundness.audit import AuditSettings, DeployedClassifier, audit_certificate
from rsutils.anisotropic.soundness.deployed import admit_log, query_audit_points
from rsutils.checks.classifiers import LinearClassifier
from rsutils.core.settings import CertifySettings
from rsutils.memory import AnisotropicMemory

X = torch.tensor([2.0, 0.0], dtype=torch.float64)


class Shifting(NoiseGenerator):
    """``mu(z) = (−z₂, 0)``, ``sigma(z) = (1, 10 + z₂²/10)``: the second coordinate moves the
    offset, so the deployed classifier changes class inside the region certified at X."""

    kind = "shifting"
    depends_on_input = True

    def forward(self, z):
        second = z[:, 1]
        mu = torch.stack([-second, torch.zeros_like(second)], dim=1)
        sigma = torch.stack([torch.ones_like(second), 10.0 + second**2 / 10], dim=1)
        return mu, sigma


@pytest.fixture(scope="module")
def setting():
    line = LinearClassifier(torch.tensor([1.0, 0.0], dtype=torch.float64))
    smooth = GeneratedSmooth(line, 2, Gaussian(1.0), Shifting().eval(), input_range=None)
    settings = CertifySettings(n0=100, n=10_000, alpha=0.001, batch_size=5000)
    cert = smooth.certify(X, 100, 10_000, 0.001, 5000, 0, index=0)
    assert cert.prediction == 1
    log = pd.DataFrame({"idx": [0], "predict": [1], "region_radius": [cert.region_radius]})
    return line, smooth, settings, log, cert


def test_the_memory_corrects_every_contradiction_the_audit_finds(setting) -> None:
    line, smooth, settings, log, cert = setting
    images = X.unsqueeze(0)
    audit = AuditSettings(n_verify=2000, boundary=4, steps=20)
    deployed = DeployedClassifier(line, Shifting(), 1.0, 2)
    record = audit_certificate(deployed, X, 1, cert.region_radius, audit)
    assert record.contradicted  # the deployed classifier, alone, contradicts the certificate
    memory = AnisotropicMemory()
    admitted = admit_log(smooth, memory, images, log)
    assert admitted["memory"].tolist() == ["kept"]
    answers = query_audit_points(smooth, memory, images, [record], settings)
    assert len(answers) == len(record.points) and answers["inside"].all()
    flipped = answers["mc_predict"] == 0
    assert flipped.equals(answers["flipped"])
    assert flipped.any(), "some Monte Carlo answers inside the region are class 0"
    assert (answers.loc[flipped, "memory"] == "adopted").all()
    assert not answers["contradiction"].any() and (answers["predict"] == 1).all()
    assert memory.violations() == []
