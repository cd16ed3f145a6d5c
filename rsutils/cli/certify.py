"""``python -m rsutils certify``: CERTIFY every skip-th input into a TSV log.

The command runs one of four procedures, chosen by its options: CERTIFY
(:func:`~rsutils.logs.runner.certify_dataset`), data-dependent CERTIFY with
``--ascent-steps`` (:func:`~rsutils.logs.runner.certify_dataset_ds`, through a
certificate memory), CERTIFY with an input-specific number of draws with
``--radius-loss`` (:func:`~rsutils.logs.sequential_runs.certify_planned_dataset`; with
``--looks``, sequential looks at the radius instead,
:func:`~rsutils.logs.sequential_runs.certify_looks_dataset`) and
sequential decisions with ``--decide``
(:func:`~rsutils.logs.sequential_runs.decide_dataset`; with ``--true-label``, the
evaluation of each input's true label without selection draws,
:func:`~rsutils.logs.sequential_runs.decide_label_dataset`). With a bfloat16
``--inference`` and ``--reference-draws M`` it certifies the float32 model from the
bfloat16 counts and ``M`` paired draws
(:func:`~rsutils.logs.reference_runs.certify_reference_dataset`). The noise is a family, made
anisotropic by ``--sigma-map``/``--mu-map`` or made at each input by ``--generator``.
:func:`certify_mode` checks every option against the others, in one place, before
anything is loaded or written.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path

from rsutils.cli.arguments import (
    HelpFormatter,
    non_negative_float,
    non_negative_int,
    positive_float,
    positive_int,
    probability,
)
from rsutils.cli.common import (
    LoadedRun,
    add_run_arguments,
    check_noise_sources,
    load_run,
    run_log,
    settings_from_args,
)
from rsutils.core.anytime import AnytimeSchedule
from rsutils.core.noise import FAMILIES
from rsutils.core.reference_precision import FAST_MODES, ReferenceSmooth
from rsutils.core.sequential import LookSchedule, Schedule
from rsutils.core.settings import CertifySettings
from rsutils.ddrs.data_dependent import DataDependentSmooth
from rsutils.ddrs.sigma_ascent import SigmaAscent
from rsutils.geometry.norms import NORM_ORDERS
from rsutils.logs.distributed import distributed_rank
from rsutils.logs.reference_runs import certify_reference_dataset
from rsutils.logs.runner import certify_dataset, certify_dataset_ds
from rsutils.logs.sequential_runs import (
    certify_looks_dataset,
    certify_planned_dataset,
    decide_dataset,
    decide_label_dataset,
)
from rsutils.memory.balls import CertificateMemory

__all__ = ["CertifyMode", "add_parser", "certify_mode", "run"]


def add_parser(commands: argparse._SubParsersAction) -> None:
    """The ``certify`` subcommand: Cohen et al.'s arguments, then those of its modes."""
    certify = commands.add_parser(
        "certify", help="CERTIFY every skip-th input into a TSV log", formatter_class=HelpFormatter
    )
    add_run_arguments(certify)
    certify.add_argument(
        "--N0",
        type=positive_int,
        default=CertifySettings.n0,
        help="Monte Carlo samples that select the class",
    )
    certify.add_argument(
        "--norm",
        choices=sorted(NORM_ORDERS),
        default=None,
        help="threat norm of the radius (default: the noise family's own)",
    )
    certify.add_argument(
        "--radius-loss",
        type=non_negative_float,
        default=None,
        metavar="L",
        help="each input's own number of draws (at most --N), losing about L of radius",
    )
    certify.add_argument(
        "--looks",
        action="store_true",
        help="with --radius-loss: look at the radius after 100, 200, 400, ... and --N draws "
        "(alpha spent over the looks, half at --N) instead of planning from the --N0 draws",
    )
    certify.add_argument(
        "--decide",
        type=non_negative_float,
        nargs="+",
        default=None,
        metavar="R",
        help="sequential decisions 'certified at radius R?' (looks up to --N draws)",
    )
    certify.add_argument(
        "--test",
        choices=TESTS,
        default="spending",
        help="with --decide: 'spending' splits alpha over doubling looks (default), "
        "'sequence' tests a confidence sequence after every batch at the full alpha, "
        "'randomised' randomises Clopper-Pearson at the spending looks (u in the log)",
    )
    certify.add_argument(
        "--true-label",
        action="store_true",
        help="with --decide: evaluation only, is each input's true label certified at R? "
        "(no --N0 selection draws; measures certified accuracy, certifies nothing deployed)",
    )
    _add_ascent_arguments(certify)
    _add_reference_arguments(certify)
    certify.set_defaults(run=run)


