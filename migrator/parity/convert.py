"""`tf-migrate checkpoint TF1_CHECKPOINT --program NEW.py`: a TF1 checkpoint as the migrated program's own.

For teams that deploy the conversion apart from training: the migrated program itself (its
generated ``restore_tf1_checkpoint``) reads the TF1 checkpoint, in a child process that stops
before the first training step and saves what the program restored with its own
CheckpointManager, into the ``tf2`` folder of ``--to``, where the program looks for its
checkpoints when that is its model_dir (migrator/parity/convert_side.py). The TF1 files are only
read. The name map used (TF1 variable -> the program's variables) is printed, and with
``--json`` written.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from migrator.parity.command import EXIT_ERROR, EXIT_INTERRUPTED, positive, split_program_args
from migrator.parity.exchange import Exchange
from migrator.parity.interrupts import check, held, interruptible
from migrator.parity.runner import SideProcess, side_environment, work_folder_prefix

DESCRIPTION = """\
Convert a TF1 checkpoint for its migrated program, without training: the program's own
restore_tf1_checkpoint reads it (every variable, the optimizer's slots, the step) and the
program's CheckpointManager saves it, into the tf2 folder of --to, where the migrated
program, run with --to as its model_dir, resumes from it. The TF1 files are only read,
so the TF1 program can still resume from them. A checkpoint that does not fit the program
is refused, naming what does not fit, and nothing is written.

The program runs as the chief of a cluster of this process (as tf-migrate parity's new side)
with the ARGs after `--` (the ones it trains with: flags that shape the model, such as hidden
units), and stops at its first training step. Its variables have the shards its partitioner
makes on any cluster, and the checkpoint holds them so: it restores into the program on a
cluster or locally.

example:
  tf-migrate checkpoint gs://bucket/model_dir --program trainer/task.py -- --hidden-units 64,32
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tf-migrate checkpoint", description=DESCRIPTION,
                                     usage="%(prog)s TF1_CHECKPOINT --program NEW.py [--to DIR] [options] [-- ARG...]",
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checkpoint", metavar="TF1_CHECKPOINT",
                        help="a TF1 model_dir (its latest checkpoint) or a checkpoint's prefix (model.ckpt-300)")
    parser.add_argument("--program", type=Path, required=True, metavar="NEW.py",
                        help="the migrated program (its entry file, as you run it)")
    parser.add_argument("--to", metavar="DIR",
                        help="the model_dir the migrated program will run with: the checkpoint goes into its tf2 "
                             "folder (default: the TF1 model_dir itself)")
    parser.add_argument("--json", type=Path, metavar="PATH", help="write the name map and the checkpoint written as JSON")
    parser.add_argument("--timeout", type=positive(float), default=300.0, metavar="SECONDS",
                        help="time limit of the program (default: %(default)s)")
    parser.add_argument("--python", default=sys.executable, metavar="PATH",
                        help="interpreter to run the program with (default: this one)")
    return parser


def main(argv: Sequence[str]) -> int:
    own, program_args = split_program_args(argv)
    args = build_parser().parse_args(own)
    if not args.program.is_file():
        return error(f"{args.program}: no such file")
    if not os.access(args.python, os.X_OK):
        return error(f"--python {args.python}: not an executable")
    try:
        with interruptible():
            result = convert(args.program, args.checkpoint, args.to, list(program_args), args.python, args.timeout)
    except KeyboardInterrupt:
        return error("interrupted; the program stopped and nothing was written", EXIT_INTERRUPTED)
    except RuntimeError as problem:
        return error(str(problem))
    print(summary(result))
    if args.json:
        try:
            args.json.write_text(json.dumps(result, indent=1))
        except OSError as problem:
            return error(f"cannot write {args.json}: {problem.strerror or problem}")
    return 0


def convert(program: Path, checkpoint: str, to: str | None, argv: list[str], python: str, timeout: float) -> dict:
    with held():  # a Ctrl-C ends the run while the program runs, never half-way through starting or stopping it
        folder = Path(tempfile.mkdtemp(prefix=work_folder_prefix("checkpoint")))
        side = None
        try:
            exchange = Exchange(folder)
            (folder / "lib").mkdir()
            (folder / "tmp").mkdir()
            import migrator

            (folder / "lib" / "migrator").symlink_to(Path(migrator.__file__).parent, target_is_directory=True)
            exchange.write_json("job.json", {"argv": argv, "checkpoint": checkpoint, "to": to})
            side = SideProcess("convert", python, program, folder, side_environment(folder))
            while side.poll() is None:
                check()
                if side.elapsed() > timeout:
                    raise RuntimeError(f"the program did not finish within {timeout:g} s; nothing was converted")
                time.sleep(0.1)
            if side.poll() != 0 or not exchange.path("converted.json").exists():
                raise RuntimeError(failure(side.error_tail()))
            return exchange.read_json("converted.json")
        finally:
            if side is not None:
                side.stop()
            shutil.rmtree(folder, ignore_errors=True)


def failure(tail: str) -> str:
    """The program's error, in one line: the last line of its traceback."""
    lines = [line for line in tail.splitlines() if line.strip()]
    last = lines[-1] if lines else "the program failed"
    kind, _, message = last.partition(": ")
    return message if kind in ("ValueError", "RuntimeError") and message else f"the program failed: {last}"


def summary(result: dict) -> str:
    names = [f"{entry['tf1']} {entry['shape']}" for entry in result["map"]]
    width = max(map(len, names), default=0)
    lines = [f"{result['tf1_checkpoint']} -> {result['checkpoint']} (step {result['step']}), "
             f"{len(result['map'])} TF1 variables restored:"]
    lines += [f"  {name:<{width}}  -> {', '.join(entry['variables'])}" for name, entry in zip(names, result["map"])]
    return "\n".join(lines)


def error(message: str, status: int = EXIT_ERROR) -> int:
    print(f"tf-migrate checkpoint: error: {message}", file=sys.stderr)
    return status
