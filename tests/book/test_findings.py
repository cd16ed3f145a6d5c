"""The findings page reads the chapters' glued values, from the right profile, or refuses."""

from __future__ import annotations

import re
import string
from pathlib import Path

import nbformat
import pandas as pd
import pytest

from rsutils.book.audit.verdicts import ClaimVerdict
from rsutils.book.findings import (
    CLAIM_RUNS,
    EXACT,
    FINDING_PAGES,
    NO_RELEASE,
    PAPERS,
    RELEASED_CLAIMS,
    ChapterNotRunError,
    ProfileMismatchError,
    beyond_findings,
    chapter_values,
    claim_evidence,
    claim_key,
    claim_verdicts,
    claims_table,
    executed_folder,
    finding_rows,
    markdown_table,
    power_table,
)

REPO = Path(__file__).resolve().parents[2]


def glued(name: str, text: str) -> nbformat.NotebookNode:
    """An output as myst-nb's glue writes it."""
    return nbformat.v4.new_output(
        "display_data",
        data={"text/plain": text},
        metadata={"scrapbook": {"name": name, "mime_prefix": ""}},
    )


def write_chapter(folder: Path, stem: str, profile: str) -> None:
    cell = nbformat.v4.new_code_cell("glue_all(...)")
    cell.outputs = [glued("n", "40"), glued("acr", "0.3071"), glued("verdict", "'holds'")]
    notebook = nbformat.v4.new_notebook(cells=[cell])
    notebook.metadata["papermill"] = {"parameters": {"profile": profile}}
    nbformat.write(notebook, folder / f"{stem}.ipynb")


def test_values_come_back_as_the_python_values_glued(tmp_path: Path) -> None:
    write_chapter(tmp_path, "07_sota_tables", "cpu")
    values = chapter_values(tmp_path, "07_sota_tables", "cpu")
    assert values == {"n": 40, "acr": 0.3071, "verdict": "holds"}


def test_a_chapter_of_another_profile_is_refused(tmp_path: Path) -> None:
    write_chapter(tmp_path, "07_sota_tables", "smoke")
    with pytest.raises(ProfileMismatchError, match="ran at profile 'smoke'"):
        chapter_values(tmp_path, "07_sota_tables", "cpu")


def test_a_chapter_not_run_names_the_command(tmp_path: Path) -> None:
    with pytest.raises(ChapterNotRunError, match="--profile cpu --only 07"):
        chapter_values(tmp_path, "07_sota_tables", "cpu")


def test_the_executed_folder_is_found_from_the_notebooks_folder(tmp_path: Path) -> None:
    executed = tmp_path / "book" / "_executed"
    executed.mkdir(parents=True)
    (tmp_path / "notebooks").mkdir()
    assert executed_folder(tmp_path / "notebooks") == executed
    assert executed_folder(executed) == executed
    with pytest.raises(ChapterNotRunError):
        executed_folder(executed.parent.parent.parent / "elsewhere")


def test_a_markdown_table_keeps_roles_and_escapes_pipes() -> None:
    frame = pd.DataFrame({"claim": ["a | b"], "where": ["{ref}`chapter-sota-tables`"]})
    text = markdown_table(frame).data
    assert text.splitlines() == [
        "| claim | where |",
        "| --- | --- |",
        "| a \\| b | {ref}`chapter-sota-tables` |",
    ]


def audit_values() -> dict[str, object]:
    from rsutils.book.papers.published import qualitative_claims

    values: dict[str, object] = {"n_models": 5, "n_rep_images": 40, "rep_n": "10,000"}
    values |= {"n_small_images": 30, "small_n": "1,000", "released_scale": "the release"}
    values |= {claim_key(c, "released"): "not resolved at this scale" for c in RELEASED_CLAIMS}
    values[claim_key("cohen-tradeoff", "released_power")] = "0.90; 80% needs 40 images"
    for claim in qualitative_claims().id:
        for field in ("comparisons", "evidence", "power", "margin"):
            values[claim_key(claim, field)] = f"{claim} {field}"
        values[claim_key(claim, "verdict")] = "does not hold"  # glued as text
        values[claim_key(claim, "one_model")] = "not testable here"
    return values


def test_every_qualitative_claim_has_a_row_with_its_scale_and_links() -> None:
    from rsutils.book.papers.published import qualitative_claims

    claims = qualitative_claims()
    table = claims_table(audit_values(), claims)
    assert len(table) == len(claims) and set(CLAIM_RUNS) == set(claims.id)
    row = table.set_index(claims.id).loc["ddrs-cohen-ds"]
    assert row["verdict"] is ClaimVerdict.DOES_NOT_HOLD
    assert row["one model says"] is ClaimVerdict.NOT_TESTABLE
    assert row["judged at"] == "5 models × 40 images, n = 10,000"
    assert row["shown in"] == "{ref}`chapter-sigma-ascent`"
    assert row["claim"].endswith("({cite:t}`alfarra2022data`, results)")
    exact = table.set_index(claims.id).loc["cohen-samples", "judged at"]
    assert exact == "exact; the paper's models: the release"
    released = table.set_index(claims.id)["the paper's models say"]
    assert released["cohen-tradeoff"] is ClaimVerdict.NOT_RESOLVED
    assert released["ddrs-cohen-ds"] == NO_RELEASE
    evidence = claim_evidence(audit_values(), claims)
    assert list(evidence["comparisons"]) == [f"{c} comparisons" for c in claims.id]


