"""What a migration run reports: terminal lines, JSON lines, and the --report files (HTML, JSON).

The terminal shows each finding as `path[:cell N]:line:col: RULE [level] message`, coloured as
`--color` says (migrator/console.py); `--output-format json` prints one JSON object a
line instead. `--report PATH.html` / `PATH.json` write the whole run: a summary, the
findings per rule, and per file what was rewritten (its diff), the findings in the order of
their lines with the code they point at and what to do, and the parity verdict of each
verified program with a link to its parity report. The JSON's layout is REPORT_SCHEMA_VERSION.
A file name that is not UTF-8 is shown with its bytes escaped (``caf\\xe9.py``) in all of them.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TextIO

from migrator.console import color_wanted
from migrator.files import write_report_file
from migrator.findings import FileError, Finding, Note, Safety, where

REPORT_SCHEMA_VERSION = 1
LEVEL_COLORS = {Safety.EXACT: "32", Safety.NUMERIC: "33", Safety.MANUAL: "31"}  # ANSI green, yellow, red
VERDICT_COLORS = {"parity": "32", "mismatch": "31", "error": "33"}


@dataclass
class Verification:
    verdict: str              # "parity", "mismatch" or "error"
    message: str
    report: str | None = None  # the parity report's HTML file, if written


@dataclass
class FileRecord:
    """One file of the run."""

    path: str
    status: str                # "changed" (or would change), "unchanged", "failed", "kept" (verification failed)
    findings: list[Finding] = field(default_factory=list)
    code: list[str] = field(default_factory=list)   # the source line each finding points at
    diff: str = ""             # unified diff of what was (or would be) rewritten
    verification: Verification | None = None
    error: str | None = None

    @property
    def manual(self) -> bool:
        return any(finding.safety is Safety.MANUAL for finding in self.findings)


# -- the terminal -------------------------------------------------------------------------------------


class Terminal:
    """Where and how findings, verdicts and errors are printed."""

    def __init__(self, json_lines: bool = False, quiet: bool = False, verbose: bool = False,
                 color: str = "auto") -> None:
        self.json_lines, self.quiet, self.verbose, self.color = json_lines, quiet, verbose, color

    def colored(self, stream: TextIO) -> bool:
        return color_wanted(stream, self.color)

    def finding(self, finding: Finding, stream: TextIO) -> None:
        if self.quiet and finding.safety is not Safety.MANUAL:
            return
        if self.json_lines:
            _print_json({"type": "finding", **finding_json(finding)}, stream)
            return
        text = finding.format()
        if self.colored(stream):
            place = where(finding.path, finding.cell, finding.line, finding.col)
            text = (f"{place}: \033[1m{finding.rule}\033[0m \033[{LEVEL_COLORS[finding.safety]}m[{finding.safety}]"
                    f"\033[0m {finding.message}")
        _print(text, stream)

    def verdict(self, path: str, verification: Verification, suffix: str, stream: TextIO) -> None:
        if self.quiet and verification.verdict == "parity":
            return
        if self.json_lines:
            _print_json({"type": "verification", "path": path, **asdict(verification)}, stream)
            return
        verdict = verification.verdict
        if self.colored(stream):
            verdict = f"\033[1;{VERDICT_COLORS[verdict]}m{verdict}\033[0m"
        _print(f"{path}: {verdict}: {verification.message}{suffix}", stream)

    def error(self, error: FileError, stream: TextIO) -> None:
        if self.json_lines:
            _print_json({"type": "error", "path": error.path, "cell": error.cell or None, "line": error.line,
                         "col": error.col, "message": error.message}, stream)
            return
        text = error.format()
        _print(f"\033[31m{text}\033[0m" if self.colored(stream) else text, stream)

    def file_status(self, record: FileRecord, stream: TextIO) -> None:
        """--verbose: one line per file scanned."""
        if self.verbose:
            counts = Counter(finding.safety.value for finding in record.findings)
            detail = ", ".join(f"{count} {level}" for level, count in counts.items())
            _print(f"{record.path}: {record.status}" + (f" ({detail})" if detail else ""), stream)

    def note(self, text: str, stream: TextIO) -> None:
        """A line about the run, not about a file's code (silent with --quiet)."""
        if not self.quiet:
            _print(text, stream)

    def note_at(self, note: Note, stream: TextIO) -> None:
        """A note on a place in a file, `path:cell N:line:col: note: ...` (silent with --quiet)."""
        if self.quiet:
            return
        if self.json_lines:
            _print_json({"type": "note", "path": note.path, "cell": note.cell or None, "line": note.line,
                         "col": note.col, "message": note.message}, stream)
            return
        _print(note.format(), stream)


