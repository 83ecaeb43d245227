"""forward_features(estimator, keys) on a canned estimator: the features beside the predictions of predict and of the
exported `predict` signature; the wrapping goes with the Estimator. (Trained in tests/test_parity.py:
tests/parity_programs/forward_features_tf1.py.) A forward_features of the program's own: the features in predict
alone, as TF1 had them (trained here: tests/parity_programs/forward_features_by_hand_tf1.py)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
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


# -- a forward_features of the program's own, as Google's training notebooks wrote it ---------------------------

BY_HAND = (Path(__file__).parent / "parity_programs" / "forward_features_by_hand_tf1.py").read_text()
WRAPPER = BY_HAND[BY_HAND.index("def forward_features("):BY_HAND.index("\n\n\ndef main")]
ONE_KEY = "    predictions[key] = features[key]\n"
REPLACED = "    spec = spec._replace(predictions=predictions)\n    return spec\n"
NEW_SPEC = ("    return tf.estimator.EstimatorSpec(mode, predictions=predictions, loss=spec.loss,\n"
            "                                      train_op=spec.train_op, eval_metric_ops=spec.eval_metric_ops{})\n")


def by_hand(*edits: tuple[str, str]) -> str:
    """The program with its wrapper edited (``edits``, each of text in it)."""
    wrapper = WRAPPER
    for old, new in edits:
        assert old in wrapper, old
        wrapper = wrapper.replace(old, new)
    return BY_HAND.replace(WRAPPER, wrapper)


def section(code: str, name: str) -> str:
    start = code.index(f"def {name}(")
    return code[start:code.index("\n\n\n", start)]


@pytest.mark.parametrize("source", [
    BY_HAND,
    by_hand((ONE_KEY, "    for name in key:\n      predictions[name] = features[name]\n")).replace(
        "forward_features(estimator, KEY_COLUMN)", "forward_features(estimator, [KEY_COLUMN])"),
    by_hand((REPLACED, NEW_SPEC.format(", export_outputs=spec.export_outputs"))),
    by_hand(("mode, config)", "mode, params)"),
            ("config=estimator.config)", "config=estimator.config, params=estimator.params)")),
    by_hand(("    predictions = spec.predictions\n" + ONE_KEY + REPLACED,
             "    spec.predictions[key] = features[key]\n    return spec\n")),
], ids=["the notebook's", "a loop over keys", "a new EstimatorSpec", "params", "in place"])
def test_the_programs_own_forward_features_forwards_to_predict_alone(source):
    """TF1's canned head made its export outputs before the wrapper added the key: predict has it, exports do not."""
    result = run_one(source)
    assert manual(result) == []
    code = result.source[result.source.index("import argparse"):]
    assert "def forward_features(" not in code and "def my_rmse(" not in code and "model_fn" not in code
    assert 'outputs = {**outputs, **{key: features[key] for key in ["key"]}}' in section(code, "predict_examples")
    assert "features[key] for key in" not in section(code, "export_saved_model")
    assert 'print("predicted %s %.9g" % (prediction[KEY_COLUMN].decode(), prediction["predictions"][0]))' in code


TODAYS = "`estimator` is passed to `forward_features`, which the migration cannot follow"


@pytest.mark.parametrize("source, why", [
    (by_hand(("_replace(predictions=predictions)", "_replace(predictions=predictions, loss=2 * spec.loss)")), TODAYS),
    (by_hand((ONE_KEY, "    predictions[key] = tf.strings.upper(features[key])\n")), TODAYS),
    (by_hand((ONE_KEY, '    predictions["id"] = features[key]\n')), TODAYS),
    (by_hand((ONE_KEY, "    if mode == tf.estimator.ModeKeys.PREDICT:\n  " + ONE_KEY)), TODAYS),
    (by_hand((REPLACED, NEW_SPEC.format(""))), TODAYS),
    (by_hand(("config=estimator.config)", "config=tf.estimator.RunConfig())")), TODAYS),
    (by_hand(("mode, config)\n", "mode, config)\n    spec = estimator.model_fn(features, labels, mode, config)\n")),
     TODAYS),
    (by_hand((ONE_KEY, "    for name in key:\n      predictions[name] = features[name]\n")),
     "`forward_features(...)`, the program's own forward_features, is migrated with its `key` written out (a list"),
    (BY_HAND.replace("forward_features(estimator, KEY_COLUMN)", 'forward_features(estimator, "predictions")'),
     "forwards `predictions`, which the estimator predicts already: TF1 replaced that prediction by the feature"),
    (BY_HAND.replace("\n\ndef main():", "\n\nWRAP = forward_features\n\n\ndef main():"),
     "`forward_features()`, which made a piece of the Estimator, is also used here (`WRAP = forward_features`)"),
], ids=["another field", "another value", "another key", "a condition", "no export_outputs", "its own config",
        "the model_fn twice", "a loop over one key", "a prediction's key", "used elsewhere"])
