"""Running the user's program in a side process, as `python PROGRAM` would."""

from __future__ import annotations

import os
import runpy
import sys


def run_program(program: str) -> None:
    """Execute ``program`` as __main__ with its folder first on sys.path; a clean sys.exit is fine."""
    sys.argv = [program]
    sys.path.insert(0, os.path.dirname(os.path.abspath(program)))
    try:
        runpy.run_path(program, run_name="__main__")
    except SystemExit as exit_:
        if exit_.code not in (None, 0):
            raise
