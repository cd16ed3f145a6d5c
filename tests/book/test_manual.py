"""What the manual pages run: command lines split like a shell's, run in the page's
interpreter, their output shown and their exit status checked; refusals shown with the
error a user gets."""

from __future__ import annotations

import dataclasses
import os
import shlex
import subprocess
import sys

import pytest
import torch

from rsutils.book.manual import (
    PAGE_MODEL,
    CommandFailed,
    command_argv,
    describe_page_model,
    fold_lines,
    kill_part_way,
    log_rows,
    page_model,
    refusal,
    run_command,
    shell_lines,
    show_refusals,
)


def test_python_and_torchrun_are_the_interpreter_running_the_page() -> None:
    assert command_argv("python -m rsutils certify 'a b.pt'") == (
        {},
        [sys.executable, "-m", "rsutils", "certify", "a b.pt"],
    )
    _, argv = command_argv("torchrun --standalone --nproc_per_node 2 -m rsutils bench")
    assert argv[:3] == [sys.executable, "-m", "torch.distributed.run"]
    assert argv[3:] == ["--standalone", "--nproc_per_node", "2", "-m", "rsutils", "bench"]
    assert command_argv("ls -l")[1] == ["ls", "-l"]


def test_leading_assignments_set_the_environment() -> None:
    environment, argv = command_argv("OMP_NUM_THREADS=1 A_B=x=y python -c pass")
    assert environment == {"OMP_NUM_THREADS": "1", "A_B": "x=y"}
    assert argv == [sys.executable, "-c", "pass"]
    assert command_argv("python -c pass --opt=1")[1][-1] == "--opt=1"


@pytest.mark.parametrize("line", ["python -c pass | cat", "a && b", "a > log", "a ; b", "", "X=1"])
def test_what_needs_a_shell_or_names_nothing_is_refused(line: str) -> None:
    with pytest.raises(ValueError, match=r"without a shell|names no command"):
        command_argv(line)


def test_a_command_prints_its_output(capsys) -> None:
    code = "import os, sys; print(os.environ['GREETING']); print('to stderr', file=sys.stderr)"
    line = f'GREETING=hello python -c "{code}"'
    assert run_command(line, width=200) is None
    assert capsys.readouterr().out == f"$ {line}\nhello\nto stderr\n"


def test_a_long_command_is_shown_on_lines_a_shell_joins_back(capsys) -> None:
    line = "OMP_NUM_THREADS=1 python -m rsutils certify fashion-mnist 'my model.pt' " * 3
    shown = shell_lines(line, width=40)
    assert len(shown) > 1 and all(len(part) <= 40 for part in shown)
    assert all(part.endswith(" \\") for part in shown[:-1])
    assert all(part.startswith("    ") for part in shown[1:])
    joined = " ".join(part.removesuffix(" \\") for part in shown).removeprefix("$ ")
    assert shlex.split(joined) == shlex.split(line)
    assert shell_lines("python -c pass") == ["$ python -c pass"]


def test_a_command_sees_the_width_and_its_long_lines_are_folded(capsys) -> None:
    code = "import os; print(os.environ['COLUMNS'], 'word ' * 30)"
    line = f'python -c "{code}"'
    run_command(line, width=50)
    out = capsys.readouterr().out.splitlines()[len(shell_lines(line, 50)) :]
    assert out[0].startswith("50 word") and all(len(line) <= 50 for line in out)
    assert " ".join(out).split() == ["50", *["word"] * 30]


def test_folding_keeps_every_word_and_the_indentation() -> None:
    text = "short\n    " + " ".join(f"w{i}" for i in range(40)) + "\na\tb\n"
    folded = fold_lines(text, width=30)
    assert folded[0] == "short" and folded[-1] == "a       b"
    assert all(len(line) <= 30 and line.startswith("    ") for line in folded[1:-1])
    assert " ".join(folded).split() == text.split()


def test_an_unexpected_exit_status_fails_the_page(capsys) -> None:
    with pytest.raises(CommandFailed, match=r"exited with status 3, expected 0.*\nboom"):
        run_command("python -c \"print('boom'); raise SystemExit(3)\"")
    assert capsys.readouterr().out.endswith("\nboom\n")
    run_command('python -c "raise SystemExit(2)"', status=2)
    with pytest.raises(CommandFailed, match="exited with status 0, expected 2"):
        run_command("python -c pass", status=2)


