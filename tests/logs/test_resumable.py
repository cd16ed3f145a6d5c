"""What a resumable log refuses or repairs: lost sidecars, two writers, damaged files."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from rsutils.logs import resumable
from rsutils.logs.resumable import LogRepairedWarning, ResumableLog

COLUMNS = ["idx", "value"]
CONFIG = {"run": 1}
HEADER_AND_ROW = b"idx\tvalue\n0\t1.5\n"
REAL_FCNTL = resumable.fcntl  # None on Windows
needs_flock = pytest.mark.skipif(sys.platform == "win32", reason="no flock on Windows")


def write_log(path: Path) -> None:
    """A log (and its sidecar) holding the row of input 0."""
    with ResumableLog(path, COLUMNS, CONFIG) as log:
        log.append({"idx": 0, "value": 1.5})


@pytest.mark.parametrize(
    ("damage", "problem"),
    [
        (Path.unlink, r"exists without \S+log\.tsv\.json,"),
        (lambda p: p.write_text('{"run": '), r"without a readable \S+ \(not valid JSON"),
        (lambda p: p.write_text("[1]"), r"without a readable \S+ \(not a JSON object\)"),
    ],
    ids=["deleted", "truncated", "json-list"],
)
def test_a_log_without_a_readable_sidecar_is_not_appended_to(tmp_path, damage, problem) -> None:
    path = tmp_path / "log.tsv"
    write_log(path)
    damage(tmp_path / "log.tsv.json")
    with pytest.raises(ValueError, match=problem) as error:
        ResumableLog(path, COLUMNS, {"run": 2})
    assert "cannot check that the log was written with the same settings" in str(error.value)
    assert f"delete {path} to start over, or restore {path}.json" in str(error.value)
    assert path.read_bytes() == HEADER_AND_ROW
    assert not (tmp_path / "log.tsv.lock").exists()


def test_a_sidecar_without_its_log_starts_afresh(tmp_path) -> None:
    path = tmp_path / "log.tsv"
    write_log(path)
    path.unlink()
    with ResumableLog(path, COLUMNS, {"run": 2}) as log:
        assert log.done == set()
    with ResumableLog(path, COLUMNS, {"run": 2}):  # the sidecar now records run 2
        pass


@needs_flock
def test_one_writer_at_a_time_in_one_process(tmp_path) -> None:
    path = tmp_path / "log.tsv"
    with ResumableLog(path, COLUMNS, CONFIG) as first:
        assert (tmp_path / "log.tsv.lock").read_text() == f"{os.getpid()}\n"
        with pytest.raises(ValueError, match=rf"{path} is being written by another .*pid"):
            ResumableLog(path, COLUMNS, CONFIG)
        first.append({"idx": 0, "value": 1.5})
    assert not (tmp_path / "log.tsv.lock").exists()
    with pytest.raises(ValueError, match=r"is closed"):
        first.append({"idx": 1, "value": 2.5})
    with ResumableLog(path, COLUMNS, CONFIG) as second:
        assert second.done == {0}


class RacingFcntl:
    """``fcntl`` as seen by a process whose holder lets go just as it opens the lock.

    The first ``flock`` succeeds on the old file, which meanwhile has been removed and
    replaced by a new one that another writer (pid 4242) holds.
    """

    LOCK_EX, LOCK_NB = getattr(REAL_FCNTL, "LOCK_EX", 0), getattr(REAL_FCNTL, "LOCK_NB", 0)

    def __init__(self, lockfile: Path) -> None:
        self.lockfile, self.holder = lockfile, None

    def flock(self, fd: int, operation: int) -> None:
        REAL_FCNTL.flock(fd, operation)
        if self.holder is None:
            self.lockfile.unlink()
            self.holder = os.open(self.lockfile, os.O_RDWR | os.O_CREAT)
            REAL_FCNTL.flock(self.holder, self.LOCK_EX | self.LOCK_NB)
            os.pwrite(self.holder, b"4242\n", 0)


@needs_flock
def test_a_lock_file_replaced_while_locking_is_not_trusted(tmp_path, monkeypatch) -> None:
    path = tmp_path / "log.tsv"
    (tmp_path / "log.tsv.lock").write_text("")  # left behind by a killed run
    racing = RacingFcntl(tmp_path / "log.tsv.lock")
    monkeypatch.setattr(resumable, "fcntl", racing)
    try:
        with pytest.raises(ValueError, match=r"another process \(pid 4242\)"):
            ResumableLog(path, COLUMNS, CONFIG)
    finally:
        os.close(racing.holder)
    assert not path.exists()


HOLD_LOCK = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
os.pwrite(fd, f"{os.getpid()}\\n".encode(), 0)
print("locked", flush=True)
time.sleep(600)
"""


