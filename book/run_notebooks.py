"""Execute every notebook of notebooks/ with papermill, in order, into book/_executed/.

    python book/run_notebooks.py --profile smoke [--only 01] [--reference DIR] [--quiet]

Each Jupytext source ``notebooks/NN_slug.py`` becomes ``book/_executed/NN_slug.ipynb``
with ``profile``, ``progress=False`` and ``reference_root`` injected, each only into the
notebooks whose ``parameters`` cell declares it. While a chapter runs, a progress bar
shows its name, the cell being run, and the elapsed and remaining time; under it come
the lines that the library's long loops append to a side channel (``rsutils.progress``:
the model being trained and its epoch, the log being certified and how far it is),
and a heartbeat naming the running cell whenever nothing came for 30 s. The chapters
run with ``progress=False``, so none of this is printed into them. When stderr is not a
terminal (a CI log), all of it comes as plain lines. ``--quiet`` turns it all off.
Each executed notebook's metadata also records the environment it ran in (device,
torch's thread count, torch version), and papermill's injected-parameters cell is
tagged ``remove-cell``: it holds this machine's paths, and the run-at table of every
chapter already states the profile. Then ``book/_executed/status.md`` is written from
the executed notebooks' own metadata (profile, start time, duration, environment), for
the book's status page. A chapter that printed to stderr, or whose prose pastes a glued
float without a format (:func:`rsutils.book.glue.unformatted_float_glues`), stops the
build with a message naming what to fix.
"""

from __future__ import annotations

import argparse
import ast
import os
import sys
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import TextIO

import jupytext
import nbformat
import papermill
from papermill.engines import NBClientEngine, papermill_engines
from tqdm import tqdm

from rsutils.progress import PROGRESS_FILE

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


#: Seconds without a line from the side channel after which a heartbeat names the cell.
HEARTBEAT = 30.0
#: The terminal is written to by papermill's bar and by the watch's thread.
_TERMINAL = threading.Lock()


class PlainLines:
    """A stream for a tqdm bar that turns each redraw into a line of its own: tqdm writes
    ``\\r`` and the bar, which in a log (stderr not a terminal) piles every redraw onto
    one line."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.encoding = getattr(stream, "encoding", None) or "utf-8"

    def write(self, text: str) -> int:
        shown = [part.rstrip() for part in text.replace("\r", "\n").split("\n")]
        with _TERMINAL:
            self.stream.write("".join(f"{part}\n" for part in shown if part))
        return len(text)

    def flush(self) -> None:
        self.stream.flush()

    def isatty(self) -> bool:
        return False


def show(text: str, stream: TextIO) -> None:
    """Print a line under the chapter's bar (tqdm redraws the bar below it in a terminal)."""
    if stream.isatty():
        tqdm.write(text, file=stream)
        return
    with _TERMINAL:
        stream.write(text + "\n")
        stream.flush()


def progress_bar(name: str, profile: str, stream: TextIO = sys.stderr) -> dict[str, object]:
    """papermill's per-cell progress bar for one chapter: its name, the cell being run,
    elapsed and remaining time (tqdm's estimate); into a log, one plain line at most
    every 10 s (:class:`PlainLines`)."""
    if stream.isatty():
        return {"desc": f"[{profile}] {name}", "mininterval": 0.5, "file": stream}
    return {"desc": f"[{profile}] {name}", "mininterval": 10, "file": PlainLines(stream)}


