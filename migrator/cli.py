"""The ``tf-migrate`` command.

    tf-migrate [migrate] PATH... [--diff | --check | --out DIR] [--select IDS] [--ignore IDS] [--verify]
    tf-migrate rules [RULE | PREFIX]
    tf-migrate parity OLD.py NEW.py [options]
    tf-migrate checkpoint TF1_CHECKPOINT --program NEW.py [--to DIR] [-- ARG...]

Kept light on purpose: nothing here imports libcst or TensorFlow; the engine
loads the rewrites only for files that need them, and migrator.parity is
imported only with --verify (its sides run TensorFlow in child processes).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import threading
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from migrator import __version__
from migrator.config import KERAS_CHOICES, ConfigError, enabled_rules, find_pyproject, load_config
from migrator.console import COLOR_CHOICES
from migrator.files import common_folder
from migrator.findings import FileError, Safety
from migrator.report import RunSummary, printable, write_report
from migrator.run import EXIT_ERROR, EXIT_INTERRUPTED, EXIT_OK, Outcome, plural, run, terminal_for
from rewrites import RULES
from rewrites.suppressions import UNUSED_RULE

if TYPE_CHECKING:
    from migrator.parity.verify import Verifier

PARITY_MODULES = ("numpy", "tensorflow", "tensorflow_estimator", "tf_keras", "portpicker")  # the parity extra

DESCRIPTION = """\
Migrate TensorFlow 1 distributed-training code to TensorFlow 2, in place.

PATHs are Python files, Jupyter notebooks (.ipynb: their code cells) or folders
(searched recursively for both, skipping .git, virtual environments, build folders
and the `exclude` globs of [tool.tf-migrate] in the nearest pyproject.toml). Files
that mention no API a rule handles are not parsed.

Findings print as `path:line:col: TFMnnn [level] message`, where level is
exact (rewritten, same computation), numeric (rewritten, float differences
possible) or manual (left unchanged: a person must migrate it).
"""

EPILOG = """\
suppressing a finding:
  `# tf-migrate: ignore[TFM302]` (ids or prefixes, comma-separated) or a bare
  `# tf-migrate: ignore`, on the line a finding points at or on any line of its
  statement: the finding is not printed (it is counted as suppressed) and its
  rewrite is not made; --check reports a comment that suppresses nothing (TFM001)

exit status:
  0    nothing to do, or every change applied
  1    --check/--diff found changes to make, manual findings remain, or --verify
       found a program without parity (a mismatch, or a side that failed to run)
  2    usage error, or some file could not be processed (the others still are)
  130  interrupted: files not yet written are left as they were

