"""Sharded runs on ``torch.distributed``: ``torchrun --nproc_per_node K -m rsutils ...``.

Each rank certifies every K-th input still missing from the output log into its own
resumable shard (``LOG.rank{r}-of-{K}``, a :class:`~rsutils.logs.resumable.ResumableLog`
with the same settings); once all ranks are done, rank 0 merges the shards into the
output log, rows in the order of the inputs, and removes them. The noise of input
``idx`` depends only on ``(seed, idx)``, so the merged log equals the log of a single
process, row for row (only the ``time`` column differs). A killed sharded run resumes
from its shards when started again with the same K; a finished one has nothing left to
do. The process group uses gloo on CPU and NCCL on GPUs, one GPU per local rank.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist

from rsutils.cache import atomic_write_bytes
from rsutils.logs.resumable import ENVIRONMENTS

__all__ = ["distributed_rank", "merge_shards", "run_sharded", "shard_path"]


def distributed_rank() -> tuple[int, int, int] | None:
    """``(rank, world size, local rank)`` when started by torchrun with more than one
    process, else ``None``."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world <= 1:
        return None
    return int(os.environ["RANK"]), world, int(os.environ.get("LOCAL_RANK", "0"))


def shard_path(outfile: str | os.PathLike[str], rank: int, world: int) -> Path:
    """Where rank ``rank`` of ``world`` writes its share of ``outfile``."""
    path = Path(outfile)
    return path.with_name(f"{path.name}.rank{rank}-of-{world}")


def _rows(path: Path) -> tuple[str, dict[int, str]]:
    """A log's header line and its rows by ``idx`` (the first column)."""
    lines = path.read_text().splitlines(keepends=True)
    return lines[0], {int(line.split("\t", 1)[0]): line for line in lines[1:]}


def merge_shards(outfile: str | os.PathLike[str], world: int, indices: Sequence[int]) -> None:
    """Append the ``world`` shards' rows to ``outfile`` in ``indices`` order (after the
    rows it already holds, kept as they are, as one process would append them), then
    remove the shards. Refuses shards of other settings, or inputs found nowhere."""
    outfile = Path(outfile)
    shards = [p for r in range(world) if (p := shard_path(outfile, r, world)).exists()]
    sources = ([outfile] if outfile.exists() else []) + shards
    sidecars = [json.loads(p.with_name(p.name + ".json").read_text()) for p in sources]
    settings = [{k: v for k, v in s.items() if k != ENVIRONMENTS} for s in sidecars]
    if any(s != settings[0] for s in settings):
        raise ValueError(f"the shards of {outfile} were written with different settings")
    header, kept = _rows(outfile) if outfile.exists() else (None, {})
    new: dict[int, str] = {}
    for shard in shards:
        header, found = _rows(shard)
        new |= found
    missing = [i for i in indices if i not in kept and i not in new]
    if missing or header is None:
        raise ValueError(f"{len(missing)} inputs of {outfile} are in no shard, e.g. {missing[:5]}")
    environments: list[Any] = []
    for sidecar in sidecars:
        environments += [e for e in sidecar.get(ENVIRONMENTS, []) if e not in environments]
    merged = {**settings[0], ENVIRONMENTS: environments}
    appended = [new[i] for i in indices if i not in kept]
    sidecar = outfile.with_name(outfile.name + ".json")
    atomic_write_bytes(sidecar, json.dumps(merged, indent=2).encode())
    atomic_write_bytes(outfile, (header + "".join(kept.values()) + "".join(appended)).encode())
    for shard in shards:
        shard.unlink()
        shard.with_name(shard.name + ".json").unlink()


@contextmanager
def _process_group(device: torch.device):
    backend = "nccl" if device.type == "cuda" else "gloo"
    dist.init_process_group(backend)
    try:
        yield
    finally:
        dist.destroy_process_group()


def run_sharded(
    run: Callable[[list[int], Path], object],
    outfile: str | os.PathLike[str],
    indices: Sequence[int],
    device: torch.device,
) -> None:
    """Under torchrun: ``run(my_indices, my_shard)`` on this rank's share of the inputs
    that ``outfile`` lacks, then (rank 0) :func:`merge_shards`. Outside torchrun:
    ``run(indices, outfile)``."""
    where = distributed_rank()
    if where is None:
        run(list(indices), Path(outfile))
        return
    rank, world, _ = where
    done = set(_rows(Path(outfile))[1]) if Path(outfile).exists() else set()
    todo = [i for i in indices if i not in done]
    with _process_group(device):
        if todo:
            run(todo[rank::world], shard_path(outfile, rank, world))
        dist.barrier()
        if rank == 0 and todo:
            merge_shards(outfile, world, indices)
        dist.barrier()