@needs_flock
@pytest.mark.slow  # a subprocess
def test_a_killed_writer_does_not_leave_its_log_locked(tmp_path) -> None:
    path, lockfile = tmp_path / "log.tsv", tmp_path / "log.tsv.lock"
    write_log(path)
    args = [sys.executable, "-c", HOLD_LOCK, str(lockfile)]
    with subprocess.Popen(args, stdout=subprocess.PIPE, text=True) as holder:
        try:
            assert holder.stdout.readline() == "locked\n"
            with pytest.raises(ValueError, match=rf"another process \(pid {holder.pid}\); wait"):
                ResumableLog(path, COLUMNS, CONFIG)
        finally:
            os.kill(holder.pid, signal.SIGKILL)
    assert lockfile.exists()  # stale, but no longer locked
    with ResumableLog(path, COLUMNS, CONFIG) as log:
        assert log.done == {0}
    assert not lockfile.exists()


@pytest.mark.parametrize(
    ("tail", "damaged_line", "repair"),
    [
        (b"\0" * 12, None, "12 bytes from line 3 on (a torn line: no newline)"),
        (b"\0" * 12 + b"\n", None, "13 bytes from line 3 on (it holds NUL bytes)"),
        (b"1\t2.5\0\0\0\0\n", None, "10 bytes from line 3 on (it holds NUL bytes)"),
        (b"\0\0\0\n\0\0\n\0", None, "8 bytes from line 3 on (it holds NUL bytes)"),
        (b"1x\t2.5\n", None, "7 bytes from line 3 on (idx '1x' is not a non-negative integer)"),
        (b"\n\n", None, "2 bytes from line 3 on (blank lines)"),
        (b"\n\0\0\0\0\n1\t2.5\n", 4, None),
        (b"oops\n1\t2.5\n", 3, None),
    ],
    ids=[
        "nul", "nul-newline", "row-then-nul", "nul-lines", "bad-idx", "blank", "nul-middle",
        "middle",
    ],
)  # fmt: skip
def test_a_damaged_tail_is_cut_with_a_warning_and_damage_before_a_row_refused(
    tmp_path, tail, damaged_line, repair
) -> None:
    path = tmp_path / "log.tsv"
    write_log(path)
    with open(path, "ab") as handle:
        handle.write(tail)
    if damaged_line is not None:
        message = rf"{path} line {damaged_line} is not a log row \(.*\); the file is damaged"
        with pytest.raises(ValueError, match=message):
            ResumableLog(path, COLUMNS, CONFIG)
        assert path.read_bytes() == HEADER_AND_ROW + tail
        return
    with pytest.warns(LogRepairedWarning) as warned:
        log = ResumableLog(path, COLUMNS, CONFIG)  # the warning points at this line
    (warning,) = warned
    assert str(warning.message) == (
        f"{path}: cut {repair}, the unfinished write of a run that stopped; the input of "
        "a row that was cut is not in the log, so a resumed run computes it again"
    )
    assert warning.filename == __file__
    with log:
        assert log.done == {0}
        log.append({"idx": 1, "value": 2.5})
    assert path.read_bytes() == HEADER_AND_ROW + b"1\t2.5\n"
    with ResumableLog(path, COLUMNS, CONFIG) as log:  # a sound log: no warning (an error here)
        assert log.done == {0, 1}


