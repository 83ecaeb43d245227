#!/usr/bin/env python3
"""The least any libcst-based migration of a tree costs: parse every `.py` file and resolve its scopes.

tf-migrate needs both for every file a rewrite family wakes on (which names are TensorFlow's
is a question of scopes); tf_upgrade_v2 uses Python's own `ast` and needs neither. Prints
the CPU seconds of each step, in one process (`bench_migrate.py --floor` runs it as a row).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import libcst as cst
from libcst.metadata import MetadataWrapper, ScopeProvider


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("tree", type=Path)
    args = parser.parse_args()
    parse = scopes = 0.0
    files = failed = 0
    for path in sorted(args.tree.rglob("*.py")):
        files += 1
        start = time.process_time()
        try:
            module = cst.parse_module(path.read_bytes())
        except Exception:  # noqa: BLE001 - a file libcst cannot parse costs nothing more
            failed += 1
            continue
        parsed = time.process_time()
        MetadataWrapper(module, unsafe_skip_copy=True).resolve(ScopeProvider)
        parse, scopes = parse + parsed - start, scopes + time.process_time() - parsed
    print(f"{files} files ({failed} not parsed): libcst parse {parse:.2f} s, scopes {scopes:.2f} s of CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())
