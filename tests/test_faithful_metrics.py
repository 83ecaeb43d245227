"""Tier 2 (rewrites/estimator/faithful_metrics.py): eval_metric_ops of `tf.metrics.precision`, `recall` and `auc` in a
model_fn kept as written become Keras' Precision, Recall and AUC of the same tensors. Precision and Recall count a
prediction positive above 0 (TF1: when it is not 0, the same for class ids, booleans and probabilities), AUC sums by
interpolation (TF1's careful_interpolation; its default trapezoidal sum differs a little): findings say so."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from helpers import run
from test_faithful import PROGRAM, TF_MIGRATE


PRECISION = ('    metrics = {"accuracy": accuracy, "mean_logit": tf.metrics.mean(logits)}\n',
             '    positive, predicted = tf.equal(labels, 1), tf.equal(tf.argmax(logits, 1), 1)\n'
             '    metrics = {"accuracy": accuracy, "mean_logit": tf.metrics.mean(logits),\n'
             '               "precision": tf.metrics.precision(labels=positive, predictions=predicted),\n'
             '               "recall": tf.metrics.recall(labels=positive, predictions=predicted),\n'
             '               "auc": tf.metrics.auc(positive, tf.nn.softmax(logits)[:, 1], num_thresholds=50,\n'
             '                                     summation_method="careful_interpolation")}\n')
PRINTED = ('  print("eval loss: %s, accuracy %s, mean logit %s" % (metrics["loss"], metrics["accuracy"], '
           'metrics["mean_logit"]))\n',
           '  print("eval precision %s, recall %s, auc %s" % (metrics["precision"], metrics["recall"], '
           'metrics["auc"]))\n')


# tf.layers.dense under TF 2.15 draws its default kernel initializer's seed anew each run, tf_random_seed or not:
# seeded here, TF1's training lands on the same weights every run, so the guard below holds or fails every time.
SEEDED = ('activation=tf.nn.relu, name=',
          'activation=tf.nn.relu,\n                          kernel_initializer=tf.glorot_uniform_initializer(seed=index), name=')


def with_precision() -> str:
    source = PROGRAM.read_text()
    for before, after in (PRECISION, PRINTED, SEEDED):
        assert source.count(before) == 1, before
        source = source.replace(before, after)
    return source


def test_precision_and_recall_become_keras_metrics_counting_positives_above_zero():
    result = run(with_precision())
    assert 'keras.metrics.Precision(thresholds=0.0, name="precision")' in result.source
    assert 'keras.metrics.Recall(thresholds=0.0, name="recall")' in result.source
    assert '"precision": (positive, predicted)' in result.source
    notes = [f.message for f in result.findings if "counts a prediction positive above 0" in f.message]
    assert len(notes) == 2 and notes[0].startswith("tf.metrics.precision -> keras.metrics.Precision")


@pytest.mark.tensorflow
def test_precision_recall_and_auc_of_tf1s_checkpoint_are_tf1s(tmp_path):
    """The TF1 program trains and evaluates; the migrated one, on the same model_dir, restores that checkpoint,
    trains no more and evaluates: the same precision, recall and AUC."""
    (tmp_path / "train.py").write_text(with_precision())
    (tmp_path / "train_tf2.py").write_text(with_precision())
    env = {key: value for key, value in os.environ.items() if key != "TF_CONFIG"}
    env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    assert subprocess.run([TF_MIGRATE, "train_tf2.py"], cwd=tmp_path, capture_output=True, env=env).returncode == 0
    printed = []
    for program in ("train.py", "train_tf2.py"):
        result = subprocess.run([sys.executable, program, "--model_dir", "model"], cwd=tmp_path, capture_output=True,
                                text=True, env=env, timeout=600)
        assert result.returncode == 0, result.stderr[-3000:]
        printed.append([float(value) for value in re.search(r"eval precision (\S+), recall (\S+), auc (\S+)$",
                                                             result.stdout.strip()).groups()])
    assert printed[1] == pytest.approx(printed[0], rel=1e-6)
    assert 0 < printed[0][0] < 1 or 0 < printed[0][1] < 1  # a count that could differ
    assert 0.5 < printed[0][2] < 1


AUC = {
    "TF1's default sum": ("tf.metrics.auc(labels, probabilities)", 'keras.metrics.AUC(name="auc")', True),
    "careful_interpolation": ('tf.metrics.auc(labels, probabilities, summation_method="careful_interpolation")',
                              'keras.metrics.AUC(name="auc")', False),
    "its arguments": ('tf.metrics.auc(labels, probabilities, num_thresholds=20, curve="PR", summation_method="minoring")',
                      'keras.metrics.AUC(num_thresholds=20, curve="PR", summation_method="minoring", name="auc")',
                      False),
}


@pytest.mark.parametrize("metric, keras, differs", AUC.values(), ids=AUC)
def test_auc_becomes_keras_auc_saying_where_the_sum_differs(metric, keras, differs):
    source = PROGRAM.read_text().replace('"mean_logit": tf.metrics.mean(logits)', f'"auc": {metric}').replace(
        "    accuracy = ", "    probabilities = tf.nn.softmax(logits)[:, 1]\n    accuracy = ").replace(
        'metrics["mean_logit"]', 'metrics["auc"]')
    result = run(source)
    assert keras in result.source and '"auc": (labels, probabilities)' in result.source
    assert any("trapezoidal sum gives a slightly different value" in f.message for f in result.findings) == differs


def test_auc_of_a_summation_method_read_at_run_time_leaves_the_program():
    source = PROGRAM.read_text().replace('"mean_logit": tf.metrics.mean(logits)',
                                         '"auc": tf.metrics.auc(labels, logits, summation_method=params["sum"])')
    result = run(source)
    assert "ModelFnModel" not in result.source
    assert any("summation_method that is not a literal TF1 name" in f.message for f in result.findings)


def test_a_metric_also_written_to_a_summary_is_migrated_and_the_summary_goes():
    """`tf.summary.scalar("accuracy", accuracy[1])` beside eval_metric_ops: TF1 wrote it to model_dir's events; the
    summary goes (tier 2 drops summaries on lines of their own) and the metric is Keras' Accuracy all the same."""
    before = "predictions=tf.argmax(logits, 1))\n"
    source = PROGRAM.read_text()
    assert source.count(before) == 1
    result = run(source.replace(before, before + '    tf.summary.scalar("accuracy", accuracy[1])\n'))
    assert "ModelFnModel" in result.source and "tf.summary.scalar" not in result.source
    assert any(f.message.startswith('`tf.summary.scalar("accuracy", accuracy[1])` goes') for f in result.findings)
