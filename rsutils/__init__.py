"""rsutils: randomized-smoothing certification for PyTorch classifiers.

Everything a user needs is importable from here:

- certification (Cohen et al.): ``Smooth``, ``Certificate``, ``ABSTAIN``,
  ``CertifySettings``; the interface of every smoothed classifier here,
  ``SmoothedClassifier``; the noise families ``Gaussian``, ``Laplace``, ``UniformCube``,
  ``ExponentialLinf``, ``PowerLawLinf`` (``NoiseFamily``, ``make_noise``, ``FAMILIES``);
  ``certified_radius``, ``clopper_pearson_lower``, ``max_certifiable_pA``; the base
  model's faster numerical modes ``INFERENCE_MODES`` (``Smooth(..., inference=...)``);
- fewer draws for the same guarantee (:mod:`rsutils.sequential`): the procedures
  ``Decide`` (is an input certified at given radii? by a ``LookSchedule`` spending
  alpha over looks, a confidence sequence ``AnytimeSchedule`` or a published design
  ``PublishedTest``; answers ``Decisions`` of ``Decision``; the true label tested, the
  evaluation of a labelled test set), ``PlannedDraws`` (CERTIFY with an input-specific
  number of draws) and ``RadiusLooks`` (looks at the radius itself), each run live on
  one input by ``settle``, on recorded draws by ``replay`` (``record_draws``,
  ``DrawRecord``), over a dataset by ``run_procedure``, and checked by ``false_rate``;
- data-dependent smoothing (Alfarra et al.): ``DataDependentSmooth``, ``SigmaAscent``,
  ``CertificateMemory`` (and their answers ``DataDependentAnswer``, ``MemoryAnswer``;
  a memory found corrupted raises ``MemoryInconsistencyError``);
- anisotropic smoothing (UCAN): ``Anisotropic``, ``spatial_pattern``,
  ``certified_region``, ``SuperEllipsoid``; the noise parameter generators
  ``FixedNoise``, ``DatasetWiseGenerator``, ``CertificationWiseGenerator``
  (``load_generator``), their training (``NPGConfig``, ``train_npg``), certification
  through a generator (``GeneratedSmooth``), its soundness audit
  (``audit_certificate`` of a ``DeployedClassifier``, ``AuditSettings``) and the
  certificate memory for anisotropic regions (``AnisotropicMemory``);
- datasets and logs: ``load_dataset``, ``Dataset``, ``certify_dataset``,
  ``predict_dataset``, ``certify_dataset_ds`` (and the resumable loop they share,
  ``run_dataset`` with ``DatasetRun`` and ``InputGroups``), ``read_log``, ``certified_accuracy``,
  ``certified_accuracy_lower_bound``, ``average_certified_radius``, ``accuracy_table``,
  ``acr_difference`` (``ACRDifference``), ``recertify``; ``LogRepairedWarning`` (a
  resumed log's unfinished last write was cut); comparisons over retrained models:
  ``replicated_comparisons``, ``replicated_difference`` (``ReplicatedDifference``) and
  the verdict rule ``judge``;
- models: ``build_model``, ``load_checkpoint``, ``save_checkpoint``, ``TrainConfig``,
  ``train_model``, ``pick_device``.

>>> from rsutils import Gaussian, Smooth
>>> smooth = Smooth(model, num_classes=10, noise=Gaussian(sigma=0.25))  # doctest: +SKIP
>>> cert = smooth.certify(x, n0=100, n=100_000, alpha=0.001, seed=0)    # doctest: +SKIP

The subpackages follow the papers: :mod:`rsutils.core` (noise families, radii,
confidence bounds, Monte Carlo sampling and :class:`~rsutils.core.smooth.Smooth`, after
Cohen et al.),
:mod:`rsutils.geometry` (norm balls and super-ellipsoids), :mod:`rsutils.ddrs`
(data-dependent smoothing, after Alfarra et al.), :mod:`rsutils.anisotropic`
(anisotropic noise, after UCAN), :mod:`rsutils.memory` (the certificate memory both
use: one engine, a shape per kind of region), :mod:`rsutils.training`, :mod:`rsutils.checks`
(exact oracles), :mod:`rsutils.logs` (dataset runs and their analysis) and
:mod:`rsutils.cli`. :mod:`rsutils.book` serves the book only.
"""

