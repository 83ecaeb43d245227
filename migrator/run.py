"""One migration run: the files found and read, migrated on the workers, and each file's result shown and written
as its group finishes (a program's files together, or none of them; with --verify only at parity)."""

from __future__ import annotations

import argparse
import difflib
import itertools
import os
import sys
from collections import Counter
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from migrator.config import Config
from migrator.console import Progress, color_wanted, colored_diff
from migrator.engine import Result, with_unused_suppressions
from migrator.files import Candidate, Cleaned, Source, StagedWrites, clean_below, discover, read_source, write_atomic
from migrator.findings import FileError, Finding, Note, Safety
from migrator.notebooks import Notebook, migrated_text, written_left, written_modules
from migrator.report import FileRecord, Terminal, printable
from migrator.scanning import may_need, scan
from migrator.verifying import Verifications, program_of
from migrator.workers import migrate_each
from rewrites.written_cells import WHAT as WRITTEN_CODE
from rewrites.written_cells import WRITTEN_RULE
from rewrites.written_cells import message as written_message

if TYPE_CHECKING:
    from migrator.parity.verify import Verifier

EXIT_OK, EXIT_WORK_LEFT, EXIT_ERROR, EXIT_INTERRUPTED = 0, 1, 2, 130


@dataclass
class Outcome:
    """What happened to every file of one run."""

    scanned: int = 0
    changed: list[str] = field(default_factory=list)
    errors: list[FileError] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    verdicts: Counter = field(default_factory=Counter)  # --verify: "parity", "mismatch", "error" -> programs
    report_errors: list[FileError] = field(default_factory=list)  # --verify-reports that could not be written
    records: list[FileRecord] = field(default_factory=list)  # one per file, for --report and --verbose
    suppressed: int = 0  # findings a `# tf-migrate: ignore` comment suppressed

    def by_level(self) -> Counter:
        return Counter(finding.safety for finding in self.findings)

    def exit_code(self, dry_run: bool) -> int:
        if self.errors or self.report_errors:
            return EXIT_ERROR
        without_parity = self.verdicts["mismatch"] + self.verdicts["error"]
        if self.by_level()[Safety.MANUAL] or (dry_run and self.changed) or without_parity:
            return EXIT_WORK_LEFT
        return EXIT_OK


def run(args: argparse.Namespace, config: Config, enabled: frozenset[str], verifier: Verifier | None = None) -> Outcome:
    outcome = Outcome()
    terminal = terminal_for(args)
    sources: dict[Candidate, Source] = {}
    in_place = not (args.diff or args.check or args.out)
    found = discover(args.paths, [*config.exclude, *args.exclude], config.root, skip=args.out, clean=in_place,
                     force_exclude=args.force_exclude or config.force_exclude)
    for candidate in itertools.chain(clean_below(args.out) if args.out else (), found):
        if isinstance(candidate, FileError):
            outcome.errors.append(candidate)
            continue
        if isinstance(candidate, Cleaned):
            terminal.note(f"tf-migrate: {candidate.folder}: removed {plural(len(candidate.names), 'temporary file')} "
                          "an interrupted run left", sys.stderr)
            continue
        outcome.scanned += 1
        try:
            sources[candidate] = read_source(candidate.path)
        except FileError as error:
            outcome.errors.append(error)
    in_the_run = {str(candidate.path) for candidate in sources}
    todo = [candidate for candidate, source in sources.items() if may_need(source.text, enabled) or (
        source.notebook and any(may_need(body, enabled) for _, _, body in source.notebook.written))]
    progress = Progress(shown=False if args.quiet else None)
    results: dict[Candidate, Result | FileError] = {}
    verifications = Verifications(verifier, sources, results) if verifier is not None else None
    programs: dict[tuple[str, ...], StagedWrites] = {}
    finished = migrate_each(todo, sources, enabled, args.keras or config.keras, args.jobs, progress,
                            timeout=args.timeout)
    if verifications is not None:  # a program is proven before its files print, all its files' results at hand
        finished = iter([{candidate: result for group in finished for candidate, result in group.items()}])
    order = {candidate: index for index, candidate in enumerate(sources)}
    printed = print_errors(outcome, terminal, 0)
    try:
        for group in finished:
            results.update(group)
            with progress.above():
                for candidate in sorted(group, key=order.__getitem__):
                    result = with_written_modules(group[candidate], sources[candidate], enabled, in_the_run)
                    apply_result(candidate, sources[candidate], result, args, outcome, terminal, verifications,
                                 programs)
                printed = print_errors(outcome, terminal, printed)
        for candidate, source in sources.items():
            if candidate not in results:  # nothing to migrate in it
                result = with_unused_suppressions(Result(source.text), str(candidate.path), source.text, enabled)
                result = with_written_modules(result, source, enabled, in_the_run)
                apply_result(candidate, source, result, args, outcome, terminal)
        for program, staged in programs.items():
            write_program(program, staged, outcome)
    finally:
        progress.finish()
        for staged in programs.values():
            staged.discard()
    print_errors(outcome, terminal, printed)
    outcome.records.extend(FileRecord(error.path, "failed", error=error.format()) for error in outcome.errors)
    return outcome


