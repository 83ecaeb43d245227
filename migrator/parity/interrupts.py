"""Ctrl-C and SIGTERM in the process that runs the sides: always honoured, never half-way through a start or a clean-up.

Within ``interruptible()`` either signal raises KeyboardInterrupt, even in a process started with SIGINT ignored
(as a shell starts a background job, or a test runner its children): a Ctrl-C or `kill -INT` meant for a run is
never lost. Within ``held()`` (a side starting, the sides and the work folder being removed) a signal is only noted:
it is raised by the next ``check()`` or as the block ends, so no side is started without being recorded for
stopping, and no clean-up is cut short.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import SimpleNamespace

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)

_state = SimpleNamespace(held=0, noted=False)


def _on_stop_signal(signum, frame) -> None:
    if _state.held:
        _state.noted = True
    else:
        raise KeyboardInterrupt


@contextmanager
def interruptible() -> Iterator[None]:
    """SIGINT and SIGTERM raise KeyboardInterrupt within (outside ``held()`` blocks)."""
    previous = {signum: signal.signal(signum, _on_stop_signal) for signum in STOP_SIGNALS}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


@contextmanager
def held() -> Iterator[None]:
    """SIGINT and SIGTERM are noted within, and raised as KeyboardInterrupt by ``check()`` or on leaving."""
    with interruptible():
        if not _state.held:
            _state.noted = False  # left by an earlier block that a second signal cut short: that run is over
        _state.held += 1
        try:
            yield
        finally:
            _state.held -= 1
            check()


def check() -> None:
    """Raise KeyboardInterrupt if a stop signal was noted."""
    if _state.noted:
        _state.noted = False
        raise KeyboardInterrupt
