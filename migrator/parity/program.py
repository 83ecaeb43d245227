"""Running the user's program in a side process, as `python PROGRAM ARG...` (`python -m pkg.module ARG...`) would."""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import linecache
import os
import sys
import traceback
import types
from collections.abc import Mapping, Sequence


def run_program(code_path: str, as_path: str | None = None, argv: Sequence[str] = (),
                stand_ins: Mapping[str, str] | None = None) -> None:
    """Execute the code in ``code_path`` as `python AS_PATH ARGV...` runs AS_PATH (by default ``code_path`` itself).

    A fresh __main__ with ``__file__`` = AS_PATH and sys.argv = [AS_PATH, *ARGV]. A plain script has its
    own folder first on sys.path. A module of a package (its folder has an ``__init__.py``) runs as
    `python -m pkg.sub.module` from the folder above the topmost package: that folder first on sys.path,
    the parent packages imported, ``__package__`` set, so ``from . import model`` and ``from pkg import
    model`` both work (and its own folder last on sys.path, for ``import model``). Sibling imports and
    data files found through ``__file__`` work even when the code is a temporary copy kept elsewhere.

    ``stand_ins`` maps real paths of the program's other files to files holding the code to run in their
    place (``tf-migrate --verify``: the migrated texts): importing such a module runs that code with
    ``__file__`` the real path. sys.exit with status 0 or None (what `tf.compat.v1.app.run(main)` and
    `absl.app.run(main)` do when main returns) is a clean end; any other SystemExit is raised.
    """
    as_path = as_path or code_path
    filename = os.path.abspath(as_path)
    with open(code_path, "rb") as file:
        source = file.read()
    code = compile(source, filename, "exec", dont_inherit=True)  # without this module's `from __future__` flags
    remember_source(filename, source)
    sys.excepthook = traceback.print_exception
    if stand_ins:
        sys.meta_path.insert(0, StandInFinder(stand_ins))
    root, package = import_root(filename)
    main = types.ModuleType("__main__")
    main.__file__, main.__cached__ = filename, None
    if package:
        name = f"{package}.{os.path.splitext(os.path.basename(filename))[0]}"
        main.__package__ = package
        main.__spec__ = importlib.util.spec_from_file_location(name, filename)
    sys.argv = [as_path, *argv]
    # The side runs as `python -m migrator.parity.SIDE`, which put the current folder first on sys.path;
    # `python PROGRAM` does not: its first entry is the program's folder (the package root's parent).
    if sys.path and not getattr(sys.flags, "safe_path", False):
        sys.path.pop(0)
    sys.path.insert(0, root)
    if package:
        # Last, where it shadows nothing: the `import model` of a package module written to run as
        # `python pkg/task.py` still finds its sibling (`python -m` alone would not).
        sys.path.append(os.path.dirname(filename))
    previous_main, sys.modules["__main__"] = sys.modules["__main__"], main
    try:
        if package:
            importlib.import_module(package)  # as `python -m`: the parent packages' __init__ run first
        exec(code, main.__dict__)
    except SystemExit as exit_:
        if exit_.code not in (None, 0):
            raise
    finally:
        sys.modules["__main__"] = previous_main


def import_root(filename: str) -> tuple[str, str | None]:
    """The folder first on sys.path when FILENAME runs, and its package (None for a plain script).

    A file whose folder has an ``__init__.py`` is a module of the package made of that folder and every
    folder above it with an ``__init__.py``; it runs from the folder above the topmost one.
    """
    folder = os.path.dirname(filename)
    parts: list[str] = []
    while os.path.isfile(os.path.join(folder, "__init__.py")):
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        parts.insert(0, os.path.basename(folder))
        folder = parent
    return folder, ".".join(parts) or None


_REMEMBERED: dict[str, tuple] = {}
_UPDATECACHE = linecache.updatecache


def remember_source(filename: str, source: bytes) -> None:
    """Make FILENAME's lines those of SOURCE for linecache, for good.

    inspect.getsource (autograph converts functions from their source) and tracebacks then read the
    code that runs, not the file on disk: an entry with mtime None is never re-read from disk by
    checkcache, and updatecache, which autograph calls for every function it converts and which
    would read the disk, gives this entry back. The default excepthook reads the file on disk, the
    traceback module reads linecache.
    """
    entry = (len(source), None, importlib.util.decode_source(source).splitlines(True), filename)
    _REMEMBERED[filename] = linecache.cache[filename] = entry
    linecache.updatecache = _updatecache


def _updatecache(filename: str, module_globals=None) -> list[str]:
    if filename in _REMEMBERED:
        linecache.cache[filename] = _REMEMBERED[filename]
        return _REMEMBERED[filename][2]
    return _UPDATECACHE(filename, module_globals)


class StandInFinder(importlib.abc.MetaPathFinder):
    """Imports of the files in ``stand_ins`` (real path -> code path) run the code at the code path."""

    def __init__(self, stand_ins: Mapping[str, str]) -> None:
        self.stand_ins = {os.path.realpath(real): code for real, code in stand_ins.items()}

    def find_spec(self, fullname, path=None, target=None):
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is None or not spec.has_location or not spec.origin:
            return None
        code_path = self.stand_ins.get(os.path.realpath(spec.origin))
        if code_path is None:
            return None  # the other finders import it as usual
        spec.loader = StandInLoader(fullname, spec.origin, code_path)
        return spec


class StandInLoader(importlib.machinery.SourceFileLoader):
    """A module at its real path (``__file__``, package ``__path__``) whose code is read from another file.

    Its bytecode is neither read from nor written to the real file's __pycache__.
    """

    def __init__(self, fullname: str, path: str, code_path: str) -> None:
        super().__init__(fullname, path)
        self.code_path = code_path

    def get_data(self, path):
        if path == self.path:
            with open(self.code_path, "rb") as file:
                return file.read()
        return super().get_data(path)

    def get_code(self, fullname):
        source = self.get_data(self.path)
        remember_source(self.path, source)
        return compile(source, self.path, "exec", dont_inherit=True)


KERAS_PACKAGES = ("tf_keras", "keras")


def patch_when_imported(packages: tuple[str, ...], patch) -> None:
    """``patch(package)`` each of ``packages`` once it is imported (now, if it is), and only if it is: importing a
    Keras 2 package the program does not use would change what it saves (the two `keras` and `tf_keras` register
    the same SavedModel names for their classes, and the last one imported wins: a SavedModel with the other's
    optimizer then does not load)."""
    waiting = set()
    for package in packages:
        if package in sys.modules:
            patch(sys.modules[package])
        else:
            waiting.add(package)
    if waiting:
        sys.meta_path.insert(0, AfterImport(waiting, patch))


class AfterImport(importlib.abc.MetaPathFinder):
    """Runs ``then(module)`` right after each of the top-level modules ``names`` is imported, however it is."""

    def __init__(self, names: set[str], then) -> None:
        self.names, self.then = names, then

    def find_spec(self, fullname, path, target=None):
        if fullname not in self.names:
            return None
        self.names.discard(fullname)  # the real finders find it; this one steps aside from then on
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        loader, then = spec.loader, self.then

        class Patching(importlib.abc.Loader):
            def create_module(self, spec):
                return loader.create_module(spec)

            def exec_module(self, module):
                loader.exec_module(module)
                then(module)

        spec.loader = Patching()
        return spec
