"""Why a side failed, in one line: the exception its output ends with, and whose code raised it.

The innermost frame of the last traceback that is neither Python's nor an installed package's says whose
code it was: the program's (the old one, or the migrated one) at its file and line, an exception raised inside
TensorFlow or Keras being the program's where the program called them; or the harness's own
(``migrator/parity``; not its import hook, which every import of the old program passes): tf-migrate's error,
reported as one, never as the program's. Where a library the harness
called for the program raised (Keras' fit, on the program's model and the recorded batches) it may be either's,
and the message says so.
"""

from __future__ import annotations

import os
import re
import sysconfig
from dataclasses import dataclass

TRACEBACK = "Traceback (most recent call last):"
FRAME = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+), in (?P<function>\S+)')
HARNESS = f"{os.sep}migrator{os.sep}parity{os.sep}"
LIBRARIES = tuple(filter(None, {sysconfig.get_paths().get(key) for key in ("stdlib", "platstdlib", "purelib",
                                                                            "platlib")}))
REPORT_IT = "tf-migrate's own error, not the program's: please report it with this output"


@dataclass
class Failure:
    exception: str | None  # "KeyError: 'global_step'"
    path: str | None       # the innermost frame of the harness's or the program's code
    line: int | None
    harness: bool = False
    caller: tuple[str, int] | None = None  # a harness frame's: the program's call it replays (a patched fit)

    def message(self, reason: str, side: str) -> str:
        """``reason`` ("the new program failed (exit status 1)") told with the failure; the harness's own failure
        is not the program's."""
        if self.harness and not self.caller:
            reason = reason.replace(f"the {side} program failed", f"the harness failed on the {side} side")
        return reason + self.describe(side)

    def describe(self, side: str) -> str:
        """``side``: "old" or "new". What to append to "the new program failed (exit status 1)"."""
        if self.exception is None:
            return ""
        program = "the migrated program" if side == "new" else "the program"
        if self.harness and self.caller:
            return (f": {self.exception}, where the harness runs {program}'s call at {_short(self.caller[0])}:"
                    f"{self.caller[1]} ({_short(self.path)}:{self.line}): if the program runs on its own, this is "
                    f"{REPORT_IT}")
        missing = re.fullmatch(r"ModuleNotFoundError: No module named '([\w.]+)'", self.exception or "")
        if self.harness and missing:  # the side's interpreter (--new-python, say) lacks what the harness needs
            return (f": {self.exception}, in the harness ({_short(self.path)}:{self.line}): that Python lacks "
                    f"`{missing[1].split('.')[0]}`, which the harness needs: install it there")
        if self.harness:
            return f": {self.exception}, in the harness ({_short(self.path)}:{self.line}): {REPORT_IT}"
        where = f" at {_short(self.path)}:{self.line}" if self.path else ""
        return f": {self.exception}, raised in {program}{where}"


def explain(output: str) -> Failure:
    """The failure the output of a side ends with (an exception and its traceback, if any)."""
    lines = output.splitlines()
    start = max((index for index, line in enumerate(lines) if line.strip().endswith(TRACEBACK)), default=None)
    if start is None:
        return Failure(None, None, None)
    frames, exception = [], None
    for line in lines[start + 1:]:
        text = line.lstrip("| ").rstrip() if line.lstrip().startswith("|") else line.rstrip()
        match = FRAME.match(text)
        if match and not _import_hook(match["path"], match["function"]):
            frames.append((match["path"], int(match["line"])))
        elif text and not text.startswith(" ") and frames:
            exception = text
            break
    own = [(path, line) for path, line in frames if not _library(path)]
    if not own:
        return Failure(exception, None, None)
    path, line = own[-1]
    if HARNESS not in path:
        return Failure(exception, path, line)
    # Raised by the harness's own code; or by a library it called for the program (a patched fit): either's.
    callers = [frame for frame in own if HARNESS not in frame[0]] if frames[-1] != own[-1] else []
    return Failure(exception, path, line, harness=True, caller=callers[-1] if callers else None)


def _import_hook(path: str, function: str) -> bool:
    """The harness's hook that gives the old program TF1's tensorflow passes every import on: an import failing
    there is the program's."""
    return path.endswith(f"{HARNESS}era.py") and function == "importing"


def _library(path: str) -> bool:
    absolute = os.path.abspath(path)
    return (HARNESS not in absolute and ("site-packages" in absolute or "dist-packages" in absolute
                                         or absolute.startswith(LIBRARIES) or path.startswith("<")))


def _short(path: str | None) -> str:
    if path is None:
        return "?"
    if HARNESS in path:
        return "migrator/parity/" + path.split(HARNESS, 1)[1]
    relative = os.path.relpath(path)
    return relative if not relative.startswith("..") else path
