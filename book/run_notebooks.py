"""Execute every notebook of notebooks/ with papermill, in order, into book/_executed/.

    python book/run_notebooks.py --profile smoke [--only 01] [--reference DIR] [--quiet]

Each Jupytext source ``notebooks/NN_slug.py`` becomes ``book/_executed/NN_slug.ipynb``
with ``profile``, ``progress=False`` and ``reference_root`` injected, each only into the
notebooks whose ``parameters`` cell declares it. While a chapter runs, a progress bar
shows its name, the cell being run, and the elapsed and remaining time (``--quiet``
turns it off).
Each executed notebook's metadata also records the environment it ran in (device,
torch's thread count, torch version), and papermill's injected-parameters cell is
tagged ``remove-cell``: it holds this machine's paths, and the run-at table of every
chapter already states the profile. Then ``book/_executed/status.md`` is written from
the executed notebooks' own metadata (profile, start time, duration, environment), for
the book's status page.
"""

from __future__ import annotations

import argparse
import ast
import sys
import time
from pathlib import Path

import jupytext
import nbformat
import papermill

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ROOT / "notebooks"
EXECUTED = ROOT / "book" / "_executed"


def declared_parameters(notebook: nbformat.NotebookNode) -> set[str]:
    """The names assigned in the notebook's cell tagged ``parameters``."""
    for cell in notebook.cells:
        if "parameters" in cell.metadata.get("tags", []):
            body = ast.parse(cell.source).body
            return {t.id for node in body if isinstance(node, ast.Assign) for t in node.targets}
    raise ValueError("the notebook has no cell tagged 'parameters'")


def progress_bar(name: str, profile: str, stream=sys.stderr) -> dict[str, object]:
    """papermill's per-cell progress bar for one chapter: its name, the cell being run,
    elapsed and remaining time (tqdm's estimate), redrawn at most every 10 s into a log."""
    return {"desc": f"[{profile}] {name}", "mininterval": 0.5 if stream.isatty() else 10}


def execute(source: Path, profile: str, reference: str | None, progress: bool = True) -> float:
    """Run one notebook; returns its wall time in seconds."""
    target = EXECUTED / f"{source.stem}.ipynb"
    notebook = jupytext.read(source)
    offered = {"profile": profile, "reference_root": reference, "progress": False}
    declared = declared_parameters(notebook)
    start = time.perf_counter()
    papermill.execute_notebook(
        notebook,
        str(target),
        parameters={name: value for name, value in offered.items() if name in declared},
        kernel_name="python3",
        cwd=str(EXECUTED),
        progress_bar=progress_bar(source.stem, profile) if progress else False,
        log_output=False,
    )
    seconds = time.perf_counter() - start
    record_environment(target, profile)
    return seconds


def record_environment(target: Path, profile: str) -> None:
    """Store where the notebook ran (see ``describe_environment``) in its metadata, and
    hide the injected parameters from the book (:func:`hide_injected_parameters`)."""
    from rsutils.book.profiles import get_profile
    from rsutils.core.devices import pick_device
    from rsutils.core.environment import describe_environment

    executed = nbformat.read(target, as_version=4)
    device = pick_device(get_profile(profile).device)
    executed.metadata["rsutils"] = {"environment": describe_environment(device)}
    hide_injected_parameters(executed)
    nbformat.write(executed, target)


def hide_injected_parameters(notebook: nbformat.NotebookNode) -> None:
    """Tag papermill's injected-parameters cell ``remove-cell`` (it still runs, e.g. under
    nbval; the book just does not show a local path such as ``reference_root``)."""
    for cell in notebook.cells:
        tags = cell.metadata.setdefault("tags", [])
        if "injected-parameters" in tags and "remove-cell" not in tags:
            tags.append("remove-cell")


def title_of(notebook: nbformat.NotebookNode) -> str:
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    return "(untitled)"


def write_status() -> None:
    """A Markdown table of every executed notebook's profile, run time and environment."""
    rows = [
        "| chapter | profile | started (UTC) | run time | device | CPU threads | torch |",
        "|---|---|---|---|---|---|---|",
    ]
    for path in sorted(EXECUTED.glob("[0-9][0-9]_*.ipynb")):
        notebook = nbformat.read(path, as_version=4)
        meta = notebook.metadata.get("papermill", {})
        profile = meta.get("parameters", {}).get("profile", "?")
        started = (meta.get("start_time") or "?")[:19].replace("T", " ")
        duration = meta.get("duration")
        minutes = f"{duration / 60:.1f} min" if duration is not None else "?"
        chapter = f"{{doc}}`/book/_executed/{path.stem}` ({title_of(notebook)})"
        environment = notebook.metadata.get("rsutils", {}).get("environment", {})
        where = " | ".join(str(environment.get(k, "?")) for k in ("device", "threads", "torch"))
        rows.append(f"| {chapter} | {profile} | {started} | {minutes} | {where} |")
    (EXECUTED / "status.md").write_text("\n".join(rows) + "\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="cpu")
    parser.add_argument("--only", default=None, help="run only notebooks starting with this")
    parser.add_argument("--reference", default=None, help="folder holding cohen2019/")
    parser.add_argument("--quiet", action="store_true", help="no per-cell progress bar")
    args = parser.parse_args()
    EXECUTED.mkdir(parents=True, exist_ok=True)
    sources = sorted(SOURCES.glob("[0-9][0-9]_*.py"))
    for stale in EXECUTED.glob("*.ipynb"):
        if not (SOURCES / f"{stale.stem}.py").exists():
            stale.unlink()
    for source in sources:
        if args.only and not source.name.startswith(args.only):
            continue
        print(f"[{args.profile}] {source.name} ...", flush=True)
        seconds = execute(source, args.profile, args.reference, progress=not args.quiet)
        print(f"[{args.profile}] {source.name} done in {seconds:.0f} s", flush=True)
    write_status()
    return 0


if __name__ == "__main__":
    sys.exit(main())
