"""`tf-migrate parity OLD.py NEW.py`: does the migrated program train like the old one?"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from migrator.console import color_wanted
from migrator.parity.interrupts import interruptible
from migrator.parity.runner import Options

EXIT_PARITY, EXIT_MISMATCH, EXIT_ERROR, EXIT_INTERRUPTED = 0, 1, 2, 130

DESCRIPTION = """\
Train a TF1 program (OLD) and its TF2 migration (NEW) from the same initial weights,
and compare them step by step.

Each side runs as it is on disk, in a child process of its own, with a time limit.
An Estimator program (OLD) trains locally (TF_CONFIG removed) in a temporary
model_dir; its initial weights (before step 1) are loaded into the new side's Keras
model, matched by creation order and shape. The new side trains under its own
ParameterServerStrategy against an in-process cluster of one worker and --ps
parameter servers, listening on 127.0.0.1 only (or locally with --cluster none).
Both see byte-identical batches: the first --steps batches of the old program's
own input, or synthetic ones.

A between-graph program (OLD: a loop of runs in a MonitoredTrainingSession or a
Supervisor's session) and its ClusterCoordinator migration (NEW; or, for a
SyncReplicasOptimizer, its MultiWorkerMirroredStrategy migration, one worker) each run
on their own cluster and data; the old losses are those of its training runs (the loss
its optimizer minimizes, fetched with each), the new ones those of its steps, and the
old initial weights are loaded before the first step. The old loop stops
after --steps training runs even when its own limit is higher; a Supervisor's
logdir is a temporary folder.

Each program runs as `python PROGRAM ARG...` would run it: the ARG... after `--` are
both programs' sys.argv[1:] (argparse, tf.compat.v1.flags / tf.app.flags and
absl.flags read them, e.g. under tf.compat.v1.app.run(main) or absl.app.run(main),
whose main may return 0 or None; any other exit status is a failure of that side).
A program in a package (its folder has an __init__.py) runs as `python -m
pkg.module` would from the folder above the topmost package, so `from . import
model` and `from pkg import model` import that program's own modules.

