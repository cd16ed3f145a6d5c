"""The cached experiments the notebooks use: computed once, then read from the cache."""

import json
from dataclasses import replace

import numpy as np
import pytest
import torch

from rsutils import (
    ABSTAIN,
    Anisotropic,
    CertificateMemory,
    CertifySettings,
    Gaussian,
    SigmaAscent,
    Smooth,
    TrainConfig,
    load_dataset,
)
from rsutils.book.experiments import Experiments, NotCachedError
from rsutils.book.trained import trained_model
from rsutils.cache import cache_dir, config_key
from rsutils.sequential import AnytimeSchedule, Decide, LookSchedule, PlannedDraws

CONFIG = TrainConfig(epochs=1, batch_size=32)


@pytest.fixture
def experiments(fake_fashion_mnist, monkeypatch) -> Experiments:
    monkeypatch.setenv("RSUTILS_DATA", str(fake_fashion_mnist))
    data = load_dataset("fashion-mnist", "test")
    settings = CertifySettings(n0=10, n=200, alpha=0.01, seed=0, batch_size=1000)
    return Experiments(data, [0, 3, 7], settings, device="cpu", progress=False)


def _refuse(monkeypatch) -> None:
    def refuse(*args, **kwargs):
        raise AssertionError("a cached log must not be recomputed")

    monkeypatch.setattr(Smooth, "certify", refuse)
    monkeypatch.setattr(Smooth, "prefix_counter", refuse)  # what a record draws with
    monkeypatch.setattr(Smooth, "predict", refuse)
    monkeypatch.setattr(Smooth, "sample_counts", refuse)  # what a ceiling log draws with


def test_trained_models_are_cached_by_configuration(fake_fashion_mnist, monkeypatch) -> None:
    monkeypatch.setenv("RSUTILS_DATA", str(fake_fashion_mnist))
    first = trained_model(CONFIG, device="cpu", progress=False)
    monkeypatch.setattr("rsutils.book.trained.train_model", None)  # must not train again
    second = trained_model(CONFIG, device="cpu", progress=False)
    for a, b in zip(first.state_dict().values(), second.state_dict().values(), strict=True):
        assert torch.equal(a, b)


def test_logs_are_computed_once_then_read_from_the_cache(experiments, monkeypatch) -> None:
    first = experiments.certify(CONFIG, Gaussian(0.25))
    predicted = experiments.at(n=100).predict(CONFIG, Gaussian(0.25))
    assert list(first["idx"]) == [0, 3, 7] and list(predicted["idx"]) == [0, 3, 7]
    assert set(predicted["n"]) == {100}
    _refuse(monkeypatch)
    again = experiments.certify(CONFIG, Gaussian(0.25))
    assert again.drop(columns="time").equals(first.drop(columns="time"))
    experiments.at(n=100).predict(CONFIG, Gaussian(0.25))
    experiments.at(batch_size=7).certify(CONFIG, Gaussian(0.25))  # speed only: same log
    with pytest.raises(AssertionError, match="must not be recomputed"):
        experiments.at(n=300).certify(CONFIG, Gaussian(0.25))


def test_cache_keys_name_the_model_images_noise_and_settings(experiments) -> None:
    experiments.certify(CONFIG, Gaussian(0.25))
    (log,) = (cache_dir() / "certify").glob("*.tsv")
    sidecar = log.with_suffix(".json")  # the cache key in clear (the log has its own .tsv.json)
    assert json.loads(sidecar.read_text()) == {
        "model": config_key(CONFIG.as_dict()),
        "dataset": "fashion-mnist",
        "split": "test",
        "indices": [0, 3, 7],
        "noise": "gaussian",
        "scale": 0.25,
        "n0": 10,
        "n": 200,
        "alpha": 0.01,
        "seed": 0,
        "device": "cpu",
        "rows": 100,
    }
    assert sidecar.stem == config_key(json.loads(sidecar.read_text()))
    recorded = json.loads(log.with_name(log.name + ".json").read_text())
    assert (recorded["device"], recorded["rows"]) == ("cpu", 100)  # the log's own sidecar


def test_anisotropic_logs_are_cached_by_the_content_of_sigma(experiments, monkeypatch) -> None:
    sigma = torch.full((1, 28, 28), 0.5)
    first = experiments.certify(CONFIG, Anisotropic(Gaussian(1.0), sigma))
    assert {"region_radius", "alm"} <= set(first.columns)
    assert len(list((cache_dir() / "certify-anisotropic").glob("*.tsv"))) == 1
    _refuse(monkeypatch)
    experiments.certify(CONFIG, Anisotropic(Gaussian(1.0), sigma.clone()))
    with pytest.raises(AssertionError, match="must not be recomputed"):
        experiments.certify(CONFIG, Anisotropic(Gaussian(1.0), sigma * 1.01))


