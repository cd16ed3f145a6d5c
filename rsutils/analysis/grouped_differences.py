"""Replicated comparisons on groups of images, and against the best of several controls.

Two questions follow a replicated comparison
(:func:`~rsutils.analysis.differences.replicated_comparisons`) of a method with its control:

- *Where does the difference come from?* Split the images into groups (those whose
  control certificate sits at the CERTIFY ceiling and the rest,
  :func:`ceiling_groups`; or any flag on one method's logs, :func:`majority_groups`)
  and compare within each group (:func:`grouped_comparisons`). A group is one set of
  images for every replicate model, so each group's comparison is again a crossed
  models × images design with its own interval.
- *Against which control?* A method that beats its own control may still lose to
  another one; :func:`against_best` compares it with the control whose measure,
  averaged over the replicate models, is the highest (:func:`best_controls`).

``replicates`` is, as everywhere, one ``{method name: log}`` mapping per replicate
model, every log on the same images (``idx``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from rsutils.analysis.ceilings import at_ceiling
from rsutils.analysis.differences import replicated_comparisons
from rsutils.analysis.metrics import average_certified_radius, certified_accuracy
from rsutils.analysis.verdicts import Verdict, holm_family

__all__ = [
    "TOO_FEW_IMAGES",
    "against_best",
    "best_controls",
    "ceiling_groups",
    "grouped_comparisons",
    "majority_groups",
    "restrict_replicates",
]

Replicates = Sequence[Mapping[str, pd.DataFrame]]
Measures = Mapping[str, str | tuple[str, float]]

#: The ``verdict`` of a group with fewer than two images, where no interval exists (an
#: untested :class:`~rsutils.analysis.verdicts.Verdict` that reads "too few images").
TOO_FEW_IMAGES = Verdict.untested_because("too few images")


def _logs(replicates: Replicates, name: str) -> list[pd.DataFrame]:
    if not replicates:
        raise ValueError("replicates is empty: pass one {method: log} dict per replicate model")
    missing = [m for m, logs in enumerate(replicates) if name not in logs]
    if missing:
        raise ValueError(
            f"replicates{missing} have no log for {name!r}; they have {sorted(replicates[0])}"
        )
    return [logs[name] for logs in replicates]


def majority_groups(
    replicates: Replicates,
    name: str,
    flag: Callable[[pd.DataFrame], np.ndarray],
    labels: tuple[str, str] = ("flagged", "not flagged"),
) -> dict[str, np.ndarray]:
    """Split the images by a per-image ``flag`` on ``name``'s logs, one rule for all
    replicate models: an image is in the first group when ``flag`` holds for it in
    *more than half* of the replicates (with two replicates, in both).

    Returns ``{labels[0]: idx values, labels[1]: the other idx values}``, sorted. Every
    replicate's log of ``name`` must hold the same images.
    """
    logs = _logs(replicates, name)
    images = np.sort(logs[0]["idx"].to_numpy())
    votes = np.zeros(len(images), dtype=int)
    for m, log in enumerate(logs):
        order = np.argsort(log["idx"].to_numpy(), kind="stable")
        if not np.array_equal(log["idx"].to_numpy()[order], images):
            raise ValueError(
                f"replicates[{m}][{name!r}] holds other images than replicates[0]: every "
                "replicate must certify the same test images (idx values)"
            )
        votes += np.asarray(flag(log), dtype=bool)[order]
    flagged = 2 * votes > len(logs)
    return {labels[0]: images[flagged], labels[1]: images[~flagged]}


def ceiling_groups(replicates: Replicates, name: str) -> dict[str, np.ndarray]:
    """The images whose certificate of ``name`` sits at the CERTIFY ceiling
    (:func:`~rsutils.analysis.ceilings.at_ceiling`: all ``n`` draws in the selected class)
    in more than half of the replicate models, ``"at ceiling"``, and the rest, ``"below
    ceiling"`` (:func:`majority_groups`)."""
    return majority_groups(replicates, name, at_ceiling, ("at ceiling", "below ceiling"))


def restrict_replicates(replicates: Replicates, images: ArrayLike) -> list[dict[str, pd.DataFrame]]:
    """Every log of every replicate restricted to the rows whose ``idx`` is in
    ``images`` (the same images for all, so a paired comparison stays paired)."""
    keep = np.asarray(images)
    return [
        {name: log[log["idx"].isin(keep)].reset_index(drop=True) for name, log in logs.items()}
        for logs in replicates
    ]


