"""The generated TF1Adam (templates/tf1_adam.py.j2) trains exactly as tf1.train.AdamOptimizer: TF1 keeps the powers
of beta1 and beta2 in variables multiplied after each step, Keras computes them from the step count, and the two
round differently."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.tensorflow


def test_tf1_adam_gives_tf1_s_weights_bit_for_bit_where_keras_adam_drifts():
    import numpy as np
    import tensorflow as tf
    import tf_keras as keras

    from templates import render

    scope = {"keras": keras, "tf": tf}
    exec(render("tf1_adam.py.j2"), scope)
    rng = np.random.RandomState(0)
    kernel, table = rng.randn(20, 10).astype(np.float32), rng.randn(30, 20).astype(np.float32)
    ids, targets = rng.randint(0, 30, (40, 16, 3)), rng.randn(40, 16, 10).astype(np.float32)

    def loss_of(table, kernel, ids, target):  # the table's gradients are sparse (IndexedSlices)
        embedded = tf.reduce_sum(tf.nn.embedding_lookup(table, ids), 1)
        return tf.reduce_mean(tf.square(tf.tanh(tf.matmul(embedded, kernel)) - target))

    with tf.Graph().as_default(), tf.compat.v1.Session() as session:
        variables = [tf.compat.v1.get_variable(name, initializer=value)
                     for name, value in (("t", table), ("k", kernel))]
        ids_in, target_in = tf.compat.v1.placeholder(tf.int32), tf.compat.v1.placeholder(tf.float32)
        train = tf.compat.v1.train.AdamOptimizer(0.01, epsilon=1e-8).minimize(loss_of(*variables, ids_in, target_in))
        session.run(tf.compat.v1.global_variables_initializer())
        for step in range(len(ids)):
            session.run(train, {ids_in: ids[step], target_in: targets[step]})
        tf1 = session.run(variables)

    def keras_weights(optimizer_class):
        strategy = tf.distribute.MirroredStrategy(["/cpu:0"])
        with strategy.scope():
            variables = [tf.Variable(table), tf.Variable(kernel)]
            optimizer = optimizer_class(learning_rate=0.01, epsilon=1e-8)

        @tf.function
        def step(ids, target):
            def replica(ids, target):
                with tf.GradientTape() as tape:
                    loss = loss_of(*variables, ids, target)
                optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
            strategy.run(replica, (ids, target))

        for index in range(len(ids)):
            step(ids[index], targets[index])
        powers = None
        if optimizer_class is not keras.optimizers.legacy.Adam:
            assert not any(power.trainable for power in optimizer.tf1_powers())  # no weight anything trains
            powers = [float(power.numpy()) for power in optimizer.tf1_powers()]
        return [variable.numpy() for variable in variables], powers

    weights, powers = keras_weights(scope["TF1Adam"])
    for ours, theirs in zip(weights, tf1):
        np.testing.assert_array_equal(ours, theirs)
    assert powers == pytest.approx([0.9 ** 41, 0.999 ** 41], rel=1e-5)  # what the 41st step would read
    drifted, _ = keras_weights(keras.optimizers.legacy.Adam)  # what the test would catch
    assert any(not np.array_equal(ours, theirs) for ours, theirs in zip(drifted, tf1))
