"""add_metrics(estimator, metric_fn) on a canned estimator: each metric the metric_fn returns becomes the Keras
metric of the same key, compiled with the canned model; the wrapping and the metric_fn go with the Estimator.
(Trained in tests/test_parity.py: the premade_iris_regressor_v1 variant.)"""

from __future__ import annotations

import pytest
from test_estimator_programs import INPUT_FN, run_one

PROGRAM = "import tensorflow.compat.v1 as tf\n\n\n" + INPUT_FN + '''

def my_rmse(labels, predictions):
  pred_values = tf.squeeze(input=predictions["predictions"], axis=-1)
  return {"rmse": tf.metrics.root_mean_squared_error(labels=labels, predictions=pred_values)}


def train_and_evaluate(output_dir, rows, labels):
  columns = [tf.feature_column.numeric_column("x")]
  estimator = tf.estimator.DNNRegressor(hidden_units=[8], feature_columns=columns, model_dir=output_dir)
  estimator = tf.contrib.estimator.add_metrics(estimator, my_rmse)
  train_spec = tf.estimator.TrainSpec(make_input_fn(rows, labels, tf.estimator.ModeKeys.TRAIN, 16), max_steps=20)
  eval_spec = tf.estimator.EvalSpec(make_input_fn(rows, labels, tf.estimator.ModeKeys.EVAL, 16), steps=None)
  metrics, _ = tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)
  print(metrics["rmse"])
'''


def manual(result) -> list[str]:
    return [f"{f.rule} {f.message}" for f in result.findings if f.safety.value == "manual"]


def test_a_regressors_added_metric_is_compiled_under_its_key_and_the_wrapping_goes():
    result = run_one(PROGRAM)
    assert manual(result) == []
    assert 'keras.metrics.RootMeanSquaredError(name="rmse")' in result.source
    assert "add_metrics" not in result.source and "def my_rmse" not in result.source
    assert 'print(metrics["rmse"])' in result.source
    assert "TFM301" in {f.rule for f in result.findings}
    assert any("the Keras model reports average_loss, rmse, loss:" in f.message for f in result.findings)


def test_the_metric_fn_kept_when_something_else_uses_it():
    result = run_one(PROGRAM + "\n\nMETRICS = [my_rmse]\n")
    assert manual(result) == [] and "def my_rmse" in result.source


def test_a_classifiers_accuracy_of_class_ids_is_the_heads_accuracy_under_its_key():
    source = (PROGRAM.replace("DNNRegressor(", "DNNClassifier(n_classes=3, ")
              .replace('tf.squeeze(input=predictions["predictions"], axis=-1)', 'predictions["class_ids"]')
              .replace("tf.metrics.root_mean_squared_error", "tf.metrics.accuracy")
              .replace('"rmse"', '"acc"'))
    result = run_one(source)
    assert manual(result) == []
    assert 'keras.metrics.SparseCategoricalAccuracy(name="acc")' in result.source


@pytest.mark.parametrize("change, why", [
    (('tf.metrics.root_mean_squared_error(labels=labels, predictions=pred_values)',
      'tf.metrics.root_mean_squared_error(labels=labels, predictions=pred_values, weights=labels)'),
     "tf.metrics.root_mean_squared_error is migrated on (labels, predictions[...]) without weights"),
    (('tf.metrics.root_mean_squared_error', 'tf.metrics.precision'),
     "tf.metrics.precision of predictions['predictions'] of a canned DNNRegressor"),
    (("  pred_values = tf.squeeze", "  if labels is None:\n    return {}\n  pred_values = tf.squeeze"),
     "a metric_fn of `name = ...` statements"),
    (("def my_rmse(labels, predictions):", "def my_rmse(labels, preds):"),
     "a metric_fn takes labels, predictions, features and config by those names"),
], ids=["weights", "precision", "branch", "parameter-names"])
def test_a_metric_fn_not_migrated_leaves_the_program_with_the_reason(change, why):
    source = PROGRAM.replace(*change)
    assert source != PROGRAM
    result = run_one(source)
    assert result.source == source
    assert any(why in finding for finding in manual(result)), manual(result)


def test_a_classifiers_metric_of_a_computed_prediction_is_left():
    source = (PROGRAM.replace("DNNRegressor(", "DNNClassifier(n_classes=3, ")
              .replace('tf.squeeze(input=predictions["predictions"], axis=-1)',
                       'tf.argmax(predictions["probabilities"], 1)')
              .replace("tf.metrics.root_mean_squared_error", "tf.metrics.accuracy"))
    result = run_one(source)
    assert result.source == source
    assert any("tf.metrics.accuracy of predictions[None] of a canned DNNClassifier" in finding
               for finding in manual(result)), manual(result)


def test_add_metrics_of_a_custom_estimator_says_where_the_metrics_go():
    source = PROGRAM.replace("tf.estimator.DNNRegressor(hidden_units=[8], feature_columns=columns, ",
                             "tf.estimator.Estimator(model_fn, ") + '''

def model_fn(features, labels, mode):
  logits = tf.layers.dense(features["x"], 1)
  loss = tf.losses.mean_squared_error(labels, logits)
  train_op = tf.train.AdagradOptimizer(0.1).minimize(loss, global_step=tf.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)
'''
    result = run_one(source)
    assert result.source == source
    assert any("put the metrics in its model_fn's eval_metric_ops" in finding for finding in manual(result))


def test_the_removed_module_is_reported_only_where_the_migration_leaves_it():
    result = run_one(PROGRAM)
    assert not [f for f in result.findings if f.rule == "TFM003"]
    left = run_one(PROGRAM.replace("tf.metrics.root_mean_squared_error", "tf.metrics.precision"))
    assert [f.line for f in left.findings if f.rule == "TFM003"] == [21]


