"""The certification-wise classifier deployed behind an anisotropic certificate memory.

Without a memory, the deployed classifier at an input ``z`` recomputes ``mu(z)`` and
``sigma(z)`` and answers whatever its own Monte Carlo certificate says, which may
contradict a region certified earlier at another input (see
:mod:`rsutils.anisotropic.soundness.audit`). Behind an
:class:`~rsutils.memory.superellipsoids.AnisotropicMemory` every answer goes through the
memory: inside a stored region of another class the memory answers that class, and a
new region is shrunk until it meets no region of another class. So no answer ever
contradicts a stored region, whatever ``mu`` and ``sigma`` do between inputs.
"""

from __future__ import annotations

import pandas as pd
import torch

from rsutils.anisotropic.generated import GeneratedSmooth
from rsutils.anisotropic.soundness.audit import AuditRecord
from rsutils.core.settings import CertifySettings
from rsutils.core.smooth import ABSTAIN, Certificate
from rsutils.memory.engine import MemoryAnswer
from rsutils.memory.superellipsoids import AnisotropicMemory

__all__ = ["admit_log", "certify_through_memory", "query_audit_points"]


def certify_through_memory(
    smooth: GeneratedSmooth,
    memory: AnisotropicMemory,
    x: torch.Tensor,
    settings: CertifySettings,
    *,
    index: int,
    key: str,
) -> tuple[Certificate, MemoryAnswer]:
    """CERTIFY at ``x`` with ``mu(x)``, ``sigma(x)``, then the memory's answer for it.

    The region admitted is ``‖(z − x) ⊘ sigma(x)‖₂ < region_radius`` (nothing for an
    abstention). Returns the Monte Carlo certificate and the memory's answer, which is
    what the deployed classifier says at ``x``.
    """
    s, frozen = settings, smooth.smooth_at(x)  # the generator runs once per input
    cert = frozen.certify(x, s.n0, s.n, s.alpha, s.batch_size, s.seed, index=index)
    sigma = frozen.noise.sigma  # type: ignore[attr-defined]
    radius = 0.0 if cert.prediction == ABSTAIN else cert.region_radius
    return cert, memory.admit(x, cert.prediction, radius, sigma, key=key)


def admit_log(
    smooth: GeneratedSmooth, memory: AnisotropicMemory, images: torch.Tensor, log: pd.DataFrame
) -> pd.DataFrame:
    """Admit the certificates of a certification log, in ``idx`` order, to ``memory``.

    Each row's region is its ``region_radius`` around ``images[idx]`` with the shape
    ``sigma(x)`` of the generator (keys ``"test-<idx>"``). Returns the memory's answer
    per row: ``idx``, ``predict``, ``radius`` (the stored R) and ``memory`` (the action).
    """
    rows = []
    for row in log.sort_values("idx").itertuples():
        x = images[int(row.idx)]
        _, sigma = smooth.parameters_at(x)
        radius = 0.0 if row.predict == ABSTAIN else float(row.region_radius)
        answer = memory.admit(x, int(row.predict), radius, sigma, key=f"test-{row.idx}")
        rows.append((int(row.idx), answer.prediction, answer.radius, answer.action))
    return pd.DataFrame(rows, columns=["idx", "predict", "radius", "memory"])


def query_audit_points(
    smooth: GeneratedSmooth,
    memory: AnisotropicMemory,
    images: torch.Tensor,
    records: list[AuditRecord],
    settings: CertifySettings,
) -> pd.DataFrame:
    """Ask the memory-backed deployed classifier at every point an audit searched.

    For each point ``z = x + δ`` of each record (clamped into the smooth's input range,
    as the audit verified it): the Monte Carlo answer with ``mu(z)``, ``sigma(z)``
    (``mc_predict``; ``flipped`` when it is not the class stored for ``x``), the
    memory's answer (``predict``, ``memory``), whether ``z`` lies in the region the
    memory holds for ``x`` (``inside``) and whether the answer contradicts it
    (``contradiction``: inside, and another class than the one stored for ``x``). The
    memory must already hold ``x`` under the key ``"test-<idx>"``
    (:func:`admit_log`).
    """
    stored = memory.entries().set_index("key")
    rows, counter = [], 0
    for record in records:
        x = images[record.index]
        entry = stored.loc[f"test-{record.index}"]
        _, sigma_x = smooth.parameters_at(x)
        for k, point in enumerate(record.points):
            z = x + torch.as_tensor(point.delta).to(x.device, x.dtype).reshape(x.shape)
            if smooth.input_range is not None:
                z = z.clamp(*smooth.input_range)
            key = f"audit-{record.index}-{k}"
            cert, answer = certify_through_memory(
                smooth, memory, z, settings, index=counter, key=key
            )
            counter += 1
            scaled = float(torch.linalg.vector_norm((z - x).double() / sigma_x.reshape(x.shape)))
            inside = bool(scaled < entry["radius"]) or scaled == 0.0
            rows.append(
                {
                    "idx": record.index,
                    "search": point.search,
                    "audit": point.verdict.verdict,
                    "stored": int(entry["prediction"]),
                    "mc_predict": cert.prediction,
                    "predict": answer.prediction,
                    "memory": answer.action,
                    "inside": inside,
                    "flipped": cert.prediction != int(entry["prediction"]),
                    "contradiction": inside and answer.prediction != int(entry["prediction"]),
                }
            )
    return (
        pd.DataFrame(rows)
        .astype({"inside": bool, "flipped": bool, "contradiction": bool})
        .pipe(_order)
    )


def _order(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.sort_values(["idx", "search"], kind="stable").reset_index(drop=True)
