"""The book's certification with sigma ≡ c: its own cached log, the other keys unchanged."""

import json

import pytest
import torch

from rsutils import CertifySettings, NPGConfig, TrainConfig, load_dataset
from rsutils.anisotropic.generators import CertificationWiseGenerator
from rsutils.book.experiments import Experiments
from rsutils.cache import cache_dir, config_key

NPG = NPGConfig(base=TrainConfig(scale=0.5, epochs=1, batch_size=32), method="certification")


@pytest.fixture
def experiments(fake_fashion_mnist, monkeypatch, cnn) -> Experiments:
    """Experiments whose NPG pair is a stand-in (no training)."""
    monkeypatch.setenv("RSUTILS_DATA", str(fake_fashion_mnist))
    torch.manual_seed(0)
    generator = CertificationWiseGenerator(1, width=4, growth=4)
    with torch.no_grad():
        for p in generator.parameters():
            p.add_(0.2 * torch.randn_like(p))
    pair = (cnn, generator.eval())
    monkeypatch.setattr("rsutils.book.experiments.trained_npg", lambda *a, **k: pair)
    data = load_dataset("fashion-mnist", "test")
    settings = CertifySettings(n0=10, n=100, alpha=0.01, seed=0, batch_size=1000)
    return Experiments(data, [0, 3], settings, device="cpu", progress=False)


def test_a_constant_sigma_has_its_own_log_and_leaves_the_other_keys(experiments) -> None:
    learned = experiments.certify_generated(NPG)
    constant = experiments.certify_generated(NPG, constant_sigma=0.75)
    sidecars = {
        json.loads(path.read_text()).get("constant_sigma"): json.loads(path.read_text())
        for path in (cache_dir() / "certify-npg").glob("*.json")
        if not path.name.endswith(".tsv.json")
    }
    assert set(sidecars) == {None, 0.75}
    assert set(sidecars[None]) == {
        "model", "dataset", "split", "indices", "without_mu", "n0", "n", "alpha", "seed",
        "device", "rows",
    }  # fmt: skip
    assert sidecars[None]["model"] == config_key(NPG.as_dict())
    certified = constant[constant["predict"] >= 0]
    assert len(certified) > 0
    assert list(certified["radius"]) == pytest.approx(list(0.75 * certified["region_radius"]))
    certified = learned[learned["predict"] >= 0]
    assert len(certified) > 0
    assert (certified["radius"] < 0.75 * certified["region_radius"]).all()  # min σ(x) < 0.75
    again = experiments.cached().certify_generated(NPG, constant_sigma=0.75)
    assert again.drop(columns="time").equals(constant.drop(columns="time"))
