"""What the generated restore_tf1_checkpoint is told: TF1's slot names per optimizer, checked against TF1 itself.

tf1_checkpoints.tf1_slots names the slots a TF1 optimizer saves beside a variable and the Keras slot that
keeps each; here every optimizer the migration maps trains a variable in a TF1 graph and saves it, and the
names are the checkpoint's, and its Keras counterpart, applying a gradient, makes exactly those Keras slots.
"""

from __future__ import annotations

import importlib.util

import libcst as cst
import pytest

from rewrites.keras_optimizers import optimizer
from rewrites.tf1_checkpoints import Part, keras_slots, restore_context, restores_shard_slots, tf1_slots
from templates import render

OPTIMIZERS = [
    ("train.GradientDescentOptimizer", "f(0.1)"),
    ("train.MomentumOptimizer", "f(0.1, 0.9)"),
    ("train.MomentumOptimizer", "f(0.1, 0.9, name='Heavy', use_nesterov=True)"),
    ("train.AdamOptimizer", "f(0.01)"),
    ("train.AdagradOptimizer", "f(0.1)"),
    ("train.ProximalAdagradOptimizer", "f(0.1)"),
    ("train.RMSPropOptimizer", "f(0.01)"),
    ("train.RMSPropOptimizer", "f(0.01, momentum=0.9, centered=True)"),
    ("train.FtrlOptimizer", "f(0.1)"),
    ("train.FtrlOptimizer", "f(0.1, accum_name='sum_of_squares')"),
    ("train.AdadeltaOptimizer", "f(0.1)"),
]


def test_the_slot_table_of_each_optimizer():
    assert tf1_slots("train.AdamOptimizer", cst.parse_expression("f(0.01)")).names == (
        ("{}/Adam", "m"), ("{}/Adam_1", "v"))
    rmsprop = tf1_slots("train.RMSPropOptimizer", cst.parse_expression("f(0.01, momentum=0.9, centered=True)"))
    assert rmsprop.names == (("{}/RMSProp", "rms"), ("{}/RMSProp_1", "mg"), ("{}/RMSProp_2", "momentum"))
    # At momentum 0 TF1 still makes its momentum slot, never reads it; Keras has none.
    assert tf1_slots("train.RMSPropOptimizer", cst.parse_expression("f(0.01)")).names[-1] == ("{}/RMSProp_1", None)
    momentum = tf1_slots("train.MomentumOptimizer", cst.parse_expression("f(0.1, 0.9)"), keras_momentum=True)
    assert momentum.negated_rate and not tf1_slots("train.MomentumOptimizer", cst.parse_expression("f(0.1, 0.9)")
                                                   ).negated_rate
    assert keras_slots("Adagrad").names == (("training/Adagrad/{}/accumulator", "accumulator"),)


def test_what_the_restore_function_is_told():
    adam = tf1_slots("train.AdamOptimizer", cst.parse_expression("f(0.01)"))
    sgd = tf1_slots("train.MomentumOptimizer", cst.parse_expression("f(0.1, 0.9)"), keras_momentum=True)
    context = restore_context([Part("model.linear_model", "model.optimizer[0]", sgd),
                               Part("model.dnn_model", "model.optimizer[1]", adam)], ['"embedding/table"'])
    assert context["parts"][1] == {"variables": "model.dnn_model", "optimizer": "model.optimizer[1]",
                                   "slots": '{"{}/Adam": "m", "{}/Adam_1": "v"}'}
    assert context["powers"] == "model.optimizer[1]" and context["unused"] == []  # TF1Adam restores them
    assert context["factors"] == '{"{}/Momentum": -float(model.optimizer[0].learning_rate)}'
    assert context["mod_tables"] == '["embedding/table"]' and context["step"] == '"global_step"'