@pytest.mark.parametrize(
    ("outfile", "message"),
    [
        ("out", r"out is a directory; pass a file path such as \S+out/certify\.tsv"),
        ("file/log.tsv", r"file is a file, so \S+log\.tsv cannot be created under it"),
        ("file/sub/log.tsv", r"file is a file, so \S+log\.tsv cannot be created under it"),
    ],
    ids=["directory", "under-a-file", "deep-under-a-file"],
)
def test_an_outfile_that_cannot_be_a_file_is_refused(tmp_path, outfile, message) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "file").write_text("")
    with pytest.raises(ValueError, match=message):
        ResumableLog(tmp_path / outfile, COLUMNS, CONFIG)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "out"]
    assert not any((tmp_path / "out").iterdir())


def test_the_sidecar_lists_every_environment_that_appended_rows(tmp_path) -> None:
    path = tmp_path / "log.tsv"
    sidecar = tmp_path / "log.tsv.json"
    here, there = {"device": "cpu: A", "threads": 2}, {"device": "cpu: B", "threads": 1}
    with ResumableLog(path, COLUMNS, CONFIG, environment=here) as log:
        assert "environments" not in json.loads(sidecar.read_text())  # no rows yet
        log.append({"idx": 0, "value": 1.5})
        log.append({"idx": 1, "value": 2.5})
    assert json.loads(sidecar.read_text())["environments"] == [here]
    with ResumableLog(path, COLUMNS, CONFIG, environment=there) as log:  # not compared
        assert log.done == {0, 1}
    assert json.loads(sidecar.read_text())["environments"] == [here], "reading adds nothing"
    with ResumableLog(path, COLUMNS, CONFIG, environment=there) as log:
        log.append({"idx": 2, "value": 3.5})
    assert json.loads(sidecar.read_text()) == {**CONFIG, "environments": [here, there]}
    with pytest.raises(ValueError, match=r"different settings \(run\)"):
        ResumableLog(path, COLUMNS, {"run": 2}, environment=here)


CPU = {"device": "cpu", "rows": 100}
CUDA = {"device": "cuda", "rows": 1000}


def test_a_log_reopened_on_another_kind_of_device_is_refused_until_adopted(tmp_path) -> None:
    """The same model is another base classifier on another kind of device: resuming
    names both devices and the explicit way out, and leaves the log as it was."""
    path = tmp_path / "log.tsv"
    with ResumableLog(path, COLUMNS, {**CONFIG, **CPU}) as log:
        log.append({"idx": 0, "value": 1.5})
    before = path.read_bytes(), path.with_name("log.tsv.json").read_bytes()
    message = r"written on cpu \(100 rows .*\) and this run is on cuda \(1000 rows .*--allow-device"
    with pytest.raises(resumable.DeviceChangedError, match=message):
        ResumableLog(path, COLUMNS, {**CONFIG, **CUDA})
    assert (path.read_bytes(), path.with_name("log.tsv.json").read_bytes()) == before
    with pytest.raises(ValueError, match=r"different settings \(device, rows, run\)"):
        ResumableLog(path, COLUMNS, {"run": 2, **CUDA, "rows": 7})  # not only the device

    assert resumable.adopt_device(path, {"other": "ignored", **CUDA})
    assert not resumable.adopt_device(path, CUDA)  # already adopted: nothing to do
    assert not resumable.adopt_device(tmp_path / "none.tsv", CUDA)  # nothing to adopt
    sidecar = json.loads(path.with_name("log.tsv.json").read_text())
    assert sidecar[resumable.ADOPTED] == [CPU] and sidecar["device"] == "cuda"
    with ResumableLog(path, COLUMNS, {**CONFIG, **CUDA}) as log:
        assert log.done == {0}
    assert not path.with_name("log.tsv.lock").exists()


def test_a_log_from_before_devices_were_recorded_names_its_device_unrecorded(tmp_path) -> None:
    path = tmp_path / "log.tsv"
    write_log(path)
    with pytest.raises(resumable.DeviceChangedError, match="written on an unrecorded device"):
        ResumableLog(path, COLUMNS, {**CONFIG, **CPU})
