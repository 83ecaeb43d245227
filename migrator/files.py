"""Finding the files to migrate, reading them exactly, writing them back atomically; removing what interrupted
writes left."""

from __future__ import annotations

import errno
import fnmatch
import io
import os
import re
import stat
import tempfile
import time
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

# Far above any Python source (the largest module of the tensorflow package is about 0.5 MB), and a bound on
# the memory a read takes: a symlink to /dev/zero, or a file growing while it is read, must not exhaust it.
# A notebook holds its outputs too, plots as base64 images.
MAX_SOURCE_BYTES = 10 * 2**20
MAX_NOTEBOOK_BYTES = 50 * 2**20

_NOT_REGULAR = {stat.S_IFIFO: "a FIFO", stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device",
                stat.S_IFSOCK: "a socket"}

# A write goes through `.NAME.PID.RANDOM.tf-migrate` beside its file. NAME is cut to 100 bytes, so the whole
# fits in the 255 bytes a file name may have; PID, the writer's, tells a later run whether the writer is gone
# and the file stale. Names without a PID (tf-migrate 0.1.0 wrote them) are stale once older than a minute.
_TEMPORARY_NAME = re.compile(r"\..+?\.(?:(\d{1,7})\.)?[a-z0-9_]{8}\.tf-migrate", re.DOTALL)
_NAME_BYTES_IN_TEMPORARY = 100
_STALE_WITHOUT_PID_SECONDS = 60


@dataclass(frozen=True)
class Candidate:
    path: Path      # as the user named it (or below what the user named)
    relative: str   # below the common folder of the inputs: where --out puts it


@dataclass(frozen=True)
class Cleaned:
    """The temporary files an interrupted run left in ``folder``, found stale and removed."""

    folder: Path
    names: tuple[str, ...]


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
             skip: Path | None = None, clean: bool = False,
             force_exclude: bool = False) -> Iterator[Candidate | FileError | Cleaned]:
    """Every source file below ``inputs``, each once, in a stable order.

    Files named directly are taken, unless ``force_exclude`` and ``exclude`` matches them. A folder that cannot be listed comes out
    as a FileError, and the walk goes on. Inside folders: *.py and *.ipynb files (symlinked
    files too, so a dangling one is reported), not following symlinked folders, not
    descending into SKIPPED_DIRS, virtual environments, ``skip`` (the --out folder)
    or anything ``exclude`` matches relative to ``root``. ``clean``: remove the stale
    temporary files of interrupted runs from the folders walked, one Cleaned a folder.
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

    def walk(folder: str) -> Iterator[Candidate | FileError | Cleaned]:
        try:
            entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
        except OSError as error:
            yield FileError(folder, f"cannot list folder: {error.strerror}")
            return
        removed = remove_stale_temporaries(entries) if clean else ()
        if removed:
            yield Cleaned(Path(folder), removed)
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
        if force_exclude and patterns and is_excluded(relative_to_root(str(path)), patterns):
            continue
        if os.path.isdir(path):
            yield from walk(str(path))
        else:
            yield from take(str(path))


def clean_below(folder: Path) -> Iterator[Cleaned]:
    """Remove the stale temporary files of interrupted runs from ``folder`` and every folder below it (not through
    symlinks), one Cleaned a folder: the --out folder, where a killed run leaves them as it leaves them in place."""
    try:
        entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
    except OSError:  # none yet, or not one we may list (writing into it says so)
        return
    removed = remove_stale_temporaries(entries)
    if removed:
        yield Cleaned(Path(folder), removed)
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=False):
                yield from clean_below(Path(entry.path))
        except OSError:
            pass


def common_folder(inputs: list[Path]) -> str:
    """The folder --out mirrors: the inputs' deepest common folder."""
    folders = [os.path.abspath(p) if os.path.isdir(p) else os.path.dirname(os.path.abspath(p)) for p in inputs]
    return os.path.commonpath(folders) if folders else os.getcwd()


def read_source(path: Path) -> Source:
    """The file's text, decoded as Python decodes it. Raises FileError saying what is wrong."""
    name = str(path)
    raw = _read_regular_file(path)
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


def _read_regular_file(path: Path) -> bytes:
    """Its bytes, if ``path`` is a regular file (reading a FIFO waits for a writer, a device may never end) within
    its size limit. Raises FileError saying what is wrong."""
    name, notebook = str(path), is_notebook(path)
    limit = MAX_NOTEBOOK_BYTES if notebook else MAX_SOURCE_BYTES
    try:
        _check_regular(name, os.stat(path).st_mode)
        # O_NONBLOCK: a FIFO put in its place since the stat must not block the open either.
        with open(os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)), "rb") as handle:
            raw = handle.read(limit + 1)
    except OSError as error:
        raise FileError(name, _describe_os_error(path, error)) from None
    if len(raw) > limit:
        kind = "notebook" if notebook else "Python source"
        raise FileError(name, f"larger than {limit // 2**20} MB, the limit of a {kind}")
    return raw


def _check_regular(name: str, mode: int) -> None:
    if stat.S_ISDIR(mode):
        raise FileError(name, "is a folder, not a file")
    if not stat.S_ISREG(mode):
        raise FileError(name, f"not a regular file: {_NOT_REGULAR.get(stat.S_IFMT(mode), 'a special file')}")


def _describe_os_error(path: Path, error: OSError) -> str:
    if error.errno == errno.ELOOP:
        return "symlink loop"
    if path.is_symlink() and not path.exists():
        return f"dangling symlink to {os.readlink(path)}"
    return f"cannot read: {error.strerror or error}"


