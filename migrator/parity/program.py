"""Running the user's program in a side process, as `python PROGRAM` would."""

from __future__ import annotations

import importlib.util
import linecache
import os
import sys
import traceback
import types


def run_program(code_path: str, as_path: str | None = None) -> None:
    """Execute the code in ``code_path`` as `python AS_PATH` runs AS_PATH (by default ``code_path`` itself).

    A fresh __main__ with ``__file__`` = AS_PATH, sys.argv[0] = AS_PATH and AS_PATH's folder first on
    sys.path: sibling imports and data files found through ``__file__`` work even when the code is a
    temporary copy kept elsewhere. A clean sys.exit is fine.
    """
    as_path = as_path or code_path
    filename = os.path.abspath(as_path)
    with open(code_path, "rb") as file:
        source = file.read()
    code = compile(source, filename, "exec", dont_inherit=True)  # without this module's `from __future__` flags
    # inspect.getsource (autograph converts functions from their source) and tracebacks then read the code
    # that runs, not the file at AS_PATH: an entry with mtime None is never re-read from disk. The default
    # excepthook reads the file on disk, the traceback module reads linecache.
    linecache.cache[filename] = (len(source), None, importlib.util.decode_source(source).splitlines(True), filename)
    sys.excepthook = traceback.print_exception
    main = types.ModuleType("__main__")
    main.__file__, main.__cached__ = filename, None
    sys.argv = [as_path]
    sys.path.insert(0, os.path.dirname(filename))
    previous_main, sys.modules["__main__"] = sys.modules["__main__"], main
    try:
        exec(code, main.__dict__)
    except SystemExit as exit_:
        if exit_.code not in (None, 0):
            raise
    finally:
        sys.modules["__main__"] = previous_main
