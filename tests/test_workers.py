"""A file that crashes or exhausts its worker, or never ends, costs only its own group; workers end with the main
process.

The crashes are monkeypatched into the migration in this process: the workers are forked from it, so they crash
for real (a segfault, an exit, a terabyte of allocation, endless recursion, an endless loop) on the file that
carries CRASH_MARK; the file is the biggest, so it goes first, and with -j 1 the rest needs a new worker.
"""

from __future__ import annotations

import faulthandler
import os
import resource
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import PLAIN, TF1_SERVER, snapshot
from migrator import workers
from migrator.scanning import scan

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forks its workers; reads /proc")

TF_MIGRATE = str(Path(sys.executable).parent / "tf-migrate")
EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
CRASH_MARK = "# this file crashes its worker\n"


def segfault():
    faulthandler.disable()  # pytest's would print the worker's stack
    os.kill(os.getpid(), signal.SIGSEGV)


def allocate_a_terabyte():
    return [bytes(1 << 28) for _ in range(4096)]  # address space: only the first page of each chunk is touched


def recurse_endlessly():
    recurse_endlessly()


def loop_endlessly():
    while True:
        time.sleep(1)


CRASHES = {
    "segfault": (segfault, "tf-migrate crashed on {subject} (worker died: signal 11, SIGSEGV)"),
    "exit": (lambda: os._exit(3), "tf-migrate crashed on {subject} (worker died: exit status 3)"),
    "memory": (allocate_a_terabyte, "tf-migrate ran out of memory on {subject}"),
    "recursion": (recurse_endlessly, "tf-migrate ran out of stack on {subject}: its code nests too deeply"),
}


def crashing_on_the_mark(monkeypatch, crash):
    """Migration crashing on a group with a text with CRASH_MARK."""
    migrate_group = workers.migrate_group

    def crashing(texts, *arguments, **options):
        if any(CRASH_MARK in text for text in texts.values()):
            crash()
        return migrate_group(texts, *arguments, **options)

    monkeypatch.setattr(workers, "migrate_group", crashing)


def scan_or_exit(text, enabled):
    """Scanning exiting on a text with CRASH_MARK (the workers are sent it by name: it is not a local)."""
    if CRASH_MARK in text:
        os._exit(3)
    return scan(text, enabled)


def migrated_server_files(folder: Path, names: list[str]) -> None:
    for name in names:
        assert "tf.distribute.Server(" in (folder / name).read_text(), name


@pytest.mark.parametrize("jobs", ["1", "2"])
@pytest.mark.parametrize("kind", CRASHES)
def test_a_file_that_crashes_its_worker_fails_alone(tmp_path, cli, monkeypatch, kind, jobs):
    crash, message = CRASHES[kind]
    crashing_on_the_mark(monkeypatch, crash)
    names = [f"m{i}.py" for i in range(5)]
    for name in names:
        (tmp_path / name).write_text(TF1_SERVER)
    (tmp_path / "bad.py").write_text(TF1_SERVER + CRASH_MARK)
    code, _, err = cli("-j", jobs, ".")
    assert code == 2
    assert err.splitlines()[0] == "bad.py: error: " + message.format(subject="this file") + "; file left unchanged"
    assert "6 files scanned: 5 changed, 0 unchanged, 1 failed" in err
    assert (tmp_path / "bad.py").read_text() == TF1_SERVER + CRASH_MARK
    migrated_server_files(tmp_path, names)


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_crash_fails_each_file_of_its_program(tmp_path, cli, monkeypatch, jobs):
    crashing_on_the_mark(monkeypatch, CRASHES["segfault"][0])
    shutil.copytree(EXAMPLES / "trainer_package" / "tf1", tmp_path, dirs_exist_ok=True)
    model = tmp_path / "trainer" / "model.py"
    model.write_text(model.read_text() + CRASH_MARK)
    (tmp_path / "lone.py").write_text(TF1_SERVER)
    before = snapshot(tmp_path / "trainer")
    code, _, err = cli("-j", jobs, ".")
    assert code == 2
    subject = "this file or another of the 2 files of its program"
    assert err.splitlines()[:2] == [
        f"{path}: error: tf-migrate crashed on {subject} (worker died: signal 11, SIGSEGV); file left unchanged"
        for path in ("trainer/model.py", "trainer/task.py")]
    assert snapshot(tmp_path / "trainer") == before
    migrated_server_files(tmp_path, ["lone.py"])


