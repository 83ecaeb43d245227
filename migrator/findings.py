"""What a migration reports: one Finding per rewrite applied or construct left alone."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Safety(str, enum.Enum):
    """How far the TF2 code can be trusted to compute what the TF1 code did.

    exact:   the same computation (a rename, a partitioner with the same shards).
    numeric: the same computation up to documented float differences.
    manual:  not migrated; a person has to do it. The code there is unchanged.
    """

    EXACT = "exact"
    NUMERIC = "numeric"
    MANUAL = "manual"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Rule:
    id: str
    name: str
    safety: Safety
    summary: str


@dataclass(frozen=True, order=True)
class Finding:
    path: str
    line: int
    col: int
    rule: str
    safety: Safety
    message: str
    cell: int = 0   # a notebook's cell, counted from 1 (line counts in that cell); 0 for a .py file

    def format(self) -> str:
        return f"{where(self.path, self.cell, self.line, self.col)}: {self.rule} [{self.safety}] {self.message}"


@dataclass(frozen=True)
class Note:
    """Something a user should know about a place in a file that is neither a finding nor an error: a notebook
    cell that was not read as Python."""

    path: str
    cell: int
    line: int
    col: int
    message: str

    def format(self) -> str:
        return f"{where(self.path, self.cell, self.line, self.col)}: note: {self.message}"


def where(path: str, cell: int, line: int, col: int) -> str:
    """`path:line:col`, or `path:cell N:line:col` in a notebook."""
    return f"{path}:cell {cell}:{line}:{col}" if cell else f"{path}:{line}:{col}"


class FileError(Exception):
    """A file that could not be processed. It is left exactly as it was."""

    def __init__(self, path: str, message: str, line: int = 0, col: int = 0, cell: int = 0) -> None:
        super().__init__(message)
        self.path, self.message, self.line, self.col, self.cell = path, message, line, col, cell

    def __reduce__(self):  # travels back from worker processes
        return FileError, (self.path, self.message, self.line, self.col, self.cell)

    def format(self) -> str:
        place = where(self.path, self.cell, self.line, self.col) if self.line else self.path
        return f"{place}: error: {self.message}"
