"""forward_features(estimator, keys) on a canned estimator: the features beside the predictions of predict and of the
exported `predict` signature; the wrapping goes with the Estimator. (Trained in tests/test_parity.py:
tests/parity_programs/forward_features_tf1.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_estimator_programs import run_one

PROGRAM = (Path(__file__).parent / "parity_programs" / "forward_features_tf1.py").read_text()


def manual(result) -> list[str]:
    return [f"{f.rule} {f.message}" for f in result.findings if f.safety.value == "manual"]


def test_the_keys_go_beside_the_predictions_of_predict_and_of_the_predict_signature():
    result = run_one(PROGRAM)
    assert manual(result) == []
    code = result.source[result.source.index("import argparse"):]
    assert "forward_features(" not in code
    predict = code[code.index("def predict_examples("):code.index("\n\n\n", code.index("def predict_examples("))]
    assert 'outputs = {**outputs, **{key: features[key] for key in ["key"]}}' in predict
    export = code[code.index("def export_saved_model("):code.index("\n\n\n", code.index("def export_saved_model("))]
    assert 'return {**predictions, **{key: features[key] for key in ["key"]}}' in export
    assert 'print("predicted %s %s" % (prediction[KEY_COLUMN], prediction["predictions"]))' in code


def test_a_program_without_forward_features_predicts_the_head_alone():
    code = run_one(PROGRAM.replace("  estimator = tf.contrib.estimator.forward_features(estimator, KEY_COLUMN)\n",
                                   "")).source
    assert "# forward_features" not in code and "features[key] for key in" not in code


CUSTOM = """  def model_fn(features, labels, mode):
    prediction = tf.layers.dense(tf.feature_column.input_layer(features, [tf.feature_column.numeric_column("x")]), 1)
    if mode == tf.estimator.ModeKeys.PREDICT:
      return tf.estimator.EstimatorSpec(mode, predictions={"predictions": prediction})
    loss = tf.losses.mean_squared_error(labels[:, None], prediction)
    train_op = tf.train.AdagradOptimizer(0.05).minimize(loss, global_step=tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

  estimator = tf.estimator.Estimator(model_fn, model_dir=args.model_dir)
"""


@pytest.mark.parametrize("old, new, why", [
    ("forward_features(estimator, KEY_COLUMN)", "forward_features(estimator)",
     "forward_features is migrated with its keys written out"),
    ("forward_features(estimator, KEY_COLUMN)", 'forward_features(estimator, "predictions")',
     "forward_features of `predictions`, which the estimator predicts already"),
    ("forward_features(estimator, KEY_COLUMN)", "forward_features(estimator, KEY_COLUMN, {KEY_COLUMN: ''})",
     "forward_features(sparse_default_values=...) is not migrated yet"),
    ('  estimator = tf.estimator.DNNRegressor(hidden_units=[4], feature_columns=[tf.feature_column.numeric_column("x")],'
     "\n                                        model_dir=args.model_dir)\n", CUSTOM,
     "forward_features of a custom Estimator is not migrated yet"),
], ids=["every feature", "a prediction's key", "sparse defaults", "a custom Estimator"])
def test_what_is_not_migrated_is_left_with_the_reason(old, new, why):
    assert old in PROGRAM
    source = PROGRAM.replace(old, new)
    result = run_one(source)
    assert result.source == source
    assert any(why in message for message in manual(result)), manual(result)