# The time limit of the tests whose migration never ends: many times what migrating one of their other files takes
# on a loaded machine (well under a second), so that only the endless group reaches it.
TEST_TIME_LIMIT = "10"


def test_a_file_whose_migration_never_ends_fails_alone_at_its_time_limit(tmp_path, cli, monkeypatch):
    """-j 1: the one worker is stuck on the biggest file, killed at the limit, and a new one migrates the rest."""
    crashing_on_the_mark(monkeypatch, loop_endlessly)
    names = [f"m{i}.py" for i in range(5)]
    for name in names:
        (tmp_path / name).write_text(TF1_SERVER)
    (tmp_path / "bad.py").write_text(TF1_SERVER + CRASH_MARK)
    before = (tmp_path / "bad.py").read_bytes()
    code, _, err = cli("-j", "1", "--timeout", TEST_TIME_LIMIT, ".")
    assert code == 2
    assert err.splitlines()[0] == ("bad.py: error: tf-migrate was still migrating this file at its time limit, 10 s "
                                   "(--timeout SECONDS sets it); file left unchanged")
    assert "6 files scanned: 5 changed, 0 unchanged, 1 failed" in err
    assert (tmp_path / "bad.py").read_bytes() == before
    migrated_server_files(tmp_path, names)


def test_a_program_whose_migration_never_ends_fails_each_of_its_files(tmp_path, cli, monkeypatch):
    """-j 2: the other worker goes on while one is stuck."""
    crashing_on_the_mark(monkeypatch, loop_endlessly)
    shutil.copytree(EXAMPLES / "trainer_package" / "tf1", tmp_path, dirs_exist_ok=True)
    model = tmp_path / "trainer" / "model.py"
    model.write_text(model.read_text() + CRASH_MARK)
    (tmp_path / "lone.py").write_text(TF1_SERVER)
    before = snapshot(tmp_path / "trainer")
    code, _, err = cli("-j", "2", "--timeout", TEST_TIME_LIMIT, ".")
    assert code == 2
    subject = "this file or another of the 2 files of its program"
    assert [line for line in err.splitlines() if ": error: " in line] == [
        f"{path}: error: tf-migrate was still migrating {subject} at its time limit, 10 s (--timeout SECONDS sets "
        "it); file left unchanged" for path in ("trainer/model.py", "trainer/task.py")]
    assert snapshot(tmp_path / "trainer") == before
    migrated_server_files(tmp_path, ["lone.py"])


def test_a_task_past_its_time_limit_fails_and_its_worker_is_replaced():
    with workers.Workers(1) as pool:
        results = dict(pool.run(time.sleep, {"endless": (3600,), "quick": (0,)}, {"endless": 0.5, "quick": 300}))
        assert len(pool.workers) == 1
    assert results == {"endless": workers.Failure("timeout", "0.5 s"), "quick": None}


def test_the_default_time_limit_grows_with_the_size_of_the_group():
    assert workers.time_limit(0) == workers.time_limit(300_000) == 60
    assert workers.time_limit(10 * 2**20) > 2000  # the biggest file read: 10 MB


