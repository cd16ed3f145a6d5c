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
from scipy.stats import beta

from rsutils import Gaussian, Smooth
from rsutils.book.experiments import trained_model
from rsutils.book.profiles import get_profile
from rsutils.cache import cached_path
from rsutils.core.inference import INFERENCE_MODES, InferenceModel
from rsutils.core.record import record_draws
from rsutils.logs.record_runs import read_record_log, read_records
from rsutils.training.data import load_dataset

PROFILE = get_profile("cpu")


def own_shape(model: torch.nn.Module, mode: str, draws: torch.Tensor, size: int) -> torch.Tensor:
    """Logits of ``draws`` in batches of ``size``, each batch at its own shape."""
    wrapped = InferenceModel(model, mode, rows=size)
    with torch.inference_mode():
        return torch.cat([wrapped(draws[i : i + size]) for i in range(0, len(draws), size)])


def flip_rates(images: int) -> pd.DataFrame:
    data, rows = load_dataset("fashion-mnist", "test"), []
    for sigma, config in PROFILE.base_models().items():
        model = trained_model(config, device="cpu", progress=False).eval()
        for mode in INFERENCE_MODES:
            flips = {1: 0, 7: 0}
            compared = {1: 0, 7: 0}
            largest = 0.0
            for k in range(images):
                x = data.images[k * PROFILE.certify.skip]
                generator = torch.Generator().manual_seed(k)
                draws = x + sigma * torch.randn(1000, *x.shape, generator=generator)
                large = own_shape(model, mode, draws, 1000)
                for size, count in ((7, 1000), (1, 100)):
                    small = own_shape(model, mode, draws[:count], size)
                    flips[size] += int((small.argmax(1) != large[:count].argmax(1)).sum())
                    compared[size] += count
                    largest = max(largest, (small - large[:count]).abs().max().item())
            for size in (1, 7):
                upper = beta.ppf(0.95, flips[size] + 1, compared[size] - flips[size])
                rows.append(
                    {
                        "sigma": sigma,
                        "mode": mode,
                        "batch": size,
                        "draws": compared[size],
                        "flips": flips[size],
                        "rate_upper95": upper,
                        "max_logit_change": largest,
                    }
                )
            print(rows[-1], flush=True)
    return pd.DataFrame(rows)


def records_unchanged(images: int) -> pd.DataFrame:
    """Each cached record of chapter 01 against CERTIFY's draws recorded again now."""
    data, rows, main = load_dataset("fashion-mnist", "test"), [], PROFILE.certify
    for sigma, config in PROFILE.base_models().items():
        model = trained_model(config, device="cpu", progress=False).eval()
        smooth = Smooth(model, 10, Gaussian(sigma), inference=main.inference)
        key = {
            "model": cached_path("models", config.as_dict(), ".pt").stem,
        }
        path = next(p for p in record_paths() if key["model"] in p.read_text()[:80])
        log = read_record_log(path.with_suffix(".tsv"))
        for record in read_records(log, 10)[:images]:
            again = record_draws(
                smooth,
                data.images[record.index],
                main.n0,
                main.n,
                main.batch_size,
                seed=record.seed,
                index=record.index,
            )
            same = np.array_equal(again.selection, record.selection) and np.array_equal(
                again.estimation, record.estimation
            )
            rows.append({"sigma": sigma, "index": record.index, "identical": same})
            print(rows[-1], flush=True)
    return pd.DataFrame(rows)


def record_paths() -> list:
    folder = cached_path("record", {"probe": 0}, ".json").parent
    return sorted(p for p in folder.glob("*.json") if not p.name.endswith(".tsv.json"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=10)
    parser.add_argument("--records", type=int, default=3)
    args = parser.parse_args()
    print(flip_rates(args.images).to_string())
    print(records_unchanged(args.records).to_string())


if __name__ == "__main__":
    main()
