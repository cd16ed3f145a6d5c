"""UCAN's Table I, rendered from the radius registry rather than typed.

Each row of :mod:`rsutils.core.radius` is one line: the family's density, the threat norm,
the isotropic guarantee ``‖δ‖_p < R`` (binary case, ``pB = 1 − pA``), the anisotropic
region ``‖δ ⊘ σ‖_p < R`` of Theorem 2, its inscribed radius ``min(σ)·R`` (Corollary 4)
and its ALM ``(∏σ_i)^(1/d)·R``.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from rsutils.analysis.pipe_table import pipe_table
from rsutils.core.noise import FAMILIES
from rsutils.core.radius import rules

__all__ = ["COLUMNS", "FAMILY_NAMES", "NORM_LATEX", "table_one", "table_one_markdown"]

#: Display names of the families, as in UCAN's Table I.
FAMILY_NAMES = {
    "gaussian": "Gaussian",
    "laplace": "Laplace",
    "uniform": "Uniform ℓ∞ (cube)",
    "exp_linf": "Exponential ℓ∞",
    "power_law": "Power law ℓ∞",
}
NORM_LATEX = {"l1": r"\ell_1", "l2": r"\ell_2", "linf": r"\ell_\infty"}
_NORM_SUB = {"l1": "1", "l2": "2", "linf": r"\infty"}
#: UCAN's Table I column by column, in its order. :func:`table_one_markdown` shows
#: them all unless a chapter picks fewer (a page holds about five of them).
COLUMNS = (
    "distribution",
    "density",
    "adversary",
    "isotropic radius R",
    "anisotropic region",
    "inscribed radius",
    "needs",
    "source",
)
_MATH = {"density", "adversary", "isotropic radius R", "anisotropic region", "inscribed radius"}


def _grouped(latex: str) -> str:
    """``latex`` in parentheses when it starts with a sign (so a product reads right)."""
    return rf"\bigl({latex}\bigr)" if latex.startswith("-") else latex


def table_one() -> pd.DataFrame:
    """One row per registered (family, norm) pair, formulas as LaTeX strings."""
    rows = []
    for rule in rules():
        R = rule.latex
        sub = _NORM_SUB[rule.norm]
        rows.append(
            {
                "distribution": FAMILY_NAMES.get(rule.family, rule.family),
                "family": rule.family,
                "norm": rule.norm,
                "density": r"\propto " + FAMILIES[rule.family].density_latex,
                "adversary": NORM_LATEX[rule.norm],
                "isotropic radius R": R,
                "anisotropic region": rf"\|\delta\oslash\sigma\|_{{{sub}}} < {R}",
                "inscribed radius": rf"\min\{{\sigma\}}\,{_grouped(R)}",
                "ALM": rf"\bigl(\textstyle\prod_i\sigma_i\bigr)^{{1/d}}\,{_grouped(R)}",
                "needs": ", ".join(["d"] * rule.needs_dim + list(rule.params)) or "–",
                "source": rule.source,
            }
        )
    return pd.DataFrame(rows)


def table_one_markdown(extra: pd.DataFrame | None = None, columns: Sequence[str] = COLUMNS) -> str:
    """Table I as a Markdown table with ``$…$`` math (myst renders it in the book).

    ``columns`` picks which of :data:`COLUMNS` to show, in the order given; ``extra``
    (indexed like :func:`table_one`) adds columns after them, e.g. numerical checks.
    Raises :class:`ValueError` naming a column that Table I does not have.
    """
    unknown = [c for c in columns if c not in COLUMNS]
    if unknown:
        raise ValueError(f"Table I has no column {unknown}; choose from {list(COLUMNS)}")
    table = table_one()
    shown = list(columns)
    header = shown + ([] if extra is None else list(extra.columns))
    lines = []
    for i, row in table.iterrows():
        # "\|" would end a Markdown table cell; \Vert is the same double bar.
        cells = [
            f"${row[c]}$".replace(r"\|", r"\Vert ") if c in _MATH else str(row[c]) for c in shown
        ]
        if "source" in shown:
            cells[shown.index("source")] = f"{{cite:t}}`{row['source']}`"
        if extra is not None:
            cells += [str(v) for v in extra.loc[i]]
        lines.append(cells)
    return pipe_table(header, lines)