When the programs export SavedModels (an EvalSpec's exporters, export_saved_model),
the latest export of each folder is loaded in a fresh process of its side's
interpreter, and the exports are compared as a server sees them: signature names
and methods, input and output keys with their dtypes and shapes, and the answers of
each signature to the same requests (the first recorded eval batch; serialized
tf.Examples for a parsing serving function) at the tolerances above.

example:
  tf-migrate parity old/trainer/task.py new/trainer/task.py --steps 5 -- --train_steps 5 --batch_size 4
"""

EPILOG = """\
exit status:
  0  parity: every step, the eval loss, every final weight and every export's answers
     within tolerance, the exports' signatures the same
  1  mismatch: the report names the first diverging step, the variables that differ
     and what differs in the exports
  2  a side failed to run (its error output is shown), or a usage error
  130  interrupted (Ctrl-C, SIGTERM): both sides stopped, their files removed
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tf-migrate parity", description=DESCRIPTION, epilog=EPILOG,
                                     usage="%(prog)s OLD.py NEW.py [options] [-- ARG...]",
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    defaults = Options()
    parser.add_argument("old", type=Path, metavar="OLD.py", help="the TF1 program: an Estimator program, or a between-graph one")
    parser.add_argument("new", type=Path, metavar="NEW.py", help="its TF2 migration")
    parser.add_argument("--steps", type=positive(int), default=defaults.steps, help="training steps to compare (default: %(default)s)")
    parser.add_argument("--ps", type=positive(int), default=defaults.ps,
                        help="parameter servers of the new side's in-process cluster (default: %(default)s, so partitioned variables really shard)")
    parser.add_argument("--cluster", choices=("in-process", "none"), default=defaults.cluster,
                        help="run the new side against an in-process cluster, or locally without TF_CONFIG (default: %(default)s)")
    parser.add_argument("--data", choices=("program", "synthetic"), default=defaults.data,
                        help="the old program's own input batches, or deterministic toy batches shaped like them (default: %(default)s)")
    parser.add_argument("--rtol", type=non_negative(float), default=defaults.rtol, help="relative tolerance (default: %(default)s)")
    parser.add_argument("--atol", type=non_negative(float), default=defaults.atol, help="absolute tolerance (default: %(default)s)")
    parser.add_argument("--timeout", type=positive(float), default=defaults.timeout, metavar="SECONDS",
                        help="time limit of each side (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=defaults.seed, help="tf_random_seed of the old side (default: %(default)s)")
    parser.add_argument("--resume", type=positive(int), metavar="N",
                        help="continuation parity: the old program first trains N steps and checkpoints; both sides "
                             "then resume from that TF1 checkpoint (the new program restoring it itself) for --steps "
                             "steps, and the optimizers' slots and the step are compared too")
    parser.add_argument("--export-check", action=argparse.BooleanOptionalAction, default=defaults.export_check,
                        help="load the SavedModels both programs export in fresh processes and compare their "
                             "signatures and answers (default: on)")
    parser.add_argument("--json", type=Path, metavar="PATH", help="write the full result as JSON")
    parser.add_argument("--html", type=Path, metavar="PATH", help="write a self-contained HTML report")
    parser.add_argument("--old-python", default=defaults.old_python, metavar="PATH",
                        help="interpreter of the old side (default: this one)")
    parser.add_argument("--new-python", default=defaults.new_python, metavar="PATH",
                        help="interpreter of the new side, e.g. a TensorFlow 2.21 + tf_keras environment (default: this one)")
    return parser


def positive(kind):
    def parse(text: str):
        value = kind(text)
        if value <= 0:
            raise argparse.ArgumentTypeError(f"must be greater than 0, not {text}")
        return value

    return parse


def non_negative(kind):
    def parse(text: str):
        value = kind(text)
        if value < 0:
            raise argparse.ArgumentTypeError(f"must not be negative, not {text}")
        return value

    return parse


def split_program_args(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """The harness's own arguments, and the programs' (everything after the first `--`)."""
    argv = list(argv)
    if "--" not in argv:
        return argv, []
    split = argv.index("--")
    return argv[:split], argv[split + 1:]


def main(argv: Sequence[str]) -> int:
    with interruptible():  # from here on, even when this process was started with SIGINT ignored
        try:
            return run(argv)
        except KeyboardInterrupt:
            print("tf-migrate parity: interrupted; both sides stopped and their files removed", file=sys.stderr)
            return EXIT_INTERRUPTED


def run(argv: Sequence[str]) -> int:
    parser = build_parser()
    own, program_args = split_program_args(argv)
    args = parser.parse_args(own)
    problem = usage_problem(args)
    if problem:
        print(f"tf-migrate parity: error: {problem}", file=sys.stderr)
        return EXIT_ERROR
    from migrator.parity.report import terminal_summary, write_html, write_json
    from migrator.parity.runner import run_parity

    options = Options(steps=args.steps, ps=args.ps, cluster=args.cluster, data=args.data, rtol=args.rtol,
                      atol=args.atol, timeout=args.timeout, seed=args.seed,
                      old_python=args.old_python, new_python=args.new_python, program_args=tuple(program_args),
                      resume=args.resume, export_check=args.export_check)
    report = run_parity(args.old, args.new, options)
    for path, write in ((args.json, write_json), (args.html, write_html)):
        if path is None:
            continue
        try:
            write(report, path)
        except OSError as error:
            print(f"tf-migrate parity: error: cannot write {path}: {error.strerror or error}", file=sys.stderr)
            return EXIT_ERROR
        print(f"tf-migrate parity: wrote report {path}", file=sys.stderr)
    print(terminal_summary(report, color=color_wanted(sys.stdout)))
    return report.exit_code


def usage_problem(args: argparse.Namespace) -> str | None:
    for program in (args.old, args.new):
        if not program.is_file():
            return f"{program}: no such file"
    if os.path.samefile(args.old, args.new):
        return f"OLD and NEW are the same file: {args.old}"
    for flag, python in (("--old-python", args.old_python), ("--new-python", args.new_python)):
        if not os.access(python, os.X_OK):
            return f"{flag} {python}: not an executable"
    if importlib.util.find_spec("numpy") is None:
        return "the parity harness needs the parity extra: pip install 'tf-migrate[parity]'"
    return None
