"""Keras layers that compute otherwise in training, in a model_fn kept as written (tier 2,
rewrites/estimator/faithful_modes.py): each call as TF1 ran it, a Keras batch normalization made with momentum=1.0,
its moving statistics as TF1 left them (it never ran their updates); what the migration cannot see called, or keep,
leaves the program saying why."""

from __future__ import annotations

import json

import pytest
from test_faithful import KERAS_DENSE, PROGRAM, left_saying, migrated
from test_parity import PROGRAMS, assert_mismatch, assert_parity, migrated_copy, parity

NOTE = "is made with momentum=1.0, which keeps its moving mean and variance as they were made: TF1 never ran"


def tier_2(after: str):
    """PROGRAM's hidden layers made by ``after`` in place of tf.layers.dense: the migrated code, on one line per
    statement, and its findings."""
    result = migrated(PROGRAM.read_text().replace(KERAS_DENSE[0], after))
    assert not [f for f in result.findings if f.rule == "TFM302"], result.findings
    return result.source, [f.message for f in result.findings if f.rule == "TFM310"]


@pytest.mark.parametrize("after, made", [
    ("    net = tf.keras.layers.BatchNormalization()(net, training=training)\n",
     "tf1_keras_layer(lambda: tf.compat.v1.keras.layers.BatchNormalization(momentum=1.0))(net, training=training)"),
    ("    bn = tf.keras.layers.BatchNormalization(momentum=0.90, epsilon=1e-5)\n"
     "    net = bn(net, training=training)\n",
     "bn = tf1_keras_layer(lambda: tf.compat.v1.keras.layers.BatchNormalization(momentum=1.0, epsilon=1e-5))"),
    ("    net = tf.keras.layers.BatchNormalization(-1, 0.9)(net, training=training)\n",
     "tf1_keras_layer(lambda: tf.compat.v1.keras.layers.BatchNormalization(-1, 1.0))(net, training=training)"),
    ("    net = tf.keras.Sequential([tf.keras.layers.Dense(units), tf.keras.layers.BatchNormalization(axis=1)])(\n"
     "        net, training=training)\n",
     "tf1_keras_layer(lambda: tf.compat.v1.keras.Sequential([tf.compat.v1.keras.layers.Dense(units), "
     "tf.compat.v1.keras.layers.BatchNormalization(axis=1, momentum=1.0)]))("),
], ids=["called where made", "bound to a name", "its momentum positional", "in a Sequential"])
def test_a_keras_batch_norm_is_made_with_momentum_one_saying_why(after, made):
    code, notes = tier_2(after)
    assert made in code
    (note,) = [note for note in notes if NOTE in note]
    assert "UPDATE_OPS held none" in note and "set its momentum back to train them" in note


def test_a_dropout_called_with_training_is_made_once_as_written():
    code, notes = tier_2("    net = tf.keras.layers.Dropout(0.5)(net, training=training)\n")
    assert "tf1_keras_layer(lambda: tf.compat.v1.keras.layers.Dropout(0.5))(net, training=training)" in code
    assert not [note for note in notes if NOTE in note]


WITHOUT_TRAINING = "TF1 ran a Keras layer called without `training=` in inference mode (Keras' learning phase, 0 in"
UNSEEN = "made where the migration cannot see it called: TF1 ran it in the mode its call's `training=` said"


@pytest.mark.parametrize("after, message", [
    ("    net = tf.keras.layers.BatchNormalization()(net)\n", WITHOUT_TRAINING),
    ("    net = tf.keras.layers.Dropout(0.5)(net)\n", WITHOUT_TRAINING),
    ("    net = tf.keras.layers.LSTM(units, dropout=0.2)(tf.expand_dims(net, 1))\n", WITHOUT_TRAINING),
    ("    bn = tf.keras.layers.BatchNormalization()\n    net = bn(net, training=training)\n    net = bn(net)\n",
     WITHOUT_TRAINING),
    ("    net = tf.keras.Sequential([tf.keras.layers.Dense(units), tf.keras.layers.BatchNormalization()])(net)\n",
     WITHOUT_TRAINING),
    ("    layers = [tf.keras.layers.BatchNormalization()]\n    net = layers[0](net, training=training)\n", UNSEEN),
    ("    bn = tf.keras.layers.BatchNormalization()\n    net = apply(bn, net)\n", UNSEEN),
    ("    net = tf.keras.layers.BatchNormalization(renorm=True)(net, training=training)\n",
     "a Keras batch renormalization: its renorm statistics, which TF1 never updated either, shape its training"),
    ("    net = tf.keras.layers.BatchNormalization(**params[\"bn\"])(net, training=training)\n",
     "a Keras batch normalization of arguments the migration cannot read"),
    ("    bn = tf.keras.layers.BatchNormalization()\n    net = bn(net, training=training)\n"
     "    net = tf.group(net, *bn.updates)\n",
     "the program reads a Keras layer's updates (its moving statistics), which TF1 ran only where the program did"),
    ("    net = tf.keras.applications.MobileNetV2(weights=None, include_top=False, input_shape=(32, 32, 3))(\n"
     "        tf.reshape(net, [-1, 32, 32, 3]), training=training)\n",
     "a Keras application or loaded model, in a model_fn kept as written (tier 2), may hold batch normalizations"),
], ids=["a batch norm", "a dropout", "an LSTM's dropout", "a batch norm called twice", "a Sequential",
        "a batch norm in a list", "a batch norm passed on", "renorm", "kwargs", "its updates read", "an application"])
def test_what_tier_2_cannot_run_in_the_mode_or_with_the_statistics_tf1_had_leaves_the_program(after, message):
    left_saying(KERAS_DENSE[0], after, message)


@pytest.mark.tensorflow
def test_keras_batch_norms_keep_tf1s_moving_statistics_and_parity(tmp_path):
    """Keras batch normalizations of a Conv2D (the fused kernel) and of a Dense, trained with `training=` the mode
    under UPDATE_OPS, which held none of their updates: the migrated program trains the same steps, keeps the
    moving statistics TF1 never updated bit for bit, so evaluates as TF1 did. With the momentum set back, the
    steps still match (training normalizes by the batch's statistics) but the statistics and the evaluation do not."""
    old = PROGRAMS / "keras_batch_norm_tf1.py"
    new = migrated_copy(old, tmp_path, TFM310=3)
    report = tmp_path / "parity.json"
    result = parity(old, new, "--steps", "10", "--json", str(report))
    assert_parity(result)
    assert "eval loss matches, 12 variables match" in result.stdout, result.stdout
    statistics = [v for v in json.loads(report.read_text())["variables"] if "/moving_" in v["name"]]
    assert len(statistics) == 4 and all(v["max_abs_diff"] == 0 for v in statistics)
    trained = tmp_path / "momentum.py"
    trained.write_text(new.read_text().replace("BatchNormalization(momentum=1.0)", "BatchNormalization(momentum=0.9)"))
    result = parity(old, trained, "--steps", "10")
    assert_mismatch(result)
    assert "eval loss differs" in result.stdout and "final weights differ: batch_normalization/moving_mean" in \
        result.stdout, result.stdout
