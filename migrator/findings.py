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

    def format(self) -> str:
        return f"{self.path}:{self.line}:{self.col}: {self.rule} [{self.safety}] {self.message}"


class FileError(Exception):
    """A file that could not be processed. It is left exactly as it was."""

    def __init__(self, path: str, message: str, line: int = 0, col: int = 0) -> None:
        super().__init__(message)
        self.path, self.message, self.line, self.col = path, message, line, col

    def __reduce__(self):  # travels back from worker processes
        return FileError, (self.path, self.message, self.line, self.col)

    def format(self) -> str:
        where = f"{self.path}:{self.line}:{self.col}" if self.line else self.path
        return f"{where}: error: {self.message}"
