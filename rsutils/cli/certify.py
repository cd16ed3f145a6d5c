"""``python -m rsutils certify``: CERTIFY every skip-th input into a TSV log.

The command runs CERTIFY (:func:`~rsutils.logs.runner.certify_dataset`), data-dependent
CERTIFY with ``--ascent-steps`` (:func:`~rsutils.ddrs.runs.certify_dataset_ds`,
through a certificate memory), or, with ``--procedure NAME``, any fewer-draws procedure
of :data:`~rsutils.sequential.procedure.PROCEDURES` by its name
(:func:`~rsutils.sequential.runs.run_procedure`): ``planned`` and ``radius-looks``
(``--radius-loss L``), and ``decide`` (``--radii R [R ...]``, ``--test NAME`` from
:data:`~rsutils.sequential.procedure.TESTS`, ``--true-label``). Each procedure declares
the options it takes (its ``options``, each a
:class:`~rsutils.sequential.procedure.Option`): the command's flags are built from
them, and it refuses the options of other procedures. With a bfloat16
``--inference`` and ``--reference-draws M`` it certifies the float32 model from the
bfloat16 counts and ``M`` paired draws
(:func:`~rsutils.logs.reference_runs.certify_reference_dataset`). The noise is a family, made
anisotropic by ``--sigma-map``/``--mu-map`` or made at each input by ``--generator``.
:func:`certify_mode` checks every option against the others, in one place, before
anything is loaded or written.
"""

from __future__ import annotations

import argparse
import inspect
import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

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
from rsutils.core.inference import device_identity
from rsutils.core.noise import FAMILIES
from rsutils.core.reference_precision import FAST_MODES, ReferenceSmooth
from rsutils.core.settings import CertifySettings
from rsutils.ddrs.data_dependent import DataDependentSmooth
from rsutils.ddrs.runs import certify_dataset_ds
from rsutils.ddrs.sigma_ascent import SigmaAscent
from rsutils.geometry.norms import NORM_ORDERS
from rsutils.logs.distributed import distributed_rank
from rsutils.logs.reference_runs import certify_reference_dataset
from rsutils.logs.resumable import adopt_device
from rsutils.logs.runner import certify_dataset
from rsutils.memory.balls import CertificateMemory
from rsutils.sequential.procedure import PROCEDURES, Option, Procedure
from rsutils.sequential.runs import run_procedure

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
    _add_procedure_arguments(certify)
    _add_ascent_arguments(certify)
    _add_reference_arguments(certify)
    certify.set_defaults(run=run)


def procedure_options() -> dict[str, tuple[Option, list[str]]]:
    """Every option of the procedures of :data:`~rsutils.sequential.procedure.PROCEDURES`,
    by name, with the procedures that take it (an option two procedures declare must
    be declared alike)."""
    options: dict[str, tuple[Option, list[str]]] = {}
    for name, procedure in sorted(PROCEDURES.items()):
        for option in procedure.options:
            known, owners = options.setdefault(option.name, (option, []))
            if known != option:
                raise ValueError(
                    f"{owners[0]} and {name} declare {option.flag} differently; "
                    "declare one Option and share it"
                )
            owners.append(name)
    return options


def _add_procedure_arguments(certify: argparse.ArgumentParser) -> None:
    """A fewer-draws procedure by name, and the options procedures take."""
    certify.add_argument(
        "--procedure",
        choices=sorted(PROCEDURES),
        default="certify",
        metavar="NAME",
        help="the procedure, one of %(choices)s: certify (CERTIFY, the default), "
        "planned (each input's own number of draws, at most --N), radius-looks (looks at "
        "the radius after 100, 200, 400, ... and --N draws), decide (sequential decisions "
        "at --radii)",
    )
    for option, owners in procedure_options().values():
        certify.add_argument(option.flag, **_argument(option, owners))


def _argument(option: Option, owners: list[str]) -> dict[str, Any]:
    """``add_argument``'s keywords for ``option``, its help prefixed by the procedures
    that take it (and, for a name, each choice's description)."""
    text = f"{', '.join(owners)}: {option.help}"
    if option.takes == "switch":
        return {"action": "store_true", "default": None, "help": _escaped(text)}
    keywords: dict[str, Any] = {"default": None, "metavar": option.metavar}
    if option.takes == "name":
        choices = option.choices or {}
        listed = "; ".join(f"{name}: {entry.description}" for name, entry in choices.items())
        return keywords | {"choices": sorted(choices), "help": _escaped(f"{text}; {listed}")}
    keywords["type"] = non_negative_float
    if option.takes == "numbers":
        keywords["nargs"] = "+"
    return keywords | {"help": _escaped(text)}