@pytest.mark.slow  # the same command as a process, to compare with
@pytest.mark.parametrize(
    ("args", "status"),
    [("--help", 0), ("certify --help", 0), ("certify mnist m.pt 0.25 o.tsv --alpha 2", 2)],
)
def test_rsutils_commands_run_here_print_what_the_process_prints(args, status, capsys) -> None:
    """A ``python -m rsutils`` line runs the command's main function in this interpreter:
    the same text, the same status, and the width of the page, as the process gives."""
    threads = torch.get_num_threads()
    run_command(f"python -m rsutils {args}", status=status, width=60)
    here = capsys.readouterr().out
    process = subprocess.run(
        [sys.executable, "-m", "rsutils", *args.split()], capture_output=True, text=True,
        env={**os.environ, "COLUMNS": "60"}, check=False,
    )  # fmt: skip
    assert process.returncode == status
    expected = [*shell_lines(f"python -m rsutils {args}", 60)]
    expected += fold_lines(process.stdout + process.stderr, 60)
    assert here.splitlines() == expected
    assert torch.get_num_threads() == threads and os.environ.get("COLUMNS") != "60"


WRITER = (
    "import sys, time\n"
    "with open(sys.argv[1], 'w') as log:\n"
    "    log.write('idx\\n')\n"
    "    for i in range(int(sys.argv[2])):\n"
    "        log.write(f'{i}\\n'); log.flush(); time.sleep(0.05)\n"
    "    log.write('torn')\n"
)


def test_a_command_is_killed_once_its_log_holds_the_rows(tmp_path) -> None:
    (tmp_path / "writer.py").write_text(WRITER)
    log = tmp_path / "log.tsv"
    written = kill_part_way(f"python {tmp_path / 'writer.py'} {log} 200", log, rows=3)
    assert 3 <= written < 200 and log_rows(log) == written
    assert kill_part_way(f"python {tmp_path / 'writer.py'} {log} 2", log, rows=5) == 2
    assert log.read_text().endswith("1\ntorn"), "a command that ends first is not killed"


def test_a_command_too_slow_to_write_its_rows_is_killed(tmp_path) -> None:
    sleeper = 'python -c "import time; time.sleep(60)"'
    with pytest.raises(TimeoutError, match=r"fewer than 1 rows in 0\.5 s"):
        kill_part_way(sleeper, tmp_path / "no.tsv", 1, timeout=0.5)


def test_log_rows_counts_complete_rows_after_the_header(tmp_path) -> None:
    log = tmp_path / "log.tsv"
    assert log_rows(log) == 0
    log.write_text("idx\tradius\n0\t0.5\n1\t0.")
    assert log_rows(log) == 1


def test_a_refusal_is_the_error_a_user_gets(capsys) -> None:
    def refuse() -> None:
        raise ValueError("x has values in [0, 255]; pass x / 255 " + "word " * 20)

    assert refusal(refuse).startswith("ValueError: x has values in [0, 255]")
    show_refusals({"pixels in 0..255": refuse}, width=40)
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == "pixels in 0..255:" and printed[1].startswith("  ValueError: x has")
    assert len(printed) > 3 and all(len(line) <= 40 for line in printed)


def test_an_accepted_call_is_not_shown_as_refused() -> None:
    with pytest.raises(AssertionError, match="was accepted"):
        refusal(lambda: 1)
    with pytest.raises(KeyError):  # other errors are not refusals: they propagate
        refusal(lambda: {}["missing"])


def test_the_pages_model_is_named_from_its_configuration() -> None:
    assert page_model(3) == dataclasses.replace(PAGE_MODEL, seed=3)
    assert describe_page_model(page_model()) == "small_cnn, σ = 0.25, 1 epoch on 2,000 images"
    other = dataclasses.replace(PAGE_MODEL, epochs=2, train_subset=None, scale=0.5)
    assert describe_page_model(other) == "small_cnn, σ = 0.5, 2 epochs on the training split"
