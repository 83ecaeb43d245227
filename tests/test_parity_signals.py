"""A parity run stopped by a signal at any moment, or killed, leaves no process, no listening port, no folder.

The tests wait for the state they need (side processes started, the in-process cluster listening), never
for a fixed time, so they hold on a slow, loaded machine; their programs never end, so the run cannot end
before the signal. tf-migrate is started as a shell starts a background job, with SIGINT ignored: a
`kill -INT` must count all the same. A signal while the reports are written is sent from within the write,
in-process. The helpers serve the Ctrl-C tests of test_parity.py and test_verify.py too.
"""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

import pytest

if not all(importlib.util.find_spec(name) for name in ("tensorflow", "tensorflow_estimator", "tf_keras", "portpicker")):
    pytest.skip("needs the parity extra (tensorflow, tensorflow-estimator, tf-keras, portpicker)", allow_module_level=True)

T = TypeVar("T")

TF_MIGRATE = str(Path(sys.executable).parent / "tf-migrate")
IGNORING_SIGINT = "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_IGN); os.execv(sys.argv[1], sys.argv[1:])"
CLUSTER_PORTS = 3  # the new side's in-process cluster: one worker and --ps 2 parameter servers
# 127.0.0.1, ::ffff:127.0.0.1 and ::1 as /proc/net/tcp and tcp6 spell a local address.
LOOPBACK = {"0100007F", "0000000000000000FFFF00000100007F", "00000000000000000000000001000000"}
INTERRUPTED = "tf-migrate parity: interrupted; both sides stopped and their files removed"
SLEEPING = "import time\ntime.sleep(3600)\n"
NEVER_ENDING = "\nimport time\ntime.sleep(3600)  # the run cannot end before the signal\n"
SLEEPING_WITH_A_CHILD = """import subprocess, sys, time
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)", {marker!r}])
time.sleep(3600)
"""


# -- processes, ports and states of a run --------------------------------------------------------------------------


