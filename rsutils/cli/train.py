"""``python -m rsutils train``: train a base model (noise augmentation, SmoothAdv or
MACER, optionally with data-dependent sigma) and save it as a checkpoint that records
its training configuration and environment."""

from __future__ import annotations

import argparse
import os

from rsutils.cli.arguments import (
    HelpFormatter,
    add_noise_family_argument,
    named_dataset,
    non_negative_int,
    positive_float,
    positive_int,
)
from rsutils.cli.common import DATASETS
from rsutils.core.devices import pick_device
from rsutils.core.environment import describe_environment
from rsutils.data import load_dataset
from rsutils.ddrs.sigma_ascent import SigmaAscent
from rsutils.models.architectures import ARCHITECTURES
from rsutils.models.checkpoints import save_checkpoint
from rsutils.training.train import TRAINING_THREADS

__all__ = ["add_parser", "run"]


def run(args: argparse.Namespace) -> None:
    """Train with the command's configuration and save the checkpoint ``args.outfile``."""
    from rsutils.training.objectives import ObjectiveSettings
    from rsutils.training.train import TrainConfig, train_model

    if os.path.isdir(args.outfile):
        raise ValueError(f"{args.outfile} is a directory; pass a file such as model.pt")
    ds = None
    if args.ds_steps is not None:
        ds = SigmaAscent(sigma0=args.noise_sd, iterations=args.ds_steps, draws=args.ds_draws)
    config = TrainConfig(
        arch=args.arch,
        dataset=args.dataset,
        noise=args.noise,
        scale=args.noise_sd,
        epochs=args.epochs,
        batch_size=args.batch,
        train_subset=args.train_subset,
        lr=args.lr,
        seed=args.seed,
        method=args.method,
        objective=ObjectiveSettings(draws=args.draws, epsilon=args.epsilon),
        ds=ds,
    )
    data = load_dataset(args.dataset, "train", args.data_root)
    if args.train_subset is not None and args.train_subset > len(data):
        raise ValueError(
            f"--train-subset {args.train_subset} exceeds the {len(data)} images of "
            f"{args.dataset}'s training split; pass at most {len(data)}, or drop it to use all"
        )
    device = pick_device(args.device)
    options = {"device": device, "progress": not args.quiet, "threads": args.threads}
    model = train_model(config, data, **options)
    save_checkpoint(
        model,
        args.outfile,
        arch=args.arch,
        dataset=args.dataset,
        meta={
            "train_config": config.as_dict(),
            "environment": {**describe_environment(device), "threads": args.threads},
        },
    )


def add_parser(commands: argparse._SubParsersAction) -> None:
    """The ``train`` subcommand."""
    train = commands.add_parser(
        "train",
        formatter_class=HelpFormatter,
        help="train a base model (noise augmentation, SmoothAdv or MACER; DS optional)",
    )
    train.add_argument(
        "dataset",
        type=named_dataset,
        help=f"training data: {', '.join(DATASETS)} (ImageNet's train/ folder by --data-root "
        "or IMAGENET_DIR)",
    )
    train.add_argument(
        "arch", choices=sorted(ARCHITECTURES), metavar="arch", help="network: %(choices)s"
    )
    train.add_argument("outfile", help="checkpoint file to write")
    train.add_argument(
        "--noise-sd", type=positive_float, required=True, help="noise scale during training"
    )
    add_noise_family_argument(train)
    train.add_argument("--epochs", type=positive_int, default=6, help="passes over the data")
    train.add_argument("--batch", type=positive_int, default=128, help="images per step")
    train.add_argument(
        "--train-subset",
        type=positive_int,
        default=None,
        metavar="N",
        help="train on the first N images of the training split (default: all of them)",
    )
    train.add_argument("--lr", type=positive_float, default=2e-3, help="Adam learning rate")
    train.add_argument(
        "--seed", type=non_negative_int, default=0, help="seed of initialisation and noise"
    )
    train.add_argument(
        "--method",
        choices=("gaussian", "smoothadv", "macer"),
        default="gaussian",
        help="training objective",
    )
    train.add_argument(
        "--draws", type=positive_int, default=1, help="noise draws per image (MACER: 64)"
    )
    train.add_argument(
        "--epsilon", type=positive_float, default=0.25, help="SmoothAdv attack radius"
    )
    train.add_argument(
        "--ds-steps",
        type=positive_int,
        default=None,
        metavar="K",
        help="data-dependent sigma per training image, K ascent steps per draw (DDRS Alg. 2)",
    )
    train.add_argument(
        "--ds-draws",
        type=positive_int,
        default=1,
        metavar="M",
        help="noise draws per ascent step",
    )
    train.add_argument(
        "--threads",
        type=positive_int,
        default=TRAINING_THREADS,
        help="torch intra-op threads while training: the weights depend on this count, "
        "not on the machine's cores",
    )
    train.add_argument("--device", default="auto", help="auto, cpu, cuda, cuda:N")
    train.add_argument("--data-root", default=None, help="dataset folder (else RSUTILS_DATA, ...)")
    train.add_argument("--quiet", action="store_true", help="no progress bar")
    train.set_defaults(run=run)
