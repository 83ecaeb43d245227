"""The files of a run migrated in worker processes: every file scanned, then the groups that need it migrated.

Migrating always happens in workers, even with -j 1: a file that crashes libcst's native parser, exhausts memory
or nests too deeply then costs only its own group, whose files are reported as failed and left unchanged, while
the other groups still complete. Scanning moves to the workers only when the run is big enough to gain from it, so
a run with nothing to migrate (the pre-commit case) starts no process. Each worker runs one task at a time, so the
group of a worker that dies is known, and a new worker takes the next task. Groups go out biggest first, so that no
big file is left to finish alone at the end. A group has a time limit (``time_limit``): a worker still on it when
the limit passes (an endless loop) is killed, the group's files are reported as failed, and a new worker takes
the next task. Workers die with the main process, and leave Ctrl-C (and SIGTERM) to it.
"""

from __future__ import annotations

import math
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from migrator.engine import Result, migrate_group, program_groups
from migrator.files import Candidate, Source
from migrator.notebooks import written_modules
from migrator.console import Progress
from migrator.findings import FileError
from migrator.scanning import Scan, scan
from rewrites.program.imports import plain_modules_imported

if TYPE_CHECKING:
    from multiprocessing.connection import Connection
    from multiprocessing.context import BaseContext


def migrate_each(todo: list[Candidate], sources: dict[Candidate, Source], enabled: frozenset[str], keras: str,
                 jobs: int, progress: Progress | None = None,
                 timeout: float | None = None) -> Iterator[dict[Candidate, Result | FileError]]:
    """Migrate the files that may need it (``todo``), each program's files together, yielding the results of each
    group (a file whose scan failed: alone) as it finishes. ``timeout``: the time limit of each group (of each
    file's scan), in seconds; default: ``time_limit`` of its size."""
    progress = progress or Progress(shown=False)
    names = {str(candidate.path): candidate for candidate in todo}
    texts = {name: sources[candidate].text for name, candidate in names.items()}
    notebooks = {name for name, candidate in names.items() if sources[candidate].notebook}
    # The modules each notebook's %%writefile cells write, migrated beside it (not a file of the run already).
    written = {name: {path: cell for path, cell in written_modules(sources[names[name]].notebook).items()
                      if path not in names} for name in notebooks}
    with Workers(jobs) as workers:
        scans: dict[str, Scan] = {}
        progress.start("scanning", len(texts))
        for name, scanned in scan_all(texts, enabled, workers, timeout):
            progress.advance()
            if isinstance(scanned, Failure):
                yield {names[name]: error for name, error in failed((name,), scanned).items()}
            else:
                scans[name] = scanned
        # The modules of the run with nothing to migrate that a program imports go with it, to be read.
        plain = {str(candidate.path): source.text for candidate, source in sources.items()
                 if str(candidate.path) not in texts and not source.notebook}
        names.update((str(candidate.path), candidate) for candidate in sources if str(candidate.path) in plain)
        groups = [(*group, *plain_modules_imported(group, {name: scans[name].imports for name in group},
                                                   plain, lambda path: path in texts or path in plain
                                                   or os.path.isfile(path)))
                  if any(scans[name].wakes_a_program for name in group) else tuple(group)
                  for group in groups_to_migrate(texts, scans, enabled)]
        tasks = {group: ({name: texts.get(name, plain.get(name)) for name in group}, enabled, keras,
                         {name: scans[name].families if name in scans else () for name in group})
                 for group in groups}
        cells = NotebookCells(written, {name for group in tasks for name in group}, texts)
        for name, modules in written.items():
            modules_texts = {path: text for path, (_, text) in modules.items()}
            woken = {path: scan(text, enabled).families for path, text in modules_texts.items()}
            if name in scans and any(woken.values()):
                tasks[(name, *modules_texts)] = (modules_texts, enabled, keras, woken)
                cells.pending.add(name)
        limits = {group: timeout or time_limit(sum(len(text) for text in tasks[group][0].values())) for group in tasks}
        progress.start("migrating", sum(map(len, tasks)))
        for group, migrated in workers.run(migrate_group_of, tasks, limits):
            progress.advance(len(group))
            if group[0] in cells.pending and group[0] not in tasks[group][0]:  # a notebook's written modules
                done = cells.modules_done(group[0], failed(group[1:], migrated) if isinstance(migrated, Failure)
                                          else migrated)
            else:  # a failure is the program's files', not the modules it only read
                done = cells.program_done(failed(tuple(name for name in group if name not in plain), migrated)
                                          if isinstance(migrated, Failure) else migrated)
            yield {names[name]: result for name, result in done.items()}
    progress.finish()


