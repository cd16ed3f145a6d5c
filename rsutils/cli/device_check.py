"""One short device check: how fast certification runs here, in every inference mode.

``python -m rsutils device-check`` (``make gpu-check``) prints, for each device it has
(the CPU, and each CUDA GPU when present):

1. for the small CNN (Fashion-MNIST) and a CIFAR-10 ResNet-110, at batch sizes up to
   10,000 on a GPU (200 on the CPU, where ResNet-110 is slow): the raw forward and the
   Monte Carlo loop in each inference mode, as throughput, speed-up over the fp32
   forward and loop/raw ratio;
2. seconds per certificate at n = 100,000 for ResNet-110 on a GPU (Cohen et al. report
   15 s on an RTX 2080 Ti), and at n = 10,000 for the small CNN on the CPU;
3. whether the base classifier is one function there (:mod:`rsutils.checks.batch_invariance`):
   for the small CNN in each mode, the draws whose class changes between batches of
   1,000 and of 1 or 7 when each batch runs at its own shape, and whether the fixed
   rows of the Monte Carlo loop give bitwise the same logits;
4. whether certificates for the same seed are equal on the GPU and on the CPU.

Weights are random: the timings do not depend on them, and the comparison of devices
only needs the same model on both. On a machine without CUDA it runs its CPU part and
says what it skipped. :func:`add_parser` and :func:`run` are the subcommand.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import torch

from rsutils.checks.batch_invariance import batch_sensitivity
from rsutils.cli.arguments import HelpFormatter
from rsutils.cli.bench import BenchResult, BenchSettings, benchmark_modes
from rsutils.core.inference import INFERENCE_MODES
from rsutils.core.noise import Gaussian
from rsutils.core.smooth import Smooth
from rsutils.models.architectures import build_model

__all__ = [
    "BATCH_CHECK_DRAWS",
    "CPU_CERTIFY_DRAWS",
    "DESCRIPTION",
    "MODELS",
    "add_parser",
    "device_check",
    "run",
]

#: Draws of the CPU's seconds per certificate (the small CNN), and noisy draws of the
#: check that a draw's class does not depend on its batch.
CPU_CERTIFY_DRAWS = 10_000
BATCH_CHECK_DRAWS = 1000

#: The networks timed, each name with its architecture, dataset and input shape.
MODELS = {
    "small CNN": ("small_cnn", "fashion-mnist", (1, 28, 28)),
    "ResNet-110": ("cifar_resnet110", "cifar10", (3, 32, 32)),
}


def _model(arch: str, dataset: str, device: torch.device) -> torch.nn.Module:
    torch.manual_seed(0)
    return build_model(arch, dataset).to(device).eval()


def _throughputs(device: torch.device, batches: tuple[int, ...], say: Callable[[str], None]):
    for name, (arch, dataset, shape) in MODELS.items():
        model = _model(arch, dataset, device)
        for batch in batches:
            settings = BenchSettings(batch_size=batch, num_batches=3, repeats=3)
            results: list[BenchResult] = benchmark_modes(
                model, shape, Gaussian(0.25), settings, num_classes=10, modes=INFERENCE_MODES
            )
            reference = results[0].raw_per_second
            for r in results:
                say(
                    f"  {name:<11} batch {batch:>6}  {r.inference:<19}"
                    f"raw {r.raw_per_second:>12,.0f}/s  x{r.raw_per_second / reference:5.2f}"
                    f"  loop/raw {r.ratio:5.3f} (best {r.best_ratio:5.3f},"
                    f" noise-bound {r.noise_bound:5.3f})"
                )


def _seconds_per_certificate(
    device: torch.device, name: str, n: int, batch: int, say: Callable[[str], None]
) -> None:
    arch, dataset, shape = MODELS[name]
    model = _model(arch, dataset, device)
    x = torch.rand(shape, generator=torch.Generator().manual_seed(0))
    for mode in INFERENCE_MODES:
        smooth = Smooth(model, 10, Gaussian(0.25), inference=mode)
        smooth.certify(x, 10, batch, 0.001, batch_size=batch, seed=0)  # warm-up
        start = time.perf_counter()
        smooth.certify(x, 100, n, 0.001, batch_size=batch, seed=0)
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        say(f"  {name} n = {n:,}, {mode:<19} {time.perf_counter() - start:8.2f} s per certificate")


def _one_function(device: torch.device, say: Callable[[str], None]) -> bool:
    """Batch sensitivity of the small CNN in each mode, at the batch's own shape and at
    fixed rows; True when the fixed rows are bitwise invariant in every mode."""
    arch, dataset, shape = MODELS["small CNN"]
    model = _model(arch, dataset, device)
    generator = torch.Generator().manual_seed(2)
    x = torch.rand(shape, generator=generator)
    noise = torch.randn((BATCH_CHECK_DRAWS, *shape), generator=generator)
    draws = (x + 0.25 * noise).to(device)
    invariant = True
    for mode in INFERENCE_MODES:
        own = batch_sensitivity(model, draws, mode=mode)
        fixed = batch_sensitivity(model, draws, mode=mode, fixed_rows=True)
        same = all(r.invariant for r in fixed)
        invariant &= same
        flips = ", ".join(f"{r.flips}/{r.draws} at {r.batch}" for r in own)
        change = max(r.max_logit_change for r in own)
        say(
            f"  {mode:<19} own shape: flips {flips}, largest logit change {change:.1e};"
            f" fixed rows bitwise invariant: {same}"
        )
    return invariant


def _same_on_both(gpu: torch.device, say: Callable[[str], None]) -> bool:
    arch, dataset, shape = MODELS["small CNN"]
    images = torch.rand((5, *shape), generator=torch.Generator().manual_seed(1))
    answers = {}
    for device in (torch.device("cpu"), gpu):
        smooth = Smooth(_model(arch, dataset, device), 10, Gaussian(0.25))
        answers[device.type] = [
            smooth.certify(x, 100, 10_000, 0.001, batch_size=1000, seed=0, index=i)
            for i, x in enumerate(images)
        ]
    same = answers["cpu"] == answers["cuda"]
    agree = sum(a.prediction == b.prediction for a, b in zip(*answers.values(), strict=True))
    say(f"  certificates equal on {gpu} and the CPU: {same} ({agree} of 5 predictions agree)")
    return same


def device_check(say: Callable[[str], None] = print) -> list[str]:
    """Run the check; returns what it skipped (empty on a machine with CUDA)."""
    skipped = []
    cpu = torch.device("cpu")
    say(f"torch {torch.__version__}; CPU threads {torch.get_num_threads()}")
    say("[cpu] throughput per mode (speed-up over the fp32 forward)")
    _throughputs(cpu, (200,), say)
    say("[cpu] seconds per certificate")
    _seconds_per_certificate(cpu, "small CNN", CPU_CERTIFY_DRAWS, 1000, say)
    say("[cpu] one function whatever the batch (classes changed vs batches of 1,000)")
    _one_function(cpu, say)
    if not torch.cuda.is_available():
        skipped = ["GPU throughput", "ResNet-110 at n = 100,000 on the GPU", "GPU vs CPU"]
        say(f"no CUDA GPU here: skipped {', '.join(skipped)}")
        return skipped
    for index in range(torch.cuda.device_count()):
        gpu = torch.device("cuda", index)
        say(f"[{gpu}] {torch.cuda.get_device_name(index)}")
        _throughputs(gpu, (1000, 10_000), say)
        _seconds_per_certificate(gpu, "ResNet-110", 100_000, 10_000, say)
        say(f"[{gpu}] one function whatever the batch (classes changed vs batches of 1,000)")
        _one_function(gpu, say)
        _same_on_both(gpu, say)
    return skipped


#: What ``python -m rsutils device-check --help`` says the check does.
DESCRIPTION = """\
For the CPU and each CUDA GPU: the throughput of the small CNN (Fashion-MNIST) and
of a CIFAR-10 ResNet-110, raw forward pass against the Monte Carlo loop, in every
inference mode (batches up to 10,000 on a GPU, 200 on the CPU); the seconds per
certificate (ResNet-110 at n = 100,000 on a GPU, the small CNN at n = 10,000 on the
CPU); whether a draw's class depends on its batch (at the batch's own shape, and at
the fixed rows the Monte Carlo loop uses); and on a GPU whether certificates for the
same seed equal the CPU's. The weights are random: the timings do not depend on them.
Without CUDA it runs the CPU part and says what it skipped; on a CPU it takes
minutes, most of them ResNet-110's.
"""


def add_parser(commands: argparse._SubParsersAction) -> None:
    """The ``device-check`` subcommand (no options; its help is :data:`DESCRIPTION`)."""
    check = commands.add_parser(
        "device-check",
        help="throughput and seconds per certificate in every inference mode, CPU and GPUs",
        description=DESCRIPTION,
        formatter_class=HelpFormatter,
    )
    check.set_defaults(run=run)


def run(args: argparse.Namespace) -> None:
    """Run :func:`device_check`, printing as it goes."""
    device_check()