def print_errors(outcome: Outcome, terminal: Terminal, printed: int) -> int:
    """Print the run's errors from the ``printed``-th on; how many are printed now."""
    for error in outcome.errors[printed:]:
        terminal.error(error, sys.stdout if terminal.json_lines else sys.stderr)
    return len(outcome.errors)


def terminal_for(args: argparse.Namespace) -> Terminal:
    return Terminal(json_lines=args.output_format == "json", quiet=args.quiet, verbose=args.verbose, color=args.color)


def write_program(program: tuple[str, ...], staged: StagedWrites, outcome: Outcome) -> None:
    """The files of one program, staged as they were applied, replace theirs together, or none does."""
    failed = [error.path for error in outcome.errors if error.path in program]
    if not failed:
        try:
            staged.commit()
            return
        except OSError as error:
            failed = [next((name for name in program if os.path.realpath(name) == error.filename), program[0])]
            outcome.errors.append(FileError(failed[0], f"cannot write: {error.strerror or error}"))
    staged.discard()
    for name in program:
        if name in outcome.changed and name not in failed:
            outcome.changed.remove(name)
            outcome.records = [record for record in outcome.records if record.path != name]
            outcome.errors.append(FileError(name, f"not written: {failed[0]}, of the same program, could not be"))


def apply_result(candidate: Candidate, source: Source, result: Result | FileError, *args) -> None:
    """``apply`` a file's result; a file that failed is an error of the run."""
    outcome = args[1]
    try:
        if isinstance(result, FileError):
            raise error_in_cell(result, source.notebook) if source.notebook and result.line else result
        apply(candidate, source, result, *args)
    except FileError as error:
        outcome.errors.append(error)
    except OSError as error:
        outcome.errors.append(FileError(str(candidate.path), f"cannot write: {error.strerror or error}"))


