"""The book's runner shows what a chapter is doing, in the terminal and never in the book:
the side channel's lines under the cell bar, a heartbeat naming a long cell, plain lines
in a log."""

from __future__ import annotations

import importlib.util
import io
import os
import sys
from pathlib import Path

import nbformat
import pytest
from tqdm import tqdm

from rsutils.progress import PROGRESS_FILE

REPO = Path(__file__).resolve().parents[1]


def _runner():
    name = "book_script_run_notebooks"
    spec = importlib.util.spec_from_file_location(name, REPO / "book" / "run_notebooks.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


runner = _runner()


def test_the_watch_prints_the_side_channels_complete_lines_under_the_bar(tmp_path) -> None:
    channel, terminal = tmp_path / "progress.log", io.StringIO()
    watch = runner.ChapterWatch(channel, terminal, heartbeat=3600)
    watch.check()  # no file yet: nothing
    channel.write_text("train a | step 0 of 4 | 00:00 elapsed | ? remaining\ntrain a | st")
    watch.check()
    with open(channel, "a") as handle:
        handle.write("ep 2 of 4 | 00:05 elapsed | 00:05 remaining\n")
    watch.check()
    watch.check()  # nothing new
    assert terminal.getvalue() == (
        "  train a | step 0 of 4 | 00:00 elapsed | ? remaining\n"
        "  train a | step 2 of 4 | 00:05 elapsed | 00:05 remaining\n"
    )


def test_the_heartbeat_names_the_running_cell_only_when_nothing_came(tmp_path) -> None:
    channel, terminal = tmp_path / "progress.log", io.StringIO()
    watch = runner.ChapterWatch(channel, terminal, heartbeat=0)
    watch.check()
    assert terminal.getvalue() == "", "no cell has started: nothing to name"
    watch.cell_started(15, 43, "# Certify every sigma.\n\nlogs = experiments.certify(model)\n")
    watch.check()
    assert terminal.getvalue().startswith("  cell 16 of 43 running for 00:0")
    assert terminal.getvalue().endswith(": logs = experiments.certify(model)\n")
    terminal.truncate(0)
    terminal.seek(0)
    channel.write_text("certify | step 1 of 9 | 00:01 elapsed | 00:08 remaining\n")
    watch.check()
    assert terminal.getvalue() == "  certify | step 1 of 9 | 00:01 elapsed | 00:08 remaining\n"


def test_into_a_log_the_cell_bar_is_plain_lines(tmp_path) -> None:
    log = io.StringIO()
    options = runner.progress_bar("01_chapter", "smoke", log)
    assert options["mininterval"] == 10
    bar = tqdm(total=3, unit="cell", **{**options, "mininterval": 0})
    for _ in range(3):
        bar.update()
    bar.close()
    written = log.getvalue()
    assert "\r" not in written
    shown = written.splitlines()
    assert shown[0].startswith("[smoke] 01_chapter:   0%") and len(shown) >= 4
    assert all(line.startswith("[smoke] 01_chapter: ") for line in shown)
    assert shown[-1].startswith("[smoke] 01_chapter: 100%")


def test_the_kernels_side_channel_is_set_for_the_block_only(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv(PROGRESS_FILE, "/somewhere/else.log")
    with runner.kernel_side_channel(tmp_path / "chapter.log"):
        assert os.environ[PROGRESS_FILE] == str(tmp_path / "chapter.log")
    assert os.environ[PROGRESS_FILE] == "/somewhere/else.log"
    with runner.kernel_side_channel(None):
        assert PROGRESS_FILE not in os.environ
    assert os.environ[PROGRESS_FILE] == "/somewhere/else.log"


#: A chapter in miniature: a loop with its bar off (as the book runs it), then a long cell.
CHAPTER = """\
# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # A small chapter

# %% tags=["parameters"]
profile = "cpu"
progress = True

# %%
import time

from rsutils.progress import ProgressBar

for _ in ProgressBar(range(3), desc="demo loop", disable=not progress, report_every=0):
    time.sleep(0.05)

# %%
# The long cell.
time.sleep(4)
print("slept")
"""


@pytest.mark.slow  # a kernel
def test_a_chapter_shows_its_progress_in_the_terminal_and_not_in_the_book(
    tmp_path, monkeypatch
) -> None:
    source = tmp_path / "01_small.py"
    source.write_text(CHAPTER)
    monkeypatch.setattr(runner, "EXECUTED", tmp_path / "executed")
    runner.EXECUTED.mkdir()
    terminal, before = io.StringIO(), os.environ.get(PROGRESS_FILE)
    runner.execute(source, "smoke", None, stream=terminal, heartbeat=1.5)
    assert os.environ.get(PROGRESS_FILE) == before
    shown = terminal.getvalue()
    assert "\r" not in shown  # a StringIO is no terminal: plain lines
    assert "  demo loop | step 0 of 3 | " in shown
    assert "  demo loop | step 3 of 3 | " in shown and "| done\n" in shown
    assert "running for 00:0" in shown and ": time.sleep(4)\n" in shown  # the heartbeat
    assert "[smoke] 01_small: 100%" in shown
    executed = nbformat.read(runner.EXECUTED / "01_small.ipynb", as_version=4)
    outputs = [o for cell in executed.cells if cell.cell_type == "code" for o in cell.outputs]
    assert [o.get("text") for o in outputs] == ["slept\n"]  # nothing else in the book


@pytest.mark.slow  # a kernel
def test_papermill_with_the_variable_set_fills_the_side_channel_only(tmp_path, monkeypatch) -> None:
    import jupytext
    import papermill

    channel = tmp_path / "progress.log"
    monkeypatch.setenv(PROGRESS_FILE, str(channel))
    notebook = jupytext.reads(CHAPTER.replace("time.sleep(4)", "0"), "py:percent")
    papermill.execute_notebook(
        notebook,
        str(tmp_path / "out.ipynb"),
        parameters={"progress": False},
        kernel_name="python3",
        progress_bar=False,
    )
    lines = channel.read_text().splitlines()
    assert [line.split(" | ")[:2] for line in lines] == [
        ["demo loop", f"step {k} of 3"] for k in (0, 1, 2, 3, 3)
    ]
    executed = nbformat.read(tmp_path / "out.ipynb", as_version=4)
    outputs = [o for cell in executed.cells if cell.cell_type == "code" for o in cell.outputs]
    assert [o.get("text") for o in outputs] == ["slept\n"]


def test_what_a_notebook_printed_to_stderr_is_found_by_cell() -> None:
    """A warning printed into an executed notebook stops the build (the book would show
    it, or a hidden cell would hide it); stdout and other outputs do not."""
    stream = nbformat.v4.new_output
    quiet = nbformat.v4.new_code_cell(
        "print(1)", outputs=[stream("stream", name="stdout", text="1\n")]
    )
    warned = nbformat.v4.new_code_cell(
        "f()",
        outputs=[
            stream("stream", name="stderr", text="/x.py:3: PerformanceWarning: slow\n  f()\n"),
            stream("execute_result", data={"text/plain": "2"}, execution_count=1),
        ],
    )
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# T"), quiet, warned])
    assert runner.printed_to_stderr(notebook) == ["  cell 2: /x.py:3: PerformanceWarning: slow"]
    notebook.cells.pop()
    assert runner.printed_to_stderr(notebook) == []


def test_a_chapter_pasting_a_raw_float_stops_the_build(tmp_path, monkeypatch) -> None:
    """execute() reads the chapter it ran back and refuses one whose prose pastes a
    glued float without a format, naming the value and the fix (papermill replaced by
    a stand-in that writes the executed notebook: no kernel)."""
    glued = nbformat.v4.new_output(
        "display_data",
        data={"application/papermill.record/text/plain": "0.0040000000000000036"},
        metadata={"scrapbook": {"name": "change", "mime_prefix": "application/papermill.record/"}},
    )
    cells = [
        nbformat.v4.new_code_cell('profile = "cpu"', metadata={"tags": ["parameters"]}),
        nbformat.v4.new_code_cell("glue_all(change=change)", outputs=[glued]),
        nbformat.v4.new_markdown_cell("It changes by at most {glue:text}`change`."),
    ]

    def run(notebook, target, **options):
        nbformat.write(nbformat.v4.new_notebook(cells=cells), target)

    source = tmp_path / "07_small.py"
    source.write_text(CHAPTER)
    monkeypatch.setattr(runner, "EXECUTED", tmp_path)
    monkeypatch.setattr(runner.papermill, "execute_notebook", run)
    with pytest.raises(runner.NotebookPastesRawFloat) as raised:
        runner.execute(source, "smoke", None, progress=False)
    assert "'change'" in str(raised.value) and "{glue:text}`change:.3f`" in str(raised.value)
    cells[2].source = "It changes by at most {glue:text}`change:.3f`."
    runner.execute(source, "smoke", None, progress=False)  # formatted: the build goes on