def test_docstring_example_is_what_the_rewrite_does():
    """added_metrics.py's Before, in a program that drives the estimator, compiles its After's metrics."""
    from textwrap import dedent

    import rewrites.estimator.added_metrics as module

    doc = module.__doc__
    before = dedent(doc[doc.index("Before::\n") + len("Before::\n"):doc.index("After (")])
    after = dedent(doc[doc.index("::\n", doc.index("After (")) + 3:])
    program = PROGRAM.replace(PROGRAM[PROGRAM.index("def my_rmse"):PROGRAM.index("def train_and_evaluate")], "")
    head, body = program.split("def train_and_evaluate(output_dir, rows, labels):\n")
    driver = body[body.index("  train_spec"):]
    source = (head + before.split("\n\n")[0] + "\n\n\ndef train_and_evaluate(output_dir, rows, labels):\n"
              + '  columns = [tf.feature_column.numeric_column("x")]\n'
              + "".join(f"  {line}\n" for line in before.split("\n\n")[1].strip().splitlines()) + driver)
    code = " ".join(run_one(source).source.split())
    assert " ".join(after.split()).replace("[ ", "[").replace(" ]", "]") in code.replace("[ ", "[").replace(" ]", "]")


SCALED = ('  pred_values = tf.squeeze(input=predictions["predictions"], axis=-1)\n'
          '  return {"rmse": tf.metrics.root_mean_squared_error(labels=labels, predictions=pred_values)}\n',
          '  pred_values = tf.cast(predictions["predictions"], tf.float64)\n'
          '  return {"rmse": tf.metrics.root_mean_squared_error(labels * SCALE, pred_values * SCALE)}\n')


def test_a_metric_of_the_metric_fns_own_expressions_of_labels_and_predictions_is_a_class_computing_them():
    source = PROGRAM.replace(*SCALED).replace("\n\ndef my_rmse", "\nSCALE = 1000\n\n\ndef my_rmse")
    result = run_one(source)
    assert manual(result) == []
    assert ('class RmseMetric(keras.metrics.RootMeanSquaredError):\n'
            '  """tf.metrics.root_mean_squared_error of the metric_fn\'s own expressions of the labels and predictions '
            '("rmse")."""\n\n'
            '  def update_state(self, y_true, y_pred, sample_weight=None):\n'
            '    return super().update_state(y_true * SCALE, tf.cast(y_pred, tf.float64) * SCALE, sample_weight)\n'
            ) in result.source
    assert 'RmseMetric(name="rmse")' in result.source and "def my_rmse" not in result.source


def test_a_metric_of_labels_and_an_expression_of_the_prediction_is_a_class_computing_it():
    """TF1 course code: `rmse(labels, tf.cast(predictions["predictions"], tf.float64))`."""
    source = PROGRAM.replace('tf.squeeze(input=predictions["predictions"], axis=-1)',
                             'tf.cast(predictions["predictions"], tf.float64)')
    result = run_one(source)
    assert manual(result) == []
    assert "return super().update_state(y_true, tf.cast(y_pred, tf.float64), sample_weight)" in result.source
    assert 'RmseMetric(name="rmse")' in result.source


@pytest.mark.parametrize("change, why", [
    (("labels * SCALE", "labels * features['x']"), "its labels argument reads only the labels"),
    (("pred_values * SCALE", "pred_values * labels"), "its labels argument reads only the labels"),
    (('predictions["predictions"], tf.float64)', 'predictions["logits"], tf.float64)'),
     'predictions other than predictions["predictions"]'),
], ids=["features", "labels in the predictions", "another prediction"])
def test_a_metric_of_expressions_the_class_cannot_compute_is_left(change, why):
    source = PROGRAM.replace(*SCALED).replace("\n\ndef my_rmse", "\nSCALE = 1000\n\n\ndef my_rmse").replace(*change)
    result = run_one(source)
    assert result.source == source
    assert any(why in finding for finding in manual(result)), manual(result)


@pytest.mark.tensorflow
def test_the_generated_metric_class_counts_as_tf1s_metric_of_the_same_expressions():
    import numpy as np
    import tensorflow as tf
    import tf_keras as keras

    source = run_one(PROGRAM.replace(*SCALED).replace("\n\ndef my_rmse", "\nSCALE = 1000\n\n\ndef my_rmse")).source
    start = source.index("class RmseMetric")
    namespace = {"tf": tf, "keras": keras, "SCALE": 1000}
    exec(source[start:source.index("\n\n\n", start)], namespace)
    metric = namespace["RmseMetric"](name="rmse")
    rng = np.random.RandomState(5)
    batches = [(rng.uniform(size=(4, 1)), rng.uniform(size=(4, 1))) for _ in range(3)]
    with tf.Graph().as_default(), tf.compat.v1.Session() as session:
        labels, predictions = (tf.compat.v1.placeholder(tf.float64, [None, 1]) for _ in range(2))
        value, update = tf.compat.v1.metrics.root_mean_squared_error(labels * 1000, predictions * 1000)
        session.run(tf.compat.v1.local_variables_initializer())
        tf1 = []
        for batch in batches:
            session.run(update, dict(zip((labels, predictions), batch)))
            tf1.append(session.run(value))
    values = []
    for batch in batches:
        metric.update_state(*batch)
        values.append(float(metric.result()))
    assert values == pytest.approx(tf1, rel=1e-6) and tf1[0] > 100
