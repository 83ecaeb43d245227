"""Tier 2: a model_fn kept as written that reads TF1's trainable variables (the weight decay of TensorFlow's own
ResNet programs, `tf.add_n([tf.nn.l2_loss(v) for v in tf.trainable_variables()])`). The shim leaves TF1's graph
collections empty; the generated model's custom getter puts each variable the model_fn's code asks for in the
collection of the trainable variables, as TF1's graph held them, in the same order."""

from __future__ import annotations

import os
import re
import subprocess

import pytest
from helpers import run
from test_faithful import PROGRAM, TF_MIGRATE

DECAY = "  loss += 0.01 * tf.add_n([tf.nn.l2_loss(v) for v in tf.trainable_variables()])\n"
READING = "  loss += tf.losses.get_regularization_loss()\n"


def weight_decay(reading: str = DECAY) -> str:
    source = PROGRAM.read_text()
    assert source.count(READING) == 1
    return source.replace(READING, reading)


@pytest.mark.parametrize("reading", [DECAY, DECAY.replace(
    "tf.trainable_variables()", "tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES)")], ids=["function", "collection"])
def test_the_trainable_variables_are_collected_by_the_custom_getter(reading):
    code = run(weight_decay(reading)).source
    assert "custom_getter=self.tf1_variable" in code
    assert "tf.compat.v1.get_collection_ref(tf.compat.v1.GraphKeys.TRAINABLE_VARIABLES)" in code
    assert "self.tables" not in code  # no table: the getter only collects


@pytest.mark.parametrize("made", ["tf.Variable(tf.zeros([3]))", "tf.keras.layers.Dense(3)(net)"],
                         ids=["a tf.Variable", "a Keras layer's"])
def test_a_variable_no_getter_sees_leaves_the_program(made):
    """TF1's graph held a tf.Variable's and a Keras layer's variables among the trainable ones; the getter sees
    neither, so the weight decay would leave them out."""
    source = weight_decay().replace('  logits = tf.matmul(net, weights)\n',
                                    f'  logits = tf.matmul(net, weights) + {made}\n')
    result = run(source)
    assert result.source == source
    assert any(f.rule == "TFM302" and "makes a variable TF1's trainable variables held and the Keras model's custom "
               "getter does not see" in f.message for f in result.findings)


def test_other_collections_still_leave_the_program():
    result = run(weight_decay(DECAY.replace("tf.trainable_variables()", "tf.global_variables()")))
    assert any(f.rule == "TFM302" and "reads TF1's graph collections" in f.message for f in result.findings)


@pytest.mark.tensorflow
def test_the_weight_decay_of_the_trainable_variables_trains_as_tf1s(tmp_path):
    """Parity over 20 steps and the eval loss, from the same initial weights: the decay sums the same variables."""
    (tmp_path / "train.py").write_text(weight_decay())
    (tmp_path / "train_tf2.py").write_text(weight_decay())
    env = {key: value for key, value in os.environ.items() if key != "TF_CONFIG"}
    migrate = subprocess.run([TF_MIGRATE, "train_tf2.py"], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert migrate.returncode == 0, migrate.stdout + migrate.stderr
    result = subprocess.run([TF_MIGRATE, "parity", "train.py", "train_tf2.py"], cwd=tmp_path, capture_output=True,
                            text=True, env=env, timeout=900)
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    assert re.match(r"PARITY: 20 steps match .*, eval loss matches, 5 variables match", result.stdout), result.stdout

