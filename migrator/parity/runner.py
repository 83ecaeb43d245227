"""The parent of a parity run: starts both sides at once, watches them, cleans up, compares.

Each side is a child process in a session of its own, so that it and anything it
starts can be killed as one process group: on success, failure, time-out, or
Ctrl-C (migrator/parity/interrupts.py); and by the side itself when the parent is
gone, even killed with kill -9 (migrator/parity/lifeline.py). The work folder
(recorded data, checkpoints, logs, the sides' temporary files) is removed in every
case; one left by a parent killed with kill -9 is removed by a later run.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import migrator
from migrator.parity.compare import fill_comparisons
from migrator.parity.era import tf1_era_modules
from migrator.parity.exchange import Exchange
from migrator.parity.export_check import check_exports
from migrator.parity.failure import explain
from migrator.parity.interrupts import check, held
from migrator.parity.lifeline import LIFELINE
from migrator.parity.model import ParityReport, SideRun, load
from rewrites.private_successors import RENAMED

ERROR_TAIL_LINES = 30
PHASE = "TF_MIGRATE_PARITY_PHASE"  # the old side's phase in a resume run
# "2026-11-22 20:59:15.062757: I external/...cc:31] ..." at level INFO, WARNING or ERROR; and the
# line that continues the CPU-feature notice.
TF_CPP_LOG_LINE = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+: [IWE] |To enable the following instructions: ")
# A temporary folder of a run, named after the process that made it (work_folder_prefix).
WORK_FOLDER = re.compile(r"tf-migrate-(?:parity|verify|checkpoint)-(\d+)-")


@dataclass
class Options:
    steps: int = 20
    ps: int = 2
    cluster: str = "in-process"     # or "none"
    data: str = "program"           # or "synthetic"
    rtol: float = 1e-5
    atol: float = 1e-7
    timeout: float = 300.0
    seed: int = 0
    old_python: str = sys.executable
    new_python: str = sys.executable
    program_args: tuple[str, ...] = ()  # both programs' sys.argv[1:]
    resume: int | None = None       # the old program's steps first: both sides then resume from its checkpoint
    export_check: bool = True       # compare the SavedModels both sides export

    @property
    def cluster_label(self) -> str:
        return f"in-process: 1 worker, {self.ps} ps" if self.cluster == "in-process" else "none (local)"


class SideProcess:
    """One side's child process, its log, and its clock. ``phase``: of the old side in a resume run, "first"
    (training to the checkpoint both sides resume from) or "resume"."""

    def __init__(self, side: str, python: str, program: Path, folder: Path, env: dict[str, str],
                 as_path: Path | None = None, phase: str | None = None) -> None:
        self.side, self.program, self.phase = side, as_path or program, phase
        self.log_path = folder / f"{side}{'-' + phase if phase else ''}.log"
        as_if = [str(as_path)] if as_path else []
        env = {**env, PHASE: phase} if phase else env
        self.arguments = (python, program, folder, env, as_path)
        lifeline, self.lifeline = os.pipe()  # the side ends when this end closes: when this process ends
        try:
            with open(self.log_path, "wb") as log:
                self.process = subprocess.Popen(
                    [python, "-m", f"migrator.parity.{side}_side", str(folder), str(program), *as_if],
                    stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                    env={**env, LIFELINE: str(lifeline)}, pass_fds=(lifeline,), start_new_session=True,
                )
        except BaseException:
            os.close(self.lifeline)
            raise
        finally:
            os.close(lifeline)
        self.started = time.monotonic()
        self.python = python

    def poll(self) -> int | None:
        return self.process.poll()

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def stop(self) -> None:
        """Kill the side and everything it started; wait so nothing is left behind."""
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.process.wait()
        os.close(self.lifeline)

    def output(self) -> str:
        """The side's output, without TensorFlow's C++ start-up chatter (fatal lines stay)."""
        return "\n".join(line for line in self.log_path.read_text(errors="replace").splitlines()
                         if not TF_CPP_LOG_LINE.match(line))

    def error_tail(self) -> str:
        """The last lines of the side's output."""
        return "\n".join(self.output().splitlines()[-ERROR_TAIL_LINES:])


def run_parity(old: Path, new: Path, options: Options, as_path: Path | None = None,
               old_files: Mapping[Path, Path] | None = None, new_files: Mapping[Path, Path] | None = None) -> ParityReport:
    """Train OLD and NEW and compare them, each run with ``options.program_args`` as its arguments.

    With ``as_path`` both run as if they were that file. ``old_files`` and ``new_files`` map real paths of
    the program's other files to the files whose code each side runs in their place: importing one runs
    that code as the module at its real path (``tf-migrate --verify`` of a program of several files).
    """
    started = time.perf_counter()
    remove_stale_work_folders(Path(tempfile.gettempdir()))
    with held():  # a Ctrl-C ends the run while the sides run, never half-way through starting or stopping one
        folder = Path(tempfile.mkdtemp(prefix=work_folder_prefix("parity")))
        sides: list[SideProcess] = []
        try:
            stand_ins = {side: {os.path.abspath(real): os.path.abspath(code) for real, code in (files or {}).items()}
                         for side, files in (("old", old_files), ("new", new_files))}
            era = tf1_era_modules(str(old), str(as_path or old), stand_ins["old"])
            exchange = prepare(folder, options, stand_ins, era)
            env = side_environment(folder)
            sides.append(SideProcess("old", options.old_python, old, folder, env, as_path,
                                     "first" if options.resume else None))
            sides.append(SideProcess("new", options.new_python, new, folder, env, as_path))
            failure = supervise(sides, exchange, options.timeout)
            report = build_report(exchange, sides, failure, options)
        finally:
            for side in sides:
                side.stop()
            shutil.rmtree(folder, ignore_errors=True)
    report.old_source, report.new_source = read_text(old), read_text(new)
    report.wall_seconds = time.perf_counter() - started
    return report


