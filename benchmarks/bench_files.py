#!/usr/bin/env python3
"""The slowest files of a tree for tf-migrate, each migrated on its own, in this process.

Each `.py` file is scanned and migrated alone (no grouping with the modules it imports) as a
worker would; prints the slowest files by CPU time (what a file costs, whatever else runs on the
machine) with their wall times, the totals and this process's peak memory. The default tree is
the installed tensorflow package's source: the budget is 2 s a file.
"""

from __future__ import annotations

import argparse
import importlib.util
import resource
import sys
import time
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPOSITORY))

from migrator.engine import migrate_group  # noqa: E402
from migrator.scanning import may_need, scan  # noqa: E402
from rewrites import RULES  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("tree", nargs="?", type=Path, help="a folder (default: the installed tensorflow package)")
    parser.add_argument("--top", type=int, default=10, help="how many of the slowest to print (default: %(default)s)")
    args = parser.parse_args()
    tree = args.tree
    if tree is None:
        spec = importlib.util.find_spec("tensorflow")
        if spec is None or not spec.submodule_search_locations:
            parser.error("tensorflow is not installed: give a folder")
        tree = Path(next(iter(spec.submodule_search_locations)))
    enabled = frozenset(RULES)
    times = []
    for path in sorted(tree.rglob("*.py")):
        text = path.read_text(encoding="utf-8", errors="replace")
        start, cpu = time.perf_counter(), time.process_time()
        if may_need(text, enabled):
            woken = scan(text, enabled).families
            if woken:
                migrate_group({str(path): text}, enabled, woken={str(path): woken})
        times.append((time.process_time() - cpu, time.perf_counter() - start, len(text), path))
    times.sort(reverse=True)
    print(f"{len(times)} files of {tree}: {sum(t[0] for t in times):.1f} s of CPU in all "
          f"({sum(t[1] for t in times):.1f} s wall), peak memory "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    for cpu, wall, size, path in times[:args.top]:
        print(f"  {cpu:6.2f} s CPU  {wall:6.2f} s wall  {size / 1024:7.0f} KB  {path.relative_to(tree)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
