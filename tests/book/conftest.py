"""A fake copy of Cohen et al.'s release, for rules that read their logs.

``fake_release`` writes every certification and PREDICT log the release holds (in the
layout of :mod:`rsutils.book.papers.released`) into a temporary folder, each with contents
the test can replace before a rule reads them (``fake_release.curve`` and
``fake_release.predictions`` build logs: test modules cannot import this one).

``fake_chapter`` builds a chapter for the book's per-replicate helpers: a profile, a
seed, the CPU, and the secondary experiments and test split the test gives.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

from rsutils.book.papers.released import COHEN2019_CERTIFY_LOGS, COHEN2019_PREDICT_NS

ARCHITECTURES = {"imagenet": "resnet50", "cifar10": "resnet110"}


def curve_log(steps: dict[float, float], images: int = 500, seconds: float = 1.0) -> pd.DataFrame:
    """A certification log whose certified accuracy at each radius ``r`` of ``steps``
    is ``steps[r]`` (a fraction, non-increasing in ``r``): the images are certified
    exactly at those radii, the rest are wrong."""
    radii = sorted(steps)
    counts = [round(steps[r] * images) for r in radii] + [0]
    certified = [
        r
        for r, here, later in zip(radii, counts, counts[1:], strict=False)
        for _ in range(here - later)
    ]
    wrong = images - len(certified)
    return pd.DataFrame(
        {
            "idx": range(images),
            "label": 0,
            "predict": [0] * len(certified) + [1] * wrong,
            "radius": certified + [0.0] * wrong,
            "correct": [1] * len(certified) + [0] * wrong,
            "time": seconds,
        }
    )


def predict_log(correct: list[int], abstain: list[int], seconds: float = 0.15) -> pd.DataFrame:
    """A PREDICT log: image ``i`` is right when ``correct[i]``, abstained on (and wrong)
    when ``abstain[i]``."""
    return pd.DataFrame(
        {
            "idx": range(len(correct)),
            "label": 0,
            "predict": [
                -1 if a else (0 if c else 1) for c, a in zip(correct, abstain, strict=True)
            ],
            "correct": [int(c and not a) for c, a in zip(correct, abstain, strict=True)],
            "time": seconds,
        }
    )


@dataclass
class FakeRelease:
    """The reference folder (``root``) holding a fake ``cohen2019/``."""

    root: Path
    curve = staticmethod(curve_log)
    predictions = staticmethod(predict_log)

    def certify(
        self, dataset: str, trained: str, sigma: str, log: pd.DataFrame, split: str = "test"
    ) -> None:
        folder = self.root / "cohen2019/certify" / dataset / ARCHITECTURES[dataset]
        path = folder / f"noise_{trained}" / split
        path.mkdir(parents=True, exist_ok=True)
        log.to_csv(path / f"sigma_{sigma}", sep="\t", index=False)

    def predict(self, n: int, log: pd.DataFrame) -> None:
        path = self.root / "cohen2019/predict/imagenet/resnet50/noise_0.25/test"
        path.mkdir(parents=True, exist_ok=True)
        log.to_csv(path / f"N_{n}", sep="\t", index=False)


@pytest.fixture
def fake_release(tmp_path: Path) -> FakeRelease:
    """Every log of the release: each certification log 500 images, half certified at
    its σ (within any ceiling); each PREDICT log 500 images, all right."""
    release = FakeRelease(tmp_path / "reference")
    for dataset, trained, split, sigma in COHEN2019_CERTIFY_LOGS:
        log = curve_log({0.0: 0.5, float(sigma): 0.5})
        release.certify(dataset, trained, sigma, log, split=split)
    for n in COHEN2019_PREDICT_NS:
        release.predict(n, predict_log([1] * 500, [0] * 500))
    return release


@pytest.fixture
def fake_chapter():
    """``fake_chapter(profile, secondary, test, seed=0)``: what
    :class:`~rsutils.book.chapter.Chapter` offers the per-replicate helpers, with the
    given experiments and test split, on the CPU, without progress bars."""

    def make(profile, secondary, test, seed: int = 0) -> SimpleNamespace:
        return SimpleNamespace(
            profile=profile, seed=seed, device="cpu", progress=False, secondary=secondary,
            test=test,
        )  # fmt: skip

    return make
