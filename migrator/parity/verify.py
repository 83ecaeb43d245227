"""`tf-migrate PATH... --verify`: the parity harness on each migrated training program, before it is written.

The texts of every file the migration changed (as they are, and as migrated) are written to a temporary
folder outside the user's tree (removed in every case). The entry runs as if it were the file at its own
path, so its data files next to it are found; a module of a package runs as `python -m` runs it. The
program's other changed files are imported at their own paths too (``__file__``, the package they are in),
but with their code from that side's texts: the old side runs the originals, the new side the migrated
files; files the migration left alone are imported from the user's tree by both.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from migrator.findings import FileError
from migrator.parity.interrupts import held, interruptible
from migrator.parity.model import ParityReport
from migrator.parity.report import write_html, write_json
from migrator.parity.runner import Options, run_parity, work_folder_prefix
from migrator.report import printable

REPORT_WRITERS = ((".parity.html", write_html), (".parity.json", write_json))


class Verifier:
    def __init__(self, steps: int | None, timeout: float | None, reports: Path | None, quiet: bool = False) -> None:
        defaults = Options()
        self.options = Options(steps=steps or defaults.steps, timeout=timeout or defaults.timeout)
        self.reports, self.quiet = reports, quiet

    def verify(self, entry: Path, files: Mapping[Path, tuple[bytes, bytes]] | bytes, migrated: bytes | None = None,
               *, args: Sequence[str] = ()) -> ParityReport:
        """Train the program whose entry is ``entry`` as it is and as migrated, and compare them.

        ``files`` maps the path of every file of the program the migration changed (the entry too, if it
        changed) to its (original, migrated) bytes; an entry missing from it runs as it is on disk on
        both sides. ``verify(entry, original, migrated)`` is a program of one file. Both programs get
        ``args`` as their sys.argv[1:].
        """
        if not isinstance(files, Mapping):
            if migrated is None:
                raise TypeError("verify(entry, original, migrated) needs the migrated bytes")
            files = {entry: (files, migrated)}
        texts = {absolute(path): pair for path, pair in files.items()}
        entry_key = absolute(entry)
        if entry_key not in texts:
            text = Path(entry).read_bytes()
            texts[entry_key] = (text, text)
        with held(), tempfile.TemporaryDirectory(prefix=work_folder_prefix("verify")) as folder:
            copies: dict[str, dict[Path, Path]] = {"old": {}, "new": {}}
            for number, (path, pair) in enumerate(sorted(texts.items())):
                for side, text in zip(("old", "new"), pair):
                    copy = Path(folder, side, f"{number}-{path.name}")
                    copy.parent.mkdir(exist_ok=True)
                    copy.write_bytes(text)
                    copies[side][path] = copy
            # The entry stays among the stand-ins: a module importing it gets that side's text too.
            old, new = copies["old"][entry_key], copies["new"][entry_key]
            options = dataclasses.replace(self.options, program_args=tuple(args))
            return run_parity(old, new, options, as_path=entry, old_files=copies["old"], new_files=copies["new"])

    def write_reports(self, report: ParityReport, relative: str) -> Path | None:
        """The report as DIR/RELATIVE.parity.html and .parity.json, if a DIR was given, each path written said on
        stderr (not when quiet): the HTML's path."""
        if self.reports is None:
            return None
        for suffix, write in REPORT_WRITERS:
            path = self.reports / (relative + suffix)
            try:
                with interruptible():  # even in a process started with SIGINT ignored
                    write(report, path)
            except OSError as error:
                raise FileError(str(path), f"cannot write the parity report: {error.strerror or error}") from None
            if not self.quiet:
                print(printable(f"tf-migrate: wrote parity report {path}"), file=sys.stderr)
        return self.reports / (relative + REPORT_WRITERS[0][0])


def absolute(path: Path) -> Path:
    return Path(os.path.abspath(path))
