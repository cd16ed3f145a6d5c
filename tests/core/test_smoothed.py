"""Smooth, GeneratedSmooth and DataDependentSmooth are one SmoothedClassifier to their callers."""

from __future__ import annotations

import inspect

import pytest
import torch

from rsutils import (
    Anisotropic,
    CertifySettings,
    DataDependentSmooth,
    Dataset,
    FixedNoise,
    Gaussian,
    GeneratedSmooth,
    SigmaAscent,
    Smooth,
    SmoothedClassifier,
    UniformCube,
    certify_dataset,
    predict_dataset,
)
from rsutils.anisotropic.patterns import spatial_pattern
from rsutils.core.smoothed import noise_identity

ASCENT = SigmaAscent(sigma0=0.3, iterations=2, draws=2)


def classifiers(cnn) -> dict[str, SmoothedClassifier]:
    sigma = spatial_pattern(28, 28)
    return {
        "smooth": Smooth(cnn, 10, Gaussian(0.25)),
        "anisotropic": Smooth(cnn, 10, Anisotropic(Gaussian(0.25), sigma)),
        "generated": GeneratedSmooth(cnn, 10, Gaussian(0.5), FixedNoise(sigma).eval()),
        "data-dependent": DataDependentSmooth(cnn, 10, ASCENT),
    }


def _leading(method, count: int) -> list[tuple[str, object]]:
    """The first ``count`` parameters of ``method`` after ``self``: names and defaults."""
    parameters = list(inspect.signature(method).parameters.values())
    return [(p.name, p.default) for p in parameters[1 : count + 1]]


@pytest.mark.parametrize("kind", ["smooth", "anisotropic", "generated", "data-dependent"])
def test_every_smoothed_classifier_satisfies_the_protocol(cnn, kind: str) -> None:
    classifier = classifiers(cnn)[kind]
    assert isinstance(classifier, SmoothedClassifier)
    for name in ("certify", "predict"):
        expected = inspect.signature(getattr(SmoothedClassifier, name)).parameters
        actual = getattr(type(classifier), name)
        assert _leading(actual, len(expected) - 1) == _leading(
            getattr(SmoothedClassifier, name), len(expected) - 1
        ), (kind, name)
    assert classifier.num_classes == 10 and classifier.device == torch.device("cpu")
    with pytest.raises(ValueError, match="algorithm must be 'certify' or 'predict'"):
        classifier.identity("decide")


def test_what_each_classifier_says_a_log_records(cnn) -> None:
    found = classifiers(cnn)
    plain, aniso, generated, ds = (found[k] for k in found)
    described = {k: (c.anisotropic, c.logged_scale, c.norm) for k, c in found.items()}
    assert described == {
        "smooth": (False, 0.25, "l2"),
        "anisotropic": (True, 0.25, "l2"),
        "generated": (True, 0.5, "l2"),
        "data-dependent": (False, None, "l2"),
    }
    assert plain.identity() == {"noise": "Gaussian(sigma=0.25)", "norm": "l2"}
    assert plain.identity("predict") == {"noise": "Gaussian(sigma=0.25)"}
    assert aniso.noise_description == repr(aniso.noise)
    assert aniso.identity()["noise"].startswith("Anisotropic(Gaussian(sigma=0.25), sigma=<")
    assert generated.noise_description.startswith("Generated(Gaussian(sigma=0.5), fixed, id=")
    assert generated.identity() == {"noise": generated.noise_description, "norm": "l2"}
    assert ds.identity() == ds.identity("predict") == {"method": "ds", "ascent": ASCENT.as_dict()}
    assert "SigmaAscent(sigma0=0.3" in ds.noise_description


def test_the_identity_names_a_fast_inference_mode_only(cnn) -> None:
    mode = "bf16_channels_last"
    assert Smooth(cnn, 10, Gaussian(0.25), inference=mode).identity() == {
        "noise": "Gaussian(sigma=0.25)",
        "norm": "l2",
        "inference": mode,
    }
    ds = DataDependentSmooth(cnn, 10, ASCENT, inference=mode)
    assert ds.identity()["inference"] == mode
    assert noise_identity("N", "l1", "fp32", "predict") == {"noise": "N"}


def test_the_noise_says_whether_it_is_anisotropic() -> None:
    assert not Gaussian(0.25).anisotropic and not UniformCube(0.5).anisotropic
    assert Anisotropic(Gaussian(0.25), torch.ones(1, 28, 28)).anisotropic


def test_data_dependent_predict_is_predict_at_the_ascended_scale(cnn) -> None:
    x = torch.rand(1, 28, 28, generator=torch.Generator().manual_seed(1))
    ds = DataDependentSmooth(cnn, 10, ASCENT)
    (scale,) = ds.scales(x[None], 4, [2])
    fixed = Smooth(cnn, 10, Gaussian(scale))
    expected = fixed.predict(x, 200, 0.01, batch_size=64, seed=4, index=2)
    assert ds.predict(x, 200, 0.01, batch_size=64, seed=4, index=2) == expected
    assert ds.predict(x, 200, 0.01, 64, 4, 2, scale=scale) == expected
    answer = ds.certify(x, 20, 200, 0.01, 64, 4, 2)
    assert answer.scale == scale
    assert answer.certificate == fixed.certify(x, 20, 200, 0.01, 64, 4, 2)


@pytest.mark.parametrize("runner", [certify_dataset, predict_dataset])
def test_a_runner_of_one_scale_refuses_a_data_dependent_classifier(cnn, tmp_path, runner) -> None:
    data = Dataset("fashion-mnist", "test", torch.rand(2, 1, 28, 28), torch.arange(2), tuple("ab"))
    ds = DataDependentSmooth(cnn, 10, ASCENT)
    settings = CertifySettings(n0=10, n=20)
    with pytest.raises(ValueError, match="one per input; certify it with certify_dataset_ds"):
        runner(ds, data, [0], tmp_path / "log.tsv", settings, progress=False)
    assert list(tmp_path.iterdir()) == []
