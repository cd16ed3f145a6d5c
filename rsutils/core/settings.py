"""The settings of a Monte Carlo run, as one object.

Every certification or prediction over a dataset (the runner, the command line, the
book's cached experiments) takes a :class:`CertifySettings` whole, instead of passing
``n0, n, alpha, seed, batch_size`` from function to function.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

import numpy as np

from rsutils.core.confidence import check_alpha

__all__ = ["CertifySettings", "check_count"]


def check_count(name: str, value: int) -> None:
    """Refuse anything but a positive integer (``True`` and ``2.5`` included)."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")


@dataclass(frozen=True)
class CertifySettings:
    """What CERTIFY and PREDICT need besides the model, the noise and the input.

    ``n0`` selection draws and ``n`` estimation draws (PREDICT uses ``n`` only),
    failure probability ``alpha``, ``seed`` of the noise (the noise of input ``index``
    depends on ``(seed, index)`` only) and ``batch_size``, the number of noisy copies
    per forward pass. The defaults are Cohen et al.'s.

    ``batch_size`` changes the speed, never the answers, so it is not part of
    :meth:`identity`, the settings that a log records and checks on resume.
    """

    n0: int = 100
    n: int = 100_000
    alpha: float = 0.001
    seed: int = 0
    batch_size: int = 1000

    def __post_init__(self) -> None:
        for name in ("n0", "n", "batch_size"):
            check_count(name, getattr(self, name))
        seed = self.seed
        if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
        check_alpha(self.alpha)

    def identity(self, algorithm: str = "certify") -> dict[str, int | float]:
        """The settings that determine the answers of ``algorithm`` (certify or predict)."""
        if algorithm == "certify":
            return {"n0": self.n0, "n": self.n, "alpha": self.alpha, "seed": self.seed}
        if algorithm == "predict":
            return {"n": self.n, "alpha": self.alpha, "seed": self.seed}
        raise ValueError(f"algorithm must be 'certify' or 'predict', got {algorithm!r}")

    def replace(self, **changes: int | float) -> CertifySettings:
        """A copy with some fields changed (checked like the original)."""
        return replace(self, **changes)

    def as_dict(self) -> dict[str, int | float]:
        return asdict(self)
