"""The replicate runs behind the book's comparisons: which model, which noise, which name."""

from dataclasses import dataclass, field
from types import SimpleNamespace

import pandas as pd
import pytest
import torch

from rsutils.anisotropic.generators import FixedNoise
from rsutils.anisotropic.noise import Anisotropic
from rsutils.anisotropic.soundness.local import BISECTION_STEPS
from rsutils.book import replicate_logs
from rsutils.book.profiles import PROFILES
from rsutils.core.streams import derived_seed
from rsutils.data import Dataset


class FakeRuns:
    """Experiments that return a one-row log naming the run."""

    def certify(self, config, noise):
        kind = "anisotropic" if isinstance(noise, Anisotropic) else "gaussian"
        return pd.DataFrame(
            {"idx": [0], "radius": [config.scale], "seed": [config.seed], "kind": [kind]}
        )

    def certify_ds(self, config, ascent):
        return pd.DataFrame(
            {
                "idx": [0], "label": [3], "predict": [3], "correct": [1],
                "radius": [ascent.sigma0], "mc_predict": [3], "mc_radius": [ascent.sigma0],
                "memory": ["kept"], "seed": [config.seed], "kind": ["ds"],
            }
        )  # fmt: skip


@dataclass
class FakeChapter:
    profile: object
    cached_calls: int = 0
    test: Dataset = field(
        default_factory=lambda: Dataset("fashion-mnist", "test", torch.zeros(1, 1, 28, 28),
                                        torch.tensor([3]), tuple("abcdefghij"))
    )  # fmt: skip

    def replicate_runs(self, run, *, cached=False, from_main=True):
        self.cached_calls += cached
        self.from_main = [*getattr(self, "from_main", []), from_main]
        return [run(FakeRuns(), seed) for seed in self.profile.replicate_seeds(0)]


def test_every_replicate_holds_every_sigma_with_its_own_base_model() -> None:
    chapter = FakeChapter(PROFILES["cpu"])
    logs = replicate_logs.sigma_ascent_replicates(chapter, cached=True)
    seeds = PROFILES["cpu"].replicate_seeds(0)
    assert len(logs) == len(seeds) and chapter.cached_calls == 6
    # the memory makes a data-dependent answer depend on the inputs before it
    assert chapter.from_main == [False] * 3 + [True] * 3
    for seed, by_name in zip(seeds, logs, strict=True):
        assert list(by_name) == [
            "σ = 0.25", "σ = 0.5", "σ = 1", "Cohen-DS, σ0 = 0.25", "Cohen-DS, σ0 = 0.5",
            "Cohen-DS, σ0 = 1",
        ]  # fmt: skip
        assert {int(log["seed"][0]) for log in by_name.values()} == {seed}
        assert (
            by_name["σ = 0.5"]["radius"][0] == 0.5 and by_name["σ = 0.5"]["kind"][0] == "gaussian"
        )
        assert by_name[replicate_logs.ds_name(1.0)]["kind"][0] == "ds"


@dataclass
class SeededRuns(FakeRuns):
    """Replicate-image experiments that remember their certification seed."""

    certification_seed: int = 0
    cached_only: bool = False

    def at(self, *, seed):
        return SeededRuns(certification_seed=seed)

    def cached(self):
        return SeededRuns(self.certification_seed, cached_only=True)

    def ceilings(self, config, noise):
        log = super().certify(config, noise)
        return log.assign(certification_seed=self.certification_seed, cached=self.cached_only)


def test_the_independent_run_draws_apart_from_the_compared_logs() -> None:
    """Chapter 02's ceiling split sorts images by a second certification: every
    replicate model, the first too, on the replicate images, with a certification seed
    that is neither the chapter's nor any replicate's."""
    chapter = SimpleNamespace(profile=PROFILES["cpu"], seed=4, replicated=SeededRuns())
    logs = replicate_logs.independent_ceilings(chapter, cached=True)
    seeds = PROFILES["cpu"].replicate_seeds(4)
    assert [int(by_name["σ = 0.5"]["seed"][0]) for by_name in logs] == list(seeds)
    found = {int(log["certification_seed"][0]) for by in logs for log in by.values()}
    assert found == {derived_seed(4, 0, "regroup")} and not found & {4, *seeds}
    assert all(bool(log["cached"][0]) for by in logs for log in by.values())
    assert [list(by) for by in logs] == [["σ = 0.25", "σ = 0.5", "σ = 1"]] * len(seeds)


