"""Project hygiene: the conda environment matches pyproject, notebooks take a profile."""

import importlib.util
import re
import sys
import tomllib
from pathlib import Path

import nbformat
import pandas as pd
import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]


def test_environment_yml_lists_the_same_packages_as_pyproject() -> None:
    """The same requirements, in pyproject's order (dependencies, then the book's extra,
    then the test extra), so that moving one between groups shows in both files."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    wanted = [
        req
        for req in project["dependencies"] + extras["book"] + extras["test"]
        if not req.startswith("rsutils")
    ]
    environment = yaml.safe_load((REPO / "environment.yml").read_text())
    pip_section = next(d["pip"] for d in environment["dependencies"] if isinstance(d, dict))
    assert [r for r in pip_section if r not in ("-e .", "-c constraints.txt")] == wanted
    assert "-e ." in pip_section and "-c constraints.txt" in pip_section


def test_the_plotting_stack_is_the_books_not_the_librarys() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    required = {re.split(r"[<>=!~ ]", req)[0] for req in project["dependencies"]}
    book = {re.split(r"[<>=!~ ]", req)[0] for req in project["optional-dependencies"]["book"]}
    assert {"matplotlib", "seaborn"} <= book and not {"matplotlib", "seaborn"} & required


def test_the_library_declares_ranges_and_the_project_pins_what_it_tests() -> None:
    from packaging.requirements import Requirement

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    declared = {r.name: r for r in map(Requirement, project["dependencies"])}
    pins = {
        r.name: r
        for line in (REPO / "constraints.txt").read_text().splitlines()
        if line.strip() and not line.startswith("#")
        for r in [Requirement(line)]
    }
    assert set(pins) == {"torch", "torchvision"}
    for name, pin in pins.items():
        (spec,) = pin.specifier
        assert spec.operator == "==", f"{name} must be pinned exactly in constraints.txt"
        assert not any(s.operator in ("==", "===", "~=") for s in declared[name].specifier)
        assert declared[name].specifier.contains(spec.version), f"{name} pin outside its range"
    assert "-c constraints.txt" in (REPO / "Makefile").read_text()


def test_the_readme_is_a_front_door_of_at_most_150_lines() -> None:
    """The manual lives in the book (its pages run in the build); the README only says
    what this is, how to build and test it, where to read, and how long things take."""
    lines = (REPO / "README.md").read_text().splitlines()
    assert len(lines) <= 150, f"README.md has {len(lines)} lines; move text into the book"


def test_every_timing_in_the_readme_names_the_command_that_measures_it() -> None:
    readme = (REPO / "README.md").read_text()
    section = readme[readme.index("## Timings") :].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")][2:]
    assert rows, "the README's timings table is gone"
    for row in rows:
        what, command, time = (cell.strip() for cell in row.strip("|").split("|"))
        assert what and time and re.fullmatch(r"`[^`]+`", command), row


def test_every_notebook_has_a_parameters_cell_with_profile() -> None:
    """Papermill's parameters cell, starting with the profile, folded in the book with
    a caption of what it sets, after the imports, folded too: the first code a reader
    sees unfolded is the first that computes something of the chapter."""
    import jupytext

    for source in sorted((REPO / "notebooks").glob("[0-9][0-9]*_*.py")):
        code = [c for c in jupytext.read(source).cells if c.cell_type == "code"]
        imports, parameters = code[0], code[1]
        assert parameters.metadata["tags"] == ["parameters", "hide-input"], source.name
        assert parameters.source.startswith("profile = "), source.name
        caption = parameters.metadata["mystnb"]["code_prompt_show"]
        assert caption.startswith("Show the run's settings (profile"), source.name
        assert imports.metadata["tags"] == ["hide-input"], source.name
        assert imports.source.startswith(("import ", "from ")), source.name


def test_only_declared_parameters_are_injected() -> None:
    import jupytext

    runner = _load("book/run_notebooks.py")
    declared = {
        source.stem: runner.declared_parameters(jupytext.read(source))
        for source in sorted((REPO / "notebooks").glob("[0-9][0-9]*_*.py"))
    }
    assert all({"profile", "progress", "seed"} <= names for names in declared.values())
    assert [stem for stem, names in declared.items() if "reference_root" in names] == [
        "00_findings",
        "01_tight_radius",
        "06b_ucan_code",
        "07_sota_tables",
        "07a_released_logs",
        "07c_beside",
        "10_command_line",
    ]


def code_cells(source: Path) -> list[list[str]]:
    """The code lines of each code cell of a Jupytext percent notebook."""
    cells, current = [], None
    for line in source.read_text().splitlines():
        if line.startswith("# %%"):
            current = None if "[markdown]" in line else []
            if current is not None:
                cells.append(current)
        elif current is not None and line.strip() and not line.lstrip().startswith("#"):
            current.append(line)
    return cells


def test_notebook_cells_are_short() -> None:
    for source in sorted((REPO / "notebooks").glob("[0-9][0-9]*_*.py")):
        longest = max(len(cell) for cell in code_cells(source))
        assert longest <= 30, f"{source.name} has a code cell of {longest} lines"


def test_the_project_explains_itself_without_notes_from_elsewhere() -> None:
    """Every Markdown file a project file names is in the repository, and the only
    folders outside it that a file may name are the released data (``shared/reference``,
    read through ``RSUTILS_REFERENCE``) and the papers' texts that the published tables
    are checked against (``shared/seeds``, read through ``RSUTILS_SEEDS``)."""
    tracked = [*REPO.glob("*.md"), *REPO.glob("book/*.md"), *REPO.glob("notebooks/*.py")]
    tracked += [*REPO.glob("rsutils/**/*.py"), *REPO.glob("rsutils/**/*.csv")]
    tracked += [*REPO.glob("book/*.py"), *REPO.glob("tests/**/*.py"), REPO / "Makefile"]
    in_repository = {path.name for path in REPO.rglob("*.md") if ".venv" not in path.parts}
    for path in tracked:
        text = path.read_text()
        named = set(re.findall(r"[\w.-]+\.md\b", text))
        assert named <= in_repository, f"{path} names {sorted(named - in_repository)}"
        outside = set(re.findall(r"shared/(\w+)", text))
        assert outside <= {"reference", "seeds"}, f"{path} names shared/{sorted(outside)}"


def _load(relative: str):
    """A script of the repository (not of the package), imported as a module."""
    name = f"book_script_{Path(relative).stem}"
    spec = importlib.util.spec_from_file_location(name, REPO / relative)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def _executed(folder: Path, acr: str, table: str) -> None:
    import nbformat

    folder.mkdir()
    glued = nbformat.v4.new_output(
        "display_data",
        data={"application/papermill.record/text/plain": acr},
        metadata={"scrapbook": {"name": "acr", "mime_prefix": "application/papermill.record/"}},
    )
    shown = nbformat.v4.new_output("execute_result", data={"text/plain": table}, execution_count=1)
    cell = nbformat.v4.new_code_cell("...", outputs=[glued, shown])
    nbformat.write(nbformat.v4.new_notebook(cells=[cell]), folder / "01_chapter.ipynb")


def test_the_book_comparison_sees_a_changed_number(tmp_path, capsys) -> None:
    tool = _load("book/compare_executed.py")
    _executed(tmp_path / "old", "0.613", "sigma 0.25")
    _executed(tmp_path / "same", "0.613", "sigma 0.25")
    _executed(tmp_path / "new", "0.614", "sigma 0.5")
    assert tool.main([str(tmp_path / "old"), str(tmp_path / "same")]) == 0
    assert tool.main([str(tmp_path / "old"), str(tmp_path / "new")]) == 1
    report = capsys.readouterr().out
    assert "glued acr: '0.613' -> '0.614'" in report and "output 1 differs" in report


def test_split_pages_run_after_their_chapter_and_the_findings_last() -> None:
    runner = _load("book/run_notebooks.py")
    names = ["00_findings.py", "07_sota_tables.py", "06a_ucan_code.py", "06_npg_training.py"]
    order = [path.name for path in runner.run_order(Path(name) for name in names)]
    assert order == [
        "06_npg_training.py",
        "06a_ucan_code.py",
        "07_sota_tables.py",
        "00_findings.py",
    ]


def test_the_injected_parameters_are_run_but_not_shown() -> None:
    runner = _load("book/run_notebooks.py")
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell('profile = "cpu"', metadata={"tags": ["parameters"]}),
        nbformat.v4.new_code_cell(
            'reference_root = "/home/me/shared/reference"',
            metadata={"tags": ["injected-parameters"]},
        ),
    ]
    runner.hide_injected_parameters(notebook)
    runner.hide_injected_parameters(notebook)  # idempotent
    assert notebook.cells[0].metadata["tags"] == ["parameters"]
    assert notebook.cells[1].metadata["tags"] == ["injected-parameters", "remove-cell"]


def test_the_status_page_names_each_chapters_environment(tmp_path, monkeypatch) -> None:
    import nbformat

    from rsutils.book.profiles import get_profile
    from rsutils.core.devices import pick_device
    from rsutils.core.environment import describe_environment

    runner = _load("book/run_notebooks.py")
    monkeypatch.setattr(runner, "EXECUTED", tmp_path)
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# A chapter")])
    notebook.metadata["papermill"] = {"parameters": {"profile": "smoke"}, "duration": 90.0}
    nbformat.write(notebook, tmp_path / "01_chapter.ipynb")
    runner.record_environment(tmp_path / "01_chapter.ipynb", "smoke")
    runner.write_status()
    row = (tmp_path / "status.md").read_text().splitlines()[-1]
    environment = describe_environment(pick_device(get_profile("smoke").device))
    expected = f"| smoke | ? | 1.5 min | {environment['device']} | {environment['threads']} |"
    assert expected in row and row.endswith(f"| {environment['torch']} |")


def test_the_api_page_documents_every_module() -> None:
    page = (REPO / "book" / "api.md").read_text()
    modules = {
        ".".join(path.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")
        for path in (REPO / "rsutils").rglob("*.py")
        if path.name != "__main__.py"
    }
    missing = sorted(m for m in modules if f".. automodule:: {m}\n" not in page)
    assert not missing, f"add to book/api.md: {missing}"


def test_the_thread_spread_tables_compare_two_sets_of_logs(tmp_path, monkeypatch) -> None:
    import json

    tool = _load("book/measure_thread_spread.py")
    monkeypatch.setattr(tool, "TABLES", tmp_path)

    def log(radius: list[float], count: list[int], scale: list[float]) -> dict[str, list]:
        return {
            "idx": [0, 1, 2], "radius": radius, "correct": [1, 1, 0], "count": count,
            "n": [100] * 3, "scale": scale, "predict": [0, 0, 1], "label": [0, 0, 0],
        }  # fmt: skip

    summaries = {}
    for threads, ds_radius in ((1, [1.0, 2.0, 0.5]), (2, [1.5, 2.0, 0.1])):
        logs = {
            "cohen-0.25": log([0.8, 0.5, 0.3], [100, 90, 80], [0.25] * 3),
            "cohen-0.5": log([0.8, 0.5, 0.3], [100, 90, 80], [0.5] * 3),
            "cohen-1.0": log([0.8, 0.5, 0.3], [100, 90, 80], [1.0] * 3),
            "ds-0.25": log(ds_radius, [99, 100, 80], [0.5, 1.0, 0.2 * threads]),
        }
        summaries[threads] = tmp_path / f"thread-spread-{threads}.json"
        summaries[threads].write_text(json.dumps(logs))
    tool.tables(summaries)
    headline = pd.read_csv(tmp_path / "thread_spread.csv", index_col="run")
    assert len(headline) == 4 and headline.loc["ds-0.25", "ACR, 1 thread"] == 1.0
    assert headline.loc["ds-0.25", "ACR, 2 threads"] == pytest.approx(3.5 / 3, abs=1e-4)
    inputs = pd.read_csv(tmp_path / "thread_spread_inputs.csv", index_col=0).T
    assert inputs.loc["cohen-0.25", "same radius with both models"] == 1.0
    assert inputs.loc["cohen-0.25", "at the cap (all n draws in the class)"] == pytest.approx(
        1 / 3, abs=1e-3
    )
    assert inputs.loc["ds-0.25", "same radius with both models"] == pytest.approx(2 / 3, abs=1e-3)
    assert inputs.loc["ds-0.25", "median relative change of the noise level"] == 0.0
    ds_pair = inputs.loc["ds-0.25"]
    assert ds_pair["inputs whose noise level exceeds 3 sigma0 (either model)"] == pytest.approx(
        1 / 3, abs=1e-3
    )
    assert ds_pair["ACR change from those inputs"] == 0.0
    assert ds_pair["ACR change from the other inputs"] == pytest.approx(0.5 / 3, abs=1e-3)
    assert "90th percentile of the noise level, 2 threads" in headline.columns


def toc_files(entries: list[dict]) -> list[str]:
    """The file names of ``entries`` of ``_toc.yml`` and of their sections, in order."""
    names = []
    for entry in entries:
        names += [Path(entry["file"]).name, *toc_files(entry.get("sections", []))]
    return names


def test_the_reading_order_follows_the_numbering() -> None:
    """The table of contents lists every numbered page once, in the order of its
    numbers: the findings (00), the chapters (01-08, a page split from a chapter, 06a,
    right after it), then the manual, so that no page numbered 12 is read before the
    one numbered 01."""
    toc = yaml.safe_load((REPO / "_toc.yml").read_text())
    files = [
        name
        for part in toc["parts"]
        for name in toc_files(part["chapters"])
        if re.match(r"\d\d[a-z]?_", name)
    ]
    numbered = sorted(path.stem for path in (REPO / "notebooks").glob("[0-9][0-9]*_*.py"))
    assert files == numbered