def test_a_file_that_crashes_its_worker_while_scanning_fails_alone(tmp_path, cli, monkeypatch):
    monkeypatch.setattr(workers, "SCAN_IN_PARALLEL_FROM", 0)
    monkeypatch.setattr(workers, "scan", scan_or_exit)
    (tmp_path / "good.py").write_text(TF1_SERVER)
    (tmp_path / "bad.py").write_text(TF1_SERVER + CRASH_MARK)
    code, _, err = cli("-j", "2", ".")
    assert code == 2
    assert err.splitlines()[0] == ("bad.py: error: tf-migrate crashed on this file (worker died: exit status 3); "
                                   "file left unchanged")
    assert (tmp_path / "bad.py").read_text() == TF1_SERVER + CRASH_MARK
    migrated_server_files(tmp_path, ["good.py"])


def test_a_worker_has_a_bounded_address_space():
    with workers.Workers(1) as pool:
        [(_, (soft, _))] = pool.run(resource.getrlimit, {"limit": (resource.RLIMIT_AS,)})
    assert soft != resource.RLIM_INFINITY and soft >= workers.MEMORY_BUDGET


def test_nothing_to_migrate_starts_no_worker(tmp_path):
    """The pre-commit case stays fast: not even the multiprocessing module is imported."""
    (tmp_path / "plain.py").write_text(PLAIN)
    (tmp_path / "mentions.py").write_text('"""Talks to a tf.train.Server started elsewhere."""\nimport tensorflow\n')
    script = ("import sys; from migrator.cli import main; code = main(['.']);"
              "print(code, 'multiprocessing' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "0 False"


def busy_tree(folder: Path) -> Path:
    """TF1 programs enough to keep two workers busy for many seconds."""
    for copy in range(3):
        shutil.copytree(EXAMPLES, folder / f"copy{copy}", ignore=shutil.ignore_patterns("*_tf2*", "tf2"))
    return folder


def children(parent: int) -> list[int]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == parent:
            found.append(int(pid))
    return found


def alive(pids: list[int]) -> list[int]:
    """Those of ``pids`` still running (a zombie has ended)."""
    running = []
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            running.append(pid)
    return running


def wait_until(condition, seconds: float):
    deadline = time.monotonic() + seconds
    while not (found := condition()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return found


def started_with_two_busy_workers(arguments: list[str], folder: Path) -> tuple[subprocess.Popen, list[int]]:
    run = subprocess.Popen([TF_MIGRATE, "-j", "2", *arguments, str(folder)], stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True, start_new_session=True)

    def two_workers() -> list[int] | None:
        found = children(run.pid)
        return found if len(found) == 2 else None

    workers_of_run = wait_until(two_workers, 60)
    assert workers_of_run, "the workers never started"
    return run, workers_of_run


def test_workers_end_when_the_main_process_is_killed(tmp_path):
    run, workers_of_run = started_with_two_busy_workers(["--check"], busy_tree(tmp_path))
    run.kill()
    run.wait(timeout=10)
    assert wait_until(lambda: not alive(workers_of_run), 10), "a worker outlived the main process"


def test_ctrl_c_ends_the_run_its_workers_and_writes_nothing(tmp_path):
    before = snapshot(busy_tree(tmp_path))
    run, workers_of_run = started_with_two_busy_workers([], tmp_path)
    os.killpg(run.pid, signal.SIGINT)  # as a terminal does: to the whole process group
    _, err = run.communicate(timeout=60)
    assert run.returncode == 130
    assert err == "tf-migrate: interrupted; files not yet written are left as they were\n"
    assert wait_until(lambda: not alive(workers_of_run), 10), "a worker outlived the run"
    assert snapshot(tmp_path) == before


def test_without_prctl_a_thread_watching_the_parent_ends_the_worker():
    """The fallback where the kernel cannot end a worker with its parent: the worker ends itself."""
    script = ("import os; from migrator.workers import _watch_parent\n"
              "child = os.fork()\n"
              "if child == 0:\n    _watch_parent(os.getppid())\n"
              "print(child, flush=True)")
    # The child holds the output pipe: the run ends when the child does too.
    child = int(subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                               timeout=10).stdout)
    assert wait_until(lambda: not alive([child]), 10)
