#!/usr/bin/env python3
"""Steps per second of a migrated between-graph program with 1 and with 2 workers on localhost.

TF1's workers trained concurrently; the migrated loop schedules steps on the workers with a
ClusterCoordinator without waiting for each one (it fetches a loss only where the program
reads it), so a second worker should train more steps per second. The program is
examples/supervisor_flags/train.py with a step worth parallelising (256 features, 256 hidden
units, batches of 4096), migrated by tf-migrate into a temporary folder (or --program, a
migrated program with that command line). Each process computes on one thread
(TF_NUM_INTRAOP_THREADS=1), as a task on a machine of its own would not share its cores.

For each worker count the program runs as separate processes from its own command line: ps 0
and workers 1.. in the background, worker 0 (TF1's chief, which drives the cluster) timed in
the foreground, once for --short and once for --long steps, logging every 1000 steps;
(long - short) / (time(long) - time(short)) is the steady rate, start-up excluded. Prints both
rates and their ratio (2 workers / 1 worker) in one run.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Sequence

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "supervisor_flags" / "train.py"
HEAVIER = {"NUM_FEATURES = 4\n": "NUM_FEATURES = 256\n", "HIDDEN = 8\n": "HIDDEN = 256\n",
           "BATCH_SIZE = 16\n": "BATCH_SIZE = 4096\n", "size=(64, NUM_FEATURES)": "size=(16384, NUM_FEATURES)",
           "train_x.dot([1.0, -2.0, 0.5, 1.5])": "train_x.sum(axis=1)"}


class BenchmarkError(Exception):
    """A run failed: there is no figure to report."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


def migrated_example(folder: Path) -> Path:
    """The example with a heavier step, as tf-migrate writes it."""
    text = EXAMPLE.read_text()
    for before, after in HEAVIER.items():
        if before not in text:
            raise BenchmarkError(f"{EXAMPLE} no longer has {before.strip()!r}")
        text = text.replace(before, after)
    (folder / "tf1").mkdir()
    (folder / "tf1" / "train.py").write_text(text)
    beside = Path(sys.executable).parent / "tf-migrate"
    result = subprocess.run([str(beside) if beside.exists() else "tf-migrate", "--quiet", "--out", str(folder / "tf2"),
                             str(folder / "tf1")], capture_output=True, text=True)
    if not (folder / "tf2" / "train.py").exists():
        raise BenchmarkError(f"tf-migrate did not migrate the example: {result.stdout}{result.stderr}")
    return folder / "tf2" / "train.py"


def timed_cluster(program: Path, workers: int, steps: int) -> float:
    """Seconds the chief takes to train ``steps`` steps with ``workers`` workers (ps and the others serving)."""
    env = {key: value for key, value in os.environ.items() if key != "TF_CONFIG"}
    env["TF_NUM_INTRAOP_THREADS"] = "1"
    ports = [free_port() for _ in range(1 + workers)]
    hosts = [f"--ps_hosts=localhost:{ports[0]}", "--worker_hosts=" + ",".join(f"localhost:{p}" for p in ports[1:])]
    options = [f"--train_steps={steps}", "--log_every=1000"]
    serving = [subprocess.Popen([sys.executable, str(program), f"--job_name={job}", f"--task_index={index}", *hosts],
                                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
               for job, index in [("ps", 0), *(("worker", i) for i in range(1, workers))]]
    try:
        started = time.perf_counter()
        chief = subprocess.run([sys.executable, str(program), "--job_name=worker", "--task_index=0", *hosts, *options],
                               env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True)
        seconds = time.perf_counter() - started
    finally:
        for task in serving:
            task.kill()
            task.wait()
    if chief.returncode != 0:
        tail = "\n".join((chief.stdout + chief.stderr).splitlines()[-15:])
        raise BenchmarkError(f"{program} with {workers} worker(s) exited {chief.returncode}:\n{tail}")
    return seconds


def rate(program: Path, workers: int, short: int, long: int, runs: int) -> float:
    """Steps per second, start-up excluded: the best of ``runs``."""
    best_short = min(timed_cluster(program, workers, short) for _ in range(runs))
    best_long = min(timed_cluster(program, workers, long) for _ in range(runs))
    return (long - short) / max(best_long - best_short, 1e-9)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--program", type=Path, help="a migrated program (default: the example, made heavier)")
    parser.add_argument("--short", type=int, default=20, help="steps of the short run (default: %(default)s)")
    parser.add_argument("--long", type=int, default=620, help="steps of the long run (default: %(default)s)")
    parser.add_argument("--runs", type=int, default=1, help="best of this many runs of each (default: %(default)s)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        try:
            program = args.program or migrated_example(Path(folder))
            one = rate(program, 1, args.short, args.long, args.runs)
            two = rate(program, 2, args.short, args.long, args.runs)
        except BenchmarkError as error:
            print(f"bench_workers: {error}", file=sys.stderr)
            return 1
    print(f"program   {args.program or 'examples/supervisor_flags/train.py, heavier, migrated'}")
    print(f"1 worker  {one:8.1f} steps/s")
    print(f"2 workers {two:8.1f} steps/s")
    print(f"2 / 1     {two / one:8.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