def test_the_power_table_says_what_each_design_could_detect() -> None:
    from rsutils.book.papers.published import qualitative_claims

    claims = qualitative_claims()
    table = power_table(audit_values(), claims).set_index("claim")
    assert table.loc["ddrs-cohen-ds", "power at our scale"] == "ddrs-cohen-ds power"
    assert table.loc["ddrs-cohen-ds", "effect tested"] == "ddrs-cohen-ds margin"
    assert table.loc["ddrs-cohen-ds", "on the paper's models"] == NO_RELEASE
    assert table.loc["cohen-samples", "power at our scale"] == EXACT
    assert table.loc["cohen-samples", "on the paper's models"] == "not resolved at this scale"
    assert table.loc["cohen-tradeoff", "on the paper's models"] == "0.90; 80% needs 40 images"


def test_a_glued_verdict_is_parsed_once_and_an_unknown_word_refused() -> None:
    from rsutils.book.papers.published import qualitative_claims

    claims, values = qualitative_claims(), audit_values()
    said = claim_verdicts(values, claims)
    assert list(said.index) == list(claims.id)
    assert set(said) == {ClaimVerdict.DOES_NOT_HOLD}
    assert markdown_table(claims_table(values, claims)).data.count("| does not hold |") == len(
        claims
    )  # shown as its text
    values[claim_key("cohen-tradeoff", "verdict")] = "holds mostly"
    with pytest.raises(ValueError, match=r"cohen-tradeoff: 'holds mostly' is not a ClaimVerdict"):
        claim_verdicts(values, claims)


def test_a_claim_the_audit_did_not_glue_is_an_error() -> None:
    from rsutils.book.papers.published import qualitative_claims

    values = audit_values()
    del values[claim_key("ucan-pattern-wise", "verdict")]
    with pytest.raises(KeyError, match="claim_ucan_pattern_wise_verdict"):
        claims_table(values, qualitative_claims())


def test_a_finding_is_filled_from_its_page_and_links_to_it() -> None:
    values = {"logs": {"n": 9, "ratio": 10.0}}
    rows = pd.DataFrame(
        [{"finding": "α", "page": "logs", "sentence": "{n} logs, {ratio:.0f} times", "label": "x"}]
    )
    assert finding_rows(rows, values).iloc[0].to_dict() == {
        "finding": "α",
        "what the run found": "9 logs, 10 times",
        "shown in": "{ref}`x`",
    }
    with pytest.raises(KeyError, match="logs glued no value 'm'"):
        finding_rows(rows.assign(sentence="{m} logs"), values)


def test_every_finding_reads_values_its_page_glues_and_links_to_a_label() -> None:
    """Each sentence's keys are named in the notebook it reads (glued there, or pasted
    in its prose, which the strict build allows only for glued keys), and its label is
    defined on some page of the book."""
    notebooks = REPO / "notebooks"
    labels = set()
    for source in notebooks.glob("[0-9][0-9]*_*.py"):
        labels |= set(re.findall(r"^# \(([\w-]+)\)=$", source.read_text(), flags=re.M))
    for row in beyond_findings().itertuples():
        source = (notebooks / f"{FINDING_PAGES[row.page]}.py").read_text()
        keys = {field for _, field, _, _ in string.Formatter().parse(row.sentence) if field}
        unglued = [k for k in keys if not re.search(rf"\b{k}\b", source)]
        assert unglued == [], f"{FINDING_PAGES[row.page]} glues none of {unglued}"
        assert row.label in labels, row.label


def conclusion(source: str) -> str:
    """The "What holds up" section of a chapter's jupytext source: from its heading to
    the next heading of the same level or the end."""
    start = source.index("# ## What holds up")
    end = source.find("\n# ## ", start + 1)
    return source[start : end if end > 0 else len(source)]


def test_every_finding_says_no_more_than_its_pages_conclusion() -> None:
    """A finding quotes only values its page states in its own "What holds up" (as
    ``{glue:text}`` keys), so the findings page carries the page's conditions (one
    radius or the whole curve, pooled over models, the model and device a cost was
    measured on) and cannot pick another number than the page concluded with."""
    notebooks = REPO / "notebooks"
    for row in beyond_findings().itertuples():
        page = FINDING_PAGES[row.page]
        said = conclusion((notebooks / f"{page}.py").read_text())
        stated = set(re.findall(r"\{glue:text\}`(\w+)", said))
        keys = {field for _, field, _, _ in string.Formatter().parse(row.sentence) if field}
        assert keys - stated == set(), f"{page}'s conclusion states none of {keys - stated}"


def test_the_conclusion_is_the_section_up_to_the_next_heading() -> None:
    source = "# ## (a) run\n# {glue:text}`a`\n# ## What holds up\n# {glue:text}`b`\n# ## More\n"
    assert "`b`" in conclusion(source) and "`a`" not in conclusion(source)
    assert "More" not in conclusion(source)


def test_every_paper_is_cited_by_a_key_of_the_bibliography() -> None:
    from rsutils.book.audit import ledger as lg

    bibliography = (REPO / "book" / "references.bib").read_text()
    assert set(PAPERS) == set(lg.LEDGER_PAPERS)
    for key in PAPERS.values():
        assert re.search(rf"^@\w+{{{key},", bibliography, flags=re.M), key
