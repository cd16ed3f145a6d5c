"""The float32-from-bfloat16 dataset run: its rows, its sidecar and resumption."""

import json

import pandas as pd
import pytest
import torch

from rsutils import CertifySettings, Dataset, Gaussian, Smooth, certify_dataset
from rsutils.core.reference_precision import ReferenceSmooth
from rsutils.logs.reference_runs import REFERENCE_COLUMNS, certify_reference_dataset

SETTINGS = CertifySettings(n0=10, n=200, alpha=0.01, seed=3, batch_size=64)


@pytest.fixture
def images() -> Dataset:
    x = torch.rand(5, 1, 28, 28, generator=torch.Generator().manual_seed(0))
    return Dataset("fashion-mnist", "test", x, torch.arange(5) % 10, tuple("abcdefghij"))


def reference(cnn, **options) -> ReferenceSmooth:
    options = {"draws": 50, "fast": "bf16_channels_last", **options}
    return ReferenceSmooth(cnn, 10, Gaussian(0.25), **options)


def test_rows_are_the_certificates_and_share_the_fast_logs_counts(cnn, images, tmp_path) -> None:
    smooth = reference(cnn, fast_share=0.5)
    log = certify_reference_dataset(smooth, images, [1, 3], tmp_path / "r.tsv", SETTINGS)
    assert list(log.columns) == REFERENCE_COLUMNS and list(log["idx"]) == [1, 3]
    cert = smooth.certify(images.images[3], 10, 200, 0.01, seed=3, index=3)
    row = log.set_index("idx").loc[3]
    for column in ("predict", "count", "selected", "m", "disagreements", "differ"):
        assert row[column] == getattr(cert, "prediction" if column == "predict" else column)
    for column in ("radius", "pA_lower", "d_upper", "fast_pA_lower"):
        assert row[column] == pytest.approx(getattr(cert, column))
    fast = Smooth(cnn, 10, Gaussian(0.25), inference="bf16_channels_last")
    plain = certify_dataset(
        fast, images, [1, 3], tmp_path / "f.tsv", SETTINGS.replace(alpha=0.005), progress=False
    )
    columns = ["idx", "selected", "count", "pA_lower"]
    expected = plain[columns].rename(columns={"pA_lower": "fast_pA_lower"})
    pd.testing.assert_frame_equal(log[expected.columns], expected)


def test_the_sidecar_names_the_fast_mode_and_the_paired_draws(cnn, images, tmp_path) -> None:
    path = tmp_path / "r.tsv"
    first = certify_reference_dataset(reference(cnn), images, [0, 2], path, SETTINGS)
    both = certify_reference_dataset(reference(cnn), images, [0, 2, 4], path, SETTINGS)
    pd.testing.assert_frame_equal(both.iloc[:2], first)
    recorded = json.loads(path.with_name(path.name + ".json").read_text())
    assert {"inference": "bf16_channels_last", "certifies": "fp32"}.items() <= recorded.items()
    assert (recorded["reference_draws"], recorded["fast_share"]) == (50, 0.5)
    with pytest.raises(ValueError, match=r"different settings \(reference_draws\)"):
        certify_reference_dataset(reference(cnn, draws=60), images, [0], path, SETTINGS)


def test_only_a_reference_smooth_is_taken(cnn, images, tmp_path) -> None:
    with pytest.raises(TypeError, match=r"must be a ReferenceSmooth, got Smooth"):
        certify_reference_dataset(
            Smooth(cnn, 10, Gaussian(0.25)), images, [0], tmp_path / "r.tsv", SETTINGS
        )