@pytest.mark.slow  # data-dependent runs, twice
def test_ds_logs_are_cached_and_probes_use_a_copy_of_the_memory(experiments, monkeypatch) -> None:
    experiments = Experiments(
        experiments.data, [0, 3, 7, 9], experiments.settings, device="cpu", progress=False
    )
    ascent = SigmaAscent(sigma0=0.25, iterations=2, draws=2)
    first = experiments.certify_ds(CONFIG, ascent)
    assert list(first["idx"]) == [0, 3, 7, 9]
    with CertificateMemory(first.attrs["memory_path"]) as memory:
        assert len(memory) == 4
    probes = experiments.probe_ds(CONFIG, ascent, fraction=0.5)
    certified = first[(first["predict"] != ABSTAIN) & (first["radius"] > 0)]
    assert list(probes["source_idx"]) == list(certified["idx"])
    assert list(probes["label"]) == list(certified["predict"])
    with CertificateMemory(first.attrs["memory_path"]) as memory:
        assert len(memory) == 4  # the probes went into a copy
    monkeypatch.setattr(Smooth, "certify", lambda *a, **k: pytest.fail("recomputed"))
    again = experiments.certify_ds(CONFIG, ascent)
    assert again.drop(columns="time").equals(first.drop(columns="time"))
    experiments.probe_ds(CONFIG, ascent, fraction=0.5)


def test_cached_experiments_read_what_was_run_and_compute_nothing(experiments, monkeypatch) -> None:
    ascent = SigmaAscent(sigma0=0.25, iterations=2, draws=4)
    certified = experiments.certify(CONFIG, Gaussian(0.25))
    predicted = experiments.at(n=100).predict(CONFIG, Gaussian(0.25))
    ceilings = experiments.ceilings(CONFIG, Gaussian(0.25))
    data_dependent = experiments.certify_ds(CONFIG, ascent)
    _refuse(monkeypatch)
    monkeypatch.setattr("rsutils.book.trained.train_model", None)  # nor any training
    cached = experiments.cached()
    assert (
        cached.certify(CONFIG, Gaussian(0.25))
        .drop(columns="time")
        .equals(certified.drop(columns="time"))
    )
    assert cached.at(n=100).predict(CONFIG, Gaussian(0.25)).equals(predicted)
    assert cached.ceilings(CONFIG, Gaussian(0.25)).equals(ceilings)
    assert list(ceilings["at_ceiling"]) == list((certified["count"] == certified["n"]).astype(int))
    again = cached.certify_ds(CONFIG, ascent)
    assert again.equals(data_dependent)
    assert again.attrs["memory_path"] == data_dependent.attrs["memory_path"]
    with pytest.raises(NotCachedError, match=r"0 of 3|3 of 3") as missing:
        cached.certify(CONFIG, Gaussian(0.5))
    assert "run_notebooks.py" in str(missing.value)
    # A log that a killed run left with only some of the inputs is not complete.
    key = {"noise": "gaussian", "scale": 0.25, **experiments._mode()}
    path = experiments._log_path("certify", CONFIG, key, "certify")
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:-1]))
    with pytest.raises(NotCachedError, match="1 of 3"):
        cached.certify(CONFIG, Gaussian(0.25))


def test_a_faster_mode_and_another_device_have_their_own_logs(experiments) -> None:
    """The inference mode and the kind of device are both part of the base classifier:
    each has its own cached log; fp32 names no mode, every key names the device."""
    fp32 = experiments.certify(CONFIG, Gaussian(0.25))
    fast = replace(experiments, inference="bf16_channels_last")
    key = {"noise": "gaussian", "scale": 0.25}
    path = fast._log_path("certify", CONFIG, {**key, **fast._mode()}, "certify")
    fp32_path = experiments._log_path("certify", CONFIG, {**key, **experiments._mode()}, "certify")
    assert path != fp32_path and fp32_path.exists()
    log = fast.certify(CONFIG, Gaussian(0.25))
    assert list(log["idx"]) == list(fp32["idx"])
    assert json.loads(path.with_name(path.name + ".json").read_text())["inference"] == (
        "bf16_channels_last"
    )
    recorded = json.loads(fp32_path.with_suffix(".tsv.json").read_text())
    assert "inference" not in recorded and recorded["device"] == "cpu"
    assert experiments._mode() == {"device": "cpu", "rows": 100}
    elsewhere = {**key, "device": "cuda", "rows": 1000}
    assert experiments._log_path("certify", CONFIG, elsewhere, "certify") != fp32_path