class NotebookCells:
    """Holds a notebook's result until the modules its %%writefile cells write are migrated too (each a task)."""

    def __init__(self, written: dict[str, dict[str, tuple[int, str]]], migrated: set[str], texts: dict[str, str]):
        self.written, self.migrated, self.texts = written, migrated, texts
        self.pending: set[str] = set()  # notebooks whose modules are being migrated
        self.results: dict[str, Result | FileError] = {}
        self.modules: dict[str, dict] = {}

    def program_done(self, results: dict[str, Result | FileError]) -> dict:
        """The results to yield now: all but those of notebooks whose modules are not migrated yet."""
        done = {}
        for name, result in results.items():
            if name in self.pending:
                self.results[name] = result
                done.update(self._joined(name))
            else:
                done[name] = result
        return done

    def modules_done(self, name: str, results: dict[str, Result | FileError]) -> dict:
        self.modules[name] = {self.written[name][path][0]: result for path, result in results.items()}
        if name not in self.migrated:  # the notebook's own code needed nothing
            self.results[name] = Result(self.texts[name])
        return self._joined(name)

    def _joined(self, name: str) -> dict:
        if name not in self.results or name not in self.modules:
            return {}
        result = self.results.pop(name)
        written = self.modules.pop(name)
        return {name: result if isinstance(result, FileError) else replace(result, written=written)}


# Below this many characters, scanning in this process is quicker than starting workers.
SCAN_IN_PARALLEL_FROM = 500_000

# The default time limit of a group: MIN_TIME_LIMIT seconds, more for a big one. libcst takes about 30 ms a kB of
# dense code on a loaded machine (benchmarks/README.md: bench_linear), an Estimator program about twice that: the
# limit is many times what a group that ends needs, even on a busy machine, and ends a group that never does.
MIN_TIME_LIMIT = 60
CHARACTERS_A_SECOND = 5_000


def time_limit(characters: int) -> int:
    """The default time limit, in seconds, of a group of files of ``characters`` characters in all."""
    return max(MIN_TIME_LIMIT, math.ceil(characters / CHARACTERS_A_SECOND))


def scan_all(texts: dict[str, str], enabled: frozenset[str], workers: Workers,
             timeout: float | None = None) -> Iterator[tuple[str, Scan | Failure]]:
    """Each file's Scan (or the Failure of its worker), on the workers if the run is big enough to gain from it."""
    order = sorted(texts, key=lambda name: -len(texts[name]))
    if sum(map(len, texts.values())) <= SCAN_IN_PARALLEL_FROM:
        return ((name, scan(texts[name], enabled)) for name in order)
    limits = {name: timeout or time_limit(len(texts[name])) for name in order}
    return workers.run(scan, {name: (texts[name], enabled) for name in order}, limits)


def groups_to_migrate(texts: dict[str, str], scans: dict[str, Scan], enabled: frozenset[str]) -> list[list[str]]:
    """The scanned files in groups to migrate together (a program and its modules, a notebook's among them: its
    code cells import the modules beside it as a .py program does), those that wake a family, biggest first."""
    groups = program_groups({name: text for name, text in texts.items() if name in scans}, enabled, scans)
    groups = [group for group in groups if any(scans[name].families for name in group)]
    return sorted(groups, key=lambda group: -sum(len(texts[name]) for name in group))


def migrate_group_of(texts: dict[str, str], enabled: frozenset[str], keras: str,
                     woken: dict[str, tuple[str, ...]]) -> dict[str, Result | FileError]:
    return migrate_group(texts, enabled, keras, woken=woken)


@dataclass(frozen=True)
class Failure:
    """Why a task has no result: its worker died ("crashed"), was still on it at its time limit ("timeout"), or it
    raised ("memory", "recursion", "error")."""

    kind: str
    detail: str = ""

    def message(self, files: int) -> str:
        subject = "this file" if files == 1 else f"this file or another of the {files} files of its program"
        return FAILURES[self.kind].format(subject=subject, detail=self.detail) + "; file left unchanged"


FAILURES = {
    "crashed": "tf-migrate crashed on {subject} (worker died: {detail})",
    "timeout": "tf-migrate was still migrating {subject} at its time limit, {detail} (--timeout SECONDS sets it)",
    "memory": "tf-migrate ran out of memory on {subject}",
    "recursion": "tf-migrate ran out of stack on {subject}: its code nests too deeply",
    "error": "internal error on {subject}: {detail}",
}


def failed(names: tuple[str, ...], failure: Failure) -> dict[str, FileError]:
    return {name: FileError(name, failure.message(len(names))) for name in names}


