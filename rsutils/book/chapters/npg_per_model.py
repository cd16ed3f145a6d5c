"""Chapter 06's measurements of the certification-wise classifier, on every replicate model.

Offset probes.

What does the offset ``mu(x)`` carry? Chapter 06 probes its first model three ways: the
votes of the classifier on ``x_i + mu(x_j)`` for a ``x_j`` of another class
(:func:`~rsutils.anisotropic.soundness.leakage.mu_swap_votes`), its votes on a blank image
plus ``mu(x_i)`` (:func:`~rsutils.anisotropic.soundness.leakage.label_channel_votes`), and
the certificates without the offset. One model's rates could be a property of that
training run; :func:`offset_probes_by_replicate` measures them on every replicate
(the same images, pairs and draws; only the trained models differ) and
:func:`with_spread` adds their mean, lowest and highest.

Soundness audit. :func:`audit_by_replicate` runs chapter 06's audit of the deployed
classifier's certificates (searches for a point of the certified region where the
deployed classifier answers otherwise) on every replicate, so that the rate of
contradicted certificates is reported with its spread over the retraining, not for one
model; :func:`pooled_audit` adds the count over every model with its exact interval.
"""

from __future__ import annotations

import pandas as pd
from scipy.stats import binomtest

from rsutils.analysis.metrics import average_certified_radius, certified_accuracy
from rsutils.anisotropic.soundness import leakage
from rsutils.anisotropic.soundness.audit import AuditSettings, summarize_audits
from rsutils.book.chapter import Chapter
from rsutils.book.profiles import ANISOTROPIC_LAMBDA, NPG_GROUPS
from rsutils.book.trained import trained_npg

__all__ = [
    "POSITIVE",
    "PROBE_COLUMNS",
    "audit_by_replicate",
    "offset_probes_by_replicate",
    "pooled_audit",
    "with_spread",
]

#: The prefix of :func:`audit_by_replicate`'s columns for the positive control.
POSITIVE = "positive control: "

#: The columns of :func:`offset_probes_by_replicate`, each a rate over the images.
PROBE_COLUMNS = (
    "votes for x_j's class on x_i + μ(x_j)",
    "votes for y_i on blank + μ(x_i)",
    "votes for y_i on blank alone",
    "accuracy at r = 0, with μ",
    "accuracy at r = 0, μ ≡ 0",
    "ACR with μ",
    "ACR, μ ≡ 0",
)


def offset_probes_by_replicate(
    chapter: Chapter, *, background: float, draws: int = 100
) -> pd.DataFrame:
    """The offset probes of the certification-wise classifier of every replicate model.

    One row per replicate model, ``"model 1"`` the chapter's own, on the chapter's
    secondary images with ``draws`` votes per probe: the share of votes for the other
    image's class when ``x_i`` gets ``mu(x_j)`` of an image of another class (pairs
    drawn from the chapter's seed, the same for every replicate); the share for
    ``y_i`` on a blank image (pixels ``background``, the chapter's training-set mean) plus
    ``mu(x_i)``, and on
    the blank alone (its chance level); and the certified accuracy at radius 0 and the
    ACR with and without the offset (certified, and cached, like the chapter's runs).
    """
    P, lam, runs = chapter.profile, ANISOTROPIC_LAMBDA, chapter.secondary
    test, indices = chapter.test, list(runs.indices)
    images, labels = test.images[indices], test.labels[indices]
    pairs = leakage.different_class_pairs(labels, len(indices), seed=chapter.seed)
    name = NPG_GROUPS.certification_wise[0]
    rows = {}
    for number, seed in enumerate(P.replicate_seeds(chapter.seed), start=1):
        config = P.npg_methods(P.base_models(seed)[lam], seed)[name]
        model, generator = trained_npg(config, device=chapter.device, progress=chapter.progress)
        swap = leakage.mu_swap_votes(
            model, generator, images, labels, pairs, lam, draws, seed=chapter.seed
        )
        channel = leakage.label_channel_votes(
            model, generator, test.images, test.labels, indices, lam, draws,
            background=background, seed=chapter.seed,
        )  # fmt: skip
        logs = [runs.certify_generated(config, without_mu=flag) for flag in (False, True)]
        rates = (swap["offset"].mean(), channel["mu_only"].mean())
        rates += (channel["background_only"].mean(),)
        rates += tuple(float(certified_accuracy(log, [0.0])[0]) for log in logs)
        rates += tuple(average_certified_radius(log) for log in logs)
        rows[f"model {number}"] = dict(zip(PROBE_COLUMNS, map(float, rates), strict=True))
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.index.name = "replicate"
    return table


