"""`tf-migrate PATH... --verify`: each migrated Estimator program is trained against its original before it is written.

Each test trains real programs on the reference environment (the parity extra): a parity run takes 10-25 s, so
there are few, mostly of 5 steps. The usage errors, which need no TensorFlow, are tested in test_cli.py.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from conftest import snapshot
from test_parity_signals import (NEVER_ENDING, a_parity_report, assert_interrupted, cluster_up, ctrl_c_during_fsync,
                                 sigint_ignored, started, wait_for)

if not all(importlib.util.find_spec(name) for name in ("tensorflow", "tensorflow_estimator", "tf_keras", "portpicker")):
    pytest.skip("needs the parity extra (tensorflow, tensorflow-estimator, tf-keras, portpicker)", allow_module_level=True)

pytestmark = pytest.mark.tensorflow

REGRESSION_TF1 = Path(__file__).resolve().parents[1] / "examples" / "regression" / "train.py"
INLINE_DATA = "features = [[1., 1.5], [2., 2.5], [3., 3.5]]\nlabels = [[0.3], [0.5], [0.7]]\n"
DATA_NEXT_TO_IT = (
    'with open(os.path.join(os.path.dirname(__file__), "data.json")) as data_file:\n'
    "  features, labels = json.load(data_file)\n"
)
INLINE_EVAL_DATA = "eval_features = [[4., 4.5], [5., 5.5], [6., 6.5]]\neval_labels = [[0.8], [0.9], [1.]]\n"
SIBLING_MODULE_DATA = "from eval_data import eval_features, eval_labels\n"


@pytest.fixture
def program(tmp_path: Path) -> Path:
    """A copy of examples/regression/train.py."""
    path = tmp_path / "train.py"
    path.write_bytes(REGRESSION_TF1.read_bytes())
    return path


def edit(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, f"{old!r} is not in the text exactly once"
    return text.replace(old, new)


def with_migrations_edited(monkeypatch, old: str, new: str) -> None:
    """tf-migrate makes one slip in every migrated text (the migration runs in-process for a single file)."""
    from migrator import workers

    real_migrate = workers.migrate_group

    def migrate_group(*args, **kwargs):
        return {name: dataclasses.replace(result, source=edit(result.source, old, new))
                for name, result in real_migrate(*args, **kwargs).items()}

    monkeypatch.setattr(workers, "migrate_group", migrate_group)


def test_in_place_writes_a_program_at_parity_and_its_reports(program, cli, tmp_path):
    code, out, err = cli("--verify", "--verify-steps", "5", "--verify-reports", "reports", "train.py")
    assert code == 0, out + err
    assert "keras.Sequential" in program.read_text()
    assert out.splitlines()[-1] == "train.py: parity: 5 steps match (max rel diff 0), eval loss matches, 2 variables match"
    assert err.splitlines() == [
        f"tf-migrate: wrote parity report {Path('reports/train.py.parity.html')}",
        f"tf-migrate: wrote parity report {Path('reports/train.py.parity.json')}",
        "tf-migrate: 1 file scanned: 1 changed, 0 unchanged, 0 failed; findings: 0 exact, 2 numeric, "
        "0 manual, 0 suppressed; verified: 1 parity, 0 mismatch, 0 failed"], "nothing else on stderr when not a terminal"
    report = json.loads((tmp_path / "reports" / "train.py.parity.json").read_text())
    assert report["verdict"] == "parity" and len(report["old"]["losses"]) == 5
    assert report["old"]["program"] == report["new"]["program"] == "train.py"
    assert "keras.Sequential" in report["new_source"] and "keras" not in report["old_source"]
    assert "parity" in (tmp_path / "reports" / "train.py.parity.html").read_text()


def test_a_migration_without_parity_is_not_written(program, cli, monkeypatch):
    with_migrations_edited(monkeypatch, "learning_rate=0.05,", "learning_rate=0.1,")
    before = program.read_bytes()
    code, out, err = cli("--verify", "--verify-steps", "5", "train.py")
    assert code == 1
    assert program.read_bytes() == before
    verdict = out.splitlines()[-1]
    assert verdict.startswith("train.py: mismatch: ") and verdict.endswith("; left unchanged")
    assert "0 changed, 1 unchanged" in err and err.rstrip().endswith("verified: 0 parity, 1 mismatch, 0 failed")


def test_a_migration_that_crashes_is_copied_unchanged_with_out(program, cli, monkeypatch, tmp_path):
    with_migrations_edited(monkeypatch, "import tf_keras as keras\n",
                           "import tf_keras as keras\nraise RuntimeError('migrated badly')\n")
    code, out, err = cli("--out", "migrated", "--verify", "--verify-steps", "5", "--verify-reports", "reports",
                         "train.py")
    assert code == 1
    assert re.fullmatch(r"train\.py: error: the new program failed \(exit status 1\): RuntimeError: migrated badly, "
                        r"raised in the migrated program at train\.py:\d+; copied unchanged", out.splitlines()[-1])
    report = json.loads((tmp_path / "reports" / "train.py.parity.json").read_text())
    assert report["verdict"] == "error" and "RuntimeError: migrated badly, raised in the migrated program at " \
        "train.py:" in report["message"]
    assert "RuntimeError: migrated badly" in (tmp_path / "reports" / "train.py.parity.html").read_text()
    assert (tmp_path / "migrated" / "train.py").read_bytes() == program.read_bytes() == REGRESSION_TF1.read_bytes()
    assert err.rstrip().endswith("verified: 0 parity, 0 mismatch, 1 failed")


def test_check_verifies_and_writes_nothing(program, cli, tmp_path, tmp_path_factory, monkeypatch):
    scratch = tmp_path_factory.mktemp("scratch")
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    before = snapshot(tmp_path)
    code, out, err = cli("--check", "--verify", "--verify-steps", "5", "train.py")
    assert code == 1, "the file would change"
    assert out.splitlines()[-1].startswith("train.py: parity: 5 steps match")
    assert snapshot(tmp_path) == before
    assert list(scratch.iterdir()) == [], "the temporary copies are removed"


def test_ctrl_c_leaves_the_file_and_no_temporary_folder(program, tmp_path_factory):
    """A SIGINT while both sides train, the new side's in-process cluster up: exit 130, the file as it was, no side,
    no port, no temporary folder."""
    scratch = tmp_path_factory.mktemp("scratch")
    program.write_text(program.read_text() + NEVER_ENDING)
    before = program.read_bytes()
    with started("--verify", str(program), tmpdir=scratch) as run:
        ports = wait_for(run, lambda: cluster_up(scratch), "the new side's cluster listening")
        run.send_signal(signal.SIGINT)
        assert_interrupted(run, scratch, ports, "tf-migrate: interrupted; files not yet written are left as they were")
    assert program.read_bytes() == before


# `tf-migrate ARGS...` whose migration never ends (before any verification starts), run by a process started with
# SIGINT ignored, as a shell starts a background job; the workers, forked from it, get the endless migration too.
MIGRATING_FOREVER = """import sys, time
from migrator import workers

