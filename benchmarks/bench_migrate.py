#!/usr/bin/env python3
"""Time `tf-migrate --check` against TensorFlow's `tf_upgrade_v2` on real trees.

Trees (copied into a temporary folder, `.py` files only):
  tensorflow  the installed tensorflow package's Python source (TF everywhere: the worst case)
  estimator   the installed tensorflow_estimator package (the parity extra)
  stdlib      the running interpreter's standard library, without site-packages
  tf1         TF1-dense: this repository's TF1 example programs and parity programs, --copies times

For each tree: wall time, CPU time and peak memory (the largest process) of
`tf-migrate --check -j 1`, `-j 2` and `tf_upgrade_v2`, the ratio tf-migrate -j 2 /
tf_upgrade_v2 and the speed-up of -j 2 over -j 1; with --floor also the least a libcst
migration costs (bench_floor.py: parse and scopes of every file, one process). Also times
`tf-migrate --check` on one small file with nothing to migrate (the pre-commit case) and
`tf-migrate --help`.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

REPOSITORY = Path(__file__).resolve().parent.parent
TF_MIGRATE = "tf-migrate"
TF_UPGRADE = "tf_upgrade_v2"
SKIPPED_DIRS = frozenset({"site-packages", "dist-packages", "__pycache__"})
# tf-migrate: "N files scanned: N would change, N unchanged, N failed; findings: ..."
SCANNED = re.compile(r"(\d+)\s+files?\s+scanned")
FAILED = re.compile(r"(\d+)\s+(?:files?\s+)?failed")
# tf_upgrade_v2: "Converted N files" / "Detected N issues that require attention"
CONVERTED = re.compile(r"Converted\s+(\d+)\s+files?")
ISSUES = re.compile(r"Detected\s+(\d+)\s+issues?")
SMALL_FILE = '''"""A module with nothing to migrate."""


def mean(values: list[float]) -> float:
    return sum(values) / len(values)
'''


class BenchmarkError(Exception):
    """A measured command failed in a way the benchmark cannot report on."""


@dataclass(frozen=True)
class Tree:
    name: str  # short name, used in the ratio line
    label: str  # shown in the table
    source: Path


@dataclass(frozen=True)
class Timing:
    seconds: float
    result: subprocess.CompletedProcess[str]
    cpu: float = 0.0         # user + system seconds of the process and its children
    peak_mb: float = 0.0     # the largest resident set of any one of them


def parse_args(argv: Optional[Sequence[str]]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--runs", type=int, default=3, metavar="N",
        help="repeat each tf-migrate measurement N times and report the best "
        "(tf_upgrade_v2 always runs once: it is slow); default: %(default)s",
    )
    parser.add_argument(
        "--tree", choices=("tensorflow", "estimator", "stdlib", "tf1", "all"), default="all",
        help="which tree(s) to benchmark; default: %(default)s",
    )
    parser.add_argument(
        "--floor", action="store_true",
        help="also time libcst's parse and scope analysis of every file (bench_floor.py), one process",
    )
    parser.add_argument(
        "--copies", type=int, default=20, metavar="N",
        help="copies of the TF1 programs in the tf1 tree; default: %(default)s",
    )
    parser.add_argument(
        "--skip-upgrade", action="store_true",
        help="do not run tf_upgrade_v2 (it takes minutes on the stdlib)",
    )
    parser.add_argument(
        "--tf-migrate", type=Path, metavar="PATH",
        help="the tf-migrate executable to time; default: the one next to "
        "this interpreter, else the one on PATH",
    )
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    return args


def find_executable(name: str, override: Optional[Path] = None) -> Optional[Path]:
    """`override`, else `name` next to the running interpreter, else on PATH."""
    if override is not None:
        return override if override.is_file() else None
    beside = Path(sys.executable).parent / name
    if beside.is_file():
        return beside
    found = shutil.which(name)
    return Path(found) if found else None


def stdlib_tree() -> Tree:
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    return Tree("stdlib", f"stdlib ({version})", Path(sysconfig.get_paths()["stdlib"]))


def package_tree(package: str) -> Optional[Tree]:
    """An installed package's source folder, found without importing it."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        print(f'{package} is not installed: pip install ".[parity]"')
        return None
    return Tree(package, package, Path(next(iter(spec.submodule_search_locations))))


def tf1_tree(work: Path, copies: int) -> Tree:
    """TF1 programs in the shapes people write: the examples' TF1 programs (not their migrations) and the
    parity programs, each copy in a folder of its own."""
    programs = [path for path in (REPOSITORY / "examples").rglob("*.py") if "_tf2" not in path.name
                and "tf2" not in path.parts[-2]]
    programs += sorted((REPOSITORY / "tests" / "parity_programs").glob("*_tf1.py"))
    source = work / "tf1-source"
    for copy in range(copies):
        for program in programs:
            target = source / f"copy{copy}" / program.relative_to(REPOSITORY)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(program, target)
    return Tree("tf1", f"TF1-dense (x{copies})", source)


