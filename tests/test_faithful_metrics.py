"""Tier 2: eval_metric_ops of `tf.metrics.precision` and `recall` in a model_fn kept as written become Keras'
Precision and Recall of the same tensors, counting a prediction positive above 0 (TF1: when it is not 0, the same
for class ids, booleans and probabilities), with a finding that says so."""

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
             '               "recall": tf.metrics.recall(labels=positive, predictions=predicted)}\n')
PRINTED = ('  print("eval loss: %s, accuracy %s, mean logit %s" % (metrics["loss"], metrics["accuracy"], '
           'metrics["mean_logit"]))\n',
           '  print("eval precision %s, recall %s" % (metrics["precision"], metrics["recall"]))\n')


def with_precision() -> str:
    source = PROGRAM.read_text()
    for before, after in (PRECISION, PRINTED):
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
def test_precision_and_recall_of_tf1s_checkpoint_are_tf1s(tmp_path):
    """The TF1 program trains and evaluates; the migrated one, on the same model_dir, restores that checkpoint,
    trains no more and evaluates: the same precision and recall."""
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
        printed.append([float(value) for value in re.search(r"eval precision (\S+), recall (\S+)$",
                                                             result.stdout.strip()).groups()])
    assert printed[1] == pytest.approx(printed[0], rel=1e-6)
    assert 0 < printed[0][0] < 1 or 0 < printed[0][1] < 1  # a count that could differ
