"""Small tables that every chapter shows: the scale it ran at."""

from __future__ import annotations

import platform

import pandas as pd
import torch

from rsutils.profiles import Profile

__all__ = ["device_name", "run_at_table"]


def device_name(device: torch.device) -> str:
    """A readable name of the device the chapter ran on."""
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    threads = torch.get_num_threads()
    return f"CPU ({platform.machine()}, {threads} thread{'s' * (threads > 1)})"


def run_at_table(profile: Profile, device: torch.device, **extra: object) -> pd.DataFrame:
    """The "run at" table: profile, Monte Carlo settings, data scale and device.

    ``extra`` adds chapter-specific rows (e.g. ``dataset="Fashion-MNIST"``).
    """
    rows: dict[str, object] = {
        "profile": profile.name,
        **extra,
        "n0 (selection draws)": profile.n0,
        "n (estimation draws)": f"{profile.n:,}",
        "alpha": profile.alpha,
        "test images certified": f"{profile.num_images} (every {profile.skip}th)",
        "training epochs": profile.epochs,
        "device": device_name(device),
    }
    index = pd.Index(list(rows), name="setting")
    return pd.DataFrame({"value": [str(v) for v in rows.values()]}, index=index)
