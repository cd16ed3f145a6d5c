"""The papers' released raw results: where to find them, and what they say again.

Cohen et al. released per-image certification and prediction logs with their code
(repository ``locuslab/smoothing``, folder ``data/``). rsutils reads them from

1. an explicit ``root`` argument, or the ``RSUTILS_REFERENCE`` environment variable
   (:func:`rsutils.reference.reference_root`), pointing at a folder with a
   ``cohen2019/`` subfolder laid out like their ``data/``;
2. otherwise, when ``download=True``, a copy fetched into the rsutils cache from
   ``COHEN2019_URL`` (which may also be a ``file://`` URL of a local mirror);

and re-analyses them against the published tables: each ``reanalyse_*`` function
returns the published rows (:func:`rsutils.book.papers.published.cohen2019_published`) with
the value recomputed from the released per-image logs beside them.
"""

from __future__ import annotations

import os
import urllib.request
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import norm

from rsutils.analysis.metrics import average_certified_radius, certified_accuracy
from rsutils.analysis.printed import count_range, half_printed_unit
from rsutils.book.papers.published import cohen2019_published
from rsutils.cache import atomic_write_bytes, cache_dir
from rsutils.core.confidence import (
    clopper_pearson_lower,
    max_certifiable_pA,
    min_alpha_for_radius,
    min_samples_for_radius,
)
from rsutils.core.smooth import ABSTAIN
from rsutils.logs.read import read_log
from rsutils.reference import reference_root

__all__ = [
    "COHEN2019_CERTIFY_LOGS",
    "COHEN2019_PREDICT_NS",
    "COHEN2019_URL",
    "cohen2019_certify_log",
    "cohen2019_predict_log",
    "reanalyse_certify_table",
    "reanalyse_predict_table",
    "reanalyse_released_certify",
    "reanalyse_released_predict",
    "recertify_released",
    "recertify_released_logs",
]

#: Raw files of Cohen et al.'s repository at the commit whose logs the book uses.
COHEN2019_URL = "https://raw.githubusercontent.com/locuslab/smoothing/78a4d949/data"


#: The certification logs of the release, each as (dataset, trained at sigma, split,
#: certified at sigma).
COHEN2019_CERTIFY_LOGS = (
    ("imagenet", "0.25", "test", "0.25"),
    ("imagenet", "0.25", "test", "0.50"),
    ("imagenet", "0.50", "test", "0.50"),
    ("imagenet", "0.50", "train", "0.50"),
    ("imagenet", "1.00", "test", "0.50"),
    ("imagenet", "1.00", "test", "1.00"),
    ("cifar10", "0.12", "test", "0.12"),
    ("cifar10", "0.12", "test", "0.50"),
    ("cifar10", "0.25", "test", "0.25"),
    ("cifar10", "0.25", "test", "0.50"),
    ("cifar10", "0.50", "test", "0.50"),
    ("cifar10", "1.00", "test", "0.50"),
    ("cifar10", "1.00", "test", "1.00"),
)

#: The PREDICT logs of the release (ImageNet, sigma = 0.25), by number of draws.
COHEN2019_PREDICT_NS = (100, 1000, 10_000, 100_000)


def _resolve(relative: str, root: str | os.PathLike[str] | None, download: bool, url: str) -> Path:
    configured = reference_root(root)
    if configured is not None and (configured / "cohen2019" / relative).is_file():
        return configured / "cohen2019" / relative
    local = cache_dir() / "reference" / "cohen2019" / relative
    if local.is_file():
        return local
    if download:
        try:
            with urllib.request.urlopen(f"{url}/{relative}", timeout=60) as response:
                payload = response.read()
        except OSError as exc:
            raise FileNotFoundError(
                f"could not download Cohen et al.'s log {relative} from {url} ({exc})"
            ) from exc
        local.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(local, payload)
        return local
    where = configured / "cohen2019" / relative if configured else "nowhere (nothing configured)"
    raise FileNotFoundError(
        f"Cohen et al.'s log {relative} was looked for at {where}. Set RSUTILS_REFERENCE (or "
        "pass root=...) to a folder holding cohen2019/certify/..., or pass download=True "
        "to fetch it when online"
    )


def cohen2019_certify_log(
    dataset: str,
    train_sigma: str,
    sigma: str,
    *,
    split: str = "test",
    root: str | os.PathLike[str] | None = None,
    download: bool = False,
    url: str = COHEN2019_URL,
) -> Path:
    """Path of the log of the model trained at ``train_sigma`` certified at ``sigma``.

    ``dataset`` is ``"imagenet"`` (ResNet-50) or ``"cifar10"`` (ResNet-110); sigmas
    are written as in the release (``"0.25"``, ``"0.50"``, ``"1.00"``, ``"0.12"``);
    ``split`` is ``"test"`` (or ``"train"``, released for ImageNet at 0.50).
    """
    arch = {"imagenet": "resnet50", "cifar10": "resnet110"}.get(dataset)
    if arch is None:
        raise ValueError(f"Cohen et al. released logs for imagenet and cifar10, not {dataset!r}")
    relative = f"certify/{dataset}/{arch}/noise_{train_sigma}/{split}/sigma_{sigma}"
    return _resolve(relative, root, download, url)