other commands:
  tf-migrate rules          list every rule, sorted by id, with its level and summary
  tf-migrate rules TFM2     list the rules whose id starts with TFM2 (any case)
  tf-migrate rules TFM201   explain one rule, with a TF1 before and TF2 after
  tf-migrate parity OLD NEW train both programs and compare them step by step
                            (needs the parity extra; see tf-migrate parity --help)
  tf-migrate checkpoint TF1_CHECKPOINT --program NEW
                            convert a TF1 checkpoint for its migrated program,
                            without training (tf-migrate checkpoint --help)
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tf-migrate", description=DESCRIPTION, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="files or folders to migrate")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--diff", action="store_true",
                      help="print unified diffs of what would change (a notebook's of its .ipynb file): one patch "
                           "that `git apply -p0` or `patch -p0` applies; write nothing")
    mode.add_argument("--check", action="store_true", help="write nothing; exit 1 if anything would change or needs manual work")
    mode.add_argument("--out", type=Path, metavar="DIR",
                      help="write migrated copies of the files into DIR (mirroring the inputs' folders); leave the inputs untouched")
    parser.add_argument("--select", metavar="IDS", action="append", default=[],
                        help="comma-separated rule ids or prefixes to run (e.g. TFM1,TFM201); default: all, or `select` from the config")
    parser.add_argument("--ignore", metavar="IDS", action="append", default=[],
                        help="comma-separated rule ids or prefixes to skip, added to `ignore` from the config")
    parser.add_argument("--exclude", metavar="GLOB", action="append", default=[],
                        help="skip files and folders matching GLOB inside the folders given (repeatable)")
    parser.add_argument("--force-exclude", action="store_true",
                        help="apply the exclude globs to the files and folders named on the command line too "
                             "(pre-commit names every file: its hooks pass this); default: `force-exclude` from the "
                             "config")
    parser.add_argument("--keras", choices=KERAS_CHOICES, default=None,
                        help="how generated code imports Keras 2: auto: `import keras` where it is Keras 2 (TF 2.15 "
                             "and older), else tf_keras (TF 2.16+ comes with Keras 3, which ParameterServerStrategy "
                             "cannot train), fast to start everywhere; tf_keras: `import tf_keras as keras` (every TF "
                             "with `pip install tf-keras`; on TF 2.15 autograph converts all of tf_keras at the first "
                             "fit, seconds at every start); tf.keras: `from tensorflow import keras` (TF 2.15 and "
                             "older only); default: `keras` from the config, else auto")
    parser.add_argument("--config", type=Path, metavar="PYPROJECT",
                        help="read [tool.tf-migrate] from this pyproject.toml instead of the nearest one")
    parser.add_argument("--jobs", "-j", type=int, default=os.cpu_count() or 1, metavar="N",
                        help="worker processes for files that need rewriting (default: all cores)")
    parser.add_argument("--timeout", type=float, metavar="SECONDS",
                        help="time limit of migrating one file (a program's files together): past it, its worker is "
                             "stopped and the files fail, left unchanged (default: 60, 1 more per 5,000 characters "
                             "over 300,000)")
    parser.add_argument("--quiet", "-q", action="store_true",
                        help="print only errors, manual findings and verifications without parity")
    parser.add_argument("--verbose", "-v", action="store_true", help="also print one line per file scanned, on stderr")
    parser.add_argument("--output-format", choices=("text", "json"), default="text",
                        help="findings, verdicts and errors as `path:line:col: ...` lines (text) or as one JSON "
                             "object a line on stdout (json)")
    parser.add_argument("--color", choices=COLOR_CHOICES, default="auto",
                        help="colour findings and --diff: auto (default): on a terminal, unless NO_COLOR is set to "
                             "something; also elsewhere if FORCE_COLOR is set to something")
    parser.add_argument("--report", metavar="PATH", type=Path, action="append", default=[],
                        help="write the whole run as a report: PATH.html (a page a person reads) or PATH.json "
                             "(for CI; README documents its schema); repeatable")
    verify = parser.add_argument_group("verification (needs the parity extra: pip install 'tf-migrate[parity]')")
    verify.add_argument("--verify", action="store_true",
                        help="before writing, train each migrated training program (Estimator or between-graph) "
                             "and its migration with the parity "
                             "harness (as `tf-migrate parity` does) and print the verdict after its findings; a program "
                             "without parity is not written (--out: copied unchanged)")
    verify.add_argument("--verify-reports", type=Path, metavar="DIR",
                        help="with --verify: write each program's parity report as DIR/PATH.parity.html and "
                             "DIR/PATH.parity.json, PATH relative to the inputs' common folder")
    verify.add_argument("--verify-steps", type=int, metavar="N", help="with --verify: training steps to compare (default: 20)")
    verify.add_argument("--verify-timeout", type=float, metavar="SECONDS",
                        help="with --verify: time limit of each side of a parity run (default: 300)")
    parser.add_argument("--version", action="version", version=f"tf-migrate {__version__}")
    return parser


def split_ids(values: Sequence[str]) -> list[str]:
    return [item for value in values for item in value.split(",") if item.strip()]


def main(argv: Sequence[str] | None = None) -> int:
    try:
        with stop_signals_honoured():
            return dispatch(list(sys.argv[1:] if argv is None else argv))
    except BrokenPipeError:  # `tf-migrate ... | head`: the reader left; say nothing more
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_ERROR


