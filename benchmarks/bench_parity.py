#!/usr/bin/env python3
"""Time `tf-migrate parity` against running the old and the new program once each by hand.

In one run, for an example pair (default: the seed regression, examples/regression):
  parity   `tf-migrate parity OLD NEW --steps N`: both sides concurrently, in child processes
  by hand  `python OLD`, then `python NEW` (TF_CONFIG removed, so both train locally)
and prints both wall times and parity / by hand. The target is at most 1.3x.

By hand, each program trains as many steps as it is written to; parity trains --steps
(default 20, the seed's own max_steps) on each side.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Sequence

ROOT = Path(__file__).resolve().parents[1]
TARGET_RATIO = 1.3


class BenchmarkError(Exception):
    """A measured command failed: there is no figure to report."""


def timed(command: Sequence[str], allowed: tuple[int, ...] = (0,)) -> float:
    env = {key: value for key, value in os.environ.items() if key != "TF_CONFIG"}
    started = time.perf_counter()
    result = subprocess.run(command, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if result.returncode not in allowed:
        tail = "\n".join((result.stdout + result.stderr).splitlines()[-15:])
        raise BenchmarkError(f"{' '.join(command)} exited {result.returncode}:\n{tail}")
    return seconds


def tf_migrate() -> str:
    beside = Path(sys.executable).parent / "tf-migrate"
    return str(beside) if beside.exists() else "tf-migrate"


def best(runs: int, command: Sequence[str], allowed: tuple[int, ...] = (0,)) -> float:
    return min(timed(command, allowed) for _ in range(runs))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--old", type=Path, default=ROOT / "examples" / "regression" / "train.py")
    parser.add_argument("--new", type=Path, default=ROOT / "examples" / "regression" / "train_tf2.py")
    parser.add_argument("--steps", type=int, default=20, help="parity training steps (default: %(default)s)")
    parser.add_argument("--runs", type=int, default=1, help="best of this many runs of each (default: %(default)s)")
    args = parser.parse_args(argv)

    try:
        parity = best(args.runs, [tf_migrate(), "parity", str(args.old), str(args.new), "--steps", str(args.steps)],
                      allowed=(0, 1))  # a mismatch takes as long to find as parity
        old = best(args.runs, [sys.executable, str(args.old)])
        new = best(args.runs, [sys.executable, str(args.new)])
    except BenchmarkError as error:
        print(f"bench_parity: {error}", file=sys.stderr)
        return 1
    by_hand = old + new
    ratio = parity / by_hand
    print(f"{'measurement':<40} {'wall s':>8}")
    print(f"{'tf-migrate parity (' + str(args.steps) + ' steps)':<40} {parity:>8.1f}")
    print(f"{'python ' + args.old.name + ' (old, by hand)':<40} {old:>8.1f}")
    print(f"{'python ' + args.new.name + ' (new, by hand)':<40} {new:>8.1f}")
    print(f"{'old + new by hand':<40} {by_hand:>8.1f}")
    verdict = "within" if ratio <= TARGET_RATIO else "OVER"
    print(f"ratio parity / by hand: {ratio:.2f} ({verdict} the {TARGET_RATIO}x target; best of {args.runs})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