def _add_reference_arguments(certify: argparse.ArgumentParser) -> None:
    """The float32 model certified from bfloat16 counts."""
    certify.add_argument(
        "--reference-draws",
        type=positive_int,
        default=None,
        metavar="M",
        help="with a bf16 --inference: certify the float32 model instead, from the bf16 "
        "counts and M paired draws on which both modes classify the same noise",
    )
    certify.add_argument(
        "--fast-share",
        type=probability,
        default=None,
        metavar="S",
        help="with --reference-draws: the share of alpha spent on the bf16 counts (the rest "
        "bounds the disagreement; default 0.5)",
    )


def _add_ascent_arguments(certify: argparse.ArgumentParser) -> None:
    """Data-dependent sigma: the ascent's settings and the certificate memory."""
    certify.add_argument(
        "--ascent-steps",
        type=non_negative_int,
        default=None,
        metavar="K",
        help="data-dependent sigma (DDRS): K steps of sigma ascent from sigma, per input",
    )
    certify.add_argument(
        "--ascent-lr",
        type=positive_float,
        default=SigmaAscent.lr,
        help="sigma ascent step size",
    )
    certify.add_argument(
        "--ascent-draws",
        type=positive_int,
        default=SigmaAscent.draws,
        help="noise draws per sigma ascent step (M)",
    )
    certify.add_argument(
        "--ascent-clamp",
        type=probability,
        default=SigmaAscent.clamp,
        help="sigma ascent clamps the expected probabilities to [clamp, 1 - clamp]",
    )
    certify.add_argument(
        "--memory",
        default=None,
        help="certificate memory (SQLite) file of --ascent-steps "
        "(default: <outfile>.memory.sqlite)",
    )


@dataclass(frozen=True)
class CertifyMode:
    """The procedure a certify command runs: ``"certify"``, ``"data-dependent"`` (with
    its sigma ascent), ``"planned"`` (``--radius-loss``), ``"looks"`` (with ``--looks``),
    ``"decide"``, ``"decide-label"`` (``--decide`` with ``--true-label``) or
    ``"reference"`` (``--reference-draws``)."""

    name: str
    ascent: SigmaAscent | None = None


def certify_mode(args: argparse.Namespace) -> CertifyMode:
    """The command's procedure, once its options are checked against each other.

    Every conflict between the modes and the noise options is refused here, with the
    option to drop, before any file is read or written: sigma ascent certifies with
    all ``--N`` draws of one isotropic family, in one process, and chooses the noise
    itself (so no ``--generator``, maps, ``--radius-loss``, ``--decide``, torchrun, or
    ``--norm`` other than its own); ``--radius-loss`` and ``--decide`` exclude each
    other and take isotropic noise; ``--true-label`` and ``--test`` need ``--decide``; a
    generator and maps both make ``mu`` and ``sigma``.
    """
    check_noise_sources(args)
    if args.reference_draws is not None:
        return _checked_reference(args)
    if args.fast_share is not None:
        raise ValueError("--fast-share splits the alpha of --reference-draws; add it")
    if args.true_label and args.decide is None:
        raise ValueError("--true-label evaluates the radii of --decide; add --decide R [R ...]")
    if args.looks and args.radius_loss is None:
        raise ValueError("--looks stops the draws of --radius-loss; add --radius-loss L")
    if args.test != "spending" and args.decide is None:
        raise ValueError(f"--test {args.test} is a test of --decide; add --decide R [R ...]")
    if args.ascent_steps is not None:
        return CertifyMode("data-dependent", _checked_ascent(args))
    if args.radius_loss is not None and args.decide is not None:
        raise ValueError("--radius-loss and --decide answer different questions; pick one")
    fewer_draws = args.radius_loss is not None or args.decide is not None
    if fewer_draws and (args.generator is not None or args.sigma_map):
        raise ValueError("--radius-loss and --decide take isotropic noise; drop the maps")
    if args.radius_loss is not None:
        return CertifyMode("looks" if args.looks else "planned")
    if args.decide is None:
        return CertifyMode("certify")
    return CertifyMode("decide-label" if args.true_label else "decide")


def _checked_reference(args: argparse.Namespace) -> CertifyMode:
    """The float32-from-bfloat16 mode, refused with the options it cannot go with."""
    if args.inference not in FAST_MODES:
        raise ValueError(
            f"--reference-draws certifies the float32 model from bfloat16 counts; add "
            f"--inference {FAST_MODES[-1]} (or bf16), got --inference {args.inference}"
        )
    others = {
        "--ascent-steps": args.ascent_steps is not None,
        "--radius-loss": args.radius_loss is not None,
        "--decide": args.decide is not None,
        "--generator": args.generator is not None,
        "--sigma-map": bool(args.sigma_map),
    }
    clash = [name for name, given in others.items() if given]
    if clash:
        raise ValueError(f"--reference-draws runs plain CERTIFY; drop {', '.join(clash)}")
    return CertifyMode("reference")


