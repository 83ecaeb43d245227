"""RunConfig's checkpoint cadence, kept: the migrated program saves at the steps TF1 saved at, whatever max_steps is,
locally and as the chief of a ParameterServerStrategy cluster (where the saver waits for the steps scheduled so far),
also with steps_per_execution."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import run

if not all(importlib.util.find_spec(name) for name in ("tensorflow", "tensorflow_estimator", "portpicker")):
    pytest.skip("needs the parity extra (tensorflow, tensorflow-estimator, portpicker)", allow_module_level=True)

pytestmark = pytest.mark.tensorflow

IN_PROCESS_CLUSTER = Path(__file__).resolve().parent / "in_process_cluster.py"

PROGRAM = '''\
import os
import sys

import tensorflow.compat.v1 as tf


def input_fn():
  return tf.data.Dataset.from_tensor_slices(([[1., 2.]] * 8, [[1.]] * 8)).repeat().batch(2)


def model_fn(features, labels, mode):
  logits = tf.layers.dense(features, 1)
  loss = tf.losses.mean_squared_error(labels, logits)
  train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=tf.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def main():
  model_dir, max_steps = sys.argv[1], int(sys.argv[2])
  config = tf.estimator.RunConfig(model_dir=model_dir, save_checkpoints_steps=7, keep_checkpoint_max=10)
  estimator = tf.estimator.Estimator(model_fn, config=config)
  estimator.train(input_fn, max_steps=max_steps)


if __name__ == "__main__":
  main()
'''


@pytest.fixture(scope="module")
def migrated(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("cadence")
    path = folder / "train.py"
    path.write_text(run(PROGRAM).source)
    return path


def saved_steps(program: Path, model_dir: Path, max_steps: int, chief: bool) -> list[int]:
    env = {key: value for key, value in os.environ.items() if key != "TF_CONFIG"}
    arguments = [str(program), str(model_dir), str(max_steps)]
    proc = subprocess.run([sys.executable, *([str(IN_PROCESS_CLUSTER)] if chief else []), *arguments],
                          env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    names = os.listdir(model_dir / "tf2")
    return sorted(int(name[len("ckpt-"):-len(".index")]) for name in names if name.endswith(".index"))


@pytest.mark.parametrize("chief", [False, True], ids=["locally", "as chief of an in-process cluster"])
def test_checkpoints_every_n_steps_whatever_max_steps_is(migrated, tmp_path, chief):
    # 20 steps, every 7: TF1 saved at 7, 14 and at the end; a second run to 30 goes on from 20: 27 and 30.
    assert saved_steps(migrated, tmp_path, 20, chief) == [7, 14, 20]
    assert saved_steps(migrated, tmp_path, 30, chief) == [7, 14, 20, 27, 30]


def test_checkpoints_every_n_steps_with_several_steps_per_execution(migrated, tmp_path):
    program = migrated.parent / "per_execution.py"
    text = migrated.read_text()
    assert "model.compile(optimizer, " in text
    program.write_text(text.replace("model.compile(optimizer, ", "model.compile(optimizer, steps_per_execution=3, ", 1))
    # As TF1 saved when a loop of several steps took it 7 steps or more past its last save (TPUEstimator's
    # iterations_per_loop): at 9, 18 and the end.
    assert saved_steps(program, tmp_path, 20, chief=False) == [9, 18, 20]
