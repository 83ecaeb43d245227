"""The files of a run migrated on all cores: every file scanned, then the groups that need it migrated.

Both steps share one pool of worker processes, started only when the run is big enough to gain from it.
Groups go out biggest first, one at a time, so that no big file is left to finish alone at the end.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor

from migrator.engine import Result, migrate_group, program_groups
from migrator.files import Candidate, Source
from migrator.findings import FileError
from migrator.scanning import Scan, scan


def migrate_all(todo: list[Candidate], sources: dict[Candidate, Source], enabled: frozenset[str], keras: str,
                jobs: int) -> dict[Candidate, Result | FileError]:
    """Migrate the files that may need it (``todo``), each program's files together."""
    names = {str(candidate.path): candidate for candidate in todo}
    texts = {name: sources[candidate].text for name, candidate in names.items()}
    with Workers(jobs) as workers:
        order = sorted(texts, key=lambda name: -len(texts[name]))
        parallel = sum(map(len, texts.values())) > SCAN_IN_PARALLEL_FROM
        scans = dict(zip(order, workers.map(scan_text, [texts[name] for name in order], [enabled] * len(order),
                                            parallel=parallel)))
        python = {name: text for name, text in texts.items() if not sources[names[name]].notebook}
        groups = program_groups(python, enabled, scans) + [[name] for name in texts if name not in python]
        groups = [group for group in groups if any(scans[name].families for name in group)]
        groups.sort(key=lambda group: -sum(len(texts[name]) for name in group))
        results: dict[Candidate, Result | FileError] = {}
        done = workers.map(migrate_group_or_errors, [{name: texts[name] for name in group} for group in groups],
                           [enabled] * len(groups), [keras] * len(groups),
                           [{name: scans[name].families for name in group} for group in groups],
                           parallel=len(groups) > 1)
        for group in with_progress(done, len(groups)):
            results.update((names[name], result) for name, result in group.items())
    return results


# Below this many characters, scanning in this process is quicker than starting workers.
SCAN_IN_PARALLEL_FROM = 500_000


class Workers:
    """``map`` on a pool of ``jobs`` processes, started the first time it is worth it; in this process otherwise."""

    def __init__(self, jobs: int) -> None:
        self.jobs, self.pool = jobs, None

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, *exc_info) -> None:
        if self.pool is not None:
            self.pool.shutdown(cancel_futures=True)

    def map(self, function, *arguments, parallel: bool) -> Iterator:
        if self.jobs <= 1 or not parallel:
            return map(function, *arguments)
        if self.pool is None:
            self.pool = ProcessPoolExecutor(self.jobs)
        return self.pool.map(function, *arguments)


def scan_text(text: str, enabled: frozenset[str]) -> Scan:
    return scan(text, enabled)


def migrate_group_or_errors(texts: dict[str, str], enabled: frozenset[str], keras: str,
                            woken: dict[str, tuple[str, ...]] | None = None) -> dict[str, Result | FileError]:
    try:
        return migrate_group(texts, enabled, keras, woken=woken)
    except Exception as error:  # a crash on one group must not stop the others
        return {name: FileError(name, f"internal error: {error!r}; file left unchanged") for name in texts}


def with_progress(results: Iterator, total: int) -> Iterator:
    """A progress bar on a terminal for runs long enough to want one; nothing otherwise."""
    from migrator.cli import on_terminal

    if total < 8 or not on_terminal():
        yield from results
        return
    from rich.progress import Progress

    with Progress(transient=True) as progress:
        task = progress.add_task("migrating", total=total)
        for result in results:
            progress.advance(task)
            yield result