def selected_trees(choice: str, work: Path, copies: int) -> list[Tree]:
    trees = [package_tree("tensorflow") if choice in ("tensorflow", "all") else None,
             package_tree("tensorflow_estimator") if choice in ("estimator", "all") else None,
             stdlib_tree() if choice in ("stdlib", "all") else None,
             tf1_tree(work, copies) if choice in ("tf1", "all") else None]
    return [tree for tree in trees if tree is not None]


def copy_python_files(source: Path, destination: Path) -> int:
    """Copy the `.py` files under `source` (and their folders); return how many."""
    copied = 0
    for folder, subfolders, files in os.walk(source):
        subfolders[:] = [d for d in subfolders if d not in SKIPPED_DIRS]
        target = destination / Path(folder).relative_to(source)
        for name in files:
            if name.endswith(".py"):
                target.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(Path(folder) / name, target / name)
                copied += 1
    return copied


def run_timed(command: Sequence[str | Path], cwd: Path) -> Timing:
    """Run ``command``; its wall time, and from wait4 its CPU time and the peak memory of its largest process
    (Linux counts the children a process waited for, so a pool's workers are included)."""
    start = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        process = subprocess.Popen([str(part) for part in command], cwd=cwd, stdout=out, stderr=err, text=True)
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0), err.seek(0)
        result = subprocess.CompletedProcess(process.args, process.returncode, out.read(), err.read())
    return Timing(seconds, result, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)


def best_of(runs: int, command: Sequence[str | Path], cwd: Path) -> Timing:
    return min((run_timed(command, cwd) for _ in range(runs)), key=lambda t: t.seconds)


def last_lines(text: str, count: int = 5) -> str:
    return "\n".join("    " + line for line in text.strip().splitlines()[-count:])


def counts(line: str, patterns: dict[str, re.Pattern[str]]) -> str:
    """'name N, ...' for each pattern found in `line`, or the raw line if none matched."""
    found = {name: p.search(line) for name, p in patterns.items()}
    parts = [f"{name} {match.group(1)}" for name, match in found.items() if match]
    return ", ".join(parts) if parts else line.strip() or "(no summary)"


def summary_line(output: str, marker: str) -> str:
    """The last line of `output` that contains `marker`, else the last line."""
    lines = output.strip().splitlines() or [""]
    return next((line for line in reversed(lines) if marker in line), lines[-1])


def tf_migrate_note(result: subprocess.CompletedProcess[str]) -> str:
    """Scanned/failed counts of a `tf-migrate --check` run; raise on a real failure.

    Exit 0 and 1 are results; exit 2 with a summary line means some files failed
    (the stdlib has deliberately invalid test files); anything else is a failure.
    """
    line = summary_line(result.stderr, "scanned")
    if result.returncode in (0, 1) or (result.returncode == 2 and "scanned" in line):
        return counts(line, {"scanned": SCANNED, "failed": FAILED})
    raise BenchmarkError(f"tf-migrate exited {result.returncode}:\n{last_lines(result.stderr)}")


def tf_upgrade_note(result: subprocess.CompletedProcess[str]) -> str:
    """Converted/issue counts of a `tf_upgrade_v2` run, or that it crashed."""
    if result.returncode != 0:
        return f"crashed (exit {result.returncode}) after this time"
    summary = " ".join(
        line for line in result.stdout.splitlines() if line.startswith(("Converted", "Detected"))
    )
    return counts(summary, {"converted": CONVERTED, "issues": ISSUES})


def print_header() -> None:
    print(f"{'tree':<22} {'files':>6}   {'tool':<17} {'wall s':>7} {'cpu s':>7} {'peak MB':>8} {'files/s':>8}   notes")


def print_row(tree: Tree, files: int, tool: str, timing: Timing, note: str) -> None:
    rate = f"{files / timing.seconds:.0f}" if timing.seconds > 0 else "-"
    print(f"{tree.label:<22} {files:>6}   {tool:<17} {timing.seconds:>7.2f} {timing.cpu:>7.2f} "
          f"{timing.peak_mb:>8.0f} {rate:>8}   {note}")


def print_tail(tool: str, result: subprocess.CompletedProcess[str]) -> None:
    print(f"  {tool} exited {result.returncode}; the last lines of its output:")
    print(last_lines(result.stderr or result.stdout))


