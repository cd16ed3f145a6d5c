"""Where the papers' released data are read from: the reference folder.

Some chapters and checks read what the papers' authors released (Cohen et al.'s
certification logs, UCAN's trained noise parameter generators). rsutils never copies
them into the repository; it reads them from a folder given explicitly (a ``root``
argument) or by the ``RSUTILS_REFERENCE`` environment variable, which holds one
subfolder per release (``cohen2019/``, ``ucan2025/``).
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["REFERENCE_VARIABLE", "reference_root"]

#: The environment variable naming the reference folder.
REFERENCE_VARIABLE = "RSUTILS_REFERENCE"


def reference_root(root: str | os.PathLike[str] | None = None) -> Path | None:
    """The configured reference folder: ``root`` if given, else ``RSUTILS_REFERENCE``,
    else ``None`` (nothing configured). Whether it exists is the caller's check."""
    if root is not None:
        return Path(root)
    env = os.environ.get(REFERENCE_VARIABLE)
    return Path(env) if env else None
