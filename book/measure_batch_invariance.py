"""Whether a draw's class depends on its batch, for the cpu book's base models.

    RSUTILS_CACHE=DIR RSUTILS_DATA=DIR python book/measure_batch_invariance.py [--images K]

Before fixed rows (:mod:`rsutils.core.inference`), each batch ran at its own shape, so
its kernels could sum in another order. For each of chapter 01's three base models and
each inference mode this classifies the same noisy draws of ``K`` test images (sigma
of the model, n = 1,000 each) in batches of 1,000, of 7 and of 1 (its first 100 draws),
every batch at its own shape, and counts the draws whose class differs from the batch
of 1,000 (with a one-sided 95% Clopper–Pearson upper bound on the rate) and the largest
change of a logit. Then it checks that the fixed rows change no certificate of the
book: it records CERTIFY's draws of the first images again in the book's mode and
compares every draw's class with the cached record.
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
import torch

from rsutils import Gaussian
from rsutils.book.chapter import Chapter
from rsutils.book.profiles import get_profile
from rsutils.book.trained import trained_model
from rsutils.checks.batch_invariance import batch_sensitivity
from rsutils.core.confidence import clopper_pearson_upper
from rsutils.core.inference import INFERENCE_MODES
from rsutils.data import load_dataset
from rsutils.sequential.record import record_draws
from rsutils.sequential.runs import read_records

PROFILE = get_profile("cpu")


def flip_rates(images: int) -> pd.DataFrame:
    """:func:`~rsutils.checks.batch_invariance.batch_sensitivity` of each base model and
    mode, summed over ``images`` test images (1,000 noisy draws each)."""
    data, rows = load_dataset("fashion-mnist", "test"), []
    for sigma, config in PROFILE.base_models().items():
        model = trained_model(config, device="cpu", progress=False).eval()
        for mode in INFERENCE_MODES:
            per_image = []
            for k in range(images):
                x = data.images[k * PROFILE.certify.skip]
                generator = torch.Generator().manual_seed(k)
                draws = x + sigma * torch.randn(1000, *x.shape, generator=generator)
                per_image += batch_sensitivity(model, draws, mode=mode)
            for size in (1, 7):
                seen = [r for r in per_image if r.batch == size]
                flips, compared = sum(r.flips for r in seen), sum(r.draws for r in seen)
                rows.append(
                    {
                        "sigma": sigma,
                        "mode": mode,
                        "batch": size,
                        "draws": compared,
                        "flips": flips,
                        "rate_upper95": float(clopper_pearson_upper(flips, compared, 0.05)),
                        "max_logit_change": max(r.max_logit_change for r in seen),
                    }
                )
            print(rows[-1], flush=True)
    return pd.DataFrame(rows)


def records_unchanged(images: int) -> pd.DataFrame:
    """Chapter 01's cached records (found as the book finds them) against CERTIFY's
    draws recorded again now."""
    chapter = Chapter.open("cpu", progress=False)
    main, rows = chapter.main, []
    for sigma, config in PROFILE.base_models().items():
        log = main.cached().record(config, Gaussian(sigma))
        smooth = main.smooth(config, Gaussian(sigma))
        for record in read_records(log, 10)[:images]:
            again = record_draws(
                smooth,
                chapter.test.images[record.index],
                main.settings.n0,
                main.settings.n,
                main.settings.batch_size,
                seed=record.seed,
                index=record.index,
            )
            same = np.array_equal(again.selection, record.selection) and np.array_equal(
                again.estimation, record.estimation
            )
            rows.append({"sigma": sigma, "index": record.index, "identical": same})
            print(rows[-1], flush=True)
    return pd.DataFrame(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=10)
    parser.add_argument("--records", type=int, default=3)
    args = parser.parse_args()
    print(flip_rates(args.images).to_string())
    print(records_unchanged(args.records).to_string())


if __name__ == "__main__":
    main()
