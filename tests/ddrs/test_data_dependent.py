"""Data-dependent certification over a dataset (Cohen-DS): logs, memory, resumption."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import torch

from rsutils import (
    CertificateMemory,
    CertifySettings,
    DataDependentSmooth,
    Dataset,
    Gaussian,
    SigmaAscent,
    Smooth,
    certify_dataset,
    certify_dataset_ds,
)
from rsutils.ddrs.runs import DS_COLUMNS

SETTINGS = CertifySettings(n0=20, n=200, alpha=0.01, seed=5, batch_size=64)


def run_ds(cnn, ascent, images, indices, path, memory=None, **options) -> pd.DataFrame:
    """A data-dependent run of ``cnn`` over ``images[indices]`` into ``path``."""
    smooth = DataDependentSmooth(cnn, 10, ascent, memory)
    return certify_dataset_ds(smooth, images, indices, path, SETTINGS, progress=False, **options)


@pytest.fixture
def images() -> Dataset:
    generator = torch.Generator().manual_seed(0)
    x = torch.rand(12, 1, 28, 28, generator=generator)
    return Dataset("fashion-mnist", "test", x, torch.arange(12) % 10, tuple("abcdefghij"))


def test_zero_iterations_is_cohen_certification(cnn, images: Dataset, tmp_path: Path) -> None:
    smooth = Smooth(cnn, 10, Gaussian(0.3))
    cohen = certify_dataset(smooth, images, range(12), tmp_path / "c.tsv", SETTINGS, progress=False)
    ds = run_ds(cnn, SigmaAscent(0.3, 0), images, range(12), tmp_path / "ds.tsv")
    columns = ["idx", "predict", "radius", "selected", "count", "pA_lower", "scale"]
    pd.testing.assert_frame_equal(cohen[columns], ds[columns])
    assert list(ds.columns) == DS_COLUMNS and set(ds["memory"]) == {"none"}


@pytest.mark.slow  # sigma ascent on every input of a dataset
def test_each_row_records_its_own_sigma(cnn, images: Dataset, tmp_path: Path) -> None:
    ascent = SigmaAscent(sigma0=0.3, iterations=5, lr=0.05, draws=2)
    with CertificateMemory(tmp_path / "m.sqlite") as memory:
        ds = run_ds(cnn, ascent, images, range(12), tmp_path / "ds.tsv", memory)
        assert ds["scale"].nunique() > 1 and (ds["scale"] != 0.3).all()
        assert set(ds["memory"]) <= {"kept", "shrunk", "adopted", "abstained"}
        stored = memory.entries()
        assert stored["key"].tolist() == [str(i) for i in range(12)]
        assert stored["radius"].tolist() == ds["radius"].tolist()
        assert (ds["radius"] <= ds["mc_radius"]).all()


@pytest.mark.slow  # sigma ascent on every input of a dataset
def test_a_split_run_equals_a_whole_one(cnn, images: Dataset, tmp_path: Path) -> None:
    ascent = SigmaAscent(sigma0=0.3, iterations=3, lr=0.05, draws=2)

    def run(folder: Path, parts: list[range], group: int) -> pd.DataFrame:
        with CertificateMemory(folder / "m.sqlite") as memory:
            for number, part in enumerate(parts):
                if number:  # killed after the memory stored the last answer, before the log
                    lines = (folder / "ds.tsv").read_text().splitlines(keepends=True)
                    (folder / "ds.tsv").write_text("".join(lines[:-1]))
                log = run_ds(
                    cnn, ascent, images, part, folder / "ds.tsv", memory, ascent_batch=group
                )
        return log.drop(columns="time")

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    whole = run(tmp_path / "a", [range(12)], group=12)
    split = run(tmp_path / "b", [range(5), range(12)], group=4)
    pd.testing.assert_frame_equal(whole, split)


def test_memory_norm_must_match_the_certificate(cnn, images, tmp_path: Path) -> None:
    ascent = SigmaAscent(sigma0=0.3, iterations=0, family="uniform")
    with CertificateMemory(norm="l2") as memory, pytest.raises(ValueError, match="norm='l1'"):
        run_ds(cnn, ascent, images, range(2), tmp_path / "x.tsv", memory)
    assert not (tmp_path / "x.tsv").exists()


def test_one_input_alone_gets_the_answer_of_the_dataset_run(cnn, images, tmp_path) -> None:
    ascent = SigmaAscent(sigma0=0.3, iterations=4, lr=0.05, draws=2)
    log = run_ds(cnn, ascent, images, range(6), tmp_path / "ds.tsv")
    smooth = DataDependentSmooth(cnn, 10, ascent)
    answer = smooth.certify(images.images[3], 20, 200, 0.01, 64, seed=5, index=3)
    row = log.set_index("idx").loc[3]
    assert (answer.scale, answer.prediction, answer.radius) == (
        row["scale"],
        row["predict"],
        row["radius"],
    )
    assert answer.action == "none" and answer.certificate.index == 3


def test_a_repeated_key_returns_the_stored_answer(cnn, images) -> None:
    with CertificateMemory() as memory:
        smooth = DataDependentSmooth(cnn, 10, SigmaAscent(0.3, 2, draws=2), memory)
        first = smooth.certify(images.images[0], 20, 200, 0.01, seed=1, key="user-42")
        again = smooth.certify(images.images[0], 20, 200, 0.01, seed=2, key="user-42")
        assert (again.prediction, again.radius) == (first.prediction, first.radius)
        assert len(memory) == 1


def test_the_inference_mode_certifies_and_the_ascent_stays_fp32(cnn, images) -> None:
    """CERTIFY runs the model in the mode asked (the answers of Smooth in that mode at
    the same sigma); sigma ascent runs it as given, so the sigmas are fp32's."""
    ascent = SigmaAscent(0.3, 2)
    fp32 = DataDependentSmooth(cnn, 10, ascent)
    fast = DataDependentSmooth(cnn, 10, ascent, inference="bf16_channels_last")
    x = images.images[3]
    assert fast.scales(x[None], 5, [3]) == fp32.scales(x[None], 5, [3])
    answer = fast.certify(x, 20, 200, 0.01, seed=5, index=3)
    smooth = Smooth(cnn, 10, Gaussian(answer.scale), inference="bf16_channels_last")
    assert answer.certificate == smooth.certify(x, 20, 200, 0.01, seed=5, index=3)
    assert fast.inference == "bf16_channels_last" and next(cnn.parameters()).dtype == torch.float32