def test_a_wrapper_doing_more_or_else_is_left_with_the_reason(source, why):
    result = run_one(source)
    assert result.source == source
    assert any(why in message for message in manual(result)), manual(result)


def test_the_programs_own_forward_features_of_a_custom_estimator_is_left_with_the_reason():
    canned = BY_HAND[BY_HAND.index("  estimator = tf.estimator.LinearRegressor("):
                     BY_HAND.index("  estimator = forward_features(")]
    source = BY_HAND.replace(canned, CUSTOM)
    result = run_one(source)
    assert result.source == source
    assert any("the program's own forward_features, of a custom Estimator, is not migrated yet" in message
               for message in manual(result)), manual(result)


# TF1's program and its migration, each run as it is: what predict printed, and the export's signatures' outputs.
SIGNATURES = """import json, sys
import tensorflow as tf
loaded = tf.saved_model.load(sys.argv[1])
print(json.dumps({name: sorted(function.structured_outputs) for name, function in loaded.signatures.items()}))
"""


@pytest.fixture(scope="module")
def ran(tmp_path_factory) -> dict[str, tuple[list[tuple[str, float]], dict[str, list[str]]]]:
    folder = tmp_path_factory.mktemp("by_hand")
    found = {}
    for side, source in (("old", BY_HAND), ("new", run_one(BY_HAND).source)):
        (folder / side).mkdir()
        (folder / side / "train.py").write_text(source)
        done = subprocess.run([sys.executable, "train.py", "--model-dir", "model", "--train-steps", "5"],
                              cwd=folder / side, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
        predicted = [(line.split()[1], float(line.split()[2])) for line in done.stdout.splitlines()
                     if line.startswith("predicted ")]
        export, = (folder / side / "model" / "export" / "exporter").iterdir()
        loaded = subprocess.run([sys.executable, "-c", SIGNATURES, str(export)], capture_output=True, text=True,
                                timeout=600)
        assert loaded.returncode == 0, loaded.stderr[-3000:]
        found[side] = predicted, json.loads(loaded.stdout.strip().splitlines()[-1])
    return found


NEEDS_TENSORFLOW = pytest.mark.skipif(importlib.util.find_spec("tensorflow") is None, reason="needs the parity extra")


@pytest.mark.tensorflow
@NEEDS_TENSORFLOW
def test_the_migrated_program_predicts_the_keys_and_values_tf1_predicted(ran):
    (old, _), (new, _) = ran["old"], ran["new"]
    assert [key for key, _ in old] == [f"row{i}" for i in range(64)] == [key for key, _ in new]
    assert [value for _, value in new] == pytest.approx([value for _, value in old], rel=1e-5, abs=1e-6)


@pytest.mark.tensorflow
@NEEDS_TENSORFLOW
def test_tf1_exported_the_key_in_no_signature_and_neither_does_the_migration(ran):
    (_, old), (_, new) = ran["old"], ran["new"]
    assert old == {"predict": ["predictions"]} == new  # a receiver of 3 tensors: predict alone, as TF1 exported


@pytest.mark.tensorflow
@NEEDS_TENSORFLOW
def test_the_programs_own_forward_features_keeps_parity(tmp_path):
    """The losses, the evaluation, and the export's signatures and answers."""
    from test_parity import PROGRAMS, assert_parity, migrated_copy, parity

    old = PROGRAMS / "forward_features_by_hand_tf1.py"
    new = migrated_copy(old, tmp_path, TFM309=2, TFM301=2)
    result = parity(old, new, "--steps", "5")
    assert_parity(result)
    assert "the same signatures (predict)" in result.stdout, result.stdout
