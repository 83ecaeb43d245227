"""TFM005: tf.contrib's slim, layers and framework where they live on (tf-slim, tf.nest, tf.train)."""

from __future__ import annotations

from textwrap import dedent

import pytest

from helpers import ALL_RULES, run


def moved(source: str, enabled=ALL_RULES) -> tuple[str, list[str]]:
    result = run(source, enabled)
    return result.source, [f"{f.line}:{f.rule}" for f in result.findings if f.rule in ("TFM003", "TFM005")]


@pytest.mark.parametrize("before, after", [
    ("import tensorflow.contrib.slim as slim\n", "import tf_slim as slim\n"),
    ("from tensorflow.contrib import slim\n", "import tf_slim as slim\n"),
    ("from tensorflow.contrib import layers as contrib_layers\n", "import tf_slim as contrib_layers\n"),
    ("from tensorflow.contrib.layers import fully_connected, l2_regularizer as l2\n",
     "from tf_slim import fully_connected, l2_regularizer as l2\n"),
    ("from tensorflow.contrib.framework import arg_scope\n", "from tf_slim import arg_scope\n"),
    ("from tensorflow.contrib.framework import nest\n", "from tensorflow import nest\n"),
    ("from tensorflow.contrib.slim.nets import resnet_v1\n", "from tf_slim.nets import resnet_v1\n"),
    # the internal paths real programs import from
    ("from tensorflow.contrib.framework.python.ops import arg_scope\n", "from tf_slim import arg_scope\n"),
    ("from tensorflow.contrib.layers.python.layers import layers as layers_lib\n",
     "from tf_slim.layers import layers as layers_lib\n"),
    ("from tensorflow.contrib.slim.python.slim.nets import inception_v3 as inception\n",
     "from tf_slim.nets import inception_v3 as inception\n"),
])
def test_an_import_of_what_lives_on_comes_from_its_successor(before, after):
    assert moved(before) == (after, ["1:TFM005"])


def test_uses_through_tf_move_and_use_the_modules_tf_slim_import():
    source, findings = moved("""\
        import tensorflow.compat.v1 as tf
        import tensorflow.contrib.slim as slim

        def net(x):
          step = tf.contrib.framework.get_or_create_global_step()
          x = tf.contrib.framework.nest.flatten(x)[0]
          return tf.contrib.layers.fully_connected(slim.flatten(x), 10, activation_fn=tf.nn.relu)
        """)
    assert source == dedent("""\
        import tensorflow.compat.v1 as tf
        import tf_slim as slim

        def net(x):
          step = tf.train.get_or_create_global_step()
          x = tf.nest.flatten(x)[0]
          return slim.fully_connected(slim.flatten(x), 10, activation_fn=tf.nn.relu)
        """)
    assert findings == ["2:TFM005", "5:TFM005", "6:TFM005", "7:TFM005"]


def test_a_module_bound_from_tf_moves_with_its_uses_and_tf_slim_is_imported():
    source, _ = moved("""\
        import tensorflow as tf
        slim = tf.contrib.slim
        layer = tf.contrib.layers.xavier_initializer()
        net = slim.conv2d(tf.zeros([1, 8, 8, 3]), 32, [3, 3], weights_initializer=layer)
        """)
    assert source == dedent("""\
        import tensorflow as tf
        import tf_slim

        slim = tf_slim
        layer = tf_slim.xavier_initializer()
        net = slim.conv2d(tf.zeros([1, 8, 8, 3]), 32, [3, 3], weights_initializer=layer)
        """)


def test_contrib_rnns_cells_that_were_tf1s_own_are_tf_nns_and_its_own_stay():
    source, findings = moved("""\
        import tensorflow as tf
        cells = [tf.contrib.rnn.BasicLSTMCell(num_units=8, forget_bias=1.0) for _ in range(2)]
        outputs, _ = tf.contrib.rnn.static_rnn(tf.contrib.rnn.MultiRNNCell(cells), inputs, dtype=tf.float32)
        normalized = tf.contrib.rnn.LayerNormBasicLSTMCell(8)
        """)
    assert source == dedent("""\
        import tensorflow as tf
        cells = [tf.nn.rnn_cell.BasicLSTMCell(num_units=8, forget_bias=1.0) for _ in range(2)]
        outputs, _ = tf.nn.static_rnn(tf.nn.rnn_cell.MultiRNNCell(cells), inputs, dtype=tf.float32)
        normalized = tf.contrib.rnn.LayerNormBasicLSTMCell(8)
        """)
    assert findings == ["2:TFM005", "3:TFM005", "3:TFM005", "4:TFM003"]


@pytest.mark.parametrize("source, named", [
    # tf-slim 1.1.0's batch_norm does not build on TF 2.15: the import stays, and TFM003 says why
    ("import tensorflow.contrib.slim as slim\nnet = slim.batch_norm(slim.conv2d(x, 8, 3))\n", "batch_norm"),
    ("from tensorflow.contrib import layers\ncolumn = layers.real_valued_column('age')\n", "real_valued_column"),
    ("from tensorflow.contrib.layers import optimize_loss, fully_connected\n", "optimize_loss"),
    ("import tensorflow as tf\nslim = tf.contrib.slim\nnet = slim.batch_norm(x)\n", "batch_norm"),
])
def test_an_import_with_a_use_that_does_not_live_on_stays_and_is_named(source, named):
    result = run(source)
    assert result.source == source
    [finding] = [f for f in result.findings if f.rule in ("TFM003", "TFM005")]
    assert finding.rule == "TFM003" and f"`{named}`" in finding.message.replace(f".{named}`", f"`{named}`")