def _checked_ascent(args: argparse.Namespace) -> SigmaAscent:
    """The sigma ascent of ``--ascent-*``, refused with the options it cannot go with."""
    if args.generator is not None:
        raise ValueError("--generator and --ascent-steps both choose the noise; pick one")
    if args.radius_loss is not None or args.decide is not None:
        raise ValueError("sigma ascent certifies with all --N draws; drop --radius-loss/--decide")
    if distributed_rank() is not None:
        raise ValueError(
            "data-dependent certification answers through one certificate memory, in "
            "input order; run it in a single process (without torchrun)"
        )
    if args.sigma_map:
        raise ValueError("--ascent-steps tunes an isotropic sigma; drop --sigma-map")
    ascent = SigmaAscent(
        sigma0=args.sigma,
        iterations=args.ascent_steps,
        lr=args.ascent_lr,
        draws=args.ascent_draws,
        family=args.noise,
        clamp=args.ascent_clamp,
    )
    if (args.norm or FAMILIES[args.noise].default_norm) != ascent.norm:
        raise ValueError(f"{args.noise} sigma ascent certifies {ascent.norm}; drop --norm")
    return ascent


def run(args: argparse.Namespace) -> None:
    """Check the options, load the run, and certify into ``args.outfile``."""
    mode = certify_mode(args)
    settings = settings_from_args(args)
    if mode.ascent is not None:
        # Sigma ascent runs the model as given; the certificates use --inference.
        loaded = load_run(args, inference="fp32")
        _certify_data_dependent(args, loaded, settings, mode.ascent)
        return
    if mode.name == "reference":
        loaded = load_run(args, inference="fp32")
        # The checkpoint's model as trained: ReferenceSmooth wraps it in each mode itself.
        model, classes = loaded.smooth.model.inner, loaded.data.num_classes
        smooth = ReferenceSmooth(
            model, classes, loaded.smooth.noise, draws=args.reference_draws,
            fast=args.inference, fast_share=args.fast_share or 0.5, norm=args.norm,
        )  # fmt: skip
        run_log(args, certify_reference_dataset, replace(loaded, smooth=smooth), settings)
        return
    loaded = load_run(args, inference=args.inference)
    run_log(args, _runner(args, mode, settings), loaded, settings)


#: The tests ``--decide`` can run (``--test``).
TESTS = ("spending", "sequence", "randomised")


def decision_schedule(test: str, n: int, alpha: float) -> Schedule:
    """The looks of ``--decide`` for ``--test``, with at most ``n`` draws at level ``alpha``."""
    if test == "sequence":
        return AnytimeSchedule.geometric(n, alpha)
    return LookSchedule.geometric(n, alpha, randomized=test == "randomised")


def _runner(
    args: argparse.Namespace, mode: CertifyMode, settings: CertifySettings
) -> Callable[..., object]:
    """The dataset runner of ``mode``, its own options bound."""
    if mode.name == "planned":
        return partial(certify_planned_dataset, radius_loss=args.radius_loss)
    if mode.name == "looks":
        schedule = LookSchedule.geometric(settings.n, settings.alpha, first=100)
        return partial(certify_looks_dataset, schedule=schedule, radius_loss=args.radius_loss)
    if mode.name in ("decide", "decide-label"):
        schedule = decision_schedule(args.test, settings.n, settings.alpha)
        runner = decide_dataset if mode.name == "decide" else decide_label_dataset
        return partial(runner, schedule=schedule, radii=args.decide)
    return certify_dataset


def _certify_data_dependent(
    args: argparse.Namespace, loaded: LoadedRun, settings: CertifySettings, ascent: SigmaAscent
) -> None:
    """Data-dependent CERTIFY through the certificate memory of ``--memory``; a refused
    run (e.g. a log of other settings) leaves no new memory behind."""
    memory_path = args.memory or f"{args.outfile}.memory.sqlite"
    new_memory, stored = not os.path.exists(memory_path), 0
    options = {"config": loaded.config, "progress": not args.quiet}
    try:
        with CertificateMemory(memory_path, norm=ascent.norm) as memory:
            model, classes = loaded.smooth.model, loaded.data.num_classes
            ds = DataDependentSmooth(model, classes, ascent, memory, inference=args.inference)
            try:
                certify_dataset_ds(
                    ds, loaded.data, loaded.indices, args.outfile, settings, **options
                )
            finally:
                stored = len(memory)
    except ValueError:
        if new_memory and stored == 0:
            for suffix in ("", "-wal", "-shm"):
                Path(memory_path + suffix).unlink(missing_ok=True)
        raise
