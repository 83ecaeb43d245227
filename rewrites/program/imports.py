"""Which module of the run an import means: as Python finds it when the program runs as a script or with -m.

Light on purpose (no libcst): the run groups the files of one program with it before any file is
parsed by the rewrites, and rewrites/program/modules.py resolves imports with the same rules.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator
from functools import cache

# A module written against TensorFlow's public API as `tf` (a program's helper module, not TensorFlow's own).
TF_AS_TF = re.compile(r"^[ \t]*import tensorflow(?:\.compat\.v1)? as tf\b", re.MULTILINE)


def search_path(folder: str, is_file: Callable[[str], bool]) -> Iterator[str]:
    """The importer's folder, then the folders above it while they are packages, and one more."""
    yield folder
    while is_file(os.path.join(folder, "__init__.py")):
        parent = os.path.dirname(folder)
        if parent == folder:
            return
        folder = parent
        yield folder


def find_module(importer: str, dotted: str, level: int, is_file: Callable[[str], bool]) -> str | None:
    """The file of module ``dotted`` imported from ``importer`` (``level`` leading dots), or None."""
    folder = os.path.dirname(importer)
    if level:
        for _ in range(level - 1):
            folder = os.path.dirname(folder)
        bases = [folder]
    else:
        bases = list(search_path(folder, is_file))
    parts = dotted.split(".") if dotted else []
    if not parts:
        return None
    for base in bases:
        for candidate in (os.path.join(base, *parts) + ".py", os.path.join(base, *parts, "__init__.py")):
            if is_file(candidate):
                return os.path.normpath(candidate)
    return None


def imported_modules(importer: str, imports: Iterable[tuple[str, int]], is_file: Callable[[str], bool]) -> set[str]:
    """The files of the modules ``imports`` names ((dotted, leading dots) of `import a.b`, `from a import b`,
    `from . import b`, see migrator/scanning.py) that exist."""
    found = {find_module(importer, dotted, level, is_file) for dotted, level in imports}
    found.discard(None)
    return found


def program_groups(texts: dict[str, str], wakes: Callable[[str], bool],
                   imports: dict[str, Iterable[tuple[str, int]]]) -> list[list[str]]:
    """The files of the run in groups that may hold one program: a file that wakes a program family, with the
    modules of the run it imports and that import it, where both are related to a program (have ``imports``), and
    the modules such a file imports that bind TensorFlow as `tf` (a model_fn kept as written runs their code: they
    are respelled; TensorFlow's own modules, which import it otherwise, stay out);
    every other file on its own. Groups keep the order of ``texts``."""
    paths = {os.path.normpath(path): path for path in texts}
    parent = {path: path for path in texts}

    def root(path: str) -> str:
        while parent[path] != path:
            parent[path] = parent[parent[path]]
            path = parent[path]
        return path

    @cache
    def is_file(path: str) -> bool:
        return os.path.normpath(path) in paths or os.path.isfile(path)

    for path, named in imports.items():
        for imported in imported_modules(path, named, is_file):
            other = paths.get(imported)
            if other is None:
                continue
            if other in imports and (wakes(path) or wakes(other) or _chained(texts[path], texts[other])) or \
                    wakes(path) and TF_AS_TF.search(texts[other]):
                parent[root(path)] = root(other)
    groups: dict[str, list[str]] = {}
    for path in texts:
        groups.setdefault(root(path), []).append(path)
    return list(groups.values())


def _chained(first: str, second: str) -> bool:
    return "tensorflow" in first and "tensorflow" in second


def plain_modules_imported(group: Iterable[str], imports: dict[str, Iterable[tuple[str, int]]],
                           plain: Iterable[str], is_file: Callable[[str], bool]) -> list[str]:
    """The modules of the run among ``plain`` (files with nothing to migrate: constants, as cloudml-template's
    metadata.py) that the files of ``group`` import: the group reads their values (`metadata.TASK_TYPE`)."""
    plain = {os.path.normpath(path): path for path in plain}
    found: dict[str, None] = {}
    for path in group:
        for imported in sorted(imported_modules(path, imports.get(path) or (), is_file)):
            if imported in plain:
                found[plain[imported]] = None
    return list(found)