def cohen2019_predict_log(
    n: int,
    *,
    root: str | os.PathLike[str] | None = None,
    download: bool = False,
    url: str = COHEN2019_URL,
) -> Path:
    """Path of their ImageNet PREDICT log (σ = 0.25) with ``n`` samples (Table 4)."""
    return _resolve(f"predict/imagenet/resnet50/noise_0.25/test/N_{n}", root, download, url)


_DATASET = {1: "imagenet", 3: "cifar10"}


def reanalyse_certify_table(
    table: int, *, root: str | os.PathLike[str] | None = None, download: bool = False
) -> pd.DataFrame:
    """Table 1 (ImageNet) or 3 (CIFAR-10): certified accuracy recomputed from the logs.

    Adds ``recomputed`` (the approximate certified accuracy of the log certified and
    trained at the row's sigma), ``images`` (rows in that log) and ``standard_error``
    (of a proportion equal to the published value estimated from that many images,
    at least one image's worth).
    """
    if table not in _DATASET:
        raise ValueError(f"Cohen et al.'s certification tables are 1 and 3, not {table}")
    rows = cohen2019_published().query("table == @table").reset_index(drop=True)
    logs = {
        sigma: read_log(
            cohen2019_certify_log(
                _DATASET[table], f"{sigma:.2f}", f"{sigma:.2f}", root=root, download=download
            )
        )
        for sigma in rows["sigma"].unique()
    }
    rows["recomputed"] = [
        float(certified_accuracy(logs[r.sigma], r.radius)[0]) for r in rows.itertuples()
    ]
    rows["images"] = [len(logs[s]) for s in rows["sigma"]]
    rows["standard_error"] = np.maximum(
        np.sqrt(rows["value"] * (1 - rows["value"]) / rows["images"]), 1 / rows["images"]
    )
    return rows


def reanalyse_predict_table(
    *, root: str | os.PathLike[str] | None = None, download: bool = False
) -> pd.DataFrame:
    """Table 4 (ImageNet PREDICT, sigma = 0.25): accuracy and abstention rate recomputed."""
    rows = cohen2019_published().query("table == 4 and quantity != 'seconds_per_prediction'")
    rows = rows.reset_index(drop=True).astype({"n": int})
    logs = {n: read_log(cohen2019_predict_log(n, root=root, download=download)) for n in rows["n"]}
    rows["recomputed"] = [_predict_measures(logs[r.n])[r.quantity] for r in rows.itertuples()]
    return rows


def _predict_measures(log: pd.DataFrame) -> dict[str, float]:
    """Table 4's quantities (``cohen2019_published`` names) recomputed from a log."""
    return {
        "predict_accuracy": float(log["correct"].mean()),
        "abstention_rate": float((log["predict"] == ABSTAIN).mean()),
        "seconds_per_prediction": float(log["time"].mean()),
    }


#: The radii of Tables 1 and 3 (Table 3 prints the first three).
TABLE_RADII = (0.0, 0.5, 1.0, 2.0, 3.0)


def reanalyse_released_certify(
    *,
    root: str | os.PathLike[str] | None = None,
    download: bool = False,
    n: int = 100_000,
    alpha: float = 0.001,
) -> pd.DataFrame:
    """Every released certification log, in the layout of Tables 1 and 3.

    One row per log of :data:`COHEN2019_CERTIFY_LOGS`, indexed by dataset, trained
    sigma, split and certified sigma: ``images`` (rows in the log), the approximate
    certified accuracy at each radius of the tables, ``ACR``, ``largest radius``
    against ``ceiling`` (``sigma·Φ⁻¹(alpha^(1/n))``, the most ``n`` draws can certify)
    ``α it needs`` (the smallest level at which ``n`` draws certify the largest radius,
    taken as low as its three printed significant digits allow) and ``draws it needs``
    (the fewest draws that certify it at ``alpha``),
    ``seconds per image``, and ``printed``: the largest gap to the published row of
    the same model (trained and certified at one sigma on the test split; NaN where
    the tables print none).
    """
    published = cohen2019_published().query("quantity == 'certified_accuracy'")
    rows = []
    for dataset, trained, split, sigma in COHEN2019_CERTIFY_LOGS:
        path = cohen2019_certify_log(
            dataset, trained, sigma, split=split, root=root, download=download
        )
        log = read_log(path)
        accuracy = certified_accuracy(log, TABLE_RADII)
        row = {"dataset": dataset, "trained σ": float(trained), "split": split}
        row |= {"certified σ": float(sigma), "images": len(log)}
        row |= {f"{r:g}": float(a) for r, a in zip(TABLE_RADII, accuracy, strict=True)}
        row["ACR"] = average_certified_radius(log)
        row["largest radius"] = largest = float(log["radius"].max())
        row["ceiling"] = float(sigma) * float(norm.ppf(max_certifiable_pA(n, alpha)))
        lowest = largest - float(half_printed_unit(np.array([largest]))[0])
        row["α it needs"] = min_alpha_for_radius(lowest / float(sigma), n)
        row["draws it needs"] = min_samples_for_radius(lowest / float(sigma), alpha)
        row["seconds per image"] = float(log["time"].mean())
        same = published.query("dataset == @dataset and sigma == @row['certified σ']").set_index(
            "radius"
        )["value"]
        printed = same if (trained == sigma and split == "test") else same.iloc[:0]
        gaps = [abs(accuracy[TABLE_RADII.index(r)] - v) for r, v in printed.items()]
        row["largest gap to the table"] = max(gaps) if gaps else np.nan
        rows.append(row)
    return pd.DataFrame(rows).set_index(["dataset", "trained σ", "split", "certified σ"])


