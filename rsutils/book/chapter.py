"""What every chapter does first: its scale, its device, its data, and its run-at table.

A chapter starts with

>>> chapter = Chapter.open(profile, seed=seed, progress=progress)  # doctest: +SKIP

and then finds there the profile (``chapter.profile``), the device, the Fashion-MNIST
test split (loaded on first use), the book's base models, and two
:class:`~rsutils.book.experiments.Experiments`: ``chapter.main`` (the main test images
and CERTIFY settings) and ``chapter.secondary`` (the smaller scale of secondary
experiments), plus ``chapter.replicated`` and :meth:`Chapter.replicate_runs` for the
independently trained replicate models behind every comparison. Numbers reach the
prose through :mod:`rsutils.book.glue`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from functools import cached_property

import pandas as pd
import torch
from torch import nn

from rsutils.book.experiments import Experiments
from rsutils.book.plots import setup_style
from rsutils.book.profiles import Profile, get_profile
from rsutils.book.trained import trained_model
from rsutils.core.devices import pick_device
from rsutils.core.environment import describe_environment
from rsutils.core.sound_sampling import DEFAULT_SAMPLER, describe_sampler
from rsutils.data import Dataset, load_dataset
from rsutils.training.train import TrainConfig

__all__ = [
    "BOOK_DATASET",
    "STANDARD_ROWS",
    "Chapter",
    "environment_rows",
    "run_at_table",
    "sampler_rows",
]

#: The dataset every chapter's models are trained and certified on.
BOOK_DATASET = "fashion-mnist"

#: The rows of a run-at table that a chapter may ask for by name.
STANDARD_ROWS = ("n0", "n", "alpha", "images", "epochs", "inference")


def environment_rows(device: torch.device) -> dict[str, object]:
    """Run-at rows for what the numbers depend on beyond the settings (see
    :func:`~rsutils.core.environment.describe_environment`)."""
    environment = describe_environment(device)
    return {
        "device": environment["device"],
        "CPU threads (torch)": environment["threads"],
        "torch": environment["torch"],
    }


def sampler_rows() -> dict[str, object]:
    """The run-at row saying how the noisy inputs were made: the book's runs never choose
    the sampler of :class:`~rsutils.core.smooth.Smooth` (a test checks), so they use
    :data:`~rsutils.core.sound_sampling.DEFAULT_SAMPLER`."""
    return {"noise sampler": describe_sampler(DEFAULT_SAMPLER)}


def _standard_rows(profile: Profile) -> dict[str, dict[str, object]]:
    main = profile.certify
    return {
        "n0": {"n0 (selection draws)": main.n0},
        "n": {"n (estimation draws)": f"{main.n:,}"},
        "alpha": {"alpha": main.alpha},
        "images": {"test images certified": f"{main.images} (every {main.skip}th)"},
        "epochs": {
            "training epochs": profile.training.epochs,
            "training precision": profile.training.precision,
        },
        "inference": {"base model's forward pass": main.inference},
    }


def run_at_table(
    profile: Profile,
    device: torch.device,
    rows: Mapping[str, object] | None = None,
    *,
    standard: Iterable[str] = STANDARD_ROWS,
) -> pd.DataFrame:
    """The "run at" table: the profile, the chapter's own ``rows``, the profile's
    settings named in ``standard`` (see :data:`STANDARD_ROWS`), the noise sampler
    (:func:`sampler_rows`, in every table) and the environment
    (device, thread count, torch version: what the numbers may also depend on)."""
    available = _standard_rows(profile)
    unknown = sorted(set(standard) - set(available))
    if unknown:
        raise ValueError(f"unknown standard rows {unknown}; choose from {list(available)}")
    table: dict[str, object] = {"profile": profile.name, **(rows or {})}
    for name in standard:
        table.update(available[name])
    table.update(sampler_rows())
    table.update(environment_rows(device))
    # An unnamed index: a named one renders as a second, nearly empty header row.
    return pd.DataFrame({"value": [str(v) for v in table.values()]}, index=list(table))


@dataclass
class Chapter:
    """A chapter's scale, device and shared inputs (see the module's docstring)."""

    profile: Profile
    seed: int = 0
    progress: bool = True

    @classmethod
    def open(cls, profile: str, *, seed: int = 0, progress: bool = True) -> Chapter:
        """The chapter at the scale of the profile called ``profile``, with the book's
        figure style set."""
        setup_style()
        return cls(get_profile(profile), seed=seed, progress=progress)

    @property
    def device(self) -> torch.device:
        return pick_device(self.profile.device)

    @cached_property
    def test(self) -> Dataset:
        """Fashion-MNIST's test split (:data:`BOOK_DATASET`)."""
        return load_dataset(BOOK_DATASET, "test")

    @cached_property
    def main(self) -> Experiments:
        """Runs on the chapter's test images with the profile's CERTIFY settings."""
        return self._experiments(secondary=False)

    @cached_property
    def secondary(self) -> Experiments:
        """Runs at the smaller scale of the secondary experiments."""
        return self._experiments(secondary=True)

    @cached_property
    def replicated(self) -> Experiments:
        """Runs with the main CERTIFY settings on the replicate models' test images
        (:meth:`~rsutils.book.profiles.Profile.replicate_indices`)."""
        return replace(self.main, indices=self.profile.replicate_indices(len(self.test)))

    def replicate_runs(
        self,
        run: Callable[[Experiments, int], pd.DataFrame],
        *,
        cached: bool = False,
        from_main: bool = True,
    ) -> list[pd.DataFrame]:
        """``run(experiments, seed)`` for every replicate seed of the chapter's seed.

        ``run`` certifies the replicate model of ``seed`` (e.g. ``lambda e, s:
        e.certify(P.base_models(s)[0.25], rs.Gaussian(0.25))``). Every replicate is
        certified on the same images with the same certification seed, so only the
        trained models differ. The first replicate is the chapter's own model: its log is
        the main run's rows on those images (certificates depend on the image and the
        seed only, so they are the rows a run on these images alone would give). A run
        whose answers depend on the inputs before them (a memory: data-dependent
        certification) passes ``from_main=False``: its first replicate is then run on the
        replicate images like the others. ``cached`` reads the logs from the cache only
        (as a later chapter does).
        """
        main, replicated = self.main, self.replicated
        if cached:
            main, replicated = main.cached(), replicated.cached()
        images = set(replicated.indices)
        logs = []
        for seed in self.profile.replicate_seeds(self.seed):
            if seed == self.seed and from_main:
                log = run(main, seed)
                logs.append(log[log["idx"].isin(images)].reset_index(drop=True))
            else:
                logs.append(run(replicated, seed))
        return logs

    @cached_property
    def base_models(self) -> dict[float, TrainConfig]:
        """The book's Gaussian-augmentation base models, by training sigma."""
        return self.profile.base_models(self.seed)

    def model(self, config: TrainConfig) -> nn.Sequential:
        """The trained model of ``config`` (from the cache, or trained now)."""
        return trained_model(config, device=self.profile.device, progress=self.progress)

    def base_model_rows(self) -> dict[str, str]:
        """Run-at rows naming the book's base models and the data they are certified on."""
        archs = sorted({config.arch for config in self.base_models.values()})
        return {
            "dataset": "Fashion-MNIST (test split)",
            "model": ", ".join(archs),
            "sigmas": ", ".join(map(str, self.base_models)),
        }

    def replicate_rows(self) -> dict[str, str]:
        """Run-at rows stating the replicate models behind the chapter's verdicts."""
        P, images = self.profile, self.replicated.indices
        return {
            "replicate models": f"{P.replicates.models} per setting, each with its own seed",
            "replicate test images": f"{len(images)} of the main ones (every "
            f"{images[1] - images[0] if len(images) > 1 else 1}th)",
        }

    def run_at(
        self, rows: Mapping[str, object] | None = None, *, standard: Iterable[str] = STANDARD_ROWS
    ) -> pd.DataFrame:
        """This chapter's run-at table (see :func:`run_at_table`)."""
        return run_at_table(self.profile, self.device, rows, standard=standard)

    def _experiments(self, *, secondary: bool) -> Experiments:
        P = self.profile
        return Experiments(
            self.test,
            P.indices(len(self.test), secondary=secondary),
            P.certify_settings(self.seed, secondary=secondary),
            device=P.device,
            progress=self.progress,
            inference=P.certify.inference,
        )