def test_sharded_slots_are_restored_by_the_program_itself_only_where_there_are_some():
    """ParameterServerStrategy restores no optimizer slots into shards (keras-team/tf-keras#838)."""
    adam = tf1_slots("train.AdamOptimizer", cst.parse_expression("f(0.01)"))
    plain = tf1_slots("train.GradientDescentOptimizer", cst.parse_expression("f(0.01)"))
    partitioner = "tf.distribute.experimental.partitioners.FixedShardsPartitioner(2)"
    assert restores_shard_slots(partitioner, adam)
    assert not restores_shard_slots(None, adam) and not restores_shard_slots(partitioner, plain)


def test_a_partitioned_program_with_slots_restores_them_from_its_own_checkpoints():
    from test_between_graph import PS_CLUSTER, migrated

    source = PS_CLUSTER.replace('    weights = tf1.get_variable("weights", [NUM_FEATURES, 1])\n',
                                '    weights = tf1.get_variable(\n        "weights", [NUM_FEATURES, 1], '
                                'partitioner=tf1.fixed_size_partitioner(2))\n')
    adagrad = migrated(source.replace("GradientDescentOptimizer(0.1)", "AdagradOptimizer(0.1)")).source
    assert "\ndef restore_shard_slots(path, checkpoint, variables):\n" in adagrad
    assert ("  if manager.latest_checkpoint:\n    checkpoint.restore(manager.latest_checkpoint)\n"
            "    with strategy.scope():\n      restore_shard_slots(manager.latest_checkpoint, checkpoint, "
            "[weights, bias])\n  elif tf1_checkpoint:\n") in adagrad
    # A checkpoint saved before any step would hold no slots of the shards: none is.
    assert "  restored_steps = int(optimizer.iterations)\n" in adagrad
    assert "  if int(optimizer.iterations) > restored_steps:\n    manager.save()\n" in adagrad
    # Gradient descent keeps no slots; an unpartitioned program has no shards.
    for other in (migrated(source).source, migrated(PS_CLUSTER.replace("GradientDescentOptimizer(0.1)",
                                                                       "AdagradOptimizer(0.1)")).source):
        assert "restore_shard_slots" not in other and "restored_steps" not in other
        assert "  coordinator.join()\n  manager.save()\n" in other


needs_tensorflow = pytest.mark.skipif(importlib.util.find_spec("tensorflow") is None, reason="needs the parity extra")


@needs_tensorflow
@pytest.mark.tensorflow
@pytest.mark.parametrize("api, call", OPTIMIZERS, ids=[f"{a.split('.')[1]} {c}" for a, c in OPTIMIZERS])
def test_tf1_names_its_slots_so_and_keras_keeps_them_so(api, call):
    import numpy as np
    import tensorflow as tf
    import tf_keras as keras

    node = cst.parse_expression(call)
    slots = tf1_slots(api, node)
    with tf.Graph().as_default():
        variable = tf.compat.v1.get_variable("dense/kernel", [3, 2])
        made = eval(call, {"f": getattr(tf.compat.v1.train, api.split(".")[1])})
        step = tf.compat.v1.train.get_or_create_global_step()
        train = made.minimize(tf.reduce_sum(tf.square(variable)), global_step=step)
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            session.run(train)
            saved = {name for name in tf.compat.v1.global_variables() if name is not variable and name is not step}
            saved = {slot.op.name for slot in saved}
    assert {template.format("dense/kernel") for template, _ in slots.names} == saved - {"beta1_power", "beta2_power"}
    assert slots.powers == ("beta1_power" in saved)
    scope = {"keras": keras, "tf": tf}
    exec(render("tf1_adam.py.j2"), scope)  # TF1's Adam, generated where a program uses it
    keras_optimizer = eval(optimizer(api, node).code, scope)
    weight = tf.Variable(np.ones((3, 2), np.float32))
    keras_optimizer.apply_gradients([(tf.ones((3, 2)), weight)])
    assert set(keras_optimizer.get_slot_names()) == {keras for _, keras in slots.names if keras}