def test_the_fig4_replicates_pair_the_isotropic_model_with_the_pattern() -> None:
    logs = replicate_logs.fig4_replicates(FakeChapter(PROFILES["smoke"]))
    assert len(logs) == PROFILES["smoke"].replicates.models
    for by_name in logs:
        assert by_name["isotropic"]["kind"][0] == "gaussian"
        assert by_name["Fig. 4 pattern"]["kind"][0] == "anisotropic"
        assert (by_name["isotropic"]["alm"] == by_name["isotropic"]["radius"]).all()
        assert by_name["isotropic"]["radius"][0] == 0.5


class FakeSecondary:
    """Secondary experiments that name the generator run a log comes from."""

    def __init__(self, cached_only: bool = False) -> None:
        self.cached_only = cached_only

    def cached(self):
        return FakeSecondary(cached_only=True)

    def certify_generated(self, config):
        return pd.DataFrame(
            {"idx": [0], "seed": [config.seed], "base_seed": [config.base.seed],
             "method": [config.method], "cached": [self.cached_only]}
        )  # fmt: skip


@dataclass
class FakeNPGChapter:
    profile: object
    seed: int = 0
    secondary: FakeSecondary = None

    def __post_init__(self) -> None:
        self.secondary = FakeSecondary()


def test_the_npg_replicates_fine_tune_each_replicates_own_base_model() -> None:
    profile = PROFILES["cpu"]
    chapter = FakeNPGChapter(profile, seed=3)
    logs = replicate_logs.npg_replicates(chapter, cached=True)
    seeds = profile.replicate_seeds(3)
    assert len(logs) == len(seeds) == profile.replicates.models and seeds[0] == 3
    for seed, by_name in zip(seeds, logs, strict=True):
        base = profile.base_models(seed)[0.5]
        methods = {**profile.npg_methods(base, seed), **profile.claim_methods(base, seed)}
        assert list(by_name) == list(methods)
        assert {int(log["seed"][0]) for log in by_name.values()} == {seed}
        assert {int(log["base_seed"][0]) for log in by_name.values()} == {seed}
        assert all(bool(log["cached"][0]) for log in by_name.values())
        assert by_name["certification-wise"]["method"][0] == "certification"
    fresh = replicate_logs.npg_replicates(chapter)
    assert not any(bool(log["cached"][0]) for logs in fresh for log in logs.values())


class FakeConstantRuns:
    """Secondary experiments certifying a generator run with a constant sigma."""

    indices = (0, 1)

    def __init__(self) -> None:
        self.calls = []

    def cached(self):
        return self

    def certify_generated(self, config, *, constant_sigma=None):
        self.calls.append((config.seed, config.method, constant_sigma))
        return pd.DataFrame(
            {
                "idx": [0, 1],
                "correct": [1, 1],
                "radius": [0.4, 0.8],
                "alm": [0.4, 0.8],
                "n": 1000,
                "alpha": 0.001,
                "scale": 0.5,
            }
        )


def test_the_deployed_certification_wise_classifier_of_every_replicate(
    monkeypatch, fake_chapter
) -> None:
    sigma = torch.tensor([[[0.5, 1.234], [1.236, 3.0]]])
    generated = (None, FixedNoise(sigma))
    monkeypatch.setattr(replicate_logs, "trained_npg", lambda config, **_: generated)
    monkeypatch.setattr(replicate_logs, "deployed_lipschitz", lambda generator, size: 1.0)
    test = Dataset("fashion-mnist", "test", torch.zeros(2, 1, 2, 2), torch.tensor([3, 4]),
                   tuple("abcdefghij"))  # fmt: skip
    chapter = fake_chapter(PROFILES["cpu"], FakeConstantRuns(), test, seed=3)
    logs = replicate_logs.deployed_cw_replicates(chapter, cached=True)
    seeds = PROFILES["cpu"].replicate_seeds(3)
    assert len(logs) == len(seeds)
    # each replicate's own certification-wise run, with sigma ≡ its median (rounded)
    assert chapter.secondary.calls == [(s, "certification", 1.23) for s in seeds]
    for by_name in logs:
        assert list(by_name) == [replicate_logs.DEPLOYED_CW]
        # the larger sound radius: R/(1 + L) = R/2, or the local one of an offset that
        # does not move, R to the bisection's step
        radius = by_name[replicate_logs.DEPLOYED_CW]["radius"]
        assert radius.tolist() == pytest.approx([r * (1 - 2**-BISECTION_STEPS) for r in (0.4, 0.8)])


def test_the_constant_scale_is_the_median_sigma_rounded_to_two_decimals() -> None:
    sigma = torch.tensor([[[0.5, 1.234], [1.236, 3.0]]])  # median over the pixels
    images = torch.zeros(4, 1, 2, 2)
    assert replicate_logs.median_scale(FixedNoise(sigma), images) == 1.23