@contextmanager
def stop_signals_honoured() -> Iterator[None]:
    """Ctrl-C and SIGTERM raise KeyboardInterrupt from the start, even in a process started with SIGINT ignored
    (as a shell starts a background job): a run, --verify's above all, stops when told to, from its discovery on
    (migrator.parity.interrupts). In a thread other than the main one, where Python takes no signal handler, as
    the process has them."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    from migrator.parity.interrupts import interruptible

    with interruptible():
        yield


def dispatch(argv: list[str]) -> int:
    if argv[:1] == ["rules"]:
        return rules_main(argv[1:])
    if argv[:1] == ["parity"]:
        from migrator.parity.command import main as parity_main

        return parity_main(argv[1:])
    if argv[:1] == ["checkpoint"]:
        from migrator.parity.convert import main as checkpoint_main

        return checkpoint_main(argv[1:])
    if argv[:1] == ["migrate"]:
        argv = argv[1:]
    return migrate_main(argv)


def migrate_main(argv: Sequence[str]) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    problem = usage_problem(args)
    if problem:
        parser.error(problem)
    if args.verify and not parity_extra_installed():
        print("tf-migrate: error: --verify needs the parity extra: pip install 'tf-migrate[parity]'", file=sys.stderr)
        return EXIT_ERROR
    try:
        config = load_config(args.config or find_pyproject(Path(common_folder(args.paths))))
        enabled = enabled_rules(split_ids(args.select) or config.select, [*config.ignore, *split_ids(args.ignore)])
        enabled -= set() if args.check else {UNUSED_RULE}  # unused suppressions: reported by --check only
    except ConfigError as error:
        print(f"tf-migrate: error: {error}", file=sys.stderr)
        return EXIT_ERROR
    try:
        outcome = run(args, config, enabled, make_verifier(args) if args.verify else None)
    except KeyboardInterrupt:
        print("tf-migrate: interrupted; files not yet written are left as they were", file=sys.stderr)
        return EXIT_INTERRUPTED
    print_manual_files(outcome)
    print_summary(outcome, dry_run=args.diff or args.check, verify=args.verify)
    write_reports(args, outcome)
    return outcome.exit_code(dry_run=args.diff or args.check)


def write_reports(args: argparse.Namespace, outcome: Outcome) -> None:
    """--report: the run as HTML and/or JSON, each path written said on stderr (not with --quiet); a report that
    cannot be written is an error of the run."""
    unchanged = outcome.scanned - len(outcome.changed) - len(outcome.errors)
    summary = RunSummary(outcome.scanned, len(outcome.changed), max(unchanged, 0), len(outcome.errors),
                         sum(record.manual for record in outcome.records), dict(outcome.verdicts),
                         dry_run=args.diff or args.check, verify=args.verify, suppressed=outcome.suppressed)
    for path in args.report:
        try:
            write_report(path, summary, outcome.records, RULES)
            terminal_for(args).note(f"tf-migrate: wrote report {path}", sys.stderr)
        except OSError as error:
            problem = FileError(str(path), f"cannot write the report: {error.strerror or error}")
            outcome.report_errors.append(problem)
            print(printable(problem.format()), file=sys.stderr)


def usage_problem(args: argparse.Namespace) -> str | None:
    if args.jobs < 1:
        return "--jobs must be at least 1"
    if args.timeout is not None and not args.timeout > 0:  # nan too; inf: no limit
        return "--timeout must be greater than 0"
    if args.output_format == "json" and args.diff:
        return "--output-format json prints on stdout, where --diff prints its patch: choose one"
    if args.quiet and args.verbose:
        return "--quiet and --verbose say opposite things: choose one"
    unknown = [str(path) for path in args.report if path.suffix.lower() not in (".html", ".htm", ".json")]
    if unknown:
        return f"--report {unknown[0]}: the report is HTML (.html) or JSON (.json), by the file's suffix"
    verify_options = {"--verify-reports": args.verify_reports, "--verify-steps": args.verify_steps,
                      "--verify-timeout": args.verify_timeout}
    for flag, value in verify_options.items():
        if value is not None and not args.verify:
            return f"{flag} needs --verify"
    if args.verify_steps is not None and args.verify_steps < 1:
        return "--verify-steps must be at least 1"
    if args.verify_timeout is not None and args.verify_timeout <= 0:
        return "--verify-timeout must be greater than 0"
    return None


def parity_extra_installed() -> bool:
    return all(importlib.util.find_spec(name) for name in PARITY_MODULES)


def make_verifier(args: argparse.Namespace) -> Verifier:
    from migrator.parity.verify import Verifier

    html = next((path for path in args.report if path.suffix.lower() in (".html", ".htm")), None)
    reports = args.verify_reports or (html.with_name(html.stem + "-parity") if html else None)
    return Verifier(args.verify_steps, args.verify_timeout, reports, quiet=args.quiet)


def print_manual_files(outcome: Outcome) -> None:
    """Before the summary, the files a person has to finish, so that no manual finding goes unseen in a long run."""
    manual = Counter(finding.path for finding in outcome.findings if finding.safety is Safety.MANUAL)
    if manual:
        print(f"tf-migrate: manual migration needed in {plural(len(manual), 'file')}:", file=sys.stderr)
        for path, count in sorted(manual.items()):
            print(f"  {printable(path)}: {plural(count, 'manual finding')}", file=sys.stderr)


def print_summary(outcome: Outcome, dry_run: bool, verify: bool = False) -> None:
    levels = outcome.by_level()
    verb = "would change" if dry_run else "changed"
    unchanged = outcome.scanned - len(outcome.changed) - len(outcome.errors)
    verdicts = outcome.verdicts
    print(
        f"tf-migrate: {plural(outcome.scanned, 'file')} scanned: {len(outcome.changed)} {verb}, {max(unchanged, 0)} unchanged, "
        f"{len(outcome.errors)} failed; findings: "
        + ", ".join([*(f"{levels[level]} {level}" for level in Safety), f"{outcome.suppressed} suppressed"])
        + (f"; verified: {verdicts['parity']} parity, {verdicts['mismatch']} mismatch, {verdicts['error']} failed"
           if verify else ""),
        file=sys.stderr,
    )


def rules_main(argv: Sequence[str]) -> int:
    from migrator import rules_doc

    parser = argparse.ArgumentParser(
        prog="tf-migrate rules", description="List the rules sorted by id, or explain one.",
        epilog="examples:\n  tf-migrate rules          every rule: id, level, name, summary\n"
               "  tf-migrate rules TFM3     the rules whose id starts with TFM3\n"
               "  tf-migrate rules tfm301   one rule: what it does, why, what may differ, a before and after\n",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("rule", nargs="?", metavar="RULE",
                        help="a rule id (explain that rule) or an id prefix (list those rules); any case")
    args = parser.parse_args(argv)
    try:
        print(rules_doc.render(args.rule), end="")
    except ConfigError:
        print(f"tf-migrate rules: error: no rule id starts with {args.rule!r} (see `tf-migrate rules`)",
              file=sys.stderr)
        return EXIT_ERROR
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
