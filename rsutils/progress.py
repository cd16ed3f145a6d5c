"""Progress of the library's long loops: tqdm's bar, and plain lines for whoever runs them.

:class:`ProgressBar` takes the arguments of ``tqdm(...)`` (an iterable or ``total``,
``desc``, ``unit``, ``disable`` and the rest) and shows tqdm's bar exactly as tqdm
would: in a terminal, or as a widget in JupyterLab. When the environment variable
``RSUTILS_PROGRESS_FILE`` (:data:`PROGRESS_FILE`) names a file, it also appends plain
lines to that file, **whether or not the bar is shown**::

    train ..., epoch 2 of 6 | step 150 of 282 | 00:31 elapsed | 00:27 remaining

one when the loop starts, then one at most every :data:`REPORT_INTERVAL` seconds while
it advances, and one when it ends (``done`` in place of the time remaining). That is
the side channel of ``book/run_notebooks.py``: it sets the variable for the kernel it
starts and prints the lines in the terminal, so a chapter whose loops run with
``progress=False`` (its outputs are the book) still says what it is doing, and nothing
is printed into the chapter.

A bar never changes what its loop computes: it draws no random numbers and reads
nothing but the clock. A side channel that cannot be written to is dropped (the loop
goes on without it).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

__all__ = ["PROGRESS_FILE", "REPORT_INTERVAL", "ProgressBar", "progress_line", "side_channel"]

#: The environment variable naming the file that every bar appends its plain lines to.
PROGRESS_FILE = "RSUTILS_PROGRESS_FILE"
#: The least time, in seconds, between two lines of one bar (its last line excepted):
#: half the 30 s within which a user should hear from a long cell, and few enough lines
#: that a build's log stays readable (about 240 an hour of one loop).
REPORT_INTERVAL = 15.0

_clock = time.monotonic  # a module attribute, so that tests can replace the clock


def side_channel() -> Path | None:
    """The file named by :data:`PROGRESS_FILE`, or ``None`` when it is unset or empty."""
    name = os.environ.get(PROGRESS_FILE)
    return Path(name) if name else None


def progress_line(
    desc: str | None,
    n: float,
    total: float | None,
    elapsed: float,
    *,
    unit: str = "it",
    unit_scale: bool = False,
    done: bool = False,
) -> str:
    """One plain line: ``what | step k of N | elapsed | remaining``.

    The count reads ``step k of N`` for tqdm's default unit and ``k of N <unit>s``
    otherwise (``unit_scale`` writes large counts as ``1.20M``); without a total,
    ``step k``. The time remaining is extrapolated from the rate so far (``?`` before
    the first step or without a total); a finished loop says ``done``.
    """
    count = _count(n, unit_scale)
    if total is not None:
        count = f"{count} of {_count(total, unit_scale)}"
    count = f"step {count}" if unit == "it" else f"{count} {unit}s"
    if done:
        remaining = "done"
    elif total is not None and n > 0:
        remaining = f"{tqdm.format_interval(elapsed * max(total - n, 0) / n)} remaining"
    else:
        remaining = "? remaining"
    return f"{desc or 'progress'} | {count} | {tqdm.format_interval(elapsed)} elapsed | {remaining}"


def _count(value: float, unit_scale: bool) -> str:
    if unit_scale:
        return tqdm.format_sizeof(value)
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


class ProgressBar:
    """A drop-in for ``tqdm(...)`` that also reports to the side channel (if any).

    Takes tqdm's arguments: ``iterable`` (iterate over the bar) or ``total`` (call
    :meth:`update`), ``desc``, ``unit``, ``unit_scale``, ``disable`` and any other
    keyword of tqdm, which are passed on. ``report_every`` is the least time between two
    lines of the side channel (:data:`REPORT_INTERVAL` by default). The bar is closed
    when its iterable is exhausted, when a ``with`` block around it ends, or by
    :meth:`close`; closing writes the last line. Other attributes are tqdm's.
    """

    def __init__(
        self,
        iterable: Iterable[Any] | None = None,
        desc: str | None = None,
        total: float | None = None,
        *,
        disable: bool = False,
        unit: str = "it",
        unit_scale: bool = False,
        report_every: float = REPORT_INTERVAL,
        **tqdm_options: Any,
    ) -> None:
        if total is None and iterable is not None and hasattr(iterable, "__len__"):
            total = len(iterable)  # type: ignore[arg-type]
        self._bar = tqdm(
            iterable,
            desc=desc,
            total=total,
            disable=disable,
            unit=unit,
            unit_scale=unit_scale,
            **tqdm_options,
        )
        self.desc, self.total, self.unit, self.unit_scale = desc, total, unit, unit_scale
        self.n: float = 0
        self._channel = side_channel()
        self._every = report_every
        self._started = self._reported = _clock()
        self._closed = False
        self._report()

    def __iter__(self) -> Iterator[Any]:
        for item in self._bar:
            yield item
            self._advance(1)
        self.close()

    def update(self, n: float = 1) -> None:
        """Advance by ``n`` steps (as tqdm's ``update``)."""
        self._bar.update(n)
        self._advance(n)

    def set_description(self, desc: str | None = None, refresh: bool = True) -> None:
        """Rename what runs, in the bar and in the next side-channel line."""
        self.desc = desc
        self._bar.set_description(desc, refresh=refresh)

    def set_postfix(self, ordered_dict: Any = None, refresh: bool = True, **kwargs: Any) -> None:
        """tqdm's ``set_postfix`` (shown on the bar only, not in the side channel)."""
        self._bar.set_postfix(ordered_dict, refresh=refresh, **kwargs)

    def close(self) -> None:
        """Close the bar and write the side channel's last line (once)."""
        if self._closed:
            return
        self._closed = True
        self._bar.close()
        self._report(done=True)

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __getattr__(self, name: str) -> Any:
        if name == "_bar":  # not set yet: tqdm's constructor raised
            raise AttributeError(name)
        return getattr(self._bar, name)

    def _advance(self, n: float) -> None:
        self.n += n
        if self._channel is not None and _clock() - self._reported >= self._every:
            self._report()

    def _report(self, *, done: bool = False) -> None:
        """Append the current line to the side channel; drop a channel that fails."""
        if self._channel is None:
            return
        now = _clock()
        self._reported = now
        line = progress_line(
            self.desc,
            self.n,
            self.total,
            now - self._started,
            unit=self.unit,
            unit_scale=self.unit_scale,
            done=done,
        )
        try:
            with open(self._channel, "a", encoding="utf-8") as handle:
                handle.write(line + "\n")
        except OSError:
            self._channel = None