def work_folder_prefix(kind: str) -> str:
    """The name of a temporary folder of this process's starts with its pid: whether it is stale can be told."""
    return f"tf-migrate-{kind}-{os.getpid()}-"


def remove_stale_work_folders(root: Path) -> None:
    """Remove this user's work folders in ``root`` whose process is gone (killed by kill -9, the machine stopped)."""
    for folder in root.glob("tf-migrate-*"):
        owner = WORK_FOLDER.match(folder.name)
        if owner and not process_exists(int(owner[1])) and owned_folder(folder):
            shutil.rmtree(folder, ignore_errors=True)


def process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's
        pass
    return True


def owned_folder(path: Path) -> bool:
    try:
        info = path.lstat()
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid()


def prepare(folder: Path, options: Options, stand_ins: dict[str, dict[str, str]], tf1_era: list[str]) -> Exchange:
    exchange = Exchange(folder)
    for name in ("data", "initial", "tmp", "lib"):
        (folder / name).mkdir()
    # The sides import only migrator.parity (standard library, numpy, TensorFlow), also under another interpreter.
    (folder / "lib" / "migrator").symlink_to(Path(migrator.__file__).parent, target_is_directory=True)
    exchange.write_json("job.json", {"steps": options.steps, "ps": options.ps, "cluster": options.cluster,
                                     "data": options.data, "seed": options.seed, "resume": options.resume,
                                     "argv": list(options.program_args), "stand_ins": stand_ins,
                                     "tf1_era": tf1_era, "tf1_renamed": RENAMED})
    return exchange


def side_environment(folder: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(folder / "lib"), env.get("PYTHONPATH")]))
    env["TMPDIR"] = str(folder / "tmp")  # TensorFlow's autograph and the programs' temporary files go with the folder
    env["PYTHONUNBUFFERED"] = "1"
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # no __pycache__ left in the user's tree by the modules a program imports
    return env


def supervise(sides: list[SideProcess], exchange: Exchange, timeout: float) -> tuple[SideProcess, str] | None:
    """Wait for both sides; the first failure (a crash or a time-out) ends the run. The first phase of a resume
    run's old side is followed by its second, which resumes from the checkpoint the first wrote."""
    while True:
        check()
        old = sides[0]
        codes = [side.poll() for side in sides]
        if codes[0] == 0 and old.phase == "first":
            if not exchange.path("tf1.ready").exists():
                return old, ("the old program wrote no checkpoint to resume from (an Estimator's model_dir, a "
                             "MonitoredTrainingSession's checkpoint_dir, a Supervisor's logdir)")
            sides[0] = SideProcess("old", *old.arguments, phase="resume")
            old.stop()  # what the first phase started and left running
            continue
        if codes[0] == 0 and not exchange.path("train.ready").exists():
            return old, ("the old program finished without training (no Estimator.train, no training run - a train op "
                         "and its loss - in a MonitoredSession or a Supervisor's session)")
        if codes[0] is not None and not exchange.path("old.done").exists():
            exchange.mark("old.done")  # lets a waiting new side know no more data is coming
        for side, code in zip(sides, codes):
            if code not in (None, 0):
                return side, f"the {side.side} program failed (exit status {code})"
            if code is None and side.elapsed() > timeout:
                return side, f"the {side.side} program did not finish within {timeout:g} s"
        if all(code == 0 for code in codes):
            return None
        time.sleep(0.1)


def build_report(exchange: Exchange, sides: list[SideProcess], failure, options: Options) -> ParityReport:
    runs = {side.side: read_side(exchange, side) for side in sides}
    report = ParityReport(verdict="error", message="", old=runs["old"], new=runs["new"], steps=options.steps,
                          rtol=options.rtol, atol=options.atol, data=options.data, cluster=options.cluster_label,
                          program_args=list(options.program_args), resume=options.resume)
    if failure is not None:
        side, reason = failure
        getattr(report, side.side).error = side.error_tail()
        report.message = explain(side.output()).message(reason, side.side)
        return report
    for run, side in ((report.old, sides[0]), (report.new, sides[1])):
        if not run.losses:
            run.error = side.error_tail()
            calls = ("Estimator.train, or run a train op in a MonitoredSession or a Supervisor's session"
                     if run.side == "old" else "Model.fit or ClusterCoordinator.schedule")
            report.message = f"the {run.side} program trained no steps (does it call {calls}?)"
            return report
    if options.export_check:
        report.exports = check_exports(exchange, {"old": options.old_python, "new": options.new_python},
                                       side_environment(exchange.folder), options.timeout, options.rtol, options.atol)
    else:
        report.export_check = False
    new_json = exchange.read_json("new.json")
    fill_comparisons(report, new_json["mapping"], new_json["mapping_error"],
                     final_weights(exchange, "old_final.npz"), final_weights(exchange, "new_final.npz"))
    return report


def read_side(exchange: Exchange, side: SideProcess) -> SideRun:
    name = f"{side.side}.json"
    if not exchange.path(name).exists():
        return SideRun(side.side, str(side.program), side.python, wall_seconds=side.elapsed())
    return load(SideRun, exchange.read_json(name))


def final_weights(exchange: Exchange, name: str) -> dict:
    return dict(exchange.read_arrays(name)) if exchange.path(name).exists() else {}


def read_text(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""
