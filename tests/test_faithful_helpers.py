"""The train op and eval metrics a model_fn kept as written (tier 2) builds in helpers of its module, one result per
mode (rewrites/estimator/faithful_helpers.py), and a learning rate computed of decay schedules
(rewrites/estimator/faithful_rates.py): read as if written in the model_fn; what the migration cannot follow is
refused, naming it; proven by training against TF1 (tests/parity_programs/mode_helpers_tf1.py)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import check_left, parity_of_migration, run, tf1_and_migrated_evaluations
from rewrites.estimator import faithful_helpers

ROOT = Path(__file__).resolve().parents[1]
PROGRAM = ROOT / "tests" / "parity_programs" / "mode_helpers_tf1.py"
TRAIN_OP = PROGRAM.read_text()[PROGRAM.read_text().index("def model_train_op("):
                               PROGRAM.read_text().index("def model_eval_metrics(")]


def edited(before: str, after: str) -> str:
    source = PROGRAM.read_text()
    assert source.count(before) == 1, before
    return source.replace(before, after)


def test_the_helpers_train_op_goes_its_optimizer_compiled_its_metrics_become_keras_metrics():
    result = run(PROGRAM.read_text())
    code = result.source
    assert not [f.message for f in result.findings if f.rule in ("TFM302", "TFM003")]
    assert run(code).source == code, "a second run changes nothing"
    for gone in ("def model_train_op", "def learn_rate", "train_op =", "tf_slim", "exponential_decay", "AdamOptimizer",
                 "tf.metrics.accuracy"):
        assert gone not in code.split('"""', 2)[2], gone
    assert "model.compile(TF1Adam(learning_rate=LearningRate(params), epsilon=1e-08))" in code
    assert ('    return params["lr1"] + keras.optimizers.schedules.ExponentialDecay(\n'
            '        initial_learning_rate=params["lr0"],\n        decay_steps=params["lr2"],\n'
            '        decay_rate=1 / math.e)(step)\n') in code
    assert '    accuracy = (classes, labels)\n    return {"accuracy": accuracy}\n' in code
    assert '"accuracy": keras.metrics.Accuracy(name="accuracy")' in code
    assert "  loss = model_loss(logits, labels, mode)\n" in code and "def model_loss(" in code
    assert 'loss = tf.debugging.check_numerics(loss, "LossTensor is inf or nan")' in code
    assert any(f.rule == "TFM310" and f.message.startswith("`model_train_op`, which built TF1's train op, goes")
               for f in result.findings)


def test_the_modules_before_and_after_example():
    docstring = faithful_helpers.__doc__
    before = docstring[docstring.index("Before::\n") + 9:docstring.index("After::")]
    program = "\n".join(line[4:] for line in before.splitlines()).replace(
        "    ...\n", "    logits = tf.layers.dense(features['x'], 3)\n    classes = tf.argmax(logits, 1)\n"
                    "    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)\n")
    source = PROGRAM.read_text()
    start, end = source.index("# Learning rate"), source.index("def main():")
    result = run(source[:start] + program + "\n\n" + source[end:])
    code = result.source
    assert not [f.message for f in result.findings if f.rule == "TFM302"]
    assert "model.compile(TF1Adam(learning_rate=LearningRate(params), epsilon=1e-08))" in code
    assert '    if mode == "train" or mode == "eval":\n        accuracy = (classes, labels)\n' in code
    assert ('    eval_metrics = metrics_of(classes, labels, mode)\n'
            '    return {"loss": loss, "metrics": eval_metrics}') in code
    assert "def train_op_of" not in code and "def learn_rate" not in code


def test_an_input_fn_of_one_line_is_read():
    source = edited("  estimator.train(input_fn, max_steps=args.train_steps)\n",
                    "  def train_input_fn(): return input_fn()\n"
                    "  estimator.train(train_input_fn, max_steps=args.train_steps)\n")
    result = run(source)
    assert not [f.message for f in result.findings if f.rule == "TFM302"]
    assert "  dataset = train_input_fn()\n" in result.source


