"""A resumable TSV log: append-only, checked against its settings, one writer at a time.

Each row is written and flushed to disk as soon as its input is done; a sidecar
``<log>.json``, written before the log, records the run's configuration. Reopening
with the same configuration drops the unfinished write at the end of the log (a torn
last line, or lines of NUL bytes or garbage left by the filesystem), says so with a
:class:`LogRepairedWarning` (which file, how many bytes from which line, and why), and
reports which indices are done: an input whose row was cut is not done, so a resumed
run computes it again, and no complete row is ever lost.

A log is never appended to unless it can be checked: a log without a readable sidecar
and a damaged line before the last good row are errors. One writer per log: a
:class:`ResumableLog` holds an exclusive ``flock`` on ``<log>.lock`` from before it
reads the sidecar until it is closed, so a second writer (another process, or another
:class:`ResumableLog` in this one) is refused. The kernel releases the lock when its
holder dies, so a killed run never leaves a log locked.
"""

from __future__ import annotations

import contextlib
import json
import os
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rsutils.cache import atomic_write_bytes

try:
    import fcntl
except ImportError:  # Windows: no flock, so no locking
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "ADOPTED",
    "DEVICE_KEYS",
    "ENVIRONMENTS",
    "DeviceChangedError",
    "LogRepairedWarning",
    "ResumableLog",
    "adopt_device",
]

#: The sidecar's key listing the environments that appended rows (never compared).
ENVIRONMENTS = "environments"
#: The sidecar's keys that name the kind of device and the rows of its forward passes
#: (:func:`~rsutils.core.inference.device_identity`).
DEVICE_KEYS = ("device", "rows")
#: The sidecar's key listing the device identities a log was written under before
#: :func:`adopt_device` (never compared).
ADOPTED = "adopted_devices"


class DeviceChangedError(ValueError):
    """A log written on one kind of device, reopened on another.

    The rows of the two would come from two different base classifiers (the same model
    computes another function on another kind of device), so resuming is refused
    unless the caller accepts the change explicitly with :func:`adopt_device`.
    """

    def __init__(
        self, path: str | os.PathLike[str], previous: Mapping[str, Any], config: Mapping[str, Any]
    ):
        was, now = (_device_text(c) for c in (previous, config))
        super().__init__(
            f"{path} was written on {was} and this run is on {now}: its rows would come "
            "from two different base classifiers; resume it on the same kind of device, "
            "write to another file, or accept the change explicitly "
            "(--allow-device-change, or rsutils.logs.resumable.adopt_device)"
        )


def _device_text(config: Mapping[str, Any]) -> str:
    device, rows = config.get("device"), config.get("rows")
    if device is None:
        return "an unrecorded device"
    return f"{device} ({rows} rows per forward pass)"


def adopt_device(path: str | os.PathLike[str], device: Mapping[str, Any]) -> bool:
    """Let the log at ``path`` be resumed on another kind of device: its sidecar's
    :data:`DEVICE_KEYS` become ``device``'s (a
    :func:`~rsutils.core.inference.device_identity`). Rows already written keep their
    values, so the log then mixes two base classifiers; the sidecar's ``environments``
    list keeps every device that appended rows, and ``adopted_devices`` every device
    identity the log was written under. Returns whether anything changed (nothing does
    for a log that does not exist yet or already names ``device``). Holds the log's
    lock while it rewrites the sidecar.
    """
    path = Path(path)
    sidecar = path.with_name(path.name + ".json")
    if not path.exists():
        return False
    lockfile = path.with_name(path.name + ".lock")
    lock = _acquire_lock(lockfile, path)
    try:
        recorded = _read_sidecar(sidecar, path)
        wanted = {key: device[key] for key in DEVICE_KEYS}
        if all(recorded.get(key) == value for key, value in wanted.items()):
            return False
        before = {key: recorded.get(key) for key in DEVICE_KEYS}
        history = recorded.setdefault(ADOPTED, [])
        history.append(before)
        recorded.update(wanted)
        atomic_write_bytes(sidecar, json.dumps(recorded, indent=2).encode())
        return True
    finally:
        if lock is not None:
            _release_lock(lock, lockfile)


class LogRepairedWarning(UserWarning):
    """A reopened log's unfinished last write was cut off before appending to it.

    Shown (as Python shows warnings: on stderr, in a notebook under the cell) once per
    repair; the message names the file, the bytes and the line cut, and why the line
    was not a row. Nothing certified is lost: only incomplete rows are cut, and their
    inputs are computed again. ``warnings.filterwarnings("ignore", category=...)``
    silences it; ``"error"`` makes a damaged log stop the run instead.
    """


def _plain(mapping: Mapping[str, Any]) -> dict[str, Any]:
    """``mapping`` as JSON would give it back (tuples as lists, other objects as str)."""
    return json.loads(json.dumps(dict(mapping), default=str))