def write_atomic(path: Path, data: bytes, mode: int | None = None) -> None:
    """Replace ``path`` (through symlinks) with ``data`` in one rename, keeping its mode, owner and extended
    attributes (``mode``: the mode to give it instead).

    A crash at any point leaves either the old file or the new one, never a mix; but a file with other hard
    links is written in place (see StagedWrites).
    """
    staged = StagedWrites()
    staged.stage(path, data, mode)
    staged.commit()


@dataclass
class _Write:
    target: Path
    data: bytes
    old: bytes | None         # to put back if another file of the group cannot be written
    temporary: str | None     # None: written in place


class StagedWrites:
    """Files that change together (the modules of one program): each is written in full to a temporary file
    beside it first; once all are, they replace their files one rename each. If one cannot be written or
    renamed, those already replaced get their old bytes back and nothing has changed.

    A file with other hard links is written in place instead, once the temporary files of the others are
    written: a rename would leave its other names with the old code. That write is the one step where a crash
    (not a failed write, which puts the old bytes back) can leave a file half written."""

    def __init__(self) -> None:
        self._pending: list[_Write] = []

    def stage(self, path: Path, data: bytes, mode: int | None = None) -> None:
        target = Path(os.path.realpath(path))
        info = target.stat() if target.exists() or mode is None else None  # None: a new file, of ``mode``
        old = target.read_bytes() if info is not None else None
        if info is not None and info.st_nlink > 1:
            self._pending.append(_Write(target, data, old, None))
            return
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = _temporary_beside(target)
        self._pending.append(_Write(target, data, old, temporary))
        try:
            _write_synced(fd, data)
            if info is not None:
                _copy_owner(info, temporary)  # before the mode: a change of owner clears the set-id bits
                _copy_extended_attributes(target, temporary)
            os.chmod(temporary, stat.S_IMODE(info.st_mode) if mode is None else mode)
        except BaseException:
            self.discard()
            raise

    def commit(self) -> None:
        """Raises the OSError of the file that could not be replaced, its ``filename`` naming it."""
        done: list[_Write] = []
        try:
            for write in self._pending:
                try:
                    _put(write)
                except OSError as error:
                    error.filename = str(write.target)
                    raise
                done.append(write)
            done.clear()
        finally:
            for write in done:
                if write.old is not None:
                    write_atomic(write.target, write.old)
            self.discard()

    def discard(self) -> None:
        for write in self._pending:
            if write.temporary and os.path.exists(write.temporary):
                os.unlink(write.temporary)
        self._pending.clear()


def _temporary_beside(target: Path) -> tuple[int, str]:
    name = os.fsdecode(os.fsencode(target.name)[:_NAME_BYTES_IN_TEMPORARY])
    return tempfile.mkstemp(dir=target.parent, prefix=f".{name}.{os.getpid()}.", suffix=".tf-migrate")


def remove_stale_temporaries(entries: Iterable[os.DirEntry]) -> tuple[str, ...]:
    """Remove the temporary files of writers that are gone; the names of those removed."""
    removed = []
    for entry in entries:
        try:
            if _is_stale_temporary(entry):
                os.unlink(entry.path)
                removed.append(entry.name)
        except OSError:  # gone already, or a folder we may not write to (writing a migrated file there says so)
            pass
    return tuple(removed)


def _is_stale_temporary(entry: os.DirEntry) -> bool:
    match = _TEMPORARY_NAME.fullmatch(entry.name)
    if not match or not entry.is_file(follow_symlinks=False):
        return False
    if match.group(1):
        return not _is_running(int(match.group(1)))
    return time.time() - entry.stat(follow_symlinks=False).st_mtime > _STALE_WITHOUT_PID_SECONDS


def _is_running(pid: int) -> bool:
    if os.name != "posix":
        return True  # there os.kill(pid, 0) would end the process
    try:
        os.kill(pid, 0)  # no signal: only the check that the process exists
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's
        pass
    return True


def _write_synced(fd: int, data: bytes) -> None:
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())


def _copy_owner(info: os.stat_result, temporary: str) -> None:
    if hasattr(os, "chown"):
        try:
            os.chown(temporary, info.st_uid, info.st_gid)
        except PermissionError:  # only root gives files away: the new file is the user's own
            pass


def _copy_extended_attributes(target: Path, temporary: str) -> None:
    if not hasattr(os, "listxattr"):  # Linux only
        return
    try:
        attributes = os.listxattr(target)
    except OSError as error:
        if error.errno == errno.ENOTSUP:  # a file system without them
            return
        raise
    for attribute in attributes:
        try:
            os.setxattr(temporary, attribute, os.getxattr(target, attribute))
        except OSError as error:
            if error.errno not in (errno.EPERM, errno.EACCES):  # one the user may not set (security.*): not kept
                raise


def _put(write: _Write) -> None:
    if write.temporary:
        os.replace(write.temporary, write.target)
        return
    with open(write.target, "r+b") as handle:
        try:
            _overwrite(handle, write.data)
        except OSError:
            _overwrite(handle, write.old)
            raise


def _overwrite(handle, data: bytes) -> None:
    handle.seek(0)
    handle.write(data)
    handle.truncate()
    handle.flush()
    os.fsync(handle.fileno())


def write_report_file(path: Path, text: str) -> None:
    """A report, atomically like the migrated sources; a new file gets the mode the umask allows."""
    mode = None if path.exists() else 0o666 & ~_current_umask()
    write_atomic(path, text.encode("utf-8"), mode)


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return stat.S_IMODE(mask)
