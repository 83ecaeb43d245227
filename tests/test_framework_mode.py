"""SageMaker's legacy framework mode (rewrites/estimator/framework_mode.py): a module of model_fn and input functions
the container trained gets the `__main__` block that did it, migrated with the rest."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from helpers import run

MODULE = '''\
import os

import numpy as np
import tensorflow as tf


def model_fn(features, labels, mode, params):
    logits = tf.layers.dense(features["x"], 3, kernel_initializer=tf.glorot_uniform_initializer(seed=1))
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions={"classes": tf.argmax(logits, 1)})
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    optimizer = tf.train.GradientDescentOptimizer(params.get("learning_rate", 0.1))
    train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def _load(training_dir, name):
    data = np.load(os.path.join(training_dir, name))
    return tf.data.Dataset.from_tensor_slices(({"x": data["x"]}, data["y"]))


def train_input_fn(training_dir, params):
    return _load(training_dir, "train.npz").repeat().batch(4)


def eval_input_fn(training_dir, params):
    return _load(training_dir, "test.npz").batch(4)


def serving_input_fn(params):
    inputs = {"x": tf.placeholder(tf.float32, [None, 2])}
    return tf.estimator.export.ServingInputReceiver(inputs, inputs)
'''


def test_a_framework_mode_module_gets_the_main_block_its_container_ran_migrated():
    result = run(MODULE)
    code = result.source
    assert '\nif __name__ == "__main__":\n' in code and "import json\n" in code
    assert '    hyperparameters = json.loads(os.environ.get("SM_HPS", "{}"))\n' in code
    assert '    model_dir = hyperparameters.get("checkpoint_path", os.environ.get("SM_MODEL_DIR"))\n' in code
    assert "    dataset = train_input_fn(training_dir, hyperparameters)\n" in code
    assert "steps_per_epoch=training_steps - steps_done" in code
    assert '"Servo"' in code and "lambda: serving_input_fn(hyperparameters)" in code
    assert "tf.estimator" not in code and "EstimatorSpec" not in code
    framework = [f for f in result.findings if "SageMaker framework mode" in f.message]
    assert [(f.rule, f.line) for f in framework] == [("TFM301", 7)]  # the model_fn's line
    assert all(f.line <= MODULE.count("\n") for f in result.findings)


@pytest.mark.parametrize("before, after", [
    ("def train_input_fn(training_dir, params):", "def train_input_fn(path, params):"),
    ("def eval_input_fn(training_dir, params):", "def eval_input_fn(training_dir, *args):"),
    ("def serving_input_fn(params):",
     "def estimator_fn(run_config, params):\n    pass\n\n\ndef serving_input_fn(params):"),
    ("def serving_input_fn(params):", 'if __name__ == "__main__":\n    pass\n\n\ndef serving_input_fn(params):'),
], ids=["a parameter the container did not fill", "a star argument", "estimator_fn", "its own main"])
def test_modules_the_container_did_not_run_so_are_not_given_its_block(before, after):
    assert MODULE.count(before) == 1
    source = MODULE.replace(before, after)
    result = run(source)
    assert result.source == source
    assert not any("SageMaker framework mode" in f.message for f in result.findings)


def test_a_framework_mode_program_the_migration_cannot_take_stays_and_says_why_at_its_own_lines():
    source = MODULE.replace("    loss = tf.losses", "    tf.add_to_collection('extra', logits)\n    loss = tf.losses")
    source = source.replace("train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())",
                            "train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step(), "
                            "var_list=tf.get_collection('extra'))")
    result = run(source)
    assert result.source == source
    why = [f for f in result.findings if f.message.startswith("SageMaker framework mode's training, written out")]
    assert why and all(f.rule == "TFM302" and f.line <= source.count("\n") for f in why)


@pytest.mark.tensorflow
def test_the_migrated_framework_mode_script_trains_and_exports_as_script_mode_runs_it(tmp_path):
    import numpy as np

    rng = np.random.RandomState(0)
    for name, count in (("train.npz", 24), ("test.npz", 8)):
        labels = rng.randint(3, size=count)
        np.savez(tmp_path / name, x=(rng.normal(size=(count, 2)) + labels[:, None]).astype(np.float32), y=labels)
    (tmp_path / "mnist.py").write_text(run(MODULE).source)
    env = {**os.environ, "SM_HPS": json.dumps({"training_steps": 5, "evaluation_steps": 2, "learning_rate": 0.05}),
           "SM_CHANNEL_TRAINING": str(tmp_path), "SM_MODEL_DIR": str(tmp_path / "model"),
           "TF_CPP_MIN_LOG_LEVEL": "3"}
    env.pop("TF_CONFIG", None)
    done = subprocess.run([sys.executable, "mnist.py"], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    exports = list((tmp_path / "model" / "export" / "Servo").iterdir())
    assert len(exports) == 1 and (exports[0] / "saved_model.pb").is_file()
    assert list((tmp_path / "model" / "tf2").glob("ckpt-5.index"))