def time_tf_upgrade(tf_upgrade: Path, tree: Path, work: Path) -> Timing:
    """One `tf_upgrade_v2` run over `tree`, into a fresh output folder."""
    out, report = work / f"{tree.name}-upgraded", work / f"{tree.name}-report.txt"
    shutil.rmtree(out, ignore_errors=True)
    timing = run_timed(
        [tf_upgrade, "--intree", tree, "--outtree", out, "--reportfile", report], work
    )
    shutil.rmtree(out, ignore_errors=True)  # it holds a full copy of the tree
    return timing


def bench_floor(tree: Tree, files: int, copy: Path, work: Path) -> None:
    """One row: libcst's parse and scope analysis of every file, the least a libcst migration costs."""
    floor = run_timed([sys.executable, REPOSITORY / "benchmarks" / "bench_floor.py", copy], work)
    if floor.result.returncode != 0:
        raise BenchmarkError(f"bench_floor.py exited {floor.result.returncode}:\n{last_lines(floor.result.stderr)}")
    print_row(tree, files, "libcst floor", floor, floor.result.stdout.strip().split(": ", 1)[-1])


def bench_tree(
    tree: Tree, tf_migrate: Path, tf_upgrade: Optional[Path], runs: int, work: Path, floor: bool = False
) -> Optional[str]:
    """Print the rows of one tree; return tf-migrate / tf_upgrade_v2 time, if both ran."""
    copy = work / tree.name
    files = copy_python_files(tree.source, copy)
    if floor:
        bench_floor(tree, files, copy, work)
    timings = {}
    for jobs in (1, 2):
        timings[jobs] = migrate = best_of(runs, [tf_migrate, "--check", "-j", str(jobs), copy], work)
        print_row(tree, files, f"{TF_MIGRATE} -j {jobs}", migrate, tf_migrate_note(migrate.result))
        if migrate.result.returncode == 2 and jobs == 1:
            print_tail(TF_MIGRATE, migrate.result)  # files it could not read or parse
    print(f"{'':<22} {'':>6}   -j 2 speed-up over -j 1: {timings[1].seconds / timings[2].seconds:.2f}x")
    if tf_upgrade is None:
        return None
    upgrade = time_tf_upgrade(tf_upgrade, copy, work)
    print_row(tree, files, TF_UPGRADE, upgrade, tf_upgrade_note(upgrade.result))
    ratio = format(timings[2].seconds / upgrade.seconds, ".3g")
    if upgrade.result.returncode != 0:
        print_tail(TF_UPGRADE, upgrade.result)
        # A whole run would have taken tf_upgrade_v2 longer than its time to the crash.
        return f"at most {ratio} ({TF_UPGRADE} crashed part-way)"
    return ratio


def print_ratios(ratios: dict[str, Optional[str]]) -> None:
    listed = ", ".join(f"{name} {'n/a' if ratio is None else ratio}" for name, ratio in ratios.items())
    print(f"ratio {TF_MIGRATE} -j 2 / {TF_UPGRADE} (wall): {listed}")


def bench_small_commands(tf_migrate: Path, runs: int, work: Path) -> None:
    small = work / "small.py"
    small.write_text(SMALL_FILE)
    check = best_of(runs, [tf_migrate, "--check", small], work)
    tf_migrate_note(check.result)
    print(f"{TF_MIGRATE} --check on one small file: best {check.seconds:.2f} s of {runs}")
    help_run = best_of(runs, [tf_migrate, "--help"], work)
    if help_run.result.returncode != 0:
        raise BenchmarkError(f"tf-migrate --help exited {help_run.result.returncode}")
    print(f"{TF_MIGRATE} --help: best {help_run.seconds:.2f} s of {runs}")


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parse_args(argv)
    tf_migrate = find_executable(TF_MIGRATE, args.tf_migrate)
    if tf_migrate is None:
        print(f"{TF_MIGRATE} not found: pip install . (or pass --tf-migrate PATH)")
        return 1
    tf_upgrade = None if args.skip_upgrade else find_executable(TF_UPGRADE)
    if tf_upgrade is None and not args.skip_upgrade:
        print(f'{TF_UPGRADE} not found: it comes with the parity extra, pip install ".[parity]"')
    ratios: dict[str, Optional[str]] = {}
    try:
        with tempfile.TemporaryDirectory(prefix="bench-tf-migrate-") as temp:
            work = Path(temp)
            trees = selected_trees(args.tree, work, args.copies)
            if not trees:
                print("nothing to benchmark")
                return 1
            print_header()
            for tree in trees:
                ratios[tree.name] = bench_tree(tree, tf_migrate, tf_upgrade, args.runs, work, args.floor)
            if tf_upgrade is not None:
                print_ratios(ratios)
            bench_small_commands(tf_migrate, args.runs, work)
    except BenchmarkError as error:
        print(f"benchmark failed: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
