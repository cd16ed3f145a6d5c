"""Cached building blocks of the book's experiments: the runs.

A certification or prediction log is stored under the cache folder by the hash of its
model, its test images, its noise and its settings (the models themselves by the hash of
their training settings: :mod:`rsutils.book.trained`). Asking again returns
the stored artefact, and a log interrupted half-way is completed rather than
restarted (see :mod:`rsutils.logs.runner`). So a second ``make book`` does not retrain
or recertify, and any notebook can be re-run alone.

:class:`Experiments` holds what the runs of one scale share (test images, settings,
device), so a chapter asks for a log with the model and the noise only.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch
from torch import nn

from rsutils.anisotropic.generated import GeneratedSmooth
from rsutils.anisotropic.generators import WithoutOffset
from rsutils.anisotropic.soundness.audit import (
    AuditRecord,
    AuditSettings,
    DeployedClassifier,
    audit_log,
    check_audit_settings,
    record_from_dict,
    record_to_dict,
)
from rsutils.anisotropic.soundness.sound import ConstantScale
from rsutils.anisotropic.training import NPGConfig
from rsutils.book.trained import trained_model, trained_npg
from rsutils.cache import atomic_write_bytes, cached_path, config_key
from rsutils.checks.probes import points_inside
from rsutils.core.devices import pick_device
from rsutils.core.inference import device_identity, inference_model
from rsutils.core.noise import Gaussian, NoiseFamily
from rsutils.core.reference_precision import FAST_MODES, ReferenceSmooth
from rsutils.core.settings import CertifySettings
from rsutils.core.smooth import ABSTAIN, Smooth
from rsutils.core.streams import derived_seed, stream_generator
from rsutils.core.validation import check_non_negative
from rsutils.data import Dataset
from rsutils.ddrs.data_dependent import DataDependentSmooth
from rsutils.ddrs.runs import certify_dataset_ds
from rsutils.ddrs.sigma_ascent import SigmaAscent
from rsutils.ddrs.step_budget import ascent_paths
from rsutils.logs.read import read_log, read_rows
from rsutils.logs.reference_runs import certify_reference_dataset
from rsutils.logs.runner import ceiling_dataset, certify_dataset, predict_dataset
from rsutils.memory import CertificateMemory, copy_memory
from rsutils.sequential.procedure import Procedure, procedure_identity
from rsutils.sequential.runs import (
    certify_recorded_dataset,
    read_procedure_log,
    read_record_log,
    record_dataset,
    run_procedure,
)
from rsutils.training.train import TrainConfig

__all__ = ["Experiments", "NotCachedError"]


class NotCachedError(LookupError):
    """A log asked of :meth:`Experiments.cached` runs that the cache does not hold."""


def _noise_key(noise: NoiseFamily, norm: str | None) -> tuple[dict[str, Any], str]:
    """How a noise is named in a log's cache key, and the cache folder of its logs.

    An isotropic family is named by family and scale (its parameters and a norm other
    than its own added only when present); an anisotropic noise by its content.
    """
    if noise.anisotropic:
        return {"noise": repr(noise), "norm": norm or noise.default_norm}, "certify-anisotropic"
    key: dict[str, Any] = {"noise": noise.family, "scale": noise.scale, **noise.params}
    if norm not in (None, noise.default_norm):
        key["norm"] = norm
    return key, "certify"


@dataclass(frozen=True)
class Experiments:
    """Cached runs over the test images ``data[indices]`` at one scale.

    Every method takes the model as its :class:`~rsutils.training.train.TrainConfig`
    (trained on first use) and returns the run's log, computed once and then read from
    the cache. :meth:`at` gives the same experiments with other settings.
    """

    data: Dataset
    indices: list[int]
    settings: CertifySettings
    device: str = "auto"
    progress: bool = True
    cached_only: bool = False
    inference: str = "fp32"  # the base model's mode in CERTIFY (rsutils.core.inference)

    def at(self, **changes: int | float) -> Experiments:
        """The same images with some settings changed (e.g. ``n=1000``)."""
        return replace(self, settings=self.settings.replace(**changes))

    def cached(self) -> Experiments:
        """The same experiments, read from the cache only: a log that is not there
        complete raises :class:`NotCachedError` instead of being computed (nor is any
        model trained)."""
        return replace(self, cached_only=True)

    def model(self, config: TrainConfig) -> nn.Sequential:
        """The trained model of ``config`` on this device."""
        return trained_model(config, device=self.device, progress=self.progress)

    def certify(
        self, config: TrainConfig, noise: NoiseFamily, *, norm: str | None = None
    ) -> pd.DataFrame:
        """CERTIFY with the model of ``config`` and ``noise`` (isotropic or anisotropic).

        Logs of anisotropic noise have ``radius`` (``min(sigma)·R``),
        ``region_radius`` (R) and ``alm``. The model runs once per input: the class of
        every draw is kept in :meth:`record`'s log and CERTIFY is replayed on it
        (:func:`~rsutils.sequential.runs.certify_recorded_dataset`), so procedures
        compared with CERTIFY later read the record instead of running the model.
        """
        noise_key, folder = _noise_key(noise, norm)
        path = self._log_path(folder, config, {**noise_key, **self._mode()}, "certify")
        if self.cached_only:
            return self._read_cached(path)
        model, classes = self.model(config), self.data.num_classes
        smooth = Smooth(model, classes, noise, norm=norm, inference=self.inference)
        record_path = self._log_path("record", config, {**noise_key, **self._mode()}, "certify")
        return certify_recorded_dataset(
            smooth, self.data, self.indices, path, record_path, self.settings,
            config=_model_key(config), progress=self.progress,
        )  # fmt: skip

    def ceilings(self, config: TrainConfig, noise: NoiseFamily) -> pd.DataFrame:
        """Whether :meth:`certify` with these settings would put each image's certificate
        at its ceiling (:func:`~rsutils.logs.runner.ceiling_dataset`: exact, stopping at
        each image's first draw of another class)."""
        runner = ceiling_dataset
        return self._dataset_run(runner, "ceiling", "certify", config, noise, read=read_rows)

    def certify_reference(
        self, config: TrainConfig, noise: NoiseFamily, draws: int, *, fast_share: float = 0.5
    ) -> pd.DataFrame:
        """Certificates of ``config``'s model in float32 from counts in these experiments'
        bfloat16 mode, with ``draws`` paired draws and ``fast_share`` of alpha on the
        bfloat16 counts (:func:`~rsutils.logs.reference_runs.certify_reference_dataset`).

        Its ``selected`` and ``count`` are those of :meth:`certify` in this mode (the same
        draws); the cache key holds the mode, ``draws`` and ``fast_share``.
        """
        if self.inference not in FAST_MODES:
            raise ValueError(
                f"certify_reference certifies the float32 model from bfloat16 counts; these "
                f"experiments run in {self.inference!r}: use "
                "dataclasses.replace(experiments, inference='bf16_channels_last')"
            )
        noise_key, _ = _noise_key(noise, None)
        extra = {**noise_key, **self._mode(), "reference_draws": draws, "fast_share": fast_share}
        path = self._log_path("certify-reference", config, extra, "certify")
        if self.cached_only:
            return self._read_cached(path)
        smooth = ReferenceSmooth(
            self.model(config), self.data.num_classes, noise, draws=draws,
            fast=self.inference, fast_share=fast_share,
        )  # fmt: skip
        return certify_reference_dataset(
            smooth,
            self.data,
            self.indices,
            path,
            self.settings,
            config=_model_key(config),
            progress=self.progress,
        )

    def certify_generated(
        self, config: NPGConfig, *, without_mu: bool = False, constant_sigma: float | None = None
    ) -> pd.DataFrame:
        """CERTIFY with the classifier and generator of ``config`` (UCAN Algorithm 1).

        The noise at each input is ``mu(x) + sigma(x) ⊙ λ·eps``, Gaussian with
        ``λ = config.scale``; ``without_mu`` drops ``mu`` (the ablation of
        :class:`~rsutils.anisotropic.generators.WithoutOffset`); ``constant_sigma = c``
        replaces ``sigma`` by ``c`` everywhere
        (:class:`~rsutils.anisotropic.soundness.sound.ConstantScale`), the noise whose certificates
        :func:`~rsutils.anisotropic.soundness.sound.sound_log` turns into radii of the deployed
        classifier. The cache key holds ``constant_sigma`` only when it is set, so the
        keys of the other runs are those they always had.
        """
        npg = config_key(config.as_dict())
        key = {"model": npg, "dataset": self.data.name, "split": self.data.split}
        key |= {"indices": list(self.indices), "without_mu": without_mu, **self._mode()}
        scale = {} if constant_sigma is None else {"constant_sigma": float(constant_sigma)}
        key |= scale
        path = cached_path("certify-npg", {**key, **self.settings.identity("certify")}, ".tsv")
        if self.cached_only:
            return self._read_cached(path)
        model, generator = trained_npg(config, device=self.device, progress=self.progress)
        if without_mu:
            generator = WithoutOffset(generator)
        if constant_sigma is not None:
            generator = ConstantScale(generator, constant_sigma)
        smooth = GeneratedSmooth(
            model,
            self.data.num_classes,
            Gaussian(config.scale),
            generator,
            inference=self.inference,
        )
        identity = {"npg": npg, "without_mu": without_mu, **scale}
        return certify_dataset(
            smooth, self.data, self.indices, path, self.settings, config=identity,
            progress=self.progress,
        )  # fmt: skip

    def audit_generated(
        self, config: NPGConfig, settings: AuditSettings, *, freeze: bool = False, limit: int
    ) -> list[AuditRecord]:
        """The soundness audit of the certificates of :meth:`certify_generated` (cached).

        Audits the first ``limit`` correct certificates with a region, with ``settings``
        (:func:`~rsutils.anisotropic.soundness.audit.runs.audit_log`; ``freeze`` audits ``g_x``),
        at the noise's λ of the certificates, ``config.scale``. The audit attacks and
        counts with the base model in the mode ``inference`` names, the classifier the
        certificates are about. The cache key holds the certificates' key and
        ``settings.identity()`` apart, so that neither's ``alpha`` or ``seed`` hides the
        other's.
        """
        check_audit_settings(settings)
        check_non_negative("limit", limit)
        log = self.certify_generated(config)
        npg = config_key(config.as_dict())
        key = {"npg": npg, "indices": list(self.indices), **self.settings.identity("certify")}
        key |= {"freeze": freeze, "limit": limit, "audit": settings.identity(), **self._mode()}
        path = cached_path("audit-npg", key, ".pt")
        if not path.exists():
            model, generator = trained_npg(config, device=self.device, progress=self.progress)
            classifier = DeployedClassifier(
                inference_model(model, self.inference), generator, config.scale,
                self.data.num_classes,
            )  # fmt: skip
            records = audit_log(
                classifier, self.data.images, log, settings, freeze=freeze, limit=limit
            )
            buffer = io.BytesIO()
            torch.save([record_to_dict(r) for r in records], buffer)
            atomic_write_bytes(path, buffer.getvalue())
        return [record_from_dict(d) for d in torch.load(path, weights_only=True)]

    def predict(self, config: TrainConfig, noise: NoiseFamily) -> pd.DataFrame:
        """PREDICT with the model of ``config`` and ``noise``, with ``settings.n`` draws."""
        return self._dataset_run(predict_dataset, "predict", "predict", config, noise)

    def _dataset_run(
        self,
        runner: Callable[..., pd.DataFrame],
        folder: str,
        algorithm: str,
        config: TrainConfig,
        noise: NoiseFamily,
        *,
        read: Callable[[Path], pd.DataFrame] = read_log,
    ) -> pd.DataFrame:
        """``runner`` (a dataset runner of :mod:`rsutils.logs.runner`) with the model of
        ``config`` and isotropic ``noise`` on these images, cached in ``folder`` under
        ``algorithm``'s settings; a cached log is read back with ``read``."""
        noise_key, _ = _noise_key(noise, None)
        path = self._log_path(folder, config, {**noise_key, **self._mode()}, algorithm)
        if self.cached_only:
            return self._read_cached(path, read)
        smooth = Smooth(self.model(config), self.data.num_classes, noise, inference=self.inference)
        return runner(
            smooth, self.data, self.indices, path, self.settings,
            config=_model_key(config), progress=self.progress,
        )  # fmt: skip

    def run(self, config: TrainConfig, noise: NoiseFamily, procedure: Procedure) -> pd.DataFrame:
        """A fewer-draws ``procedure`` live on these images with the model of ``config``
        and isotropic ``noise``, the settings' ``n0``, ``seed`` and batch size
        (:func:`~rsutils.sequential.runs.run_procedure`); cached under the procedure's
        name and identity, so any procedure is cached the same way."""
        noise_key, _ = _noise_key(noise, None)
        extra = {**procedure_identity(procedure), **noise_key, **self._mode()}
        path = self._log_path("procedure", config, extra, "certify")
        if self.cached_only:
            return self._read_cached(path, read_procedure_log)
        return run_procedure(
            self.smooth(config, noise), self.data, self.indices, path, procedure,
            self.settings, config=_model_key(config), progress=self.progress,
        )  # fmt: skip

    def record(self, config: TrainConfig, noise: NoiseFamily) -> pd.DataFrame:
        """The class of every draw CERTIFY (:meth:`certify`, same settings) classifies,
        per image (:func:`~rsutils.sequential.runs.record_dataset`), for replaying
        procedures on CERTIFY's own draws (:func:`~rsutils.sequential.runs.replay_log`).
        :meth:`certify` keeps it as it runs, so after it this reads the cache."""
        noise_key, _ = _noise_key(noise, None)
        path = self._log_path("record", config, {**noise_key, **self._mode()}, "certify")
        if self.cached_only:
            return self._read_cached(path, read_record_log)
        smooth = self.smooth(config, noise)
        return record_dataset(
            smooth,
            self.data,
            self.indices,
            path,
            self.settings,
            config=_model_key(config),
            progress=self.progress,
        )

    def smooth(self, config: TrainConfig, noise: NoiseFamily) -> Smooth:
        """The smoothed classifier of ``config``'s model with isotropic ``noise``, in
        these experiments' inference mode (what :meth:`record`'s replays need)."""
        model = self.model(config)
        return Smooth(model, self.data.num_classes, noise, inference=self.inference)

    def certify_ds(self, config: TrainConfig, ascent: SigmaAscent) -> pd.DataFrame:
        """Data-dependent certification (sigma ascent, CERTIFY, memory).

        Certificates go through a memory stored next to the log (a SQLite file, whose
        path is in the returned log's ``attrs["memory_path"]``; open it with
        :class:`~rsutils.memory.balls.CertificateMemory` to inspect it).
        """
        extra = {"ascent": ascent.as_dict(), **self._mode()}
        path = self._log_path("certify-ds", config, extra, "certify")
        memory_path = path.with_suffix(".sqlite")
        if self.cached_only:
            log = self._read_cached(path)
            log.attrs["memory_path"] = str(memory_path)
            return log
        with CertificateMemory(memory_path, norm=ascent.norm) as memory:
            model, classes = self.model(config), self.data.num_classes
            smooth = DataDependentSmooth(model, classes, ascent, memory, inference=self.inference)
            log = certify_dataset_ds(
                smooth,
                self.data,
                self.indices,
                path,
                self.settings,
                config=_model_key(config),
                progress=self.progress,
            )
        log.attrs["memory_path"] = str(memory_path)
        return log

    def ascent_paths(self, config: TrainConfig, ascent: SigmaAscent) -> np.ndarray:
        """The sigma-ascent path of every input of :meth:`certify_ds`'s log, in its row
        order, ``(inputs, K + 1)`` (:func:`~rsutils.ddrs.step_budget.ascent_paths`: the
        ascent rerun with the log's draws, checked to end at its scales); cached beside
        the log."""
        log = self.certify_ds(config, ascent)
        extra = {"ascent": ascent.as_dict(), **self._mode()}
        path = self._log_path("certify-ds", config, extra, "certify").with_suffix(".paths.npy")
        if path.exists():
            return np.load(path)
        if self.cached_only:
            raise NotCachedError(f"the ascent paths {path} are not in the cache; run chapter 02")
        smooth = DataDependentSmooth(self.model(config), self.data.num_classes, ascent)
        paths = ascent_paths(smooth, self.data, log, self.settings.seed)
        buffer = io.BytesIO()
        np.save(buffer, paths)
        atomic_write_bytes(path, buffer.getvalue())
        return paths

    def probe_ds(self, config: TrainConfig, ascent: SigmaAscent, fraction: float) -> pd.DataFrame:
        """Query the data-dependent classifier inside its own certified regions.

        Takes the certificates of :meth:`certify_ds` with the same settings; for each
        input certified with a positive radius R, draws a point at distance
        ``fraction``·R in a random direction (:func:`~rsutils.checks.probes.points_inside`)
        and certifies it the same way, through a copy of that run's memory. In the
        returned log, ``label`` is the class certified at the original input
        (``source_idx``), so ``mc_predict != label`` counts the probes where the
        classifier contradicts a certificate and ``correct`` those where the memory's
        answer agrees with it.
        """
        base = self.certify_ds(config, ascent)
        probes, sources = self._probes(base, fraction)
        path = Path(base.attrs["memory_path"]).with_suffix(f".probes-{fraction:g}.tsv")
        memory_path = path.with_suffix(".sqlite")
        copy_memory(base.attrs["memory_path"], memory_path)
        settings = self.settings.replace(seed=derived_seed(self.settings.seed, 0, "requery"))
        identity = {**_model_key(config), "fraction": fraction}
        with CertificateMemory(memory_path, norm=ascent.norm) as memory:
            # A ball around an image leaves [0, 1]; the classifier is defined on all of R^d.
            model, classes = self.model(config), self.data.num_classes
            smooth = DataDependentSmooth(
                model, classes, ascent, memory, input_range=None, inference=self.inference
            )
            log = certify_dataset_ds(
                smooth,
                probes,
                range(len(probes)),
                path,
                settings,
                key_prefix="probe-",
                config=identity,
                progress=self.progress,
            )
        return log.assign(source_idx=sources[log["idx"].to_numpy()])

    def _probes(self, base: pd.DataFrame, fraction: float):
        """Points at ``fraction`` of the radius of every certificate of ``base``."""
        certified = base[(base["predict"] != ABSTAIN) & (base["radius"] > 0)]
        sources = certified["idx"].to_numpy().copy()
        generator = stream_generator(self.settings.seed, 0, "probes")
        radii = torch.tensor(certified["radius"].to_list(), dtype=torch.float64)
        points = points_inside(self.data.images[sources], radii, fraction, generator)
        labels = torch.tensor(certified["predict"].to_list())
        data = self.data
        return Dataset(data.name, f"{data.split}-probes", points, labels, data.classes), sources

    def _log_path(
        self, folder: str, config: TrainConfig, noise_key: dict[str, Any], algorithm: str
    ) -> Path:
        """The cached log of ``config`` with this noise, these images and settings."""
        key = {
            "model": config_key(config.as_dict()),
            "dataset": self.data.name,
            "split": self.data.split,
            "indices": list(self.indices),
            **noise_key,
            **self.settings.identity(algorithm),
        }
        return cached_path(folder, key, ".tsv")

    def _mode(self) -> dict[str, object]:
        """What the base classifier is besides its model, in a cache key: the inference
        mode (only when it is not fp32) and the kind of device with the rows of its
        forward passes (:func:`~rsutils.core.inference.device_identity`), so that a log
        computed on a CPU is never read as one of a GPU's."""
        mode = {} if self.inference == "fp32" else {"inference": self.inference}
        return {**mode, **device_identity(pick_device(self.device))}

    def _read_cached(
        self, path: Path, read: Callable[[Path], pd.DataFrame] = read_log
    ) -> pd.DataFrame:
        """The complete log at ``path`` (this run's indices), or :class:`NotCachedError`."""
        missing = set(self.indices)
        if path.exists():
            log = read(path)
            missing -= set(log["idx"])
            if not missing:
                return log
        raise NotCachedError(
            f"the log {path} is not in the cache complete ({len(missing)} of "
            f"{len(self.indices)} inputs missing); these experiments only read cached runs. "
            "Run the chapter that computes it first (`python book/run_notebooks.py --profile "
            "<profile> --only NN`), with the same RSUTILS_CACHE"
        )


def _model_key(config: TrainConfig) -> dict[str, str]:
    """What a runner records of the model in its log's settings: its cache key."""
    return {"model": config_key(config.as_dict())}