@contextmanager
def started(*args: str, tmpdir: Path) -> Iterator[subprocess.Popen]:
    """`tf-migrate ARGS...` with its temporary folders in ``tmpdir``, started with SIGINT ignored; killed on leaving
    if it still runs (a test failed half-way)."""
    env = {key: value for key, value in os.environ.items() if key != "TF_CONFIG"}
    env["TMPDIR"] = str(tmpdir)
    run = subprocess.Popen([sys.executable, "-c", IGNORING_SIGINT, TF_MIGRATE, *args], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        yield run
    finally:
        if run.poll() is None:
            run.kill()
        run.communicate()


def wait_for(run: subprocess.Popen, state: Callable[[], T], what: str, timeout: float = 300) -> T:
    """Poll until ``state()`` is true (its value returned) while the run goes on."""
    deadline = time.monotonic() + timeout
    while not (value := state()):
        if run.poll() is not None:
            out, err = run.communicate()
            pytest.fail(f"the run ended (exit status {run.returncode}) before {what}:\n{out}\n{err[-3000:]}")
        assert time.monotonic() < deadline, f"not within {timeout:g} s: {what}"
        time.sleep(0.1)
    return value


def processes(marker: str) -> list[int]:
    """The live processes whose command line holds ``marker`` (a zombie's is empty)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in cmdline:
            found.append(int(pid))
    return found


def sides(tmpdir: Path) -> dict[str, int]:
    """The side processes of the run whose temporary folders are in ``tmpdir``, by side."""
    return {side: pid for side in ("old", "new") for pid in processes(f"migrator.parity.{side}_side {tmpdir}/")}


def listening(pids: Iterable[int] | None = None) -> dict[int, str]:
    """The ports the processes ``pids`` (or any) listen on, each with its local address as /proc/net spells it."""
    sockets = None if pids is None else {inode for pid in pids for inode in socket_inodes(pid)}
    found = {}
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as rows:
            for row in list(rows)[1:]:
                fields = row.split()  # sl local_address rem_address st ... inode
                if fields[3] == "0A" and (sockets is None or fields[9] in sockets):
                    address, port = fields[1].rsplit(":", 1)
                    found[int(port, 16)] = address
    return found


def socket_inodes(pid: int) -> set[str]:
    inodes = set()
    try:
        descriptors = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return inodes
    for fd in descriptors:
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:["):-1])
    return inodes


def cluster_up(tmpdir: Path) -> dict[int, str] | None:
    """Both sides running and the new side's in-process cluster listening: its ports and addresses."""
    running = sides(tmpdir)
    ports = listening([running["new"]]) if len(running) == 2 else {}
    return ports if len(ports) >= CLUSTER_PORTS else None


def wait_until_gone(marker: str, ports: Iterable[int], timeout: float = 60) -> None:
    """No process with ``marker`` in its command line, none of ``ports`` listening, within ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        left, still = processes(marker), set(ports) & set(listening())
        if not (left or still):
            return
        assert time.monotonic() < deadline, f"still there after {timeout:g} s: processes {left}, ports {still}"
        time.sleep(0.1)


def assert_interrupted(run: subprocess.Popen, tmpdir: Path, ports: Iterable[int] = (), message: str = INTERRUPTED):
    """The run ended with exit status 130 saying ``message`` and nothing else, and left nothing behind."""
    _, err = run.communicate(timeout=120)
    assert (run.returncode, err.strip()) == (130, message), err[-3000:]
    wait_until_gone(str(tmpdir), ports)
    assert list(tmpdir.iterdir()) == []


def write_programs(folder: Path, old: str, new: str) -> tuple[str, str]:
    folder.mkdir()
    (folder / "old.py").write_text(old)
    (folder / "new.py").write_text(new)
    return str(folder / "old.py"), str(folder / "new.py")


def never_ending(program: Path, folder: Path) -> str:
    """A copy of ``program`` that never ends once it has trained."""
    folder.mkdir(exist_ok=True)
    copy = folder / program.name
    copy.write_text(program.read_text() + NEVER_ENDING)
    return str(copy)


@contextmanager
def sigint_ignored() -> Iterator[None]:
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def ctrl_c_during_fsync(monkeypatch) -> None:
    """A file written in full (as reports are) gets a SIGINT while it is synced to disk."""
    fsync = os.fsync

    def interrupted_fsync(fd: int) -> None:
        os.kill(os.getpid(), signal.SIGINT)
        fsync(fd)

    monkeypatch.setattr(os, "fsync", interrupted_fsync)


def a_parity_report():
    from migrator.parity.model import ParityReport, SideRun

    return ParityReport("parity", "1 steps match", SideRun("old", "old.py", "python"), SideRun("new", "new.py", "python"),
                        steps=1, rtol=1e-5, atol=1e-7, data="program", cluster="none (local)")


# -- tests ------------------------------------------------------------------------------------------------------------


@pytest.mark.tensorflow
@pytest.mark.parametrize("stop, state", [(signal.SIGINT, sides), (signal.SIGTERM, cluster_up)],
                         ids=["SIGINT as the sides start", "SIGTERM while they run"])
def test_a_stop_signal_leaves_nothing(stop, state, tmp_path):
    """As soon as a side process exists (still importing TensorFlow), or once the new side's cluster listens."""
    work = tmp_path / "work"
    work.mkdir()
    old, new = write_programs(tmp_path / "programs", SLEEPING, SLEEPING)
    with started("parity", old, new, tmpdir=work) as run:
        wait_for(run, lambda: state(work), state.__name__)
        ports = listening(sides(work).values())
        run.send_signal(stop)
        assert_interrupted(run, work, ports)


@pytest.mark.tensorflow
def test_kill_9_of_parity_takes_the_sides_and_what_they_started_along(tmp_path):
    """The sides, the processes the programs started and the in-process cluster's ports go within a bounded time;
    the work folder a parent killed this way cannot remove is removed by a later run."""
    from migrator.parity.runner import remove_stale_work_folders

    work = tmp_path / "work"
    work.mkdir()
    grandchild = SLEEPING_WITH_A_CHILD.format(marker=f"{work}/grandchild")
    old, new = write_programs(tmp_path / "programs", grandchild, grandchild)
    with started("parity", old, new, tmpdir=work) as run:
        ports = wait_for(run, lambda: len(processes(f"{work}/grandchild")) == 2 and cluster_up(work),
                         "the sides' programs and the in-process cluster running")
        run.kill()
    wait_until_gone(str(work), ports, timeout=30)
    (left,) = work.iterdir()
    assert left.name.startswith(f"tf-migrate-parity-{run.pid}-")
    remove_stale_work_folders(work)
    assert list(work.iterdir()) == []


def test_only_work_folders_of_processes_gone_are_removed(tmp_path):
    from migrator.parity.runner import remove_stale_work_folders

    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    stale = [f"tf-migrate-parity-{gone.pid}-a1b2c3d4", f"tf-migrate-verify-{gone.pid}-e5f6g7h8"]
    kept = [f"tf-migrate-parity-{os.getpid()}-a1b2c3d4", "tf-migrate-parity-a1b2c3d4", "user-folder"]
    for name in stale + kept:
        (tmp_path / name).mkdir()
        (tmp_path / name / "data").write_text("...")
    (tmp_path / f"tf-migrate-parity-{gone.pid}-file").write_text("not a folder")
    remove_stale_work_folders(tmp_path)
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(kept + [f"tf-migrate-parity-{gone.pid}-file"])


def test_ctrl_c_while_the_reports_are_written_leaves_no_report(tmp_path, monkeypatch, capsys):
    """A SIGINT arriving as the JSON report is written: exit 130, no report, no half-written temporary file."""
    from migrator.parity import runner
    from migrator.parity.command import main

    for name in ("old.py", "new.py"):
        (tmp_path / name).write_text(SLEEPING)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(runner, "run_parity", lambda old, new, options: a_parity_report())
    ctrl_c_during_fsync(monkeypatch)
    (tmp_path / "reports").mkdir()
    with sigint_ignored():
        code = main(["old.py", "new.py", "--json", "reports/parity.json", "--html", "reports/parity.html"])
    assert code == 130
    assert capsys.readouterr().err == INTERRUPTED + "\n"
    assert list((tmp_path / "reports").iterdir()) == []