def printable(text: str) -> str:
    """``text`` with the bytes of a file name that is not UTF-8 (os.fsdecode's surrogates, which no UTF-8 output
    takes) as ``\\xNN``."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def printable_json(value):
    """``printable`` on every string of a JSON value."""
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, dict):
        return {key: printable_json(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [printable_json(item) for item in value]
    return value


def _print(text: str, stream: TextIO) -> None:
    print(printable(text), file=stream)


def _print_json(value: dict, stream: TextIO) -> None:
    print(json.dumps(printable_json(value)), file=stream)


def finding_json(finding: Finding) -> dict:
    return {"path": finding.path, "cell": finding.cell or None, "line": finding.line, "col": finding.col,
            "rule": finding.rule, "level": finding.safety.value, "message": finding.message}


# -- the report files -------------------------------------------------------------------------------


@dataclass
class RunSummary:
    scanned: int
    changed: int
    unchanged: int
    failed: int
    manual: int               # files left with manual work
    verified: dict[str, int]  # verdict -> programs
    dry_run: bool
    verify: bool = False      # whether --verify ran: no verdicts without it is not the same as none with it
    suppressed: int = 0       # findings a `# tf-migrate: ignore` comment suppressed


def report_json(summary: RunSummary, records: list[FileRecord], rules: dict) -> dict:
    """The --report JSON: REPORT_SCHEMA_VERSION, documented in README.md."""
    from migrator import __version__

    counts = Counter(finding.rule for record in records for finding in record.findings)
    return printable_json({
        "schema_version": REPORT_SCHEMA_VERSION,
        "tool": {"name": "tf-migrate", "version": __version__},
        "summary": asdict(summary),
        "rules": [{"id": rule.id, "name": rule.name, "level": rule.safety.value, "summary": rule.summary,
                   "findings": counts[rule.id]} for rule in rules.values() if counts[rule.id]],
        "files": [{
            "path": record.path, "status": record.status, "error": record.error,
            "findings": [{**finding_json(finding), "code": code}
                         for finding, code in sorted(zip(record.findings, record.code), key=_position)],
            "diff": record.diff, "lines_added": _diff_lines(record.diff, "+"), "lines_removed": _diff_lines(record.diff, "-"),
            "verification": asdict(record.verification) if record.verification else None,
        } for record in sorted(records, key=_attention)],
    })


def _position(pair: tuple[Finding, str]) -> tuple[int, int, int]:
    finding = pair[0]
    return finding.cell or 0, finding.line, finding.col


def _attention(record: FileRecord) -> tuple[int, str]:
    """Files a person must look at first: unreadable, manual work, no parity, then the rest, each by path."""
    verdict = record.verification.verdict if record.verification else "parity"
    rank = 0 if record.error else 1 if record.manual else 2 if verdict != "parity" else 3
    return rank, record.path


def _diff_lines(diff: str, sign: str) -> int:
    return sum(line.startswith(sign) and not line.startswith(sign * 3 + " ") for line in diff.splitlines())


def write_report(path: Path, summary: RunSummary, records: list[FileRecord], rules: dict) -> None:
    """--report PATH: HTML for a .html (or .htm) path, JSON otherwise."""
    data = report_json(summary, records, rules)
    if path.suffix.lower() in (".html", ".htm"):
        text = render_html(data, path)
    else:
        text = json.dumps(data, indent=2) + "\n"
    write_report_file(path, text)


def render_html(data: dict, path: Path) -> str:
    from templates import render

    for record in data["files"]:
        verification = record["verification"]
        if verification and verification["report"]:
            verification["link"] = os.path.relpath(verification["report"], path.parent.absolute())
    return render("migration_report.html.j2", report=data, levels=[level.value for level in Safety],
                  code=code_html, prose=prose_html)


# Where code may wrap besides its spaces: after a slash, comma, opening bracket or a name's dot, never inside a name.
BREAK_IN_CODE = re.compile(r"([/,(\[]|(?<=\w)\.(?=[A-Za-z_]))(?=[^\s)\]])")
BREAK_IN_NAME = re.compile(r"(?<=[A-Za-z_])([./])(?=[A-Za-z_])")  # a dotted name in prose: tf.distribute.Server
ARROW = ("-&gt;", '<span class="arrow">-&gt;</span>')  # "a -> b" never split after its hyphen
CODE_SPAN = re.compile(r"``(.+?)``|`([^`]+)`")


def code_html(text: str):
    """Code as HTML (escaped) that a browser may wrap at its spaces and after ``BREAK_IN_CODE``'s characters."""
    from markupsafe import Markup, escape

    return Markup(BREAK_IN_CODE.sub(r"\1<wbr>", str(escape(text))))


def prose_html(text: str):
    """A message as HTML (escaped): its `code` spans as <code>, dotted names breakable between their parts."""
    from markupsafe import Markup

    parts, end = [], 0
    for match in CODE_SPAN.finditer(text):
        parts += [_plain_html(text[end:match.start()]), f"<code>{code_html(match.group(1) or match.group(2))}</code>"]
        end = match.end()
    parts.append(_plain_html(text[end:]))
    return Markup("".join(parts))


def _plain_html(text: str) -> str:
    from markupsafe import escape

    return BREAK_IN_NAME.sub(r"\1<wbr>", str(escape(text))).replace(*ARROW)
