"""Finding the files to migrate, reading them exactly, writing them back atomically."""

from __future__ import annotations

import errno
import fnmatch
import io
import os
import stat
import tempfile
import tokenize
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from migrator.findings import FileError
from migrator.notebooks import Notebook, is_notebook, read_notebook

SOURCE_SUFFIXES = (".py", ".ipynb")

# Folders that never hold code of the user's to migrate.
SKIPPED_DIRS = frozenset({
    ".git", ".hg", ".svn", ".tox", ".nox", ".venv", "__pycache__", "build", "dist",
    "node_modules", ".eggs", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".ipynb_checkpoints",
})


@dataclass(frozen=True)
class Candidate:
    path: Path      # as the user named it (or below what the user named)
    relative: str   # below the common folder of the inputs: where --out puts it


@dataclass
class Source:
    text: str       # what the rewrites read: the file's text, or a notebook's code cells as one program
    encoding: str   # from the BOM or the coding declaration; utf-8 otherwise
    raw: bytes
    notebook: Notebook | None = None


def is_excluded(relative: str, patterns: Iterable[str]) -> bool:
    """Glob patterns match the path below the project root, any leading part of it, or its name."""
    parts = relative.split("/")
    prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    return any(fnmatch.fnmatch(text, pattern.rstrip("/")) for pattern in patterns for text in prefixes + parts)


def _is_virtualenv(path: str) -> bool:
    """By content, not name: the standard library has a package called venv."""
    return os.path.exists(os.path.join(path, "pyvenv.cfg")) or os.path.isdir(os.path.join(path, "conda-meta"))


def discover(inputs: Iterable[Path], exclude: Iterable[str] = (), root: Path | None = None,
             skip: Path | None = None) -> Iterator[Candidate | FileError]:
    """Every source file below ``inputs``, each once, in a stable order.

    Files named directly are always taken. A folder that cannot be listed comes out
    as a FileError, and the walk goes on. Inside folders: *.py and *.ipynb files (symlinked
    files too, so a dangling one is reported), not following symlinked folders, not
    descending into SKIPPED_DIRS, virtual environments, ``skip`` (the --out folder)
    or anything ``exclude`` matches relative to ``root``.
    """
    inputs = list(inputs)
    base = common_folder(inputs)
    patterns = tuple(exclude)
    root = (root or Path.cwd()).absolute()
    skip_real = os.path.realpath(skip) if skip else None
    seen: set[str] = set()

    def relative_to_root(path: str) -> str:
        return os.path.relpath(os.path.abspath(path), root).replace(os.sep, "/")

    def take(path: str) -> Iterator[Candidate]:
        key = os.path.abspath(path)
        if key not in seen:
            seen.add(key)
            yield Candidate(Path(path), os.path.relpath(key, base).replace(os.sep, "/"))

    def walk(folder: str) -> Iterator[Candidate | FileError]:
        try:
            entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
        except OSError as error:
            yield FileError(folder, f"cannot list folder: {error.strerror}")
            return
        for entry in entries:
            if patterns and is_excluded(relative_to_root(entry.path), patterns):
                continue
            if entry.is_dir(follow_symlinks=False):
                if entry.name in SKIPPED_DIRS or entry.name.endswith(".egg-info") or _is_virtualenv(entry.path):
                    continue
                if skip_real and os.path.realpath(entry.path) == skip_real:
                    continue
                yield from walk(entry.path)
            elif entry.name.endswith(SOURCE_SUFFIXES) and (entry.is_symlink() or entry.is_file(follow_symlinks=False)):
                yield from take(entry.path)

    for path in inputs:
        if os.path.isdir(path):
            yield from walk(str(path))
        else:
            yield from take(str(path))


def common_folder(inputs: list[Path]) -> str:
    """The folder --out mirrors: the inputs' deepest common folder."""
    folders = [os.path.abspath(p) if os.path.isdir(p) else os.path.dirname(os.path.abspath(p)) for p in inputs]
    return os.path.commonpath(folders) if folders else os.getcwd()


