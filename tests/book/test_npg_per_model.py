"""The offset probes of chapter 06, on every replicate model (fakes for the runs)."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import pytest
import torch
from scipy.stats import binom
from torch import nn

from rsutils.anisotropic.generators import FixedNoise
from rsutils.book.chapters import npg_per_model as offset_probes
from rsutils.book.profiles import PROFILES
from rsutils.data import Dataset

IMAGES = 6


def pool() -> Dataset:
    images = torch.rand(IMAGES, 1, 2, 2, generator=torch.Generator().manual_seed(0))
    labels = torch.tensor([0, 1, 0, 1, 0, 1])
    return Dataset("fashion-mnist", "test", images, labels, ("a", "b"))


class FakeRuns:
    indices = (0, 1, 2, 3)

    def __init__(self) -> None:
        self.calls = []

    def certify_generated(self, config, *, without_mu=False):
        self.calls.append((config.seed, without_mu))
        radius = [0.1, 0.1, 0.0, 0.0] if without_mu else [0.4, 0.2, 0.0, 0.2]
        return pd.DataFrame({"idx": list(self.indices), "correct": [1, 1, 0, 1], "radius": radius})


def test_every_replicate_is_probed_on_the_same_images(monkeypatch, fake_chapter) -> None:
    # A classifier that answers class 1 exactly when the mean pixel is above 0.5, and an
    # offset of +1 everywhere: the offset, not the image, decides the vote.
    class Bright(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            score = x.flatten(1).mean(1, keepdim=True) - 0.5
            return torch.cat([-score, score], dim=1)

    generator = FixedNoise(torch.full((1, 2, 2), 1e-3), mu=torch.ones(1, 2, 2))
    monkeypatch.setattr(offset_probes, "trained_npg", lambda config, **_: (Bright(), generator))
    chapter = fake_chapter(PROFILES["smoke"], FakeRuns(), pool(), seed=2)
    table = offset_probes.offset_probes_by_replicate(chapter, background=0.3, draws=10)
    seeds = PROFILES["smoke"].replicate_seeds(2)
    assert table.index.tolist() == [f"model {k + 1}" for k in range(len(seeds))]
    assert list(table.columns) == list(offset_probes.PROBE_COLUMNS)
    assert chapter.secondary.calls == [(s, flag) for s in seeds for flag in (False, True)]
    row = table.iloc[0]
    # every input plus the offset is bright: class 1 on every vote
    share_of_class_1 = (pool().labels[:4] == 1).float().mean().item()
    assert row["votes for y_i on blank + μ(x_i)"] == pytest.approx(share_of_class_1)
    assert row["accuracy at r = 0, with μ"] == pytest.approx(0.75)  # 3 of 4 correct
    assert row["ACR with μ"] == pytest.approx((0.4 + 0.2 + 0.2) / 4)
    assert row["ACR, μ ≡ 0"] == pytest.approx(0.05)
    spread = offset_probes.with_spread(table)
    assert spread.index.tolist()[-3:] == ["mean", "lowest", "highest"]
    assert (spread.loc["lowest"] <= spread.loc["highest"]).all()


def test_the_audit_runs_on_every_replicates_deployed_classifier(monkeypatch, fake_chapter) -> None:
    calls = []

    class AuditRuns:
        def audit_generated(self, config, settings, *, limit):
            calls.append((config.seed, config.method, settings, limit))
            return [config.seed]  # stands for the records

    @dataclass
    class Found:
        images: int
        contradicted: int
        rate: float
        low: float
        high: float

    monkeypatch.setattr(
        offset_probes, "summarize_audits", lambda records: Found(10, records[0] % 3, 0.1, 0.0, 0.4)
    )
    chapter = fake_chapter(PROFILES["smoke"], AuditRuns(), pool(), seed=5)
    table = offset_probes.audit_by_replicate(chapter, "settings")
    seeds = PROFILES["smoke"].replicate_seeds(5)
    limit = PROFILES["smoke"].audit.images
    assert calls == [(s, "certification", "settings", limit) for s in seeds]
    assert table.index.tolist() == [f"model {k + 1}" for k in range(len(seeds))]
    assert table["with a contradiction"].tolist() == [s % 3 for s in seeds]
    assert offset_probes.POSITIVE + "images" not in table.columns
    calls.clear()
    table = offset_probes.audit_by_replicate(chapter, "settings", positive_control="shell")
    searched = [("certification", "settings"), ("isotropic", "shell")]
    assert calls == [(s, m, how, limit) for s in seeds for m, how in searched]
    assert table[offset_probes.POSITIVE + "with a contradiction"].tolist() == [s % 3 for s in seeds]
    pooled = offset_probes.pooled_audit(table, prefix=offset_probes.POSITIVE)
    assert pooled["images"] == 10 * len(seeds)
    assert pooled["with a contradiction"] == sum(s % 3 for s in seeds)


def test_the_pooled_audit_sums_the_models_and_gives_the_exact_interval() -> None:
    table = pd.DataFrame(
        {"images": [10, 10, 10, 10, 10], "with a contradiction": [5, 9, 4, 6, 5]},
        index=[f"model {k}" for k in range(1, 6)],
    )
    pooled = offset_probes.pooled_audit(table)
    assert (pooled["images"], pooled["with a contradiction"]) == (50, 29)
    assert pooled["rate"] == pytest.approx(0.58)
    # Clopper–Pearson by its definition: the ends where the binomial tails reach 2.5%.
    assert binom.sf(28, 50, pooled["low"]) == pytest.approx(0.025, rel=1e-6)
    assert binom.cdf(29, 50, pooled["high"]) == pytest.approx(0.025, rel=1e-6)
    assert (round(pooled["low"], 2), round(pooled["high"], 2)) == (0.43, 0.72)


def test_the_pooled_audit_refuses_an_empty_table() -> None:
    empty = pd.DataFrame({"images": [0], "with a contradiction": [0]})
    with pytest.raises(ValueError, match="at least one audited image"):
        offset_probes.pooled_audit(empty)
