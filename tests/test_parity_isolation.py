"""Both sides keep to their own folders (issue 29): a program's default model_dir holding a checkpoint of an
earlier TF1 run is neither read nor written by `parity` or `--verify`; the run trains from the same fresh start on
both sides and passes without `--` arguments, the eval loss with it (its last eval batch is short)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import snapshot

from migrator.parity.isolation import Isolation

ROOT = Path(__file__).resolve().parents[1]
TRAINER = ROOT / "tests" / "parity_programs" / "csv_trainer_tf1.py"
TF_MIGRATE = str(Path(sys.executable).parent / "tf-migrate")


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {key: value for key, value in os.environ.items() if key != "TF_CONFIG"}
    env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    return subprocess.run(list(args), cwd=cwd, env=env, capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="module")
def trainer_beside_its_checkpoint(tmp_path_factory) -> Path:
    """The trainer (200 evaluation rows in batches of 32: the last one of 8) and its migration, side by side; its
    default model_dir (`model/` beside them) holds the checkpoint of a TF1 run to its max_steps (100): a migrated
    program that read it would resume there, at the end of its training."""
    folder = tmp_path_factory.mktemp("trainer")
    shutil.copy(TRAINER, folder / "train.py")
    planted = run(sys.executable, "train.py", cwd=folder)
    assert planted.returncode == 0, planted.stderr[-3000:]
    assert (folder / "model" / "model.ckpt-100.index").exists()
    shutil.copy(folder / "train.py", folder / "train_tf2.py")
    migrated = run(TF_MIGRATE, "train_tf2.py", cwd=folder)
    assert migrated.returncode == 0, migrated.stdout + migrated.stderr
    migrated_code = (folder / "train_tf2.py").read_text()
    assert "CheckpointManager" in migrated_code and "TF1EvalLoss(" in migrated_code
    return folder


def test_parity_neither_reads_nor_writes_the_programs_model_dir(trainer_beside_its_checkpoint):
    folder = trainer_beside_its_checkpoint
    before = snapshot(folder / "model")
    result = run(TF_MIGRATE, "parity", "train.py", "train_tf2.py", "--steps", "5", cwd=folder)
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    assert result.stdout.startswith("PARITY: 5 steps match")
    assert snapshot(folder / "model") == before


def test_verify_neither_reads_nor_writes_the_programs_model_dir(trainer_beside_its_checkpoint):
    folder = trainer_beside_its_checkpoint
    shutil.copy(folder / "train.py", folder / "again.py")
    before = snapshot(folder / "model")
    result = run(TF_MIGRATE, "--check", "--verify", "--verify-steps", "5", "again.py", cwd=folder)
    assert result.returncode == 1, result.stdout + result.stderr[-3000:]  # it would change
    assert result.stdout.splitlines()[-1].startswith("again.py: parity: 5 steps match"), result.stdout
    assert snapshot(folder / "model") == before


def test_paths_are_placed_under_the_sides_folder(tmp_path):
    isolation = Isolation(tmp_path / "new_files", tmp_path)
    assert isolation.place("/home/me/model") == str(tmp_path / "new_files" / "home" / "me" / "model")
    assert isolation.place("gs://bucket/run") == str(tmp_path / "new_files" / "gs" / "bucket" / "run")
    assert isolation.place(Path("model")) == str(tmp_path / "new_files" / os.getcwd().lstrip("/") / "model")
    inside = str(tmp_path / "tmp" / "x")
    assert isolation.place(inside) == inside and isolation.place(isolation.place("/a")) == isolation.place("/a")
    assert isolation.place(None) is None and isolation.place(3) == 3


def test_file_calls_reach_what_the_side_wrote_and_data_where_it_is(tmp_path):
    """tf.io.gfile on a path the side wrote in its folder (an export being finished) goes there; a data file the
    program reads stays where it is."""
    isolation = Isolation(tmp_path / "new_files", tmp_path / "work")
    data = "/srv/data/train.csv"
    assert isolation.overlaid(data) == data  # nothing written there: read where it is
    written = Path(isolation.place("/home/me/model/export/temp-1/saved_model.pb"))
    written.parent.mkdir(parents=True)
    written.write_bytes(b"")
    assert isolation.overlaid("/home/me/model/export/temp-1/saved_model.pb") == str(written)
    assert isolation.overlaid("/home/me/model/export/temp-1/other") == str(written.parent / "other")  # its folder
    assert isolation.overlaid("/home/me/model/export/1") == str(written.parent.parent / "1")
    assert isolation.overlaid("/home/me/elsewhere/file") == "/home/me/elsewhere/file"


def test_a_warm_start_reads_the_checkpoint_the_side_wrote(tmp_path):
    """Keras' model_to_estimator writes its first checkpoint in `<model_dir>/keras` (a folder it makes, placed in the
    side's folder) and warm-starts from it: the path, or WarmStartSettings' ckpt_to_initialize_from, follows."""
    from collections import namedtuple

    isolation = Isolation(tmp_path / "new_files", tmp_path / "work")
    Path(isolation.place("/home/me/out/keras")).mkdir(parents=True)
    placed = isolation.place("/home/me/out/keras/keras_model.ckpt")
    assert isolation.warm_start("/home/me/out/keras/keras_model.ckpt") == placed
    settings = namedtuple("WarmStartSettings", "ckpt_to_initialize_from vars_to_warm_start")
    assert isolation.warm_start(settings("/home/me/out/keras/keras_model.ckpt", ".*")) == settings(placed, ".*")
    assert isolation.warm_start("/srv/pretrained/model.ckpt") == "/srv/pretrained/model.ckpt"
    assert isolation.warm_start(None) is None
