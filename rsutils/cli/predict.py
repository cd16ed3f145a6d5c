"""``python -m rsutils predict``: PREDICT every skip-th input into a TSV log
(:func:`~rsutils.logs.runner.predict_dataset`), with the arguments of Cohen et al.'s
predict.py and the noise options of ``certify``."""

from __future__ import annotations

import argparse

from rsutils.cli.arguments import HelpFormatter
from rsutils.cli.common import (
    add_run_arguments,
    check_noise_sources,
    load_run,
    run_log,
    settings_from_args,
)
from rsutils.logs.runner import predict_dataset

__all__ = ["add_parser", "run"]


def add_parser(commands: argparse._SubParsersAction) -> None:
    """The ``predict`` subcommand."""
    predict = commands.add_parser(
        "predict", help="PREDICT every skip-th input into a TSV log", formatter_class=HelpFormatter
    )
    add_run_arguments(predict)
    predict.set_defaults(run=run)


def run(args: argparse.Namespace) -> None:
    """Check the noise options, load the run, and predict into ``args.outfile``."""
    check_noise_sources(args)
    settings = settings_from_args(args)
    loaded = load_run(args, inference=args.inference)
    run_log(args, predict_dataset, loaded, settings)
