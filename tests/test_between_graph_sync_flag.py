"""mnist_replica.py's --sync_replicas, migrated (test_between_graph_sync.SYNC_FLAG): the migrated program runs as
TF1's command lines start it, in both modes, and trains as TF1 did."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers import run
from test_between_graph_sync import SYNC_FLAG
from test_examples import run_as_cluster, run_synchronous
from test_parity import assert_parity, parity

pytestmark = pytest.mark.tensorflow

STEPS = [str(step) for step in range(1, 21)]


def migrated(folder: Path, source: str | None = None) -> tuple[Path, Path]:
    """(the TF1 program, its migration) in ``folder``."""
    old, new = folder / "tf1.py", folder / "tf2.py"
    old.write_text(source or SYNC_FLAG)
    new.write_text(run(old.read_text()).source)
    assert "MultiWorkerMirroredStrategy" in new.read_text()
    return old, new


def test_asynchronous_by_default_a_ps_two_workers_and_the_chief_driving_them(tmp_path):
    chief = run_as_cluster(str(migrated(tmp_path)[1]), 2, tmp_path)
    assert chief.returncode == 0, chief.stderr[-3000:]
    assert re.findall(r"global step: (\d+)", chief.stdout) == STEPS


def test_synchronous_with_the_flag_two_workers_training_together_and_a_ps_that_ends(tmp_path):
    workers = run_synchronous(migrated(tmp_path)[1], 2, tmp_path, "--sync_replicas")
    for worker in workers:
        assert worker.returncode == 0, worker.stderr[-3000:]
        assert re.findall(r"global step: (\d+)", worker.stdout) == STEPS
    # One model, mirrored: both workers validate the same trained variables.
    (first,), (second,) = (re.findall(r"validation cross entropy = (\S+)", w.stdout) for w in workers)
    assert first == second


def test_synchronous_with_the_flag_keeps_parity_step_by_step(tmp_path):
    """TF1's chief starting without tokens (as the sync_replicas example): its first steps do not use stale
    gradients, which TFM106 says the migrated steps cannot reproduce."""
    source = SYNC_FLAG.replace("opt.get_init_tokens_op()", "opt.get_init_tokens_op(num_tokens=0)")
    assert_parity(parity(*migrated(tmp_path, source), "--", "--sync_replicas"))