def with_spread(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` (one row per replicate) with three rows more: the mean, the lowest
    and the highest of each column over the replicates."""
    summary = pd.DataFrame({"mean": table.mean(), "lowest": table.min(), "highest": table.max()}).T
    return pd.concat([table.rename(index=str), summary])


def audit_by_replicate(
    chapter: Chapter, settings: AuditSettings, *, positive_control: AuditSettings | None = None
) -> pd.DataFrame:
    """The soundness audit of the deployed certification-wise classifier, per replicate.

    For every replicate seed, chapter 06's audit
    (:meth:`~rsutils.book.experiments.Experiments.audit_generated`, cached) of the first
    ``profile.audit.images`` correct certificates of its certification-wise classifier,
    not frozen: one row with the images audited, those with a contradiction, the rate
    and its exact 95% interval
    (:func:`~rsutils.anisotropic.soundness.audit.records.summarize_audits`).

    With ``positive_control`` (the same search outside the certificates, e.g. settings
    with a ``region_scale`` of ``(1.5, 2.0)``), the replicate's isotropic model is
    searched with it too, so that the search's power is measured on every model the
    rate is: columns :data:`POSITIVE` + ``"images"`` and + ``"with a contradiction"``
    (:func:`pooled_audit` with ``prefix=POSITIVE`` pools them).
    """
    P, lam, runs = chapter.profile, ANISOTROPIC_LAMBDA, chapter.secondary
    name = NPG_GROUPS.certification_wise[0]
    rows = {}
    for number, seed in enumerate(P.replicate_seeds(chapter.seed), start=1):
        methods = P.npg_methods(P.base_models(seed)[lam], seed)
        found = summarize_audits(
            runs.audit_generated(methods[name], settings, limit=P.audit.images)
        )
        row = {
            "images": found.images, "with a contradiction": found.contradicted,
            "rate": found.rate, "low": found.low, "high": found.high,
        }  # fmt: skip
        if positive_control is not None:
            records = runs.audit_generated(
                methods[NPG_GROUPS.control], positive_control, limit=P.audit.images
            )
            positive = summarize_audits(records)
            row[f"{POSITIVE}images"] = positive.images
            row[f"{POSITIVE}with a contradiction"] = positive.contradicted
        rows[f"model {number}"] = row
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.index.name = "replicate"
    return table


def pooled_audit(table: pd.DataFrame, confidence: float = 0.95, *, prefix: str = "") -> pd.Series:
    """The audits of every replicate (``table`` as :func:`audit_by_replicate`) taken
    together: the images audited and those with a contradiction (the columns named
    ``prefix`` + ``"images"`` and + ``"with a contradiction"``) summed over the models,
    the pooled rate and its exact (Clopper–Pearson) interval at ``confidence``
    (``scipy.stats.binomtest(...).proportion_ci(method="exact")``).

    The interval treats the audited images as one sample; images of one model share
    its training run, so where the models' rates differ the interval is narrower than
    one over retraining as well, and the per-model rows beside it show that spread.
    """
    images = int(table[f"{prefix}images"].sum())
    if images == 0:
        raise ValueError("pooled_audit needs at least one audited image")
    found = int(table[f"{prefix}with a contradiction"].sum())
    interval = binomtest(found, images).proportion_ci(confidence, method="exact")
    return pd.Series(
        {"images": images, "with a contradiction": found, "rate": found / images,
         "low": interval.low, "high": interval.high},
        name="pooled",
    )  # fmt: skip
