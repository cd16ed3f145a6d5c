"""Every random stream of rsutils, by name: one registry, one way to seed.

A run has one ``seed``. Everything random that a run draws comes from a *named stream*
of :data:`STREAMS`, for one ``index`` (the input, or the case, that the draws are for)
and the stream's sub-keys, if it has any: :func:`stream_generator` gives its
``torch.Generator``, :func:`derived_seed` the integer that seeds it, for the APIs that
take an integer (``torch.manual_seed``, another run's ``seed``).

Guarantee: a stream's state is a function of ``(seed, index, stream, *sub_keys)`` only.
NumPy's ``SeedSequence(entropy=seed, spawn_key=(index, number, *sub_keys))`` mixes them,
with ``number`` the stream's fixed number in :data:`STREAMS`, so distinct streams,
indices and seeds give unrelated draws. In particular, no stream is seeded by arithmetic
on the seed (``seed + 1``): the streams of run ``seed`` never coincide with those of run
``seed + 1``, so that replicate models trained with seeds 0, 1, 2 draw independent
initial weights, orders and noise. And the draws for one input do not depend on which
other inputs a run holds, nor on their order, batching or sharding.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np
import torch

from rsutils.core.validation import check_non_negative

__all__ = [
    "PHASES",
    "STREAMS",
    "StreamKey",
    "derived_seed",
    "draw_seed",
    "image_generator",
    "replicate_seeds",
    "seed_label",
    "stream_generator",
]


@dataclass(frozen=True)
class StreamKey:
    """Where a named stream sits among the streams of one seed.

    ``number`` is the stream's fixed place in the spawn key; ``sub_keys`` names the
    further integers a caller must pass (none for most), so that no stream can be drawn
    with two shapes of key.
    """

    number: int
    sub_keys: tuple[str, ...] = ()


#: The named streams, with who draws from each. ``index`` is the input's id for the
#: streams of one input, the case's number for a check's cases, and 0 for the streams
#: of a whole run.
#:
#: Certification of one input (:class:`~rsutils.core.smooth.Smooth` and what builds on it):
#:
#: - ``select`` (0): CERTIFY's ``n0`` selection draws (also the sequential and planned
#:   procedures, which select the same way);
#: - ``estimate`` (1): CERTIFY's ``n`` estimation draws, and the default stream of
#:   :meth:`~rsutils.core.smooth.Smooth.sample_counts`;
#: - ``predict`` (2): PREDICT's draws;
#: - ``sigma`` (3): the draws of the sigma ascent of :mod:`rsutils.ddrs.sigma_ascent`;
#: - ``randomize`` (4): the one uniform ``u`` of a randomised Clopper–Pearson test
#:   (:class:`~rsutils.sequential.spending.LookSchedule` with ``randomized``), drawn
#:   independently of the input's draws and stated in its decisions;
#: - ``reference`` (5): the paired draws of :mod:`rsutils.core.reference_precision`, on
#:   which the fast (bfloat16) and the reference (float32) base model both classify the
#:   same noise, apart from CERTIFY's draws so that a fast-mode log keeps its counts.
#:
#: The soundness audit of one certificate (:mod:`rsutils.anisotropic.soundness.audit`), numbered
#: from 1000 so that a point is verified on draws independent of those that certified
#: its input, and certification can gain streams without moving them:
#:
#: - ``boundary`` (1000, sub-key ``point``, 0): random points near the region's boundary;
#: - ``attack`` (1001, sub-key ``point``, 0): the draws of the gradient ascent;
#: - ``verify`` (1002, sub-key ``point``): the draws that verify candidate ``point``.
#:
#: Training a model (index 0; :mod:`rsutils.training.train`,
#: :mod:`rsutils.anisotropic.training`):
#:
#: - ``init`` (2000): the initial weights (of a generator too), through ``torch.manual_seed``;
#: - ``order`` (2001): the order in which training visits the images;
#: - ``augment`` (2002): the noise training draws (augmentation, SmoothAdv's and MACER's
#:   draws, the sigma ascent of data-dependent training, the noise of NPG training);
#: - ``evaluate`` (2003): the noise of :func:`~rsutils.training.train.evaluate_accuracy`;
#: - ``replicate`` (2004, index the replicate): the run seed of replicate model ``r ≥ 1``
#:   of a setting (:func:`replicate_seeds`; replicate 0 is the run itself);
#: - ``gradient`` (2005): the batches and noise of
#:   :func:`~rsutils.anisotropic.saturation.ce_sigma_gradient`, which measures the
#:   gradient a training step starts from without taking the step.
#:
#: Queries beyond the test images, whose answers go through a certificate memory:
#:
#: - ``probes`` (2100, index 0): the points drawn inside certified regions;
#: - ``requery`` (2101, index 0): the seed of the run that certifies such points (probes,
#:   audited points), so that point ``i`` does not reuse test image ``i``'s streams.
#:
#: Runs that only sort the test images into groups:
#:
#: - ``regroup`` (2200, index 0): the certification seed of a second, independent run of
#:   the same models and images (for chapter 02, whether CERTIFY sits at its ceiling),
#:   whose outcomes define the groups a comparison is split by, so that a group is not
#:   chosen on the draws it is judged on.
#:
#: Checks and worked examples:
#:
#: - ``worst-case`` (3000, index the case, sub-key ``part``): the Neyman-Pearson worst
#:   case of :mod:`rsutils.checks.worst_case`, part 0 its random directions and part
#:   ``k + 1`` the noise that tests direction ``k``;
#: - ``pairs`` (3001, index 0): the pairs of
#:   :func:`~rsutils.anisotropic.soundness.leakage.different_class_pairs`;
#: - ``swap`` (3002, index the pair): the votes of
#:   :func:`~rsutils.anisotropic.soundness.leakage.mu_swap_votes`;
#: - ``bootstrap`` (3003, index 0): the resamples of
#:   :func:`~rsutils.analysis.metrics.acr_difference`'s bootstrap, and of
#:   :func:`~rsutils.analysis.differences.replicated_difference`'s;
#: - ``label-probe`` (3010, index the input, sub-key ``probe``): the votes of
#:   :func:`~rsutils.anisotropic.soundness.leakage.label_channel_votes`, probe 0 the input's own
#:   offset, 1 a same-class donor's, 2 the offset alone, 3 the background alone;
#: - ``donors`` (3011, index the input): the same-class donor of
#:   :func:`~rsutils.anisotropic.soundness.leakage.same_class_donors`;
#: - ``vote-bootstrap`` (3012, index the row): the resamples of
#:   :func:`~rsutils.anisotropic.soundness.leakage.vote_share_table`'s bootstrap;
#: - ``uniform-images`` (3013, index the image): the random inputs of
#:   :func:`~rsutils.anisotropic.released.uniform_images`;
#: - ``lipschitz`` (3014, index 0): the random pairs and starting points of
#:   :func:`~rsutils.anisotropic.soundness.lipschitz.empirical_mu_ratios`;
#: - ``offset-move`` (3015, index 0): the starting points of
#:   :func:`~rsutils.anisotropic.soundness.local.offset_move_found`;
#: - ``bernoulli`` (3020, index the case): the Bernoulli draws (and the randomisation
#:   ``u``) of the coverage checks of :mod:`rsutils.sequential.confidence_sequence` and
#:   :mod:`rsutils.sequential.published` (cases from 300);
#: - ``coverage`` (3021, index the run, sub-key ``phase``): the recorded draws of
#:   :func:`~rsutils.sequential.coverage.false_rate`, phase 0 the selection draws and
#:   1 the estimation draws;
#: - ``example`` (4000, index the example, sub-key ``chapter``): a chapter's own worked
#:   examples (a random classifier, probe inputs, a Monte Carlo volume), numbered within
#:   the chapter.
STREAMS: Mapping[str, StreamKey] = MappingProxyType(
    {
        "select": StreamKey(0),
        "estimate": StreamKey(1),
        "predict": StreamKey(2),
        "sigma": StreamKey(3),
        "randomize": StreamKey(4),
        "reference": StreamKey(5),
        "boundary": StreamKey(1000, ("point",)),
        "attack": StreamKey(1001, ("point",)),
        "verify": StreamKey(1002, ("point",)),
        "init": StreamKey(2000),
        "order": StreamKey(2001),
        "augment": StreamKey(2002),
        "evaluate": StreamKey(2003),
        "replicate": StreamKey(2004),
        "gradient": StreamKey(2005),
        "probes": StreamKey(2100),
        "requery": StreamKey(2101),
        "regroup": StreamKey(2200),
        "worst-case": StreamKey(3000, ("part",)),
        "pairs": StreamKey(3001),
        "swap": StreamKey(3002),
        "bootstrap": StreamKey(3003),
        "label-probe": StreamKey(3010, ("probe",)),
        "donors": StreamKey(3011),
        "vote-bootstrap": StreamKey(3012),
        "uniform-images": StreamKey(3013),
        "lipschitz": StreamKey(3014),
        "offset-move": StreamKey(3015),
        "bernoulli": StreamKey(3020),
        "coverage": StreamKey(3021, ("phase",)),
        "power": StreamKey(3022),
        "example": StreamKey(4000, ("chapter",)),
    }
)

#: The streams of one input's certification that :func:`image_generator` serves, by
#: name, with their numbers.
PHASES: Mapping[str, int] = MappingProxyType(
    {name: STREAMS[name].number for name in ("select", "estimate", "predict", "sigma", "reference")}
)


def draw_seed() -> int:
    """A fresh random seed, for callers that pass ``seed=None``."""
    return secrets.randbits(63)


def derived_seed(seed: int, index: int, stream: str, *sub_keys: int) -> int:
    """The integer that seeds the stream ``stream`` of ``index`` in run ``seed``.

    ``stream`` is a name of :data:`STREAMS` and ``sub_keys`` its sub-keys, in order. It
    is the first 64-bit word of ``SeedSequence(entropy=seed, spawn_key=(index, number,
    *sub_keys))`` shifted right by one (a non-negative 63-bit integer, which every torch
    generator and every ``seed`` argument of rsutils accepts).
    """
    check_non_negative("seed", seed, "a non-negative integer or None")
    check_non_negative("index", index, "a non-negative integer (the input's id)")
    if stream not in STREAMS:
        raise ValueError(f"stream must be one of {sorted(STREAMS)}, got {stream!r}")
    key = STREAMS[stream]
    if len(sub_keys) != len(key.sub_keys):
        raise ValueError(
            f"the stream {stream!r} takes the sub-keys {key.sub_keys}, got {sub_keys!r}; "
            f"pass exactly {len(key.sub_keys)} integer(s) after its name"
        )
    for name, value in zip(key.sub_keys, sub_keys, strict=True):
        check_non_negative(name, value, f"a non-negative integer (a sub-key of {stream!r})")
    spawn_key = (int(index), key.number, *(int(value) for value in sub_keys))
    sequence = np.random.SeedSequence(entropy=int(seed), spawn_key=spawn_key)
    return int(sequence.generate_state(1, np.uint64)[0]) >> 1


def replicate_seeds(seed: int, count: int) -> tuple[int, ...]:
    """The run seeds of ``count`` independently trained replicates of run ``seed``.

    Replicate 0 is the run itself (``seed``), so the first replicate of a comparison is
    the model every other section of a chapter shows; replicate ``r ≥ 1`` runs with
    ``derived_seed(seed, r, "replicate")``. A replicate's seed reaches every stream of
    its training (initial weights, order, noise) and of its base model, so replicates
    share no stream with each other or with run ``seed + r``.
    """
    if isinstance(count, bool) or not isinstance(count, int | np.integer) or count < 1:
        raise ValueError(f"count must be a positive integer (the number of models), got {count!r}")
    seeds = (int(seed), *(derived_seed(seed, r, "replicate") for r in range(1, int(count))))
    _REPLICATES.update({s: (int(seed), r) for r, s in enumerate(seeds) if r})
    return seeds


#: The replicate seeds :func:`replicate_seeds` has given in this process: derived seed →
#: (the seed it was derived from, replicate number), for :func:`seed_label`.
_REPLICATES: dict[int, tuple[int, int]] = {}


def seed_label(seed: int) -> str:
    """``seed`` as a person set it: ``"seed 0, replicate 3"`` for a replicate seed that
    :func:`replicate_seeds` gave in this process (a 63-bit number nobody typed), else
    ``"seed <seed>"``. For progress lines and messages; identities keep the number."""
    if (found := _REPLICATES.get(int(seed))) is not None:
        return f"seed {found[0]}, replicate {found[1]}"
    return f"seed {seed}"


def stream_generator(
    seed: int, index: int, stream: str, *sub_keys: int, device: torch.device | str = "cpu"
) -> torch.Generator:
    """A generator on ``device`` for the stream ``stream`` of ``index`` in run ``seed``,
    seeded with :func:`derived_seed`: its draws are a function of ``(seed, index, stream,
    *sub_keys)`` and the device only."""
    generator = torch.Generator(device=device)
    generator.manual_seed(derived_seed(seed, index, stream, *sub_keys))
    return generator


def image_generator(seed: int, index: int, phase: str, device: torch.device) -> torch.Generator:
    """The generator of one of an input's certification streams, a name of :data:`PHASES`.

    The same generator as ``stream_generator(seed, index, phase, device=device)``.
    """
    if phase not in PHASES:
        raise ValueError(f"phase must be one of {sorted(PHASES)}, got {phase!r}")
    return stream_generator(seed, index, phase, device=device)
