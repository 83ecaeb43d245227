#!/usr/bin/env python3
"""Time each generated example run by hand against its TF1 program: do migrated programs start fast?

In one run, for every example tf-migrate generated (examples/*/train_tf2.py, the trainer package's tf2/ as
`python -m trainer.task`, the notebook's code cells as a script), `python TF1` then `python TF2`, as a person
would run them: no arguments (the between-graph examples start their own in-process cluster), TF_CONFIG removed
(so they train locally), each in an empty scratch folder that is also its TMPDIR. Prints both wall times, best of
--runs, and TF2 / TF1 per example; the target is at most 1.3x.

--python runs the TF2 side under another interpreter (e.g. a TensorFlow 2.21 + tf_keras environment, to check the
generated code trains there too; the TF1 side stays on this one, which needs TensorFlow 2.15 and
tensorflow-estimator).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
TARGET_RATIO = 1.3
TIMEOUT = 300  # seconds per program


class BenchmarkError(Exception):
    """A measured program failed: there is no figure to report."""


@dataclass(frozen=True)
class Program:
    arguments: tuple[str, ...]      # after the interpreter
    path: Path | None = None        # PYTHONPATH, for `-m`
    script: str | None = None       # the code to write to the scratch folder as the program (a notebook's)


@dataclass(frozen=True)
class Example:
    name: str
    tf1: Program
    tf2: Program


def notebook_script(notebook: Path) -> str:
    """The notebook's code cells in order, IPython lines as `pass`, as tests/test_examples.py runs it."""
    sys.path.insert(0, str(ROOT))
    from migrator.files import read_source
    from migrator.notebooks import runnable

    source = read_source(notebook)
    return runnable(source.notebook, source.text)


def examples() -> list[Example]:
    found = [Example(folder.name, Program((str(folder / "train.py"),)), Program((str(folder / "train_tf2.py"),)))
             for folder in sorted(EXAMPLES.iterdir()) if (folder / "train_tf2.py").is_file()]
    package = EXAMPLES / "trainer_package"
    found.append(Example("trainer_package", Program(("-m", "trainer.task"), path=package / "tf1"),
                         Program(("-m", "trainer.task"), path=package / "tf2")))
    notebook = EXAMPLES / "notebook"
    found.append(Example("notebook", Program(("train.py",), script=notebook_script(notebook / "train.ipynb")),
                         Program(("train.py",), script=notebook_script(notebook / "train_tf2.ipynb"))))
    return sorted(found, key=lambda example: example.name)


def timed(python: str, program: Program) -> float:
    """Wall seconds of one run of ``program`` under ``python``, in a scratch folder that is also its TMPDIR."""
    with tempfile.TemporaryDirectory() as scratch:
        env = {key: value for key, value in os.environ.items() if key != "TF_CONFIG"}
        env["TMPDIR"] = scratch
        if program.path is not None:
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(program.path), env.get("PYTHONPATH")]))
        if program.script is not None:
            Path(scratch, program.arguments[0]).write_text(program.script)
        command = [python, *program.arguments]
        started = time.perf_counter()
        try:
            result = subprocess.run(command, cwd=scratch, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                                    text=True, timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            raise BenchmarkError(f"{' '.join(command)} did not end in {TIMEOUT} s") from None
        seconds = time.perf_counter() - started
    if result.returncode != 0:
        tail = "\n".join((result.stdout + result.stderr).splitlines()[-15:])
        raise BenchmarkError(f"{' '.join(command)} exited {result.returncode}:\n{tail}")
    return seconds


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=1, help="best of this many runs of each (default: %(default)s)")
    parser.add_argument("--python", default=sys.executable, metavar="PATH",
                        help="interpreter of the TF2 side (default: this one, also the TF1 side's)")
    parser.add_argument("--only", action="append", default=[], metavar="NAME",
                        help="time this example only (repeatable; default: every generated example)")
    args = parser.parse_args(argv)

    chosen = [example for example in examples() if not args.only or example.name in args.only]
    unknown = set(args.only) - {example.name for example in chosen}
    if unknown:
        parser.error(f"no generated example named {', '.join(sorted(unknown))}")
    print(f"{'example':<20} {'TF1 s':>7} {'TF2 s':>7} {'TF2/TF1':>8}", flush=True)
    ratios, failures = [], 0
    for example in chosen:
        try:
            tf1 = tf2 = float("inf")
            for _ in range(args.runs):  # the sides alternate, so a slow moment of the machine hits both
                tf1 = min(tf1, timed(sys.executable, example.tf1))
                tf2 = min(tf2, timed(args.python, example.tf2))
        except BenchmarkError as error:
            failures += 1
            print(f"{example.name:<20} failed: {error}", flush=True)
            continue
        ratios.append(tf2 / tf1)
        mark = "" if tf2 / tf1 <= TARGET_RATIO else "  OVER"
        print(f"{example.name:<20} {tf1:>7.1f} {tf2:>7.1f} {tf2 / tf1:>8.2f}{mark}", flush=True)
    if ratios:
        worst = max(ratios)
        verdict = "within" if worst <= TARGET_RATIO else "OVER"
        print(f"largest ratio TF2 / TF1: {worst:.2f} ({verdict} the {TARGET_RATIO}x target; best of {args.runs}; "
              f"TF2 side: {args.python})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