class ChapterWatch:
    """What a running chapter shows under its cell bar, from a thread of its own.

    Every ``poll`` seconds it prints the new lines of the side channel ``channel`` (the
    file that the kernel's :class:`rsutils.progress.ProgressBar` loops append to), and
    when neither such a line nor a heartbeat came for ``heartbeat`` seconds, a heartbeat
    naming the running cell (papermill's engine reports each cell it starts, see
    :class:`WatchedEngine`). Use it as a context manager around the execution; leaving
    it prints the lines that came last.
    """

    def __init__(
        self,
        channel: Path,
        stream: TextIO = sys.stderr,
        *,
        heartbeat: float = HEARTBEAT,
        poll: float = 1.0,
    ) -> None:
        self.channel, self.stream, self.heartbeat, self.poll = channel, stream, heartbeat, poll
        self.cell: tuple[int, int, str, float] | None = None  # index, cells, first line, start
        self._read = 0
        self._last_shown = time.monotonic()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="chapter watch", daemon=True)

    def cell_started(self, index: int, cells: int, source: str) -> None:
        """Called as papermill starts cell ``index`` (of ``cells``)."""
        first = next((line.strip() for line in source.splitlines() if _is_code(line)), "")
        self.cell = (index, cells, first[:80], time.monotonic())

    def __enter__(self) -> ChapterWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._thread.join()
        self.check()

    def _watch(self) -> None:
        while not self._stop.wait(self.poll):
            self.check()

    def check(self) -> None:
        """Print the side channel's new lines, or a heartbeat if it is time for one."""
        lines = self._new_lines()
        for line in lines:
            show(f"  {line}", self.stream)
        now = time.monotonic()
        if lines:
            self._last_shown = now
        elif now - self._last_shown >= self.heartbeat and self.cell is not None:
            index, cells, first, started = self.cell
            running = tqdm.format_interval(now - started)
            show(f"  cell {index + 1} of {cells} running for {running}: {first}", self.stream)
            self._last_shown = now

    def _new_lines(self) -> list[str]:
        """The complete lines appended to the side channel since the last call."""
        try:
            with open(self.channel, "rb") as handle:
                handle.seek(self._read)
                data = handle.read()
        except FileNotFoundError:
            return []
        complete = data[: data.rfind(b"\n") + 1]  # a line being written waits
        self._read += len(complete)
        return complete.decode(errors="replace").splitlines()


def _is_code(line: str) -> bool:
    return bool(line.strip()) and not line.lstrip().startswith("#")


class WatchedEngine(NBClientEngine):
    """papermill's default engine, telling a :class:`ChapterWatch` (keyword ``watch``)
    which cell it starts."""

    @classmethod
    def execute_managed_notebook(cls, nb_man, kernel_name, watch=None, **kwargs):
        if watch is not None:
            start_cell = nb_man.cell_start

            def cell_start(cell, cell_index=None, **more):
                watch.cell_started(cell_index, len(nb_man.nb.cells), cell.source)
                return start_cell(cell, cell_index, **more)

            nb_man.cell_start = cell_start
        return super().execute_managed_notebook(nb_man, kernel_name, **kwargs)


papermill_engines.register("rsutils-watched", WatchedEngine)


@contextmanager
def kernel_side_channel(channel: Path | None) -> Iterator[None]:
    """Name ``channel`` in ``RSUTILS_PROGRESS_FILE`` for the kernels started in the block
    (they inherit this process's environment); ``None`` unsets it."""
    before = os.environ.get(PROGRESS_FILE)
    if channel is None:
        os.environ.pop(PROGRESS_FILE, None)
    else:
        os.environ[PROGRESS_FILE] = str(channel)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(PROGRESS_FILE, None)
        else:
            os.environ[PROGRESS_FILE] = before


