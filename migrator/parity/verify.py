"""`tf-migrate PATH... --verify`: the parity harness on each migrated training program, before it is written.

Both texts are written to a temporary folder outside the user's tree (removed in every case) and run as if
they were the file at its own path, so its sibling imports and its data files next to it are found.
"""

from __future__ import annotations

import signal
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from migrator.findings import FileError
from migrator.parity.model import ParityReport
from migrator.parity.report import write_html, write_json
from migrator.parity.runner import Options, run_parity

REPORT_WRITERS = ((".parity.html", write_html), (".parity.json", write_json))


class Verifier:
    def __init__(self, steps: int | None, timeout: float | None, reports: Path | None) -> None:
        defaults = Options()
        self.options = Options(steps=steps or defaults.steps, timeout=timeout or defaults.timeout)
        self.reports = reports

    def verify(self, path: Path, original: bytes, migrated: bytes) -> ParityReport:
        """Train the program at ``path`` as it is (``original``) and as migrated, and compare them."""
        with sigterm_as_interrupt(), tempfile.TemporaryDirectory(prefix="tf-migrate-verify-") as folder:
            old, new = Path(folder, "old.py"), Path(folder, "new.py")
            old.write_bytes(original)
            new.write_bytes(migrated)
            return run_parity(old, new, self.options, as_path=path)

    def write_reports(self, report: ParityReport, relative: str) -> Path | None:
        """The report as DIR/RELATIVE.parity.html and .parity.json, if a DIR was given: the HTML's path."""
        if self.reports is None:
            return None
        for suffix, write in REPORT_WRITERS:
            path = self.reports / (relative + suffix)
            try:
                write(report, path)
            except OSError as error:
                raise FileError(str(path), f"cannot write the parity report: {error.strerror or error}") from None
        return self.reports / (relative + REPORT_WRITERS[0][0])


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """A SIGTERM stops the run like Ctrl-C, so the sides are killed and the temporary files removed."""
    previous = signal.signal(signal.SIGTERM, raise_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def raise_interrupt(signum, frame):
    raise KeyboardInterrupt