def migrate_forever(*args, **kwargs):
    while True:
        time.sleep(1)

workers.migrate_group = migrate_forever
from migrator.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_ctrl_c_while_migrating_stops_a_verify_run_started_with_sigint_ignored(program, tmp_path_factory):
    """A SIGINT to the process group (a Ctrl-C) before verification starts, the worker still migrating: exit 130,
    the worker gone, the file as it was, nothing in the temporary folder."""
    from test_workers import alive, children, wait_until

    scratch = tmp_path_factory.mktemp("scratch")
    before = snapshot(program.parent)
    run = subprocess.Popen([sys.executable, "-c", MIGRATING_FOREVER, "--check", "--verify", str(program)],
                           cwd=program.parent, env={**os.environ, "TMPDIR": str(scratch)}, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, start_new_session=True,
                           preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    try:
        worker = wait_until(lambda: children(run.pid), 120)
        assert worker, "the worker never started"
        os.killpg(run.pid, signal.SIGINT)
        _, err = run.communicate(timeout=60)
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
            run.communicate()
    assert (run.returncode, err) == (130, "tf-migrate: interrupted; files not yet written are left as they were\n")
    assert wait_until(lambda: not alive(worker), 10), "the worker outlived the run"
    assert snapshot(program.parent) == before
    assert list(scratch.iterdir()) == []


def test_ctrl_c_while_the_parity_reports_are_written_leaves_the_file(program, cli, monkeypatch, tmp_path):
    """A SIGINT arriving as the first parity report is written: exit 130, the file as it was, no report, no
    half-written temporary file; even in a process started with SIGINT ignored."""
    from migrator.parity.verify import Verifier

    monkeypatch.setattr(Verifier, "verify", lambda self, entry, files: a_parity_report())
    ctrl_c_during_fsync(monkeypatch)
    with sigint_ignored():
        code, out, err = cli("--verify", "--verify-reports", "reports", "train.py")
    assert code == 130
    assert err.splitlines()[-1] == "tf-migrate: interrupted; files not yet written are left as they were"
    assert program.read_bytes() == REGRESSION_TF1.read_bytes()
    assert [path for path in (tmp_path / "reports").rglob("*") if path.is_file()] == []


def test_program_runs_as_if_at_its_own_path(cli, tmp_path):
    """Data read through __file__ and a sibling module are found, though the code that runs is a temporary copy."""
    project = tmp_path / "project"
    project.mkdir()
    text = edit(REGRESSION_TF1.read_text(), "import random\n", "import json\nimport os\nimport random\n")
    text = edit(edit(text, INLINE_DATA, DATA_NEXT_TO_IT), INLINE_EVAL_DATA, SIBLING_MODULE_DATA)
    (project / "train.py").write_text(text)
    (project / "data.json").write_text("[[[1.0, 1.5], [2.0, 2.5], [3.0, 3.5]], [[0.3], [0.5], [0.7]]]")
    (project / "eval_data.py").write_text(INLINE_EVAL_DATA)
    code, out, err = cli("--verify", "--verify-steps", "5", "--out", "migrated", "project/train.py")
    assert code == 0, out + err
    assert out.splitlines()[-1].startswith("project/train.py: parity: 5 steps match")
    assert "keras.Sequential" in (tmp_path / "migrated" / "train.py").read_text()


def test_a_report_that_cannot_be_written_is_one_clear_error(tmp_path):
    from migrator.findings import FileError
    from migrator.parity.model import ParityReport, SideRun
    from migrator.parity.verify import Verifier

    (tmp_path / "reports").write_text("a file where the folder should be")
    report = ParityReport("parity", "1 steps match", SideRun("old", "train.py", "python"),
                          SideRun("new", "train.py", "python"), steps=1, rtol=1e-5, atol=1e-7, data="program",
                          cluster="none (local)")
    with pytest.raises(FileError) as error:
        Verifier(None, None, tmp_path / "reports").write_reports(report, "pkg/train.py")
    assert error.value.format().startswith(
        f"{tmp_path / 'reports' / 'pkg' / 'train.py.parity.html'}: error: cannot write the parity report: ")


def test_html_report_links_each_verified_program_to_its_parity_report(program, tmp_path, cli):
    """Without --verify-reports, the parity reports go next to the HTML report, in REPORT-parity/."""
    code, out, err = cli("--check", "--verify", "--verify-steps", "5", "--report", "r.html", "--report", "r.json",
                         str(program))
    assert code == 1, err  # --check: the file would change
    report = json.loads((tmp_path / "r.json").read_text())
    (entry,) = report["files"]
    assert entry["verification"]["verdict"] == "parity"
    assert entry["verification"]["report"] == str(Path("r-parity") / "train.py.parity.html")  # as the run named it
    assert (tmp_path / "r-parity" / "train.py.parity.html").exists()
    assert 'href="r-parity/train.py.parity.html"' in (tmp_path / "r.html").read_text()
    assert report["summary"]["verified"] == {"parity": 1}


# -- a program of several files -------------------------------------------------------------------------------------

PACKAGE = Path(__file__).resolve().parents[1] / "examples" / "trainer_package"
PACKAGE_FILES = ("__init__.py", "task.py", "model.py")


def package_tree(folder: Path) -> Path:
    """A copy of the TF1 trainer package (examples/trainer_package/tf1) in FOLDER/project: its trainer/."""
    trainer = folder / "project" / "trainer"
    trainer.mkdir(parents=True)
    for name in PACKAGE_FILES:
        (trainer / name).write_bytes((PACKAGE / "tf1" / "trainer" / name).read_bytes())
    return trainer


def test_verify_hands_each_side_its_version_of_every_changed_file(tmp_path, monkeypatch):
    """The entry runs as itself, every other changed file stands in for the user's at its real path; an entry the
    migration left alone runs as it is on disk on both sides; verify(path, original, migrated) is one file."""
    from migrator.parity import verify as verify_module
    from migrator.parity.verify import Verifier

    calls = []

    def run_parity(old, new, options, as_path=None, old_files=None, new_files=None):
        calls.append({"old": old.read_bytes(), "new": new.read_bytes(), "as_path": as_path, "args": options.program_args,
                      "old_files": {real: code.read_bytes() for real, code in old_files.items()},
                      "new_files": {real: code.read_bytes() for real, code in new_files.items()}})
        return "report"

    monkeypatch.setattr(verify_module, "run_parity", run_parity)
    monkeypatch.chdir(tmp_path)
    trainer = package_tree(tmp_path)
    entry, model = Path("project/trainer/task.py"), trainer / "model.py"
    verifier = Verifier(5, None, None)
    assert verifier.verify(entry, {trainer / "task.py": (b"old task", b"new task"), model: (b"old model", b"new model")},
                           args=["--train_steps", "5"]) == "report"
    assert verifier.verify(entry, {model: (b"old model", b"new model")}) == "report"
    assert verifier.verify(entry, b"old task", b"new task") == "report"
    task, on_disk = trainer / "task.py", (trainer / "task.py").read_bytes()
    assert calls == [
        {"old": b"old task", "new": b"new task", "as_path": entry, "args": ("--train_steps", "5"),
         "old_files": {task: b"old task", model: b"old model"}, "new_files": {task: b"new task", model: b"new model"}},
        {"old": on_disk, "new": on_disk, "as_path": entry, "args": (),
         "old_files": {task: on_disk, model: b"old model"}, "new_files": {task: on_disk, model: b"new model"}},
        {"old": b"old task", "new": b"new task", "as_path": entry, "args": (),
         "old_files": {task: b"old task"}, "new_files": {task: b"new task"}},
    ]


@pytest.mark.parametrize("model_edit, verdict", [
    (None, "parity"),
    (('learning_rate=params["learning_rate"],', 'learning_rate=2 * params["learning_rate"],'), "mismatch"),
], ids=["right migration", "learning rate doubled in model.py"])
def test_program_of_several_files_each_side_importing_its_own_version(model_edit, verdict, tmp_path, tmp_path_factory,
                                                                      monkeypatch):
    """trainer/task.py and trainer/model.py both migrated: the old side imports the original model.py, the new side
    the migrated one (the migrated task.py needs its build_model), both at their real paths in the user's package;
    a slip in the migrated model.py is a mismatch. Nothing is written in the user's tree."""
    from migrator.parity.verify import Verifier

    scratch = tmp_path_factory.mktemp("scratch")
    trainer = package_tree(tmp_path)
    before = snapshot(tmp_path)
    migrated = {name: (PACKAGE / "tf2" / "trainer" / name).read_text() for name in ("task.py", "model.py")}
    if model_edit:
        migrated["model.py"] = edit(migrated["model.py"], *model_edit)
    files = {trainer / name: ((trainer / name).read_bytes(), text.encode()) for name, text in migrated.items()}
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)  # the sides import trainer/__init__.py from the tree
    report = Verifier(5, None, None).verify(trainer / "task.py", files, args=["--train-steps", "5"])
    assert report.verdict == verdict, (report.message, report.old.error, report.new.error)
    if verdict == "mismatch":
        assert report.first_diverging_step == 2
    assert len(report.old.losses) == len(report.new.losses) == 5
    assert snapshot(tmp_path) == before
    assert list(scratch.iterdir()) == [], "the temporary copies and the work folder are removed"


def test_verify_of_a_package_writes_every_module_of_a_program_at_parity(cli, tmp_path):
    """`tf-migrate --verify project/`: task.py and model.py migrated together, trained as `python -m trainer.task`
    from above the package, verdict at the entry, both written."""
    trainer = package_tree(tmp_path)
    code, out, err = cli("--verify", "--verify-steps", "5", "project")
    assert code == 0, out + err
    verdict = out.splitlines()[-1]
    assert verdict.startswith(f"{Path('project/trainer/task.py')}: parity: 5 steps match"), out
    for name in ("task.py", "model.py"):
        assert (trainer / name).read_text() == (PACKAGE / "tf2" / "trainer" / name).read_text()
    assert "verified: 1 parity, 0 mismatch, 0 failed" in err
