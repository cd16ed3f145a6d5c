"""How much the cpu book's headline numbers move when the base models are trained anew.

    python book/measure_thread_spread.py --threads 1 --cache DIR   # a cache for that count
    python book/measure_thread_spread.py --threads 2 --cache DIR
    python book/measure_thread_spread.py --table   # both into rsutils/book/tables/

Training splits its reductions across torch's intra-op threads, so a base model trained
with another thread count is another model of the same quality (certification given a
model does not depend on the threads). For each thread count this trains chapter 01's
three base models at the cpu profile in its own cache, certifies the chapter's 200 test
images (n = 10,000) and, for sigma = 0.25, runs chapter 02's Cohen-DS; ``--table``
then writes the headline numbers side by side (``thread_spread.csv``) and how similar
the per-image results of the two sets of models are (``thread_spread_inputs.csv``).
The reproduce page shows both tables. On two cores, one thread count takes about an
hour and a half.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import pandas as pd
import torch

TABLES = Path(__file__).resolve().parents[1] / "rsutils" / "book" / "tables"
DS_SIGMA = 0.25


def run(threads: int, cache: Path) -> Path:
    """Train (with ``threads``), certify and DS-certify into ``cache``; a JSON summary."""
    os.environ["RSUTILS_CACHE"] = str(cache)
    torch.set_num_threads(threads)
    from rsutils import Gaussian
    from rsutils.book.experiments import Experiments
    from rsutils.book.profiles import get_profile
    from rsutils.data import load_dataset

    profile = get_profile("cpu")
    data = load_dataset("fashion-mnist", "test")
    indices, settings = profile.indices(len(data)), profile.certify_settings()
    main = Experiments(data, indices, settings, device="cpu")
    configs = profile.base_models()
    logs = {f"cohen-{s}": main.certify(configs[s], Gaussian(s)) for s in configs}
    logs[f"ds-{DS_SIGMA}"] = main.certify_ds(configs[DS_SIGMA], profile.ascent(DS_SIGMA))
    summary = cache / f"thread-spread-{threads}.json"
    summary.write_text(json.dumps({name: log.to_dict("list") for name, log in logs.items()}))
    return summary


def tables(summaries: dict[int, Path]) -> None:
    """The headline numbers per thread count, and the per-image agreement."""
    from rsutils import average_certified_radius, certified_accuracy

    logs = {
        threads: {name: pd.DataFrame(log) for name, log in json.loads(path.read_text()).items()}
        for threads, path in summaries.items()
    }
    rows = []
    for threads, by_name in logs.items():
        for name, log in by_name.items():
            rows.append(
                {
                    "training threads": threads,
                    "run": name,
                    "certified accuracy at r = 0": float(certified_accuracy(log, [0.0])[0]),
                    "ACR": average_certified_radius(log),
                    "90th percentile of the noise level": float(log["scale"].quantile(0.9)),
                }
            )
    wide = pd.DataFrame(rows).pivot(index="run", columns="training threads")
    wide.columns = [f"{metric}, {threads} thread{'s' * (threads > 1)}" for metric, threads in wide]
    wide.round(4).to_csv(TABLES / "thread_spread.csv")
    first, second = (logs[t] for t in sorted(logs))
    agreement = {
        name: _agreement(first[name].sort_values("idx"), second[name].sort_values("idx"))
        for name in (f"cohen-{DS_SIGMA}", f"ds-{DS_SIGMA}")
    }
    table = pd.DataFrame(agreement).rename_axis("per image, sigma0 = 0.25").round(3)
    table.to_csv(TABLES / "thread_spread_inputs.csv")


def _agreement(a: pd.DataFrame, b: pd.DataFrame) -> dict[str, float]:
    """How alike two logs of the same images are, and how many of their certificates
    sit at the radius cap (the mean of the two logs)."""
    radius_a, radius_b = (log["radius"] * log["correct"] for log in (a, b))
    change = ((a["scale"] - b["scale"]).abs() / a["scale"]).median()
    far = ((a["scale"] > 3 * DS_SIGMA) | (b["scale"] > 3 * DS_SIGMA)).to_numpy()
    moved = radius_b.to_numpy() - radius_a.to_numpy()
    return {
        "at the cap (all n draws in the class)": float(
            ((a["count"] == a["n"]).mean() + (b["count"] == b["n"]).mean()) / 2
        ),
        "same radius with both models": float((radius_a.to_numpy() == radius_b.to_numpy()).mean()),
        "Spearman correlation of the radii": float(radius_a.corr(radius_b, "spearman")),
        "median relative change of the noise level": float(change),
        "inputs whose noise level exceeds 3 sigma0 (either model)": float(far.mean()),
        "ACR change from those inputs": float(moved[far].sum() / len(moved)),
        "ACR change from the other inputs": float(moved[~far].sum() / len(moved)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, help="train and certify with this count")
    parser.add_argument("--cache", type=Path, help="the cache folder of that thread count")
    parser.add_argument("--table", action="store_true", help="write the two tables")
    parser.add_argument("--summaries", type=Path, nargs="*", default=[])
    args = parser.parse_args()
    if args.threads:
        print(run(args.threads, args.cache))
    if args.table:
        tables({int(p.stem.rsplit("-", 1)[1]): p for p in args.summaries})


if __name__ == "__main__":
    main()
