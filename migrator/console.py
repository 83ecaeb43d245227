"""What a run shows on a terminal besides its findings: whether to colour, a progress line, coloured diffs.

Colour follows ``--color``: ``always`` and ``never`` say it all; ``auto`` colours a terminal, unless ``NO_COLOR``
is set to something (https://no-color.org), or ``TERM`` is ``dumb``, and colours even a pipe when ``FORCE_COLOR`` is
set to something (https://force-color.org).

The progress line lives on stderr when stderr is a terminal: one line, redrawn in place, cleared before anything
else prints (``Progress.above``) and when the run ends. It is drawn as work finishes, never by a thread: a new
worker process must not be forked from a process running threads.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

COLOR_CHOICES = ("auto", "always", "never")
DIFF_COLORS = (("+++", "1"), ("---", "1"), ("@@", "36"), ("+", "32"), ("-", "31"))  # bold, cyan, green, red


def color_wanted(stream: TextIO, choice: str = "auto") -> bool:
    if choice != "auto":
        return choice == "always"
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return stream.isatty() and os.environ.get("TERM") != "dumb"


def colored_diff(lines: Iterator[str]) -> Iterator[str]:
    """A unified diff's lines with git's colours."""
    for line in lines:
        code = next((code for prefix, code in DIFF_COLORS if line.startswith(prefix)), None)
        body = line.rstrip("\n")
        yield f"\033[{code}m{body}\033[0m{line[len(body):]}" if code else line


def on_terminal() -> bool:
    return sys.stderr.isatty() and not os.environ.get("CI")


@contextmanager
def status_on_terminal(text: str) -> Iterator[None]:
    """A spinner saying what is going on, on a terminal; nothing otherwise."""
    if not on_terminal():
        yield
        return
    from rich.console import Console

    with Console(stderr=True).status(text):
        yield


class Progress:
    """``tf-migrate: migrating 120/304 files, 41.2 files/s`` on a terminal's stderr; nothing elsewhere."""

    def __init__(self, shown: bool | None = None) -> None:
        self.stream = sys.stderr
        self.shown = on_terminal() if shown is None else shown
        self.label, self.done, self.total, self.started = "", 0, 0, time.monotonic()
        self._drawn = False

    def start(self, label: str, total: int) -> None:
        self.label, self.done, self.total, self.started = label, 0, total, time.monotonic()
        self._draw()

    def advance(self, count: int = 1) -> None:
        self.done += count
        self._draw()

    @contextmanager
    def above(self) -> Iterator[None]:
        """Print above the progress line: it is cleared first and drawn again after."""
        self.clear()
        try:
            yield
        finally:
            for stream in (sys.stdout, sys.stderr):
                stream.flush()
            self._draw()

    def clear(self) -> None:
        if self._drawn:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self._drawn = False

    def finish(self) -> None:
        self.clear()
        self.label = ""

    def line(self) -> str:
        elapsed = time.monotonic() - self.started
        rate = f", {self.done / elapsed:.1f} files/s" if self.done and elapsed > 0 else ""
        return f"tf-migrate: {self.label} {self.done}/{self.total} files{rate}"

    def _draw(self) -> None:
        if not (self.shown and self.label and self.total):
            return
        self.stream.write("\r\033[K" + self.line())
        self.stream.flush()
        self._drawn = True
