"""What a run's numbers depend on beyond its settings: torch, the device, the threads.

Certification is bit-for-bit reproducible given the model, the settings and the seed
on one kind of device; a floating-point forward pass may still round differently on
another kind of CPU or GPU, with another torch version, or (for training, whose
reductions are split across threads) with another thread count. Logs and chapters
record this description so that a reader who gets other numbers can see why.
"""

from __future__ import annotations

import platform
from functools import cache

import torch

__all__ = ["describe_environment", "processor_name"]


@cache
def processor_name() -> str:
    """The CPU's model name (from ``/proc/cpuinfo`` on Linux), else the architecture."""
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def describe_environment(device: torch.device | str = "cpu") -> dict[str, object]:
    """``torch`` version, ``device`` kind (the GPU's name, or the CPU's) and ``threads``.

    ``threads`` is torch's intra-op thread count, which is what CPU results can
    depend on.
    """
    device = torch.device(device)
    kind = torch.cuda.get_device_name(device) if device.type == "cuda" else processor_name()
    return {
        "torch": str(torch.__version__),  # plain str: TorchVersion is not weights-only safe
        "device": f"{device.type}: {kind}",
        "threads": torch.get_num_threads(),
    }