def test_an_import_of_several_contrib_modules_or_of_what_has_no_successor_stays():
    for source in ("from tensorflow.contrib import slim, tpu\n", "import tensorflow.contrib.learn as learn\n",
                   "from tensorflow.contrib.layers.python.ops import sparse_feature_cross_op\n"):
        assert run(source).source == source


def test_ignoring_the_rule_switches_the_move_off():
    source = "import tensorflow.contrib.slim as slim\nnet = slim.conv2d(x, 8, 3)\n"
    result_source, findings = moved(source, enabled=ALL_RULES - {"TFM005"})
    assert result_source == source and findings == ["1:TFM003"]


HPARAMS_PROGRAM = """\
import argparse
IMPORT


def train_and_evaluate(hparams):
    print(hparams.learning_rate, hparams.job_dir)


def main():
    args = argparse.ArgumentParser().parse_args()
    hparams = MADE(learning_rate=0.1, **args.__dict__)
    hparams.job_dir = hparams.job_dir or "out"
    train_and_evaluate(hparams=hparams)
"""


@pytest.mark.parametrize("imported, made", [
    ("from tensorflow.contrib.training.python.training import hparam", "hparam.HParams"),
    ("from tensorflow.contrib.training import HParams", "HParams"),
    ("import tensorflow as tf", "tf.contrib.training.HParams"),
])
def test_hparams_only_read_and_set_by_attribute_become_a_namespace(imported, made):
    source = HPARAMS_PROGRAM.replace("IMPORT", imported).replace("MADE", made)
    result_source, findings = moved(source)
    assert "    hparams = types.SimpleNamespace(learning_rate=0.1, **args.__dict__)\n" in result_source
    assert "import types\n" in result_source and "contrib" not in result_source
    assert findings == ["11:TFM005"]
    compile(result_source, "task.py", "exec")


@pytest.mark.parametrize("change", [
    ("    print(hparams.learning_rate, hparams.job_dir)", "    print(hparams.values())"),  # its own method
    ("    train_and_evaluate(hparams=hparams)", "    print(hparams)"),  # the object itself used
    ("    train_and_evaluate(hparams=hparams)", "    other_module.train(hparams)"),  # a function not in the module
    ("MADE(learning_rate=0.1, ", "MADE(None, learning_rate=0.1, "),  # hparam_def
], ids=["values()", "printed", "passed elsewhere", "hparam_def"])
def test_hparams_used_otherwise_stay_and_tfm003_says_the_module_is_gone(change):
    source = HPARAMS_PROGRAM.replace("IMPORT", "from tensorflow.contrib.training import HParams").replace(
        *change).replace("MADE", "HParams")
    result_source, findings = moved(source)
    assert result_source == source and findings == ["2:TFM003"]


def test_contrib_eager_list_devices_is_the_names_of_tf_configs_logical_devices():
    """cloudml-template's RunConfig counts GPUs by name: `'/device:GPU' in name` reads the TF 2 names the same."""
    source, findings = moved("""\
        import tensorflow as tf

        gpus = [name for name in tf.contrib.eager.list_devices() if '/device:GPU' in name]
        """)
    assert source == dedent("""\
        import tensorflow as tf

        gpus = [name for name in [device.name for device in tf.config.list_logical_devices()] if '/device:GPU' in name]
        """)
    assert findings == ["3:TFM005"]
    assert moved("import tensorflow as tf\n\nd = tf.contrib.eager.list_devices(x)\n")[1] == ["3:TFM003"]


def test_contrib_streaming_metrics_are_the_tf_metrics_they_returned():
    """census vanilla-tf's `streaming_accuracy(predictions, labels)`, the cloudml MNIST trainers' `metric_ops.
    streaming_mean(loss)`: TF 1.x's contrib functions returned tf.metrics' of their arguments, by keyword."""
    source, findings = moved("""\
        import tensorflow as tf
        from tensorflow.contrib.metrics.python.ops import metric_ops


        def metrics(predictions, labels, loss):
          accuracy, update = tf.contrib.metrics.streaming_accuracy(predictions, labels)
          recall = tf.contrib.metrics.streaming_recall(predictions, labels=labels, name="recall")
          return accuracy, update, recall, metric_ops.streaming_mean(loss, None)
        """)
    assert source == dedent("""\
        import tensorflow as tf


        def metrics(predictions, labels, loss):
          accuracy, update = tf.metrics.accuracy(predictions=predictions, labels=labels)
          recall = tf.metrics.recall(predictions=predictions, labels=labels, name="recall")
          return accuracy, update, recall, tf.compat.v1.metrics.mean(loss, None)
        """)
    assert findings == ["6:TFM005", "7:TFM005", "8:TFM005"]


@pytest.mark.parametrize("call", ["tf.contrib.metrics.streaming_auc(p, l)",
                                  "tf.contrib.metrics.streaming_accuracy(p, l, w, c, u, n, x)",
                                  "tf.contrib.metrics.streaming_accuracy(*args)"],
                         ids=["computed-otherwise", "too-many-arguments", "unread-arguments"])
def test_other_contrib_metrics_stay_and_tfm003_says_the_module_is_gone(call):
    source = f"import tensorflow as tf\n\nm = {call}\n"
    assert moved(source) == (source, ["3:TFM003"])
