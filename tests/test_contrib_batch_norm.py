"""TFM009: tf.contrib.layers' batch_norm -> tf1_batch_norm (tf.compat.v1.layers.batch_normalization, a 2-D input
normalized as 4-D), its arguments carried over; proven against contrib's own code (tf-slim's, which builds on TF
2.15 with `ops.Tensor` where it was) on the same batches: the same outputs, moving statistics and variable names."""

from __future__ import annotations

import pytest

from helpers import run

MODULE = "import tensorflow.compat.v1 as tf\n\n\ndef net(x, training):\n  return {call}\n"


def migrated(call: str, module: str = MODULE) -> tuple[str, list[str]]:
    result = run(module.format(call=call))
    return result.source, [f"{finding.rule} {finding.message}" for finding in result.findings]


def code(source: str) -> str:
    """``source`` but the generated tf1_batch_norm, whose docstring and comment name tf.contrib."""
    start = source.find("def tf1_batch_norm(")
    return source if start < 0 else source[:start] + source[source.index("\n\n\n", start):]


@pytest.mark.parametrize("call, expected", [
    ('tf.contrib.layers.batch_norm(x, scope="bn")',
     'tf1_batch_norm(x, momentum=0.999, scale=False, training=True, name="bn")'),
    ('tf.contrib.layers.batch_norm(x, 0.9, False, True, 1e-5, is_training=training, scope="bn")',
     'tf1_batch_norm(x, momentum=0.9, center=False, scale=True, epsilon=1e-5, training=training, name="bn")'),
    ('tf.contrib.layers.batch_norm(x, trainable=False, reuse=True, fused=False, scope="bn")',
     'tf1_batch_norm(x, momentum=0.999, scale=False, training=True, trainable=False, reuse=True, name="bn", '
     'fused=False)'),
    ('tf.contrib.layers.batch_norm(x, activation_fn=tf.nn.relu, scope="bn")',
     'tf.nn.relu(tf1_batch_norm(x, momentum=0.999, scale=False, training=True, name="bn"))'),
    ('tf.contrib.layers.batch_norm(x, updates_collections=tf.GraphKeys.UPDATE_OPS, scope="bn")',
     'tf1_batch_norm(x, momentum=0.999, scale=False, training=True, name="bn")'),
], ids=["slim's defaults written out", "positional", "carried as they were", "activation applied", "UPDATE_OPS"])
def test_a_call_becomes_tf1_batch_norm_with_its_arguments_carried_over(call, expected):
    source, findings = migrated(call)
    assert f"return{expected}".replace(" ", "") in "".join(source.split()) and "tf.contrib" not in code(source)
    assert source.count("def tf1_batch_norm(") == 1 and source.index("def tf1_batch_norm(") < source.index("def net(")
    assert len(findings) == 1 and findings[0].startswith("TFM009 `tf.contrib.layers.batch_norm` -> `tf1_batch_norm`")
    assert "updates_collections=None" not in findings[0]


def test_slims_batch_norm_moves_with_its_import_and_the_helper_is_written_once():
    source, findings = migrated(
        'slim.batch_norm(slim.batch_norm(x, scope="a"), scope="b")',
        "import tensorflow.compat.v1 as tf\nimport tensorflow.contrib.slim as slim\n\n\ndef net(x, training):\n"
        "  return {call}\n")
    assert "contrib" not in code(source) and "slim." not in source
    assert source.count("def tf1_batch_norm(") == 1
    assert [finding.split()[0] for finding in findings] == ["TFM009", "TFM009"]


@pytest.mark.parametrize("training, evaluated", [("True", True), ("training", False)])
def test_updates_made_as_the_layer_runs_are_said_and_where_it_always_trains_that_evaluations_make_them(
        training, evaluated):
    _, findings = migrated(f'tf.contrib.layers.batch_norm(x, updates_collections=None, is_training={training}, '
                           'scope="bn")')
    assert "updates_collections=None" in findings[0] and "tf.GraphKeys.UPDATE_OPS" in findings[0]
    assert ("an evaluation too" in findings[0]) is evaluated


