"""`tf-migrate parity` of between-graph programs that train under a `tf.train.Supervisor`.

The old programs are examples/ps_cluster/train.py as the distributed-TensorFlow tutorials
wrote it (tests/parity_programs/ps_cluster_supervisor*_tf1.py: a hand-written loss, a
Supervisor with its logdir ./train_logs, a loop with its own limit of 1000 steps); the
new one is examples/ps_cluster/train_tf2.py, which computes the same thing. Each parity
run is made once and shared by the tests that read it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from test_parity import EXAMPLES, PROGRAMS, assert_parity, parity

pytestmark = pytest.mark.tensorflow

SUPERVISOR = PROGRAMS / "ps_cluster_supervisor_tf1.py"  # managed_session, fed batches, `while not sv.should_stop() and step < 1000`
PREPARED = PROGRAMS / "ps_cluster_supervisor_prepare_tf1.py"  # prepare_or_wait_for_session, an iterator, `while True`
MIGRATED = EXAMPLES / "ps_cluster" / "train_tf2.py"
STEPS = 20


def run_parity(old: Path, folder: Path) -> tuple[subprocess.CompletedProcess, dict, Path]:
    """`tf-migrate parity OLD train_tf2.py --steps 20` from an empty folder: (result, JSON report, that folder)."""
    cwd, report = folder / "cwd", folder / "report.json"
    cwd.mkdir()
    result = parity(old, MIGRATED, "--steps", str(STEPS), "--json", str(report), cwd=cwd)
    return result, json.loads(report.read_text()) if report.exists() else {}, cwd


@pytest.fixture(scope="session")
def managed(tmp_path_factory):
    return run_parity(SUPERVISOR, tmp_path_factory.mktemp("managed"))


@pytest.fixture(scope="session")
def prepared(tmp_path_factory):
    return run_parity(PREPARED, tmp_path_factory.mktemp("prepared"))


def assert_matches_step_by_step(run) -> None:
    result, data, _ = run
    assert_parity(result)
    assert (data["rtol"], data["atol"]) == (1e-5, 1e-7), "the default tolerance"
    assert len(data["old"]["losses"]) == len(data["new"]["losses"]) == STEPS, "the harness's steps, not the loop's 1000"
    assert data["old"]["losses"] != data["old"]["losses"][:1] * STEPS, "the losses move: something was trained"
    assert max(step["rel_diff"] for step in data["step_comparisons"]) <= 1e-5
    assert [v["name"] for v in data["variables"]] == ["weights", "bias"] and all(v["ok"] for v in data["variables"])


def test_managed_session_program_with_a_hand_written_loss_matches_its_migration(managed):
    """The loss fetched with each step is what the optimizer minimized: no tf.losses collection to find it in."""
    assert_matches_step_by_step(managed)


def test_prepare_or_wait_for_session_program_on_an_iterator_matches_its_migration(prepared):
    """`sess.run(train_op)` without a feed trains (the harness fetches the loss), `sess.run(global_step)` does not;
    the loop asks nothing of the Supervisor and gets OutOfRangeError after the harness's steps."""
    assert_matches_step_by_step(prepared)


def test_the_programs_logdir_is_not_written(managed, prepared):
    """The Supervisors' logdir, ./train_logs, would be in the folder the harness ran from."""
    for _, _, cwd in (managed, prepared):
        assert list(cwd.iterdir()) == []


def test_old_side_gives_the_supervisor_a_logdir_in_its_work_folder(tmp_path):
    """The old side on its own: the Supervisor saves its first checkpoint and graph in the work folder, the
    program stops after the harness's steps, and its own logdir is never made."""
    from migrator.parity.runner import Options, prepare, side_environment

    work, cwd = tmp_path / "work", tmp_path / "cwd"
    work.mkdir(), cwd.mkdir()
    prepare(work, Options(steps=3), {"old": {}, "new": {}}, [])
    result = subprocess.run([sys.executable, "-m", "migrator.parity.old_side", str(work), str(SUPERVISOR)], cwd=cwd,
                            env=side_environment(work), capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    assert len(json.loads((work / "old.json").read_text())["losses"]) == 3
    assert {"checkpoint", "graph.pbtxt", "model.ckpt-0.index"} <= {path.name for path in (work / "old_logdir").iterdir()}
    assert list(cwd.iterdir()) == []
