"""A side ends with the process that started it, however that ends (kill -9 too).

The parent keeps the write end of a pipe whose read end the side inherits; it never writes. When the parent
ends, the kernel closes its end, and a thread of the side, blocked reading, sees the end of the file and kills
the side's process group: the side and whatever it started (its session's, unless they made one of their own).

Imported by the sides, possibly under another interpreter: standard library only.
"""

from __future__ import annotations

import os
import signal
import threading

LIFELINE = "TF_MIGRATE_PARITY_LIFELINE"  # the number of the side's read end


def end_with_parent() -> None:
    """In a side: kill its process group once the parent's end of the lifeline closes (if it has one)."""
    fd = os.environ.pop(LIFELINE, None)
    if fd is None:
        return
    os.set_inheritable(int(fd), False)
    threading.Thread(target=_watch, args=(int(fd),), name="tf-migrate-parity-lifeline", daemon=True).start()


def _watch(fd: int) -> None:
    while os.read(fd, 1):
        pass
    if os.getpgrp() == os.getpid():  # as the parent starts a side: leading a session of its own
        os.killpg(os.getpgrp(), signal.SIGKILL)
    os.kill(os.getpid(), signal.SIGKILL)
