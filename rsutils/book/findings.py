"""The book's findings page: values the chapters computed, read back from their runs.

The findings page states no number of its own. Each value it shows was glued by the
chapter that computed it, and is read here from that chapter's executed notebook
(:func:`chapter_values`), so the page and the chapter cannot disagree. The executed
notebooks of one build share a profile; a value read from a notebook run at another
profile than the page's is refused (:class:`ProfileMismatchError`), as is a chapter
that has not been run (:class:`ChapterNotRunError`, naming the command that runs it).

:func:`markdown_table` writes a table as MyST Markdown, so that a cell's
``{ref}`` links are resolved (and checked) by the book's strict build.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from importlib.resources import files
from pathlib import Path

import nbformat
import pandas as pd
from IPython.display import Markdown

from rsutils.analysis.pipe_table import pipe_table
from rsutils.book.audit.verdicts import ClaimVerdict
from rsutils.book.glue import glued_values, key_part

__all__ = [
    "CLAIM_RUNS",
    "EXACT",
    "FINDING_PAGES",
    "NO_RELEASE",
    "PAPERS",
    "RELEASED_CLAIMS",
    "ChapterNotRunError",
    "ProfileMismatchError",
    "beyond_findings",
    "chapter_values",
    "claim_evidence",
    "claim_key",
    "claim_verdicts",
    "claims_table",
    "executed_folder",
    "finding_rows",
    "markdown_table",
    "power_table",
    "released_verdict",
]


class ChapterNotRunError(FileNotFoundError):
    """A chapter whose values the page reads has no executed notebook."""


class ProfileMismatchError(ValueError):
    """A chapter's executed notebook was run at another profile than the page's."""


def executed_folder(start: Path | None = None) -> Path:
    """The folder of the executed chapters (``book/_executed``): ``start`` (default: the
    working directory) if it is that folder, as when papermill runs the page there, else
    ``book/_executed`` under ``start`` or the nearest of its parents that has one (a
    notebook opened from ``notebooks/`` in JupyterLab)."""
    start = (start or Path.cwd()).resolve()
    if start.name == "_executed" and start.parent.name == "book":
        return start
    for folder in (start, *start.parents):
        if (folder / "book" / "_executed").is_dir():
            return folder / "book" / "_executed"
    raise ChapterNotRunError(
        f"no book/_executed folder at or above {start}: run the chapters first "
        "(python book/run_notebooks.py --profile PROFILE)"
    )


def _value(text: str) -> object:
    """A glued value's ``text/plain`` as the Python value it shows (a number or a
    string); text that is no literal (a table's repr) is kept as it is."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def chapter_values(folder: Path, stem: str, profile: str) -> dict[str, object]:
    """Every value the executed chapter ``folder/stem.ipynb`` glued, by name, as Python
    values. Raises :class:`ChapterNotRunError` when the chapter has not been run, and
    :class:`ProfileMismatchError` when it ran at another profile than ``profile``."""
    path = Path(folder) / f"{stem}.ipynb"
    if not path.exists():
        raise ChapterNotRunError(
            f"{path} does not exist: run the chapter first "
            f"(python book/run_notebooks.py --profile {profile} --only {stem[:2]})"
        )
    notebook = nbformat.read(path, as_version=4)
    ran_at = notebook.metadata.get("papermill", {}).get("parameters", {}).get("profile")
    if ran_at != profile:
        raise ProfileMismatchError(
            f"{path.name} ran at profile {ran_at!r}, the findings at {profile!r}: "
            f"run both at one profile (python book/run_notebooks.py --profile {profile})"
        )
    return {name: _value(text) for name, text in glued_values(notebook).items()}


def markdown_table(frame: pd.DataFrame) -> Markdown:
    """``frame`` (its columns, not its index) as a Markdown pipe table
    (:func:`~rsutils.analysis.pipe_table.pipe_table`), shown as such in a notebook and
    parsed as MyST by the book, so that roles in its cells (``{ref}`label```) become
    links that the strict build checks."""
    return Markdown(pipe_table(frame.columns, frame.itertuples(index=False)))


#: Where each qualitative claim's runs are measured (a chapter's label) and at which of
#: the book's scales: ``main`` (chapters 01, 02, 05), ``secondary`` (chapter 06), or
#: ``None`` for a claim decided exactly, without a run.
CLAIM_RUNS: dict[str, tuple[str, str | None]] = {
    "cohen-tradeoff": ("chapter-tight-radius", "main"),
    "cohen-samples": ("chapter-tight-radius", None),
    "ddrs-cohen-ds": ("chapter-sigma-ascent", "main"),
    "ucan-certification-wise": ("chapter-deployed-soundness", "secondary"),
    "ucan-dataset-wise": ("chapter-npg-training", "secondary"),
    "ucan-pattern-wise": ("chapter-npg-training", "secondary"),
}
#: The bibliography key of each paper of the ledger and the claims.
PAPERS = {
    "cohen2019": "cohen2019certified",
    "alfarra2022": "alfarra2022data",
    "ucan2025": "ucan2025",
}
#: How each scale is described, from the values the audit chapter glued.
SCALES = {
    "main": "{n_models} models × {n_rep_images} images, n = {rep_n}",
    "secondary": "{n_models} models × {n_small_images} images, n = {small_n}",
}


def claim_key(claim: str, field: str) -> str:
    """The glue key under which the audit chapter glues ``field`` of ``claim``'s verdict
    table (``claim_key("cohen-tradeoff", "verdict")`` → ``"claim_cohen_tradeoff_verdict"``)."""
    return f"claim_{key_part(claim)}_{field}"


def claim_verdicts(
    audit: Mapping[str, object], claims: pd.DataFrame, field: str = "verdict"
) -> pd.Series:
    """The verdict the audit chapter glued (as text) for each claim of ``claims``,
    parsed into a :class:`~rsutils.book.audit.verdicts.ClaimVerdict` (``field``:
    ``"verdict"``, the replicate models', or ``"one_model"``), indexed by the claims' ids.
    A glued word that is no claim verdict raises :class:`ValueError` naming the claim."""
    verdicts = {}
    for claim in claims.id:
        try:
            verdicts[claim] = ClaimVerdict.parse(str(audit[claim_key(claim, field)]))
        except ValueError as error:
            raise ValueError(f"the audit chapter's {field} of {claim}: {error}") from None
    return pd.Series(verdicts, name=field, dtype=object)


#: The claims also judged on the authors' released logs (the paper's own models),
#: which the audit chapter glues as ``claim_<id>_released`` beside its scale.
RELEASED_CLAIMS = ("cohen-tradeoff", "cohen-samples")
#: What the claims' table says where no released logs judge a claim.
NO_RELEASE = "no released logs"


def released_verdict(audit: Mapping[str, object], claim: str) -> object:
    """The verdict the audit chapter glued for ``claim`` on the released logs (a
    :class:`~rsutils.book.audit.verdicts.ClaimVerdict`), or :data:`NO_RELEASE` for a
    claim not in :data:`RELEASED_CLAIMS`."""
    if claim not in RELEASED_CLAIMS:
        return NO_RELEASE
    return ClaimVerdict.parse(str(audit[claim_key(claim, "released")]))


def claims_table(audit: Mapping[str, object], claims: pd.DataFrame) -> pd.DataFrame:
    """One row per claim of ``claims`` (:func:`~rsutils.book.papers.published.qualitative_claims`):
    the claim quoted with its paper (a citation) and its place there, the verdict of the
    replicate models and of the first model alone (:func:`claim_verdicts`), the verdict on
    the authors' released logs (:func:`released_verdict`), the scales it was judged at
    and links to where its runs are measured and where it is judged, from the values
    ``audit`` (the audit chapter's) glued. A claim :data:`CLAIM_RUNS` does not place
    raises :class:`KeyError`."""
    said, alone = claim_verdicts(audit, claims), claim_verdicts(audit, claims, "one_model")
    rows = []
    for claim in claims.itertuples():
        label, scale = CLAIM_RUNS[claim.id]
        judged_at = SCALES[scale].format(**audit) if scale else "exact"
        if claim.id in RELEASED_CLAIMS:
            judged_at += f"; the paper's models: {audit['released_scale']}"
        rows.append(
            {
                "claim": f"“{claim.quote}” ({{cite:t}}`{PAPERS[claim.paper]}`, {claim.place})",
                "verdict": said[claim.id],
                "one model says": alone[claim.id],
                "the paper's models say": released_verdict(audit, claim.id),
                "judged at": judged_at,
                "shown in": f"{{ref}}`{label}`",
            }
        )
    return pd.DataFrame(rows)


#: What the power table says of a claim that needs no sampling.
EXACT = "exact: no sampling"


def power_table(audit: Mapping[str, object], claims: pd.DataFrame) -> pd.DataFrame:
    """What each claim's design could detect, from the values ``audit`` glued: the
    effect tested (the margins its comparisons were judged with), the power of its
    comparisons against it at our scale and, for the claims of
    :data:`RELEASED_CLAIMS`, on the authors' released logs
    (:meth:`~rsutils.book.audit.claim_power.ClaimPower.brief`); :data:`EXACT` for a
    claim that needs no sampling, and where the released logs give no power their
    verdict (:func:`released_verdict`: "not testable here", or :data:`NO_RELEASE`)."""
    rows = []
    for claim in claims.id:
        exact = CLAIM_RUNS[claim][1] is None
        released = audit.get(claim_key(claim, "released_power"))
        released = released or str(released_verdict(audit, claim))
        rows.append(
            {
                "claim": claim,
                "effect tested": audit[claim_key(claim, "margin")],
                "power at our scale": EXACT if exact else audit[claim_key(claim, "power")],
                "on the paper's models": released,
            }
        )
    return pd.DataFrame(rows)


def claim_evidence(audit: Mapping[str, object], claims: pd.DataFrame) -> pd.DataFrame:
    """What each claim's verdict rests on, from the values ``audit`` glued: the number of
    comparisons (one family), what was measured (each comparison's mean difference,
    95% interval and per-model differences, or the count of each verdict) and, for the
    claims of :data:`RELEASED_CLAIMS`, what the released logs showed."""
    released = [audit.get(claim_key(c, "released_evidence"), NO_RELEASE) for c in claims.id]
    return pd.DataFrame(
        {
            "claim": claims.id,
            "comparisons": [audit[claim_key(c, "comparisons")] for c in claims.id],
            "what was measured": [audit[claim_key(c, "evidence")] for c in claims.id],
            "on the paper's models": released,
        }
    )


#: The pages whose values the findings page reads, by the name its table of findings
#: (:func:`beyond_findings`) gives them.
FINDING_PAGES = {
    "audit": "07_sota_tables",
    "logs": "07a_released_logs",
    "soundness": "06c_deployed_soundness",
    "draws": "08_fewer_draws",
    "sampler": "11_noise",
}


def beyond_findings() -> pd.DataFrame:
    """The book's findings beyond the papers' claims, shipped as data: one row each, with
    ``finding`` (what it is about), ``page`` (a key of :data:`FINDING_PAGES`),
    ``sentence`` (a template whose ``{key:format}`` fields are values that page glues)
    and ``label`` (the section that shows it)."""
    with (
        files("rsutils.book").joinpath("tables", "beyond_findings.csv").open(encoding="utf-8") as f
    ):
        return pd.read_csv(f)


def finding_rows(
    findings: pd.DataFrame, values: Mapping[str, Mapping[str, object]]
) -> pd.DataFrame:
    """One row per finding of ``findings`` (as :func:`beyond_findings`): its sentence
    filled with the values its page glued (``values[page]``), and a link to its label.
    A key the page did not glue raises :class:`KeyError` naming the page."""
    rows = []
    for row in findings.itertuples():
        try:
            found = row.sentence.format_map(values[row.page])
        except KeyError as missing:
            raise KeyError(f"{row.page} glued no value {missing}: {row.sentence!r}") from None
        shown = f"{{ref}}`{row.label}`"
        rows.append({"finding": row.finding, "what the run found": found, "shown in": shown})
    return pd.DataFrame(rows)