class Workers:
    """Up to ``jobs`` worker processes, each running one task at a time, started as tasks need them. A worker that
    dies, or is still on its task at the task's time limit (and is killed), fails its task, and is replaced for the
    next one."""

    def __init__(self, jobs: int) -> None:
        self.jobs = jobs
        self.workers: list[_Worker] = []
        self.idle: list[_Worker] = []

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, *exc_info) -> None:
        for worker in self.workers:
            worker.stop()

    def run(self, function: Callable, tasks: dict[Hashable, tuple],
            limits: dict[Hashable, float] | None = None) -> Iterator[tuple[Hashable, object]]:
        """``function(*arguments)`` of each task (key: arguments), as tasks finish: (key, its result, or the
        Failure that left it without one). ``limits``: the seconds a task may take (from when its worker is sent
        it), by key; a task without one has no limit."""
        if not tasks:  # nothing to import multiprocessing for
            return
        from multiprocessing.connection import wait

        limits = limits or {}
        pending = list(tasks.items())[::-1]
        busy: dict[Connection, tuple[_Worker, Hashable, float]] = {}  # each with its deadline (monotonic)
        while pending or busy:
            while pending and (self.idle or len(self.workers) < self.jobs):
                key, arguments = pending.pop()
                worker = self.idle.pop() if self.idle else self._start()
                if worker.send((function, arguments)):
                    busy[worker.connection] = worker, key, time.monotonic() + limits.get(key, math.inf)
                else:
                    yield key, self._lost(worker)
            if not busy:  # the last task's worker was found dead: waiting on nothing would never end
                continue
            first = min(deadline for _, _, deadline in busy.values())
            for connection in wait(list(busy), None if first == math.inf else max(0.0, first - time.monotonic())):
                worker, key, _ = busy.pop(connection)
                yield key, self._result(worker)
            now = time.monotonic()
            for connection, (worker, key, deadline) in list(busy.items()):
                if deadline <= now:
                    del busy[connection]
                    yield key, self._timed_out(worker, limits[key])

    def _start(self) -> _Worker:
        worker = _Worker(_context())
        self.workers.append(worker)  # before it starts: a Ctrl-C from then on stops it
        worker.start()
        return worker

    def _result(self, worker: _Worker) -> object:
        try:
            result = worker.connection.recv()
        except (EOFError, OSError):
            return self._lost(worker)
        self.idle.append(worker)
        return result

    def _lost(self, worker: _Worker) -> Failure:
        self.workers.remove(worker)
        worker.stop()
        return Failure("crashed", _exit_status(worker.process.exitcode))

    def _timed_out(self, worker: _Worker, limit: float) -> Failure:
        self.workers.remove(worker)
        worker.stop()
        return Failure("timeout", f"{limit:g} s")


def _context() -> BaseContext:
    import multiprocessing

    # fork is cheapest to start (one small file must not wait for a new interpreter) and safe here: this process
    # runs no other thread. Elsewhere the platform's default.
    return multiprocessing.get_context("fork" if sys.platform.startswith("linux") else None)


class _Worker:
    def __init__(self, context: BaseContext) -> None:
        self.connection, self.child_end = context.Pipe()
        self.process = context.Process(target=_serve, args=(self.child_end, os.getpid()), daemon=True)

    def start(self) -> None:
        import gc

        # A forked copy of this process's garbage would be collected in the worker: the objects of a TensorFlow that
        # this process imported (tf-migrate called from a notebook, or a test) crash there. Collected here, and the
        # rest frozen, the worker never collects what it inherited.
        gc.collect()
        gc.freeze()
        try:
            with _interrupts_held():
                self.process.start()
        finally:
            gc.unfreeze()
        self.child_end.close()

    def send(self, task: tuple) -> bool:
        try:
            self.connection.send(task)
        except OSError:  # it died while idle
            return False
        return True

    def stop(self) -> None:
        if self.process.pid is not None:
            self.process.kill()
            self.process.join()
        self.connection.close()


STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}


@contextmanager
def _interrupts_held() -> Iterator[None]:
    """A Ctrl-C (or a SIGTERM) while a worker starts interrupts this process once the worker is started, and never
    reaches the new worker before it has its own handling of them (this process's would print a traceback)."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    held = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


def _exit_status(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            return f"signal {-code}, {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"exit status {code}"


def _serve(connection: Connection, parent: int) -> None:
    """A worker: run the tasks the main process sends, one at a time, until it closes the connection."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole process group: the main process ends us
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not the main process's handler, which raises KeyboardInterrupt
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
    _die_with(parent)
    _bound_memory()
    while True:
        try:
            function, arguments = connection.recv()
        except EOFError:
            return
        connection.send(_outcome(function, arguments))


def _outcome(function: Callable, arguments: tuple) -> object:
    try:
        return function(*arguments)
    except MemoryError:
        return Failure("memory")
    except RecursionError:
        return Failure("recursion")
    except Exception as error:  # a bug on one group must not stop the others
        return Failure("error", repr(error))


PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _die_with(parent: int) -> None:
    """End this worker when the main process ends, however it ends (SIGKILL included)."""
    if not _killed_with_parent():
        threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    if os.getppid() != parent:  # it ended before we asked
        os._exit(1)


def _killed_with_parent() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        return ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL) == 0
    except (OSError, AttributeError):
        return False


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(1)
    os._exit(1)


# The address space a worker may add to its own, at the least; half the machine's memory if that is more. The
# largest file of TensorFlow's source needs under 300 MB: a file needing more is pathological.
MEMORY_BUDGET = 4 << 30


def _bound_memory() -> None:
    """A file that exhausts memory fails its worker with MemoryError instead of exhausting the machine."""
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        memory = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        limit = _address_space() + max(MEMORY_BUDGET, memory // 2)
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        if soft == resource.RLIM_INFINITY or soft > limit:
            resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (ImportError, ValueError, OSError):  # no such limit here (Windows; macOS refuses it)
        pass


def _address_space() -> int:
    """The bytes of address space this process uses now (0 where /proc does not say)."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0
