"""The cached experiment helpers the notebooks use."""

import pytest

from rsutils.data import load_dataset
from rsutils.experiments import (
    certification_log,
    ds_certification_log,
    ds_probe_log,
    prediction_log,
)
from rsutils.memory import CertificateMemory
from rsutils.sigma_ascent import SigmaAscent
from rsutils.smooth import ABSTAIN, Smooth
from rsutils.train import TrainConfig

CONFIG = TrainConfig(epochs=1, batch_size=32)


@pytest.fixture
def test_split(fake_fashion_mnist, monkeypatch):
    monkeypatch.setenv("RSUTILS_DATA", str(fake_fashion_mnist))
    return load_dataset("fashion-mnist", "test")


def test_logs_are_computed_once_then_read_from_the_cache(test_split, monkeypatch) -> None:
    settings = dict(scale=0.25, alpha=0.01, device="cpu", progress=False)
    first = certification_log(CONFIG, test_split, [0, 3, 7], n0=10, n=200, **settings)
    predicted = prediction_log(CONFIG, test_split, [0, 3], n=100, **settings)
    assert list(first["idx"]) == [0, 3, 7] and list(predicted["idx"]) == [0, 3]

    def refuse(*args, **kwargs):
        raise AssertionError("a cached log must not be recomputed")

    monkeypatch.setattr(Smooth, "certify", refuse)
    monkeypatch.setattr(Smooth, "predict", refuse)
    again = certification_log(CONFIG, test_split, [0, 3, 7], n0=10, n=200, **settings)
    assert again.drop(columns="time").equals(first.drop(columns="time"))
    prediction_log(CONFIG, test_split, [0, 3], n=100, **settings)
    with pytest.raises(AssertionError, match="must not be recomputed"):
        certification_log(CONFIG, test_split, [0, 3, 7], n0=10, n=300, **settings)


def test_ds_logs_are_cached_and_probes_use_a_copy_of_the_memory(test_split, monkeypatch) -> None:
    ascent = SigmaAscent(sigma0=0.25, iterations=2, lr=0.05, draws=2)
    settings = dict(ascent=ascent, n0=10, n=200, alpha=0.01, device="cpu", progress=False)
    first = ds_certification_log(CONFIG, test_split, [0, 3, 7, 9], **settings)
    assert list(first["idx"]) == [0, 3, 7, 9]
    with CertificateMemory(first.attrs["memory_path"]) as memory:
        assert len(memory) == 4
    probes = ds_probe_log(CONFIG, test_split, [0, 3, 7, 9], fraction=0.5, **settings)
    certified = first[(first["predict"] != ABSTAIN) & (first["radius"] > 0)]
    assert list(probes["source_idx"]) == list(certified["idx"])
    assert list(probes["label"]) == list(certified["predict"])
    with CertificateMemory(first.attrs["memory_path"]) as memory:
        assert len(memory) == 4  # the probes went into a copy
    monkeypatch.setattr(Smooth, "certify", lambda *a, **k: pytest.fail("recomputed"))
    again = ds_certification_log(CONFIG, test_split, [0, 3, 7, 9], **settings)
    assert again.drop(columns="time").equals(first.drop(columns="time"))
    ds_probe_log(CONFIG, test_split, [0, 3, 7, 9], fraction=0.5, **settings)