def reanalyse_released_predict(
    *, root: str | os.PathLike[str] | None = None, download: bool = False
) -> pd.DataFrame:
    """Every released PREDICT log (ImageNet, sigma = 0.25) beside Table 4, by ``n``.

    Columns: ``images``, ``accuracy``, ``abstention rate`` and ``seconds per
    prediction`` recomputed from the log, each followed by the printed value (NaN where
    Table 4 prints none, as for n = 100,000).
    """
    published = cohen2019_published().query("table == 4").astype({"n": int})
    printed = published.pivot(index="n", columns="quantity", values="value")
    rows = []
    for n in COHEN2019_PREDICT_NS:
        log = read_log(cohen2019_predict_log(n, root=root, download=download))
        row: dict[str, float] = {"n": n, "images": len(log)}
        for quantity, value in _predict_measures(log).items():
            name = _TABLE4_NAMES[quantity]
            row[name] = value
            row[f"{name}, printed"] = printed[quantity].get(n, np.nan)
        rows.append(row)
    return pd.DataFrame(rows).set_index("n")


_TABLE4_NAMES = {
    "predict_accuracy": "accuracy",
    "abstention_rate": "abstention rate",
    "seconds_per_prediction": "seconds per prediction",
}


def recertify_released(
    log: pd.DataFrame, sigma: float, *, alpha: float, run_alpha: float, n: int = 100_000
) -> pd.DataFrame:
    """A released log's Gaussian certificates at ``alpha``, had it been run at ``run_alpha``.

    The release keeps radii (three significant digits), not counts. Under the
    hypothesis that the log was run with ``n`` draws at ``run_alpha``, each printed
    radius pins the count ``k`` of draws in the top class to a range (those whose
    ``sigma·Φ⁻¹(CP(k, n, run_alpha))`` prints as it,
    :func:`~rsutils.analysis.printed.count_range`). Recertifying that range at
    ``alpha`` gives ``radius_low`` and ``radius_high`` (0 where ``CP < 1/2``: the
    certificate becomes an abstention); abstentions stay abstentions.
    """
    radius = log["radius"].to_numpy(dtype=float)
    answered = log["predict"].to_numpy() != ABSTAIN
    low_k, high_k = count_range(radius, sigma, n, run_alpha)
    out = log.copy()
    for name, k in (("radius_low", low_k), ("radius_high", np.maximum(high_k, low_k))):
        bound = clopper_pearson_lower(np.minimum(k, n), n, alpha)
        value = sigma * norm.ppf(np.clip(bound, 0.5, 1.0))
        out[name] = np.where(answered & (bound >= 0.5), value, 0.0)
    return out


def recertify_released_logs(
    keys: Iterable[tuple[str, float, str, float]],
    *,
    alpha: float,
    run_alpha: float,
    n: int = 100_000,
    root: str | os.PathLike[str] | None = None,
    download: bool = False,
) -> pd.DataFrame:
    """Certified accuracy at the tables' radii of released logs recertified at ``alpha``.

    ``keys`` index :func:`reanalyse_released_certify`'s rows (dataset, trained sigma,
    split, certified sigma). For each log and radius of Tables 1 and 3: the accuracy as
    released, and its least and greatest value at ``alpha``
    (:func:`recertify_released`, assuming ``n`` draws at ``run_alpha``).
    """
    rows = []
    for dataset, trained, split, sigma in keys:
        path = cohen2019_certify_log(
            dataset, f"{trained:.2f}", f"{sigma:.2f}", split=split, root=root, download=download
        )
        log = recertify_released(read_log(path), sigma, alpha=alpha, run_alpha=run_alpha, n=n)
        measures = {
            label: certified_accuracy(log, TABLE_RADII, column=column)
            for column, label in _RECERTIFIED.items()
        }
        for i, r in enumerate(TABLE_RADII):
            row = {"dataset": dataset, "trained σ": trained, "split": split}
            row |= {"certified σ": sigma, "radius": r}
            rows.append(row | {name: float(v[i]) for name, v in measures.items()})
    table = pd.DataFrame(rows)
    changes = table[["least", "greatest"]].sub(table["as released"], axis=0)
    table["largest change"] = changes.abs().max(axis=1)
    return table


_RECERTIFIED = {"radius": "as released", "radius_low": "least", "radius_high": "greatest"}