@pytest.mark.parametrize("before, after, message", [
    ("    tf.summary.scalar(\"learn_rate\", lr)\n", "    tf.add_to_collection(\"rates\", lr)\n",
     "`tf.add_to_collection(\"rates\", lr)` in `model_train_op`, which builds the train op: a helper doing more"),
    ("    optimizer = tf.train.AdamOptimizer(lr)\n",
     "    optimizer = tf.train.AdamOptimizer(lr)\n    scale = tf.reduce_sum(loss)\n",
     "`scale = tf.reduce_sum(loss)` in `model_train_op`, which builds the train op, computes what the optimizer"),
    ("  if mode == tf.estimator.ModeKeys.TRAIN:\n    lr =", "  if mode == tf.estimator.ModeKeys.EVAL:\n    lr =",
     "`model_train_op` gives the train op only when the mode is not TRAIN"),
    ("  if mode == tf.estimator.ModeKeys.TRAIN or mode == tf.estimator.ModeKeys.EVAL:\n    accuracy",
     "  if mode == tf.estimator.ModeKeys.TRAIN:\n    accuracy", "`model_eval_metrics` gives the metrics only when"),
    ("  eval_metrics = model_eval_metrics(classes, labels, mode)\n",
     "  eval_metrics = model_eval_metrics(classes, labels, mode)\n  model_train_op(loss, mode, params)\n",
     "`model_train_op`, which builds the train op or eval metrics, is also called elsewhere"),
    ("  train_op = model_train_op(loss, mode, params)\n", "  train_op = model_train_op(loss * 2, mode, params)\n",
     "`model_train_op` minimizes its `loss`, which the model_fn must give it as a name"),
    ('  return params["lr1"] + tf.train.exponential_decay(', '  return step + tf.train.exponential_decay(',
     "the optimizer's learning rate reads `step`"),
    ('  return params["lr1"] + tf.train.exponential_decay(',
     '  return tf.sqrt(params["lr1"]) + tf.train.exponential_decay(',
     "the optimizer's learning rate is computed by `tf.sqrt(params[\"lr1\"])`"),
    ('    return {"accuracy": accuracy}\n', '    return {"accuracy": accuracy, "loss": tf.reduce_mean(classes)}\n',
     "`tf.reduce_mean(classes)` in the eval_metric_ops `model_eval_metrics` returns"),
    ("  eval_metrics = model_eval_metrics(classes, labels, mode)\n",
     "  eval_metrics = model_eval_metrics(classes, labels, tf.estimator.ModeKeys.EVAL)\n",
     "`model_eval_metrics` reads a `mode` the model_fn does not give it as its own `mode`"),
    ("  train_op = model_train_op(loss, mode, params)\n", "  train_op = model_train_op(loss, params=params, mode='train')\n",
     "`model_train_op` reads a `mode` the model_fn does not give it as its own `mode`"),
    ("    accuracy = tf.metrics.accuracy(classes, labels)\n",
     "    accuracy = tf.metrics.accuracy(classes, labels)\n    mode = tf.estimator.ModeKeys.PREDICT\n",
     "`model_eval_metrics` reads a `mode` the model_fn does not give it as its own `mode`"),
    ("def model_eval_metrics(classes, labels, mode):\n", "mode = 'eval'\n\n\ndef model_eval_metrics(classes, labels):\n",
     "`model_eval_metrics` reads a `mode` the model_fn does not give it as its own `mode`"),
], ids=["something else too", "a local the optimizer does not read", "no train op in TRAIN", "no metrics in EVAL",
        "called elsewhere", "an expression minimized", "the rate reads step", "a rate of TF1 code", "not a metric",
        "the metrics' mode a constant", "the train op's mode a constant", "the mode set in it",
        "a global mode"])
def test_helpers_the_migration_cannot_follow_leave_the_program_saying_why(before, after, message):
    check_left(edited(before, after), message)


@pytest.mark.tensorflow
def test_helpers_migrated_train_as_tf1_did(tmp_path):
    printed = parity_of_migration(tmp_path, PROGRAM.read_text(), PROGRAM.read_text(), "--steps", "20")
    assert re.match(r"PARITY: 20 steps match .*, eval loss matches, 7 variables match", printed), printed


@pytest.mark.tensorflow
def test_a_migration_losing_the_rates_floor_is_caught(tmp_path):
    """The same harness, against the migration with the floor of the rate (`params["lr1"] + `) dropped."""
    migrated = run(PROGRAM.read_text()).source
    wrong = migrated.replace('return params["lr1"] + keras.', "return keras.")
    assert wrong != migrated
    (tmp_path / "train.py").write_text(PROGRAM.read_text())
    (tmp_path / "train_tf2.py").write_text(wrong)
    env = {key: value for key, value in os.environ.items() if key != "TF_CONFIG"}
    done = subprocess.run([str(Path(sys.executable).parent / "tf-migrate"), "parity", "train.py", "train_tf2.py",
                           "--steps", "20"], cwd=tmp_path, capture_output=True, text=True, env=env, timeout=900)
    assert done.returncode == 1 and "MISMATCH" in done.stdout, done.stdout + done.stderr[-3000:]


@pytest.mark.tensorflow
def test_helpers_metrics_evaluate_tf1s_checkpoint_as_tf1_did(tmp_path):
    """TF1 trains and evaluates; the migration restores that checkpoint and evaluates: the same loss and accuracy."""
    printed = tf1_and_migrated_evaluations(tmp_path, PROGRAM.read_text(), r"eval loss (\S+), accuracy (\S+)$")
    assert printed[1] == pytest.approx(printed[0], rel=1e-5)
    assert 0 < printed[0][1] < 1


def test_a_rate_of_a_schedule_written_in_the_model_fn_is_the_generated_schedule():
    result = run(edited("  train_op = model_train_op(loss, mode, params)\n",
                        '  rate = params["lr1"] * 2 + tf.train.exponential_decay(params["lr0"], '
                        'tf.train.get_global_step(), 10, 0.5)\n'
                        "  train_op = tf.train.GradientDescentOptimizer(rate).minimize(\n"
                        "      loss, tf.train.get_global_step())\n"))
    code = result.source
    assert not [f.message for f in result.findings if f.rule == "TFM302"]
    assert "model.compile(keras.optimizers.legacy.SGD(learning_rate=LearningRate(params)))" in code
    assert ('    return params["lr1"] * 2 + keras.optimizers.schedules.ExponentialDecay(\n'
            '        initial_learning_rate=params["lr0"], decay_steps=10, decay_rate=0.5)(step)\n') in code
    assert "  rate = " not in code


def test_a_rate_reading_no_params_is_a_schedule_made_of_nothing():
    result = run(edited("  train_op = model_train_op(loss, mode, params)\n",
                        "  rate = 0.001 + tf.train.exponential_decay(0.05, tf.train.get_global_step(), 10, 0.5)\n"
                        "  train_op = tf.train.GradientDescentOptimizer(rate).minimize(\n"
                        "      loss, tf.train.get_global_step())\n"))
    code = result.source
    assert "model.compile(keras.optimizers.legacy.SGD(learning_rate=LearningRate()))" in code
    assert "  def __call__(self, step):\n    return 0.001 + keras.optimizers.schedules.ExponentialDecay(" in code
    assert "self.params" not in code.split("class LearningRate", 1)[1].split("class ModelFnModel", 1)[0]
