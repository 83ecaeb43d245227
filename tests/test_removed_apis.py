"""TFM003-004: modules TF 2 does not have, and star imports beside TF1 code, reported where they stand."""

from __future__ import annotations

from textwrap import dedent

from helpers import run


def findings(source: str) -> list[tuple[int, str, str]]:
    result = run(dedent(source))
    assert result.source == dedent(source)  # reported, never changed
    return [(f.line, f.rule, f.message.split(" is gone")[0]) for f in result.findings if f.rule in ("TFM003", "TFM004")]


def test_a_removed_package_is_reported_once_per_file_by_its_name():
    assert findings("""\
        import tensorflow as tf
        from tensorflow.contrib import learn
        from tensorflow.contrib.learn.python.learn import learn_runner
        cell = tf.contrib.rnn.LayerNormBasicLSTMCell(10)
        cell = tf.contrib.rnn.AttentionCellWrapper(cell, 4)
        """) == [(2, "TFM003", "tensorflow.contrib.learn"), (4, "TFM003", "tensorflow.contrib.rnn")]


def test_the_parts_of_tf1s_keras_tf2_dropped_are_reported_in_a_module_without_tensorflow_import():
    """cloudml-samples' imdb utils.py: `from tensorflow.python.keras.preprocessing.sequence import pad_sequences`,
    the module's only TensorFlow; TF 2.15's tensorflow.python.keras has no preprocessing (its layers stay)."""
    assert findings("""\
        import numpy as np
        from tensorflow.python.keras.preprocessing.sequence import pad_sequences
        from tensorflow.python.keras.preprocessing import text
        from tensorflow.python.keras import layers
        """) == [(2, "TFM003", "tensorflow.python.keras.preprocessing.sequence"),
                 (3, "TFM003", "tensorflow.python.keras.preprocessing.text")]


def test_what_tf_slim_lacks_keeps_its_contrib_package_and_is_named():
    source = """\
        import tensorflow as tf
        from tensorflow.contrib import layers
        net = layers.fully_connected(x, 10)
        net = layers.batch_norm(net)
        age = tf.contrib.layers.real_valued_column("age")
        """
    result = run(dedent(source))
    assert result.source == dedent(source)
    [finding] = [f for f in result.findings if f.rule == "TFM003"]
    assert (finding.line, finding.message.split(": ", 1)[0]) == (
        2, "tensorflow.contrib.layers is gone in TF 2 (the program cannot start there)")
    assert "`tf.contrib.layers.batch_norm`: tf-slim 1.1.0's batch_norm does not build" in finding.message
    assert "`tf.contrib.layers.real_valued_column`: tf-slim has no `real_valued_column`" in finding.message
    assert "fully_connected" not in finding.message


def test_contrib_layers_ops_tf_slim_lacks_are_named_with_what_tf2_has_for_them():
    """census tf-single crosses and bucketizes its wide columns with contrib.layers' ops modules."""
    source = """\
        import tensorflow as tf
        from tensorflow.contrib.layers.python.ops import bucketization_op, sparse_feature_cross_op
        age_bucket = bucketization_op.bucketize(age, [18, 25, 30])
        cross = sparse_feature_cross_op.sparse_feature_cross(
            [age_bucket, race], hashed_output=True, num_buckets=50,
            hash_key=tf.contrib.layers.SPARSE_FEATURE_CROSS_DEFAULT_HASH_KEY)
        """
    result = run(dedent(source))
    assert result.source == dedent(source)
    [finding] = [f for f in result.findings if f.rule == "TFM003"]
    assert finding.line == 2 and "tf-slim has no" not in finding.message
    for named, why in (("tf.contrib.layers.SPARSE_FEATURE_CROSS_DEFAULT_HASH_KEY",
                        "it is 0xDECAFCAFFE, `tf.sparse.cross_hashed`'s default hash_key"),
                       ("tf.contrib.layers.python.ops.bucketization_op", "for its `bucketize(x, boundaries)` TF 2 "
                        "has `tf.raw_ops.Bucketize(input=x, boundaries=boundaries)`"),
                       ("tf.contrib.layers.python.ops.sparse_feature_cross_op", "TF 2 has "
                        "`tf.sparse.cross_hashed(inputs, n, hash_key=k)`")):
        assert f"`{named}`: tf-slim does not have it: " in finding.message, named
        assert why in finding.message, why


def test_the_tutorials_reader_and_the_estimators_internals():
    assert findings("""\
        from tensorflow.examples.tutorials.mnist import input_data
        from tensorflow.python.estimator.training import _TrainingExecutor
        """) == [(1, "TFM003", "tensorflow.examples.tutorials.mnist"),
                 (2, "TFM003", "tensorflow.python.estimator.training")]


def test_a_star_import_is_reported_beside_tf1_code_only():
    assert findings("from model import *\n\nestimator = tf.estimator.Estimator(model_fn)\n") == [
        (1, "TFM004", "`from model import *` brings names this module's TF1 code uses (Estimator or cluster code): "
                      "tf-migrate follows names imported by name only: import them by name (`from model import tf, "
                      "model_fn`) and run it again")]
    assert findings("from .model import *\n\nrun(model_fn)\n")[0][:2] == (1, "TFM004")
    assert findings("from utils import *\n\nprint(add(1, 2))\n") == []
    assert findings("from __future__ import annotations\nimport tensorflow as tf\n") == []