class ResumableLog:
    """An append-only TSV log that survives being killed; one writer at a time.

    ``config`` is everything that determines the rows; reopening a log written with
    another configuration, or whose sidecar is gone, is an error rather than a silent
    mix of two runs. ``environment`` describes what else the rows may depend on (see
    :func:`~rsutils.core.environment.describe_environment`): it is not compared, but
    the sidecar's ``environments`` lists every one that appended rows, so a log resumed
    elsewhere says so. Use it as a context manager (or call :meth:`close`): it holds
    the log's lock until closed.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        columns: Sequence[str],
        config: Mapping[str, Any],
        *,
        environment: Mapping[str, Any] | None = None,
    ):
        self.environment = None if environment is None else _plain(environment)
        self._environment_recorded = environment is None
        self.path = Path(path)
        self.columns = list(columns)
        self.sidecar = self.path.with_name(self.path.name + ".json")
        self.lockfile = self.path.with_name(self.path.name + ".lock")
        config = _plain(config)
        _check_log_path(self.path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock: int | None = _acquire_lock(self.lockfile, self.path)
        self._closed = False
        try:
            self._open(config)
        except BaseException:
            self.close()
            raise

    def _open(self, config: dict[str, Any]) -> None:
        """Check (or create) the sidecar and the log, repair its tail, read its indices."""
        if self.path.exists():
            self._check_settings(config)
        else:
            atomic_write_bytes(self.sidecar, json.dumps(config, indent=2).encode())
            atomic_write_bytes(self.path, ("\t".join(self.columns) + "\n").encode())
        self.done = self._repair()

    def _check_settings(self, config: dict[str, Any]) -> None:
        """Refuse a log whose sidecar is unreadable or records other settings."""
        previous = _read_sidecar(self.sidecar, self.path)
        previous.pop(ENVIRONMENTS, None)
        previous.pop(ADOPTED, None)
        changed = sorted(k for k in set(previous) | set(config) if previous.get(k) != config.get(k))
        if changed and set(changed) <= set(DEVICE_KEYS):
            raise DeviceChangedError(self.path, previous, config)
        if changed:
            raise ValueError(
                f"{self.path} was written by a run with different settings "
                f"({', '.join(changed)}); pass the same settings to resume it, "
                "or choose another output file"
            )

    def _repair(self) -> set[int]:
        """Check the header, cut the unfinished write off the end; the indices done."""
        data = self.path.read_bytes()
        header = data.split(b"\n", 1)[0].decode(errors="replace").split("\t")
        if header != self.columns or b"\n" not in data:
            raise ValueError(f"{self.path} has columns {header}, expected {self.columns}")
        keep, done, first_bad = _scan_rows(data, len(self.columns), self.path)
        if keep < len(data):  # stacklevel: the code that opened the log (via _open, __init__)
            message = _repair_message(self.path, data, keep, first_bad)
            warnings.warn(message, LogRepairedWarning, stacklevel=4)
            with open(self.path, "r+b") as handle:
                handle.truncate(keep)
                os.fsync(handle.fileno())
        return done

    def append(self, row: Mapping[str, Any]) -> None:
        """Write one row and force it to disk."""
        if self._closed:
            raise ValueError(f"{self.path} is closed; open it again to append rows")
        if not self._environment_recorded:
            self._record_environment()
        line = "\t".join(_format(row[c]) for c in self.columns) + "\n"
        with open(self.path, "a") as handle:
            handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())
        self.done.add(int(row["idx"]))

    def _record_environment(self) -> None:
        """Add this run's environment to the sidecar's list, before its first row."""
        sidecar = json.loads(self.sidecar.read_bytes())
        seen = sidecar.setdefault(ENVIRONMENTS, [])
        if self.environment not in seen:
            seen.append(self.environment)
            atomic_write_bytes(self.sidecar, json.dumps(sidecar, indent=2).encode())
        self._environment_recorded = True

    def close(self) -> None:
        """Release the lock (and remove the lock file); appending is then refused."""
        self._closed = True
        lock, self._lock = self._lock, None
        if lock is not None:
            _release_lock(lock, self.lockfile)

    def __enter__(self) -> ResumableLog:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _check_log_path(path: Path) -> None:
    """Refuse a directory, or a path under a file, before anything is written."""
    if path.is_dir():
        raise ValueError(f"{path} is a directory; pass a file path such as {path / 'certify.tsv'}")
    for parent in path.parents:
        if parent.exists():  # the nearest existing ancestor must be a folder
            if not parent.is_dir():
                raise ValueError(
                    f"{parent} is a file, so {path} cannot be created under it; "
                    "pass a path in a folder (or in one that does not exist yet)"
                )
            return


def _read_sidecar(sidecar: Path, log: Path) -> dict[str, Any]:
    """The settings recorded next to ``log``; an error if they cannot be read."""
    problem = None
    try:
        previous = json.loads(sidecar.read_bytes())
        if not isinstance(previous, dict):
            problem = "not a JSON object"
    except FileNotFoundError:
        problem = "missing"
    except (OSError, ValueError) as error:  # JSONDecodeError, UnicodeDecodeError
        problem = f"not valid JSON: {error}" if isinstance(error, ValueError) else str(error)
    if problem is None:
        return previous
    what = f"{sidecar}" if problem == "missing" else f"a readable {sidecar} ({problem})"
    raise ValueError(
        f"{log} exists without {what}, so this run cannot check that the log was written "
        f"with the same settings; delete {log} to start over, or restore {sidecar}"
    )


def _row_problem(line: bytes, width: int) -> str | None:
    """Why a complete line is not a log row with ``width`` columns (``None`` if it is)."""
    if b"\0" in line:
        return "it holds NUL bytes"
    try:
        fields = line.decode().split("\t")
    except UnicodeDecodeError:
        return "it is not UTF-8 text"
    if len(fields) != width:
        return f"{len(fields)} fields, expected {width}"
    if not (fields[0].isascii() and fields[0].isdigit()):
        return f"idx {fields[0][:20]!r} is not a non-negative integer"
    return None


def _repair_message(path: Path, data: bytes, keep: int, first_bad: tuple[int, str] | None) -> str:
    """What cutting ``data[keep:]`` off the log ``path`` repairs, for a person to read."""
    line, why = first_bad or (data[:keep].count(b"\n") + 1, "blank lines")
    return (
        f"{path}: cut {len(data) - keep} bytes from line {line} on ({why}), the unfinished "
        "write of a run that stopped; the input of a row that was cut is not in the log, "
        "so a resumed run computes it again"
    )


def _scan_rows(data: bytes, width: int, path: Path) -> tuple[int, set[int], tuple[int, str] | None]:
    """Where the last good row of ``data`` ends, the indices of the rows, and the first
    line after it that is not a row with the reason (``None`` if there is none).

    Bad lines after the last good row are the unfinished write (the caller cuts them
    off); a bad line before a good row means the file is damaged.
    """
    lines = data.split(b"\n")
    keep = pos = len(lines[0]) + 1
    done: set[int] = set()
    first_bad: tuple[int, str] | None = None
    for number, line in enumerate(lines[1:], start=2):
        complete = number < len(lines)  # only the last piece lacks its newline
        pos += len(line) + complete
        if not line.strip(b" \t\r"):
            continue  # blank lines are ignored, as pandas does
        problem = _row_problem(line, width) if complete else "a torn line: no newline"
        if problem is None and first_bad is not None:
            raise ValueError(
                f"{path} line {first_bad[0]} is not a log row ({first_bad[1]}); "
                "the file is damaged: delete it, or remove that line"
            )
        if problem is None:
            keep = pos
            done.add(int(line.split(b"\t", 1)[0]))
        elif first_bad is None:
            first_bad = (number, problem)
    return keep, done, first_bad


def _acquire_lock(lockfile: Path, log: Path) -> int | None:
    """An fd holding an exclusive flock on ``lockfile`` (``None`` without flock)."""
    if fcntl is None:
        return None
    while True:
        try:
            fd = os.open(lockfile, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as error:
            raise ValueError(f"cannot create the lock file {lockfile}: {error}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise ValueError(_locked_message(log, holder)) from None
        except OSError:  # a filesystem without flock: write without a lock
            os.close(fd)
            return None
        if _names(lockfile, fd):
            break
        os.close(fd)  # the holder removed the file as we opened it: try the new one
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd


def _names(path: Path, fd: int) -> bool:
    """Whether ``path`` still names the file open as ``fd``."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return False
    opened = os.fstat(fd)
    return (st.st_dev, st.st_ino) == (opened.st_dev, opened.st_ino)


def _locked_message(log: Path, holder: str) -> str:
    if holder == str(os.getpid()):
        return (
            f"{log} is being written by another ResumableLog in this process (pid {holder}); "
            "close that one first or choose another output file"
        )
    return (
        f"{log} is being written by another process (pid {holder}); "
        "wait for it to finish or choose another output file"
    )


def _release_lock(fd: int, lockfile: Path) -> None:
    """Remove the lock file while still holding its lock, then release it.

    A process that opened the file before the unlink gets the lock on a file that no
    longer has the name, notices (see :func:`_names`) and retries.
    """
    with contextlib.suppress(OSError):
        os.unlink(lockfile)
    os.close(fd)


def _format(value: Any) -> str:
    return repr(value) if isinstance(value, float) else str(value)
