"""`tf-migrate --verify`: each migrated training program proven by the parity harness before any file is written.

A program may span files (an Estimator driven in trainer/task.py, its model_fn in trainer/model.py): it is
trained once, from its entry, with every changed file of it in its old and its new version, and its verdict
decides for all of them. The verdict prints after the entry's findings.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from migrator.console import status_on_terminal
from migrator.engine import Result
from migrator.files import Candidate, Source
from migrator.findings import FileError
from migrator.notebooks import runnable
from migrator.report import Verification

if TYPE_CHECKING:
    from migrator.parity.model import ParityReport
    from migrator.parity.verify import Verifier

# The finding of a migrated between-graph program: a program of one file.
BETWEEN_GRAPH_PROGRAM = "TFM103"


def program_of(name: str, result: Result) -> tuple[str, ...]:
    """The files of the training program ``name`` is part of, its entry first; () for none."""
    if result.program:
        return result.program
    return (name,) if any(finding.rule == BETWEEN_GRAPH_PROGRAM for finding in result.findings) else ()


class Verifications:
    """The parity run of each program, run once, when one of its files is first applied."""

    def __init__(self, verifier: Verifier, sources: dict[Candidate, Source], results: dict) -> None:
        self.verifier, self.sources, self.results = verifier, sources, results
        self.candidates = {str(candidate.path): candidate for candidate in sources}
        self._reports: dict[tuple[str, ...], ParityReport] = {}

    def report(self, program: tuple[str, ...]) -> ParityReport:
        if program not in self._reports:
            entry = self.candidates[program[0]]
            with status_on_terminal(f"verifying {entry.path}: training the program and its migration"):
                self._reports[program] = self.verifier.verify(entry.path, self._files(program))
        return self._reports[program]

    def _files(self, program: tuple[str, ...]) -> dict:
        files = {}
        for name in program:
            candidate = self.candidates[name]
            source, result = self.sources[candidate], self.results[candidate]
            notebook = source.notebook
            if notebook:
                files[candidate.path] = (runnable(notebook, source.text).encode(),
                                         runnable(notebook, result.source).encode())
            else:
                files[candidate.path] = (source.raw, result.source.encode(source.encoding))
        return files

    def verification(self, program: tuple[str, ...], outcome, relative: str) -> Verification:
        """The program's verdict, counted once (when its entry is applied), its reports written."""
        report = self.report(program)
        outcome.verdicts[report.verdict] += 1
        verification = Verification(report.verdict, report.message)
        try:
            html = self.verifier.write_reports(report, relative)
            verification.report = str(html) if html else None
        except FileError as error:
            outcome.report_errors.append(error)
            print(error.format(), file=sys.stderr)
        return verification