from rsutils.analysis.differences import (
    ReplicatedDifference,
    replicated_comparisons,
    replicated_difference,
)
from rsutils.analysis.metrics import (
    ACRDifference,
    accuracy_table,
    acr_difference,
    average_certified_radius,
    certified_accuracy,
    certified_accuracy_lower_bound,
    recertify,
)
from rsutils.analysis.verdicts import judge
from rsutils.anisotropic.generated import GeneratedSmooth
from rsutils.anisotropic.generators import (
    CertificationWiseGenerator,
    DatasetWiseGenerator,
    FixedNoise,
    load_generator,
)
from rsutils.anisotropic.noise import Anisotropic, certified_region
from rsutils.anisotropic.patterns import spatial_pattern
from rsutils.anisotropic.soundness.audit import (
    AuditSettings,
    DeployedClassifier,
    audit_certificate,
)
from rsutils.anisotropic.training import NPGConfig, train_npg
from rsutils.core.confidence import clopper_pearson_lower, max_certifiable_pA
from rsutils.core.devices import pick_device
from rsutils.core.inference import INFERENCE_MODES
from rsutils.core.noise import (
    FAMILIES,
    ExponentialLinf,
    Gaussian,
    Laplace,
    NoiseFamily,
    PowerLawLinf,
    UniformCube,
    make_noise,
)
from rsutils.core.radius import certified_radius
from rsutils.core.settings import CertifySettings
from rsutils.core.smooth import ABSTAIN, Certificate, Smooth
from rsutils.core.smoothed import SmoothedClassifier
from rsutils.data import Dataset, load_dataset
from rsutils.ddrs.data_dependent import DataDependentAnswer, DataDependentSmooth
from rsutils.ddrs.runs import certify_dataset_ds
from rsutils.ddrs.sigma_ascent import SigmaAscent
from rsutils.geometry.superellipsoid import SuperEllipsoid
from rsutils.logs.dataset_run import DatasetRun, InputGroups, run_dataset
from rsutils.logs.read import read_log
from rsutils.logs.resumable import LogRepairedWarning
from rsutils.logs.runner import certify_dataset, predict_dataset
from rsutils.memory import (
    AnisotropicMemory,
    CertificateMemory,
    MemoryAnswer,
    MemoryInconsistencyError,
)
from rsutils.models.architectures import build_model
from rsutils.models.checkpoints import load_checkpoint, save_checkpoint
from rsutils.sequential import (
    AnytimeSchedule,
    Decide,
    Decision,
    Decisions,
    DrawRecord,
    LookSchedule,
    PlannedDraws,
    PublishedTest,
    RadiusLooks,
    false_rate,
    record_draws,
    replay,
    run_procedure,
    settle,
)
from rsutils.training.train import TrainConfig, train_model

__version__ = "0.1.0"

__all__ = [
    "ABSTAIN",
    "FAMILIES",
    "INFERENCE_MODES",
    "ACRDifference",
    "Anisotropic",
    "AnisotropicMemory",
    "AnytimeSchedule",
    "AuditSettings",
    "Certificate",
    "CertificateMemory",
    "CertificationWiseGenerator",
    "CertifySettings",
    "DataDependentAnswer",
    "DataDependentSmooth",
    "Dataset",
    "DatasetRun",
    "DatasetWiseGenerator",
    "Decide",
    "Decision",
    "Decisions",
    "DeployedClassifier",
    "DrawRecord",
    "ExponentialLinf",
    "FixedNoise",
    "Gaussian",
    "GeneratedSmooth",
    "InputGroups",
    "Laplace",
    "LogRepairedWarning",
    "LookSchedule",
    "MemoryAnswer",
    "MemoryInconsistencyError",
    "NPGConfig",
    "NoiseFamily",
    "PlannedDraws",
    "PowerLawLinf",
    "PublishedTest",
    "RadiusLooks",
    "ReplicatedDifference",
    "SigmaAscent",
    "Smooth",
    "SmoothedClassifier",
    "SuperEllipsoid",
    "TrainConfig",
    "UniformCube",
    "__version__",
    "accuracy_table",
    "acr_difference",
    "audit_certificate",
    "average_certified_radius",
    "build_model",
    "certified_accuracy",
    "certified_accuracy_lower_bound",
    "certified_radius",
    "certified_region",
    "certify_dataset",
    "certify_dataset_ds",
    "clopper_pearson_lower",
    "false_rate",
    "judge",
    "load_checkpoint",
    "load_dataset",
    "load_generator",
    "make_noise",
    "max_certifiable_pA",
    "pick_device",
    "predict_dataset",
    "read_log",
    "recertify",
    "record_draws",
    "replay",
    "replicated_comparisons",
    "replicated_difference",
    "run_dataset",
    "run_procedure",
    "save_checkpoint",
    "settle",
    "spatial_pattern",
    "train_model",
    "train_npg",
]