def grouped_comparisons(
    replicates: Replicates,
    pairs: Iterable[tuple[str, str]],
    groups: Callable[[str, str], Mapping[str, ArrayLike]],
    **options: object,
) -> pd.DataFrame:
    """:func:`~rsutils.analysis.differences.replicated_comparisons` of each (method, control)
    pair within each group of images that ``groups(method, control)`` returns
    (``{label: idx values}``, e.g. ``lambda m, c: ceiling_groups(replicates, c)``).

    ``options`` go to ``replicated_comparisons`` (``measures``, ``margin``, ``seed``…).
    One row per (method, against, images, measured by), with the columns of
    ``replicated_comparisons`` and ``share``, the group's share of the images. A group of
    fewer than two images has no interval: its row holds NaN and the verdict
    :data:`TOO_FEW_IMAGES`. The rows with an interval are one family
    (:func:`~rsutils.analysis.verdicts.holm_family`).
    """
    frames = []
    for method, control in pairs:
        total = len(_logs(replicates, control)[0])
        for label, images in groups(method, control).items():
            images = np.asarray(images)
            if len(images) >= 2:
                found = replicated_comparisons(
                    restrict_replicates(replicates, images), [(method, control)], **options
                )
            else:
                measures = options.get("measures") or {"radius": "radius"}
                index = pd.MultiIndex.from_tuples(
                    [(method, control, shown) for shown in measures],
                    names=["method", "against", "measured by"],
                )
                found = pd.DataFrame(
                    {"images": len(images), "verdict": TOO_FEW_IMAGES}, index=index
                )
            found = found.assign(share=len(images) / total)
            frames.append(pd.concat({label: found}, names=["images"]))
    table = pd.concat(frames)
    judged = table["verdict"].map(lambda verdict: verdict.tested).astype(bool)
    if judged.any():
        family = holm_family(table[judged], confidence=options.get("confidence", 0.95))
        table.loc[judged, ["tests", "verdict"]] = family[["tests", "verdict"]]
    return table.reorder_levels(["method", "against", "images", "measured by"])


def _measure(log: pd.DataFrame, measure: str | tuple[str, float]) -> float:
    if isinstance(measure, str):
        return average_certified_radius(log, column=measure)
    column, radius = measure
    return float(certified_accuracy(log, [radius], column=column)[0])


def best_controls(
    replicates: Replicates, controls: Iterable[str], measures: Measures
) -> dict[str, str]:
    """For each measure (a display name → a log column for the ACR, or a ``(column,
    radius)`` pair for the certified accuracy at that radius, as in
    ``replicated_comparisons``), the control with the highest value averaged over the
    replicate models (the first in ``controls`` on a tie)."""
    controls = list(controls)
    if not controls:
        raise ValueError("controls is empty: name the methods to choose the best from")
    best = {}
    for shown, measure in measures.items():
        means = [
            np.mean([_measure(log, measure) for log in _logs(replicates, c)]) for c in controls
        ]
        best[shown] = controls[int(np.argmax(means))]
    return best


def against_best(
    replicates: Replicates,
    methods: Iterable[str],
    controls: Iterable[str],
    measures: Measures,
    *,
    held_out: bool = False,
    **options: object,
) -> pd.DataFrame:
    """Each method against the best control *for each measure* (:func:`best_controls`):
    at each radius, the control on top there, so the comparison is with the envelope of
    the controls' curves, not with one chosen control.

    The rows of ``replicated_comparisons`` (``options`` go there), one per (method,
    against, measured by), one family (:func:`~rsutils.analysis.verdicts.holm_family`).
    Chosen on the same models and images the interval is computed from, the best
    control is biased both ways: a control that leads by chance is kept (the method's
    gains are understated), and the choice is made where the controls' noise happens to
    favour them (the comparison is with a control slightly better than its own
    expectation). With ``held_out`` the choice is made on the first replicate alone and
    the comparison on the others (sample splitting: the choice cannot see the data it
    is judged on), at the cost of one replicate.
    """
    replicates = list(replicates)
    if held_out and len(replicates) < 2:
        raise ValueError("held_out needs at least two replicates: one to choose, one to judge")
    chosen_on, judged_on = (replicates[:1], replicates[1:]) if held_out else (replicates,) * 2
    best = best_controls(chosen_on, controls, measures)
    frames = [
        replicated_comparisons(
            judged_on, [(method, best[shown])], measures={shown: measure}, **options
        )
        for method in methods
        for shown, measure in measures.items()
    ]
    return holm_family(pd.concat(frames), confidence=options.get("confidence", 0.95))
