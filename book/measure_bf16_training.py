"""Whether training the base models in bf16 keeps their accuracy (chapter 12's table).

    python book/measure_bf16_training.py --cache DIR    # about 25 minutes on two cores

For every sigma of the book and every replicate seed of the cpu profile, this trains
the base model twice, in fp32 and in bf16 autocast with channels-last tensors (the same
seed: the same initialisation, data order and training noise), measures the clean
accuracy and the accuracy under one draw of the training noise on the whole test split,
and certifies both models on the replicate images of the cpu profile (CERTIFY as the
book runs it). The per-image certificates go to ``rsutils/book/tables/bf16_training.csv``
and the accuracies to ``bf16_training_models.csv``; chapter 12 turns them into paired
intervals over images and seeds.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import replace
from pathlib import Path

import pandas as pd

TABLES = Path(__file__).resolve().parents[1] / "rsutils" / "book" / "tables"
COLUMNS = ["idx", "label", "predict", "correct", "radius", "pA_lower"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, required=True, help="a cache folder for the runs")
    args = parser.parse_args()
    os.environ["RSUTILS_CACHE"] = str(args.cache)
    from rsutils import Gaussian
    from rsutils.book.chapter import Chapter
    from rsutils.book.trained import trained_model
    from rsutils.training.train import evaluate_accuracy

    chapter = Chapter.open("cpu", progress=True)
    P, test, runs = chapter.profile, chapter.test, chapter.replicated
    certificates, models = [], []
    for seed in P.replicate_seeds():
        for sigma, fp32 in P.base_models(seed).items():
            for precision in ("fp32", "bf16"):
                config = replace(fp32, precision=precision)
                model = trained_model(config, device="cpu")
                key = {"sigma": sigma, "seed": seed, "precision": precision}
                models.append(
                    {
                        **key,
                        "clean accuracy": evaluate_accuracy(model, test),
                        "accuracy under noise": evaluate_accuracy(model, test, noise_scale=sigma),
                    }
                )
                log = runs.certify(config, Gaussian(sigma))[COLUMNS]
                certificates.append(log.assign(**key))
                print(key, models[-1], flush=True)
    pd.DataFrame(models).round(4).to_csv(TABLES / "bf16_training_models.csv", index=False)
    table = pd.concat(certificates, ignore_index=True)
    table.round(6).to_csv(TABLES / "bf16_training.csv", index=False)


if __name__ == "__main__":
    main()