def test_any_procedure_is_cached_and_read_back(experiments, monkeypatch) -> None:
    """Decisions and planned draws go through the one cached run, keyed by each
    procedure's name and identity, and are read back without running."""
    decide = Decide(LookSchedule.geometric(200, 0.01, first=20), (0.0, 0.2))
    planned = PlannedDraws(200, 0.01, 0.05)
    decided = experiments.run(CONFIG, Gaussian(0.25), decide)
    plan = experiments.run(CONFIG, Gaussian(0.25), planned)
    assert list(decided["idx"]) == [0, 3, 7] and (plan["n"] <= 200).all()
    monkeypatch.setattr("rsutils.book.experiments.run_procedure", None)  # must not run again
    cached = experiments.cached()
    assert cached.run(CONFIG, Gaussian(0.25), decide).equals(decided)
    assert cached.run(CONFIG, Gaussian(0.25), planned).equals(plan)
    with pytest.raises(NotCachedError):
        cached.run(CONFIG, Gaussian(0.25), Decide(decide.test, (0.1,)))


def test_a_confidence_sequence_has_its_own_cached_decisions(experiments, monkeypatch) -> None:
    """A confidence sequence's decisions are cached apart from a spending schedule's on
    the same looks (the key names the test), and read back."""
    spending = Decide(LookSchedule.geometric(200, 0.01, first=20), (0.0, 0.2))
    sequence = Decide(AnytimeSchedule.geometric(200, 0.01, first=20), (0.0, 0.2))
    decided = experiments.run(CONFIG, Gaussian(0.25), sequence)
    experiments.run(CONFIG, Gaussian(0.25), spending)
    assert len(list((cache_dir() / "procedure").glob("*.tsv"))) == 2
    monkeypatch.setattr("rsutils.book.experiments.run_procedure", None)  # must not run again
    again = experiments.cached().run(CONFIG, Gaussian(0.25), sequence)
    assert again.equals(decided)


def test_the_record_is_cached_and_replays_certify(experiments, monkeypatch) -> None:
    """The recorded draws of CERTIFY's runs: cached, read back without the model, and
    CERTIFY replayed on them is the cached CERTIFY log."""
    from rsutils.sequential import Certify, replay_log

    standard = experiments.certify(CONFIG, Gaussian(0.25))
    _refuse(monkeypatch)  # certify kept the record: it is read, not drawn again
    record = experiments.record(CONFIG, Gaussian(0.25))
    assert list(record["idx"]) == list(standard["idx"]) == [0, 3, 7]
    assert record["time"].tolist() == standard["time"].tolist()  # the recording's seconds
    monkeypatch.setattr("rsutils.book.experiments.record_dataset", None)  # must not run again
    cached = experiments.cached()
    assert cached.record(CONFIG, Gaussian(0.25)).equals(record)
    smooth = experiments.smooth(CONFIG, Gaussian(0.25))
    settings = experiments.settings
    replayed = replay_log(smooth, record, Certify(settings.n, settings.alpha))
    assert replayed["count"].tolist() == standard["count"].tolist()
    assert replayed["predict"].tolist() == standard["predict"].tolist()


def test_ascent_paths_end_at_the_logs_scales_and_are_cached(experiments, monkeypatch) -> None:
    ascent = SigmaAscent(sigma0=0.25, iterations=3, draws=2)
    log = experiments.certify_ds(CONFIG, ascent)
    with pytest.raises(NotCachedError, match="ascent paths"):
        experiments.cached().ascent_paths(CONFIG, ascent)
    paths = experiments.ascent_paths(CONFIG, ascent)
    assert paths.shape == (3, 4) and (paths[:, 0] == 0.25).all()
    np.testing.assert_allclose(paths[:, -1], log["scale"], rtol=1e-6)
    monkeypatch.setattr("rsutils.book.experiments.ascent_paths", None)  # no rerun
    np.testing.assert_array_equal(experiments.cached().ascent_paths(CONFIG, ascent), paths)


def test_the_fp32_from_bf16_runs_are_cached_by_mode_and_draws(experiments, monkeypatch) -> None:
    fast = replace(experiments, inference="bf16_channels_last")
    log = fast.certify_reference(CONFIG, Gaussian(0.25), 40)
    certified = fast.certify(CONFIG, Gaussian(0.25))
    assert list(log["idx"]) == [0, 3, 7]
    assert list(log["selected"]) == list(certified["selected"])
    assert list(log["count"]) == list(certified["count"])
    assert set(log.loc[log["m"] > 0, "m"]) <= {40}
    monkeypatch.setattr("rsutils.book.experiments.certify_reference_dataset", None)
    cached = fast.cached()
    assert cached.certify_reference(CONFIG, Gaussian(0.25), 40).equals(log)
    with pytest.raises(NotCachedError):
        cached.certify_reference(CONFIG, Gaussian(0.25), 80)
    with pytest.raises(NotCachedError):
        cached.certify_reference(CONFIG, Gaussian(0.25), 40, fast_share=0.8)
    with pytest.raises(NotCachedError):
        replace(cached, inference="bf16").certify_reference(CONFIG, Gaussian(0.25), 40)
    with pytest.raises(ValueError, match=r"these experiments run in 'fp32': use"):
        experiments.certify_reference(CONFIG, Gaussian(0.25), 40)
