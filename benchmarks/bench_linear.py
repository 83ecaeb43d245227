#!/usr/bin/env python3
"""Work and memory of one big TF1 file against its size: they must grow linearly.

Writes files of a `tf.train.Server` line and N short assignments (the shape that once took
575 s and 3.9 GB at 5 MB), runs `tf-migrate --check -j 1` on each, and prints CPU seconds
and peak memory (the largest process), and both per 10,000 statements: flat columns are
linear growth.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from bench_migrate import TF_MIGRATE, find_executable, run_timed


def program(statements: int) -> str:
    lines = ["import tensorflow as tf", "server = tf.train.Server(cluster)"]
    lines += [f"value_{i} = compute(alpha_{i % 97}, beta=[{i}, {i + 1}])" for i in range(statements)]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[5000, 10000, 20000, 40000], metavar="N",
                        help="statements per file (default: %(default)s)")
    parser.add_argument("--tf-migrate", type=Path, help="the tf-migrate executable (default: the one on PATH)")
    args = parser.parse_args()
    tf_migrate = find_executable(TF_MIGRATE, args.tf_migrate)
    if tf_migrate is None:
        print(f"{TF_MIGRATE} not found: pip install . (or pass --tf-migrate PATH)")
        return 1
    print(f"{'statements':>10} {'MB':>6} {'cpu s':>7} {'peak MB':>8} {'s / 10k':>8} {'MB / 10k':>9}")
    with tempfile.TemporaryDirectory(prefix="bench-linear-") as temp:
        for statements in args.sizes:
            path = Path(temp) / f"big_{statements}.py"
            path.write_text(program(statements))
            timing = run_timed([tf_migrate, "--check", "-j", "1", path], Path(temp))
            if timing.result.returncode != 1:  # 1: it would change the file
                print(f"tf-migrate exited {timing.result.returncode}:\n{timing.result.stderr[-2000:]}")
                return 1
            per = 10000 / statements
            print(f"{statements:>10} {path.stat().st_size / 2**20:>6.2f} {timing.cpu:>7.2f} {timing.peak_mb:>8.0f} "
                  f"{timing.cpu * per:>8.2f} {timing.peak_mb * per:>9.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