def execute(
    source: Path,
    profile: str,
    reference: str | None,
    progress: bool = True,
    *,
    stream: TextIO = sys.stderr,
    heartbeat: float = HEARTBEAT,
) -> float:
    """Run one notebook, showing its progress on ``stream`` unless ``progress`` is off;
    returns its wall time in seconds."""
    target = EXECUTED / f"{source.stem}.ipynb"
    notebook = jupytext.read(source)
    offered = {"profile": profile, "reference_root": reference, "progress": False}
    declared = declared_parameters(notebook)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="rsutils-progress-") as folder:
        channel = Path(folder) / f"{source.stem}.log"
        watch = ChapterWatch(channel, stream, heartbeat=heartbeat) if progress else None
        with kernel_side_channel(channel if progress else None), watch or nullcontext():
            papermill.execute_notebook(
                notebook,
                str(target),
                parameters={name: value for name, value in offered.items() if name in declared},
                kernel_name="python3",
                cwd=str(EXECUTED),
                progress_bar=progress_bar(source.stem, profile, stream) if progress else False,
                log_output=False,
                engine_name="rsutils-watched",
                watch=watch,
            )
    seconds = time.perf_counter() - start
    record_environment(target, profile)
    executed = nbformat.read(target, as_version=4)
    printed = printed_to_stderr(executed)
    if printed:
        raise NotebookPrintedToStderr(
            f"{source.name} printed to stderr (a warning or error the reader would see, or "
            "that a hidden cell would hide); remove its cause:\n" + "\n".join(printed)
        )
    raw = raw_floats_in_prose(executed)
    if raw:
        raise NotebookPastesRawFloat(
            f"{source.name} pastes glued floats into its prose without a format (the "
            "reader would see every digit of their repr); add one to each role:\n"
            + "\n".join(f"  {message}" for message in raw)
        )
    return seconds


class NotebookPrintedToStderr(RuntimeError):
    """An executed notebook has stderr output: the build stops at the first one."""


class NotebookPastesRawFloat(RuntimeError):
    """An executed notebook's prose shows a glued float unformatted: the build stops."""


def raw_floats_in_prose(notebook: nbformat.NotebookNode) -> list[str]:
    """:func:`rsutils.book.glue.unformatted_float_glues` of an executed notebook
    (imported here: the book's package is only needed once a chapter has run)."""
    from rsutils.book.glue import unformatted_float_glues

    return unformatted_float_glues(notebook)


def printed_to_stderr(notebook: nbformat.NotebookNode) -> list[str]:
    """``cell N: first line`` for each code cell that wrote to stderr."""
    printed = []
    for index, cell in enumerate(notebook.cells):
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream" and output.get("name") == "stderr":
                first = (output.get("text") or "").strip().splitlines()[:1]
                printed.append(f"  cell {index}: {first[0] if first else '(empty)'}")
    return printed


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
    for path in sorted(EXECUTED.glob("[0-9][0-9]*_*.ipynb")):
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


#: The findings page (read first, numbered 00) reads the values every other page glued,
#: so it runs after them.
FINDINGS = "00_findings"


def run_order(sources: Iterable[Path]) -> list[Path]:
    """The notebooks in the order they run: by name (a split page, ``06a_``, right after
    its chapter ``06_``), the findings page last."""
    return sorted(sources, key=lambda path: (path.stem == FINDINGS, path.name))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="cpu")
    parser.add_argument("--only", default=None, help="run only notebooks starting with this")
    parser.add_argument("--reference", default=None, help="folder holding cohen2019/")
    parser.add_argument("--quiet", action="store_true", help="no per-cell progress bar")
    args = parser.parse_args()
    EXECUTED.mkdir(parents=True, exist_ok=True)
    sources = run_order(SOURCES.glob("[0-9][0-9]*_*.py"))
    for stale in EXECUTED.glob("*.ipynb"):
        if not (SOURCES / f"{stale.stem}.py").exists():
            stale.unlink()
    for source in sources:
        if args.only and not source.name.startswith(args.only):
            continue
        print(f"[{args.profile}] {source.name} ...", flush=True)
        try:
            seconds = execute(source, args.profile, args.reference, progress=not args.quiet)
        except (NotebookPrintedToStderr, NotebookPastesRawFloat) as error:
            print(f"error: {error}", file=sys.stderr)
            return 1
        print(f"[{args.profile}] {source.name} done in {seconds:.0f} s", flush=True)
    write_status()
    return 0


if __name__ == "__main__":
    sys.exit(main())