def apply(candidate: Candidate, source: Source, result: Result, args: argparse.Namespace, outcome: Outcome,
          terminal: Terminal, verifications: Verifications | None = None,
          programs: dict[tuple[str, ...], StagedWrites] | None = None) -> None:
    """Show or write one file's result; with --verify, the files of a migrated training program are written only
    at parity. The files of a program of several files are staged in ``programs``, written by write_program."""
    name = str(candidate.path)
    dry_run = args.diff or args.check
    stream = sys.stderr if args.diff else sys.stdout
    notebook = source.notebook
    findings = [in_cell(finding, notebook) for finding in result.findings] if notebook else result.findings
    findings += [finding for index, module in result.written.items()
                 for finding in in_written_cell(module, index, name)]
    written = {index: module.source for index, module in result.written.items() if isinstance(module, Result)}
    before, after = (notebook.text, migrated_text(notebook, result.source, written)) if notebook else \
        (source.text, result.source)
    changed = after != before
    # A cell left out as not Python matters where the notebook has TF1 code; elsewhere its note is noise.
    notes = notebook.notes if notebook and (findings or changed) else []
    for item in sorted([*findings, *notes], key=lambda item: (item.cell, item.line, item.col)):
        (terminal.note_at if isinstance(item, Note) else terminal.finding)(item, stream)
    outcome.findings.extend(findings)
    outcome.suppressed += len(result.suppressed)
    data = after.encode(source.encoding) if changed else source.raw
    record = FileRecord(name, "changed" if changed else "unchanged", findings, [code_at(source, f) for f in findings])
    if changed:
        record.diff = "".join(unified_diff(name, before, after))
    program = program_of(name, result) if verifications is not None else ()
    if program:
        if program[0] == name:
            record.verification = verifications.verification(program, outcome, candidate.relative)
            terminal.verdict(name, record.verification, verdict_suffix(record.verification.verdict, args), stream)
        if verifications.report(program).verdict != "parity" and not dry_run:
            changed, data, record.status = False, source.raw, "kept"
    if args.diff and changed:
        diff = record.diff.splitlines(True)
        sys.stdout.writelines(colored_diff(diff) if color_wanted(sys.stdout, args.color) else diff)
    if args.out:
        write_atomic(args.out / candidate.relative, data, mode=candidate.path.stat().st_mode & 0o7777)
    elif changed and not dry_run and len(result.program) > 1 and programs is not None:
        programs.setdefault(result.program, StagedWrites()).stage(candidate.path, data)
    elif changed and not dry_run:
        write_atomic(candidate.path, data)
    if changed:
        outcome.changed.append(name)
    outcome.records.append(record)
    terminal.file_status(record, sys.stderr)


def code_at(source: Source, finding: Finding) -> str:
    """The line of code a finding points at, as the file has it."""
    text = source.notebook.cell_source(finding.cell - 1) if source.notebook else source.text
    lines = text.splitlines()
    return lines[finding.line - 1].strip() if 0 < finding.line <= len(lines) else ""


def with_written_modules(result: Result | FileError, source: Source, enabled: frozenset[str],
                         in_the_run: Collection[str] = ()) -> Result | FileError:
    """A notebook's result with a TFM002 finding at each `%%writefile PATH.py` cell whose module holds TF1 code a
    rule handles and is not migrated with the notebook (``in_the_run``: the files the run migrates itself)."""
    notebook = source.notebook
    if notebook is None or isinstance(result, FileError) or WRITTEN_RULE not in enabled:
        return result
    why = written_left(notebook)
    for path, (index, _) in written_modules(notebook).items():
        module = result.written.get(index)
        if isinstance(module, FileError):
            why[index] = module.message
        elif module is None and path in in_the_run:
            why[index] = "the run migrates that file itself"
    found = [Finding(str(notebook.path), 1, 1, WRITTEN_RULE, Safety.MANUAL,
                     written_message(target, families, why[index]), cell=index + 1)
             for index, target, body in notebook.written if index in why
             for families in [tuple(family for family in scan(body, enabled).families if family in WRITTEN_CODE)]
             if families]
    return replace(result, findings=[*result.findings, *found]) if found else result


def in_written_cell(module: Result | FileError, index: int, notebook: str) -> list[Finding]:
    """The findings on a module a `%%writefile` cell writes, in that cell: its lines start after the `%%writefile`
    line. (A module that failed is left as it is, and TFM002 says so.)"""
    if isinstance(module, FileError):
        return []
    return [replace(finding, path=notebook, line=finding.line + 1, cell=index + 1) for finding in module.findings]


def in_cell(finding: Finding, notebook: Notebook) -> Finding:
    """A finding on the notebook's program, placed in its cell (one a cell gave is there already)."""
    if finding.cell:
        return finding
    cell, line = notebook.locate(finding.line)
    return replace(finding, cell=cell, line=line)


def error_in_cell(error: FileError, notebook: Notebook) -> FileError:
    cell, line = notebook.locate(error.line)
    return FileError(error.path, error.message, line, error.col, cell)


def verdict_suffix(verdict: str, args: argparse.Namespace) -> str:
    if verdict == "parity" or args.diff or args.check:
        return ""
    return "; copied unchanged" if args.out else "; left unchanged"


def unified_diff(name: str, before: str, after: str) -> Iterator[str]:
    name = printable(name)
    for line in difflib.unified_diff(before.splitlines(True), after.splitlines(True), f"{name}\t(original)", f"{name}\t(migrated)"):
        yield line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"
