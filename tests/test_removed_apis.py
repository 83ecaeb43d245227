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
        from tensorflow.contrib import slim
        from tensorflow.contrib.slim.nets import inception
        from tensorflow.contrib.slim.python.slim.nets import vgg
        net = tf.contrib.layers.flatten(x)
        net = tf.contrib.layers.fully_connected(net, 10)
        """) == [(2, "TFM003", "tensorflow.contrib.slim"), (5, "TFM003", "tensorflow.contrib.layers")]


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