def read_source(path: Path) -> Source:
    """The file's text, decoded as Python decodes it. Raises FileError saying what is wrong."""
    name = str(path)
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise FileError(name, _describe_os_error(path, error)) from None
    if b"\x00" in raw:
        raise FileError(name, "contains NUL bytes: a binary file, not Python source")
    if is_notebook(path):
        return _read_notebook(name, raw)
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
    except SyntaxError as error:
        if error.msg.startswith("invalid or missing encoding declaration"):
            raise FileError(name, "not valid utf-8, and no encoding declaration says what it is") from None
        raise FileError(name, f"bad encoding declaration: {error.msg}") from None
    try:
        text = raw.decode(encoding)
    except UnicodeDecodeError as error:
        line = raw.count(b"\n", 0, error.start) + 1
        raise FileError(name, f"not valid {encoding}: byte 0x{raw[error.start]:02x} at offset {error.start}", line, 1) from None
    return Source(text, encoding, raw)


def _read_notebook(name: str, raw: bytes) -> Source:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise FileError(name, f"not valid utf-8, as a notebook must be: byte 0x{raw[error.start]:02x} at offset "
                              f"{error.start}") from None
    notebook = read_notebook(name, text)
    return Source(notebook.program, "utf-8", raw, notebook)


def _describe_os_error(path: Path, error: OSError) -> str:
    if error.errno == errno.ELOOP:
        return "symlink loop"
    if path.is_symlink() and not path.exists():
        return f"dangling symlink to {os.readlink(path)}"
    if isinstance(error, IsADirectoryError):
        return "is a folder, not a file"
    return f"cannot read: {error.strerror or error}"


def write_atomic(path: Path, data: bytes, mode: int | None = None) -> None:
    """Replace ``path`` (through symlinks) with ``data`` in one rename; keep its mode.

    A crash at any point leaves either the old file or the new one, never a mix.
    """
    staged = StagedWrites()
    staged.stage(path, data, mode)
    staged.commit()


class StagedWrites:
    """Files that change together (the modules of one program): each is written in full to a temporary file
    beside it first; once all are, they replace their files one rename each. If one cannot be written or
    renamed, those already replaced get their old bytes back and nothing has changed."""

    def __init__(self) -> None:
        self._pending: list[tuple[str, Path, bytes | None]] = []

    def stage(self, path: Path, data: bytes, mode: int | None = None) -> None:
        target = Path(os.path.realpath(path))
        old = target.read_bytes() if target.exists() else None
        if mode is None:
            mode = stat.S_IMODE(target.stat().st_mode)
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tf-migrate")
        self._pending.append((temporary, target, old))
        try:
            _write_synced(fd, data)
            os.chmod(temporary, mode)
        except BaseException:
            self.discard()
            raise

    def commit(self) -> None:
        """Raises the OSError of the file that could not be replaced, its ``filename`` naming it."""
        done: list[tuple[Path, bytes | None]] = []
        try:
            for temporary, target, old in self._pending:
                try:
                    os.replace(temporary, target)
                except OSError as error:
                    error.filename = str(target)
                    raise
                done.append((target, old))
            done.clear()
        finally:
            for target, old in done:
                if old is not None:
                    _restore(target, old)
            self.discard()

    def discard(self) -> None:
        for temporary, _, _ in self._pending:
            if os.path.exists(temporary):
                os.unlink(temporary)
        self._pending.clear()


def _write_synced(fd: int, data: bytes) -> None:
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())


def _restore(target: Path, old: bytes) -> None:
    fd, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tf-migrate")
    _write_synced(fd, old)
    os.chmod(temporary, stat.S_IMODE(target.stat().st_mode))
    os.replace(temporary, target)


def write_report_file(path: Path, text: str) -> None:
    """A report, atomically like the migrated sources; a new file gets the mode the umask allows."""
    mode = None if path.exists() else 0o666 & ~_current_umask()
    write_atomic(path, text.encode("utf-8"), mode)


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return stat.S_IMODE(mask)
