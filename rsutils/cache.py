"""One cache folder for trained models and certification logs, content-addressed.

An artefact's file name is a hash of the configuration that produced it (plus a
sidecar ``.json`` with that configuration in clear), so a changed setting never
reuses a stale file and an unchanged one is never recomputed. The folder is
``RSUTILS_CACHE`` if set, else ``$XDG_CACHE_HOME/rsutils`` or ``~/.cache/rsutils``.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["atomic_write_bytes", "cache_dir", "cached_path", "config_key"]

#: Bump when a change in rsutils makes older cached artefacts wrong. 2: every random
#: stream comes from :mod:`rsutils.core.streams` (training noise no longer drew from
#: ``seed + 1``), so a model or log cached before would not be what the code now makes.
CACHE_VERSION = 2


def cache_dir() -> Path:
    """The cache root (created on first use)."""
    env = os.environ.get("RSUTILS_CACHE")
    if env:
        root = Path(env)
    else:
        base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
        root = Path(base) / "rsutils"
    root.mkdir(parents=True, exist_ok=True)
    return root


def config_key(config: Mapping[str, Any]) -> str:
    """A short stable hash of a JSON-serialisable configuration."""
    text = json.dumps({"cache_version": CACHE_VERSION, **config}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def cached_path(kind: str, config: Mapping[str, Any], suffix: str) -> Path:
    """Path of the artefact of ``kind`` for ``config``; writes the ``.json`` sidecar."""
    folder = cache_dir() / kind
    folder.mkdir(parents=True, exist_ok=True)
    key = config_key(config)
    sidecar = folder / f"{key}.json"
    if not sidecar.exists():
        atomic_write_bytes(sidecar, json.dumps(dict(config), indent=2, default=str).encode())
    return folder / f"{key}{suffix}"


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that readers see the old file or the new one."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)
