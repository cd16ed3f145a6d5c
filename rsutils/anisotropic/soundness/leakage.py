"""Does the offset ``mu(x)`` carry the label? The mu-swap and label-channel probes.

UCAN's certification-wise generator adds ``mu(x)`` (up to ``λ`` per pixel) to every
noisy copy of ``x``. Nothing stops it from writing evidence of ``x``'s class into the
input, so that the base classifier reads the offset rather than the image. The probe
classifies ``x_i + mu(x_j) + sigma(x_j) ⊙ λ·eps`` for pairs of inputs of different
classes: the fraction of votes for ``x_j``'s class, against the fraction for
``x_i``'s, says how much of the decision the offset makes.

:func:`label_channel_votes` adds its references: the input's own offset (the rate the
swap is compared with), a donor of the same class, and the offset with the image
removed (a constant background ``c + mu(x) + sigma(x) ⊙ λ·eps``), with the background
alone as that probe's chance level. :func:`vote_share_table` gives each probe's mean
share of votes with a bootstrap interval over the inputs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import torch
from scipy.stats import bootstrap
from torch import nn

from rsutils.anisotropic.generators import NoiseGenerator
from rsutils.core.devices import model_device
from rsutils.core.settings import check_count
from rsutils.core.streams import derived_seed, stream_generator

__all__ = [
    "LABEL_PROBES",
    "different_class_pairs",
    "label_channel_votes",
    "mu_swap_votes",
    "same_class_donors",
    "vote_share_table",
]

#: The probes of :func:`label_channel_votes`, in the order of their ``probe`` sub-key
#: of the ``label-probe`` stream: what the classifier sees besides the noise.
LABEL_PROBES = ("own", "same_class", "mu_only", "background_only")


def different_class_pairs(labels: torch.Tensor, count: int, seed: int = 0) -> np.ndarray:
    """``count`` pairs ``(i, j)`` of indices with ``labels[i] != labels[j]`` (seeded)."""
    check_count("count", count)
    labels = np.asarray(labels)
    if len(np.unique(labels)) < 2:
        raise ValueError("the labels hold a single class; the probe needs two")
    rng = np.random.default_rng(derived_seed(seed, 0, "pairs"))
    pairs: list[tuple[int, int]] = []
    while len(pairs) < count:
        i, j = rng.integers(len(labels), size=2)
        if labels[i] != labels[j]:
            pairs.append((int(i), int(j)))
    return np.array(pairs)


@torch.inference_mode()
def mu_swap_votes(
    model: nn.Module,
    generator: NoiseGenerator,
    images: torch.Tensor,
    labels: torch.Tensor,
    pairs: np.ndarray,
    scale: float,
    draws: int,
    seed: int = 0,
) -> pd.DataFrame:
    """Votes of ``model`` on ``x_i + mu(x_j) + sigma(x_j) ⊙ scale·eps`` for each pair.

    One row per pair: ``i``, ``j``, their labels, and the fractions of the ``draws``
    votes that go to ``label_i`` (``own``) and to ``label_j`` (``offset``). With ``mu``
    and ``sigma`` of ``x_i`` itself the same model votes for ``label_i`` as often as the
    smoothed classifier is right; a large ``offset`` fraction means that ``mu`` decides.
    """
    check_count("draws", draws)
    device = model_device(model)
    rows = []
    for number, (i, j) in enumerate(pairs):
        noise = stream_generator(seed, number, "swap", device=device)
        x_i, x_j = images[i : i + 1].to(device), images[j : j + 1].to(device)
        mu, sigma = generator(x_j)
        eps = torch.randn((draws, *x_i.shape[1:]), generator=noise, device=device)
        votes = model(x_i + mu + sigma * (scale * eps)).argmax(1).cpu()
        own, offset = int(labels[i]), int(labels[j])
        rows.append(
            {
                "i": int(i),
                "j": int(j),
                "label_i": own,
                "label_j": offset,
                "own": float((votes == own).float().mean()),
                "offset": float((votes == offset).float().mean()),
            }
        )
    return pd.DataFrame(rows)


def same_class_donors(
    labels: torch.Tensor | np.ndarray, indices: Sequence[int], seed: int = 0
) -> np.ndarray:
    """For each input ``i`` of ``indices``, a donor ``j ≠ i`` with ``labels[j] == labels[i]``.

    Donors are drawn uniformly among the other inputs of ``i``'s class in the whole of
    ``labels`` (a pool that may be larger than ``indices``), from the ``donors`` stream
    of ``(seed, i)``: an input's donor does not depend on the other inputs probed. A
    class with a single input has no donor: a ``ValueError`` names it.
    """
    labels = np.asarray(labels)
    indices = np.asarray(indices, dtype=int)
    if indices.ndim != 1 or bool((indices < 0).any() or (indices >= len(labels)).any()):
        raise ValueError(f"indices must be positions in labels [0, {len(labels)})")
    donors = []
    for i in indices:
        rng = np.random.default_rng(derived_seed(seed, int(i), "donors"))
        others = np.flatnonzero(labels == labels[i])
        others = others[others != i]
        if others.size == 0:
            raise ValueError(
                f"input {i} is the only one of class {labels[i]}; pass a pool of labels "
                "with at least two inputs of every probed class"
            )
        donors.append(int(rng.choice(others)))
    return np.array(donors, dtype=int)


@torch.inference_mode()
def label_channel_votes(
    model: nn.Module,
    generator: NoiseGenerator,
    images: torch.Tensor,
    labels: torch.Tensor,
    indices: Sequence[int],
    scale: float,
    draws: int,
    *,
    background: float,
    seed: int = 0,
) -> pd.DataFrame:
    """Votes of ``model`` for ``y_i`` under four probes of what the offset carries.

    For each input ``i`` of ``indices`` (positions in the pool ``images``, ``labels``)
    and a same-class donor ``j`` (:func:`same_class_donors`), the fractions of
    ``draws`` votes for ``y_i`` of

    - ``own``: ``f(x_i + mu(x_i) + sigma(x_i) ⊙ λε)``, the smoothed classifier itself;
    - ``same_class``: ``f(x_i + mu(x_j) + sigma(x_j) ⊙ λε)``, another image's offset of
      the same class;
    - ``mu_only``: ``f(c + mu(x_i) + sigma(x_i) ⊙ λε)``, the image replaced by the
      constant ``c = background`` (the generator still sees ``x_i``);
    - ``background_only``: ``f(c + sigma(x_i) ⊙ λε)``, the same without the offset:
      ``mu_only``'s chance level for this classifier (a constant input gets one answer
      whatever ``y_i``, so its share of votes for ``y_i`` tracks the class frequencies,
      about ``1/K`` on balanced classes).

    ``mu_only`` well above ``background_only`` means that ``mu(x)`` alone tells the
    classifier ``x``'s class: a label channel. The draws of probe ``k`` for input
    ``i`` come from the ``label-probe`` stream of ``(seed, i, k)``
    (:data:`LABEL_PROBES` gives ``k``), so a row does not depend on the other inputs.
    One row per input: ``idx``, ``label``, ``donor`` and the four fractions.

    Nine parameters: the classifier and its generator, the pool of images
    with labels and the inputs probed, the noise's λ and draws, and the probe's
    ``background`` and ``seed``.
    """
    check_count("draws", draws)
    try:
        c = float(background)
    except (TypeError, ValueError):
        raise ValueError(
            f"background must be a number (a pixel value), got {background!r}"
        ) from None
    if not np.isfinite(c):
        raise ValueError(f"background must be finite, got {background!r}")
    donors = same_class_donors(labels, indices, seed)
    device = model_device(model)
    rows = []
    for i, j in zip(np.asarray(indices, dtype=int), donors, strict=True):
        x = images[[int(i), int(j)]].to(device)
        mu, sigma = generator(x)
        blank = torch.full_like(x[:1], c)
        centres = (x[:1] + mu[:1], x[:1] + mu[1:], blank + mu[:1], blank)
        scales = (sigma[:1], sigma[1:], sigma[:1], sigma[:1])
        y = int(labels[i])
        row: dict[str, object] = {"idx": int(i), "label": y, "donor": int(j)}
        for k, name in enumerate(LABEL_PROBES):
            noise = stream_generator(seed, int(i), "label-probe", k, device=device)
            eps = torch.randn((draws, *x.shape[1:]), generator=noise, device=device)
            votes = model(centres[k] + scales[k] * (scale * eps)).argmax(1)
            row[name] = float((votes == y).float().mean())
        rows.append(row)
    return pd.DataFrame(rows)


def vote_share_table(
    shares: Mapping[str, Sequence[float] | np.ndarray | pd.Series],
    *,
    confidence: float = 0.95,
    seed: int = 0,
) -> pd.DataFrame:
    """The mean over inputs of each probe's share of votes, with a bootstrap interval.

    ``shares`` maps a probe's name to its per-input fractions of votes. Each row has
    ``inputs``, ``mean`` and the percentile bootstrap interval ``[low, high]`` at
    ``confidence`` (9,999 resamples of the inputs; row ``r`` draws from the
    ``vote-bootstrap`` stream of ``(seed, r)``). The interval covers the choice of
    inputs, the unit that varies most; the draws within an input are nested in it.
    When every input has the same share there is nothing to resample and the interval
    is that value.
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence!r}")
    rows = {}
    for number, (name, values) in enumerate(shares.items()):
        data = np.asarray(values, dtype=float)
        if data.ndim != 1 or data.size == 0 or not bool(np.isfinite(data).all()):
            raise ValueError(f"the shares of {name!r} must be a non-empty list of numbers")
        if bool((data < 0).any() or (data > 1).any()):
            raise ValueError(f"the shares of {name!r} must be fractions in [0, 1]")
        low = high = float(data[0])
        if np.ptp(data) > 0:
            result = bootstrap(
                (data,),
                np.mean,
                confidence_level=confidence,
                n_resamples=9_999,
                method="percentile",
                rng=np.random.default_rng(derived_seed(seed, number, "vote-bootstrap")),
            )
            low, high = map(float, result.confidence_interval)
        rows[name] = {"inputs": data.size, "mean": float(data.mean()), "low": low, "high": high}
    return pd.DataFrame.from_dict(rows, orient="index")