@pytest.mark.parametrize("call, module", [
    ("tf.contrib.layers.batch_norm(x)", MODULE),
    ('tf.contrib.layers.batch_norm(x, param_initializers={"beta": 0}, scope="bn")', MODULE),
    ('tf.contrib.layers.batch_norm(x, data_format="NCHW", scope="bn")', MODULE),
    ('tf.contrib.layers.batch_norm(x, updates_collections="mine", scope="bn")', MODULE),
    ('tf.contrib.layers.batch_norm(x, **options)', MODULE),
    ('tf.contrib.layers.batch_norm(x, updates_collections=None, scope="bn")',
     MODULE + "\n\nwith tf.Session() as session:\n  session.run(net(1, True))\n"),
    ('tf.contrib.layers.batch_norm(x, scope="bn")',
     MODULE + "\n\nwith tf.contrib.framework.arg_scope([tf.contrib.layers.batch_norm], decay=0.9):\n  net(1, True)\n"),
    ('tf.contrib.layers.batch_norm(x, scope="bn")', MODULE + "\n\ntf1_batch_norm = None\n"),
], ids=["no scope", "other arguments", "NCHW", "other collections", "**kwargs", "a TF1 session runs it",
        "an arg_scope of batch_norm", "tf1_batch_norm taken"])
def test_a_call_that_cannot_be_carried_over_stays_and_tf_contrib_is_named(call, module):
    source, findings = migrated(call, module)
    assert call in source and "def tf1_batch_norm(" not in source
    assert not any(finding.startswith("TFM009") for finding in findings)
    assert any(finding.startswith("TFM003 tensorflow.contrib.layers is gone") for finding in findings), findings


def _contrib(tf, x, **arguments):
    """TF1's own tf.contrib.layers.batch_norm (tf-slim's copy), built where it reads ops.Tensor."""
    from tensorflow.python.framework import ops

    if not hasattr(ops, "Tensor"):
        ops.Tensor = tf.Tensor
    import tf_slim

    return tf_slim.batch_norm(x, **arguments)


@pytest.mark.tensorflow
@pytest.mark.parametrize("shape", [(8, 4), (8, 2, 2, 3)], ids=["2-D", "4-D"])
@pytest.mark.parametrize("collections", [None, "UPDATE_OPS"])
def test_the_migrated_call_normalizes_and_updates_as_contrib_did(shape, collections):
    """Five training steps of the same batches: TF1's graph of contrib's batch_norm (the UPDATE_OPS run with each
    step where it put its updates there) against the migrated call, in a TF1 graph the same way and, where the
    updates are made as the layer runs, in a Keras layer of tf.function steps (tier 2's shim)."""
    import numpy as np
    import tensorflow as tf

    if collections and len(shape) == 4:
        pytest.skip("tf-slim 1.1.0's batch_norm of a 4-D input with UPDATE_OPS does not build on TF 2.15")
    tf1 = tf.compat.v1
    updates = tf1.GraphKeys.UPDATE_OPS if collections else None
    options = ', updates_collections=tf.GraphKeys.UPDATE_OPS' if collections else ', updates_collections=None'
    source, _ = migrated(f'tf.contrib.layers.batch_norm(x, decay=0.9, center=True, scale=True{options}, '
                         'is_training=training, scope="bn")')
    namespace: dict = {}
    exec(compile(source, "migrated.py", "exec"), namespace)
    batches = [np.random.RandomState(seed).normal(1, 3, size=shape).astype(np.float32) for seed in range(5)]

    def graph(build) -> tuple[list, list, list]:
        with tf.Graph().as_default():
            x = tf1.placeholder(tf.float32, [None, *shape[1:]])
            y = build(x)
            ops = tf1.get_collection(tf1.GraphKeys.UPDATE_OPS)
            with tf1.Session() as session:
                session.run(tf1.global_variables_initializer())
                outputs = [session.run([y, *ops], {x: batch})[0] for batch in batches]
                variables = tf1.global_variables()
                return outputs, session.run(variables), [v.name for v in variables]

    tf1_outputs, tf1_values, tf1_names = graph(lambda x: _contrib(
        tf, x, decay=0.9, center=True, scale=True, updates_collections=updates, is_training=True, scope="bn"))
    runs = [graph(lambda x: namespace["net"](x, True))] if collections else []
    if not collections:
        class Layer(tf.keras.layers.Layer):
            @tf1.keras.utils.track_tf1_style_variables
            def call(self, x):
                return namespace["net"](x, True)

        layer = Layer()
        step = tf.function(layer)
        outputs = [step(batch).numpy() for batch in batches]
        runs.append((outputs, [v.numpy() for v in layer.variables], [v.name for v in layer.variables]))
    tf1_variables = dict(zip(tf1_names, tf1_values))
    for outputs, values, names in runs:
        assert sorted(names) == sorted(tf1_names)
        np.testing.assert_allclose(np.array(outputs), np.array(tf1_outputs), rtol=1e-5, atol=1e-6)
        for name, value in zip(names, values):
            np.testing.assert_allclose(value, tf1_variables[name], rtol=1e-5, atol=1e-6, err_msg=name)