def _escaped(text: str) -> str:
    """``text`` as argparse's help, which formats ``%``."""
    return text.replace("%", "%%")


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
    its sigma ascent), ``"reference"`` (``--reference-draws``) or the name of a
    fewer-draws ``procedure`` of :data:`~rsutils.sequential.procedure.PROCEDURES`."""

    name: str
    ascent: SigmaAscent | None = None
    procedure: Procedure | None = None


def certify_mode(args: argparse.Namespace) -> CertifyMode:
    """The command's procedure, once its options are checked against each other.

    Every conflict between the modes and the noise options is refused here, with the
    option to drop, before any file is read or written: sigma ascent certifies with
    all ``--N`` draws of one isotropic family, in one process, and chooses the noise
    itself (so no ``--generator``, maps, ``--procedure``, torchrun, or ``--norm`` other
    than its own); a fewer-draws procedure takes isotropic noise and the options it
    names (its ``options``), the required ones given; a generator and maps both make
    ``mu`` and ``sigma``.
    """
    check_noise_sources(args)
    given = [name for name in procedure_options() if getattr(args, name) not in (None, False)]
    if args.reference_draws is not None:
        return _checked_reference(args, given)
    if args.fast_share is not None:
        raise ValueError("--fast-share splits the alpha of --reference-draws; add it")
    if args.ascent_steps is not None:
        return CertifyMode("data-dependent", _checked_ascent(args, given))
    procedure = PROCEDURES[args.procedure]
    _check_procedure_options(args.procedure, procedure, given)
    if args.procedure == "certify":
        return CertifyMode("certify")
    if args.generator is not None or args.sigma_map:
        raise ValueError(f"--procedure {args.procedure} takes isotropic noise; drop the maps")
    options = {option.name: getattr(args, option.name) for option in procedure.options}
    built = procedure.from_options(args.N, args.alpha, **options)
    return CertifyMode(args.procedure, procedure=built)


def _check_procedure_options(name: str, procedure: Any, given: list[str]) -> None:
    """Refuse the options ``procedure`` does not take, and ask for those it needs."""
    declared = procedure_options()
    foreign = [name for name in given if name not in _names(procedure)]
    if foreign:
        option, owners = declared[foreign[0]]
        flag = option.flag
        raise ValueError(
            f"{flag} is an option of --procedure {' or '.join(owners)}, not of {name}; "
            f"add --procedure {owners[0]} or drop {flag}"
        )
    required = [
        option
        for option, parameter in inspect.signature(procedure.from_options).parameters.items()
        if parameter.kind is parameter.KEYWORD_ONLY and parameter.default is parameter.empty
    ]
    missing = [declared[option][0].flag for option in required if option not in given]
    if missing:
        raise ValueError(f"--procedure {name} needs {', '.join(missing)}; add it")


def _names(procedure: Any) -> list[str]:
    """The names of the options ``procedure`` declares."""
    return [option.name for option in procedure.options]


def _checked_reference(args: argparse.Namespace, given: list[str]) -> CertifyMode:
    """The float32-from-bfloat16 mode, refused with the options it cannot go with."""
    if args.inference not in FAST_MODES:
        raise ValueError(
            f"--reference-draws certifies the float32 model from bfloat16 counts; add "
            f"--inference {FAST_MODES[-1]} (or bf16), got --inference {args.inference}"
        )
    others = {
        "--ascent-steps": args.ascent_steps is not None,
        "--procedure": args.procedure != "certify",
        **{procedure_options()[option][0].flag: True for option in given},
        "--generator": args.generator is not None,
        "--sigma-map": bool(args.sigma_map),
    }
    clash = [name for name, given in others.items() if given]
    if clash:
        raise ValueError(f"--reference-draws runs plain CERTIFY; drop {', '.join(clash)}")
    return CertifyMode("reference")


def _checked_ascent(args: argparse.Namespace, given: list[str]) -> SigmaAscent:
    """The sigma ascent of ``--ascent-*``, refused with the options it cannot go with."""
    if args.generator is not None:
        raise ValueError("--generator and --ascent-steps both choose the noise; pick one")
    if args.procedure != "certify" or given:
        flags = ["--procedure"] * (args.procedure != "certify")
        flags += [procedure_options()[option][0].flag for option in given]
        raise ValueError(f"sigma ascent certifies with all --N draws; drop {', '.join(flags)}")
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


def _runner(
    args: argparse.Namespace, mode: CertifyMode, settings: CertifySettings
) -> Callable[..., object]:
    """The dataset runner of ``mode``: CERTIFY's, or the procedure's."""
    procedure = mode.procedure
    if procedure is None:
        return certify_dataset

    def run(*where: Any, **options: Any) -> object:
        smooth, data, indices, path, settings = where
        return run_procedure(smooth, data, indices, path, procedure, settings, **options)

    return run


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
            if args.allow_device_change:
                adopt_device(args.outfile, device_identity(ds.device))
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
