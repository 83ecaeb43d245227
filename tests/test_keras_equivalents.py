"""rewrites.keras_equivalents and keras_optimizers: TF1 calls -> Keras 2 source, with the TF1 defaults that keep the numbers."""

from __future__ import annotations

import libcst as cst
import pytest

from migrator.findings import Safety
from rewrites.keras_equivalents import IDENTITY, NoKerasEquivalent, layer, loss
from rewrites.keras_optimizers import learning_rate_schedule, optimizer

E, N = Safety.EXACT, Safety.NUMERIC
OPT = "keras.optimizers.legacy."
SCHED = "keras.optimizers.schedules."
RMS_ONES = ('# TF1 started the mean-square slots at ones, Keras at zeros.\n'
            'for variable in model.trainable_variables:\n    optimizer.add_slot(variable, "rms", initializer="ones")')


def call(source: str) -> cst.Call:
    return cst.ensure_type(cst.parse_expression(source), cst.Call)


def source(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


# -- optimizers -----------------------------------------------------------


@pytest.mark.parametrize(
    "api, tf1, keras, safety",
    [
        ("train.GradientDescentOptimizer", "f(0.1)", "SGD(learning_rate=0.1)", E),
        ("train.GradientDescentOptimizer", "f(learning_rate=lr, use_locking=True, name='gd')",
         "SGD(learning_rate=lr, name='gd')", E),
        ("train.MomentumOptimizer", "f(0.1, 0.9)", "SGD(learning_rate=0.1, momentum=0.9)", E),
        ("train.MomentumOptimizer", "f(0.1, 0.9, False, 'm', True)",
         "SGD(learning_rate=0.1, momentum=0.9, nesterov=True, name='m')", E),
        ("train.MomentumOptimizer", "f(momentum=0.9, learning_rate=params['lr'], use_nesterov=False)",
         "SGD(learning_rate=params['lr'], momentum=0.9, nesterov=False)", N),
        # Adam: TF1 epsilon 1e-8, Keras 1e-7; TF1's beta powers (the generated TF1Adam).
        ("train.AdamOptimizer", "f()", "TF1Adam(epsilon=1e-08)", E),
        ("train.AdamOptimizer", "f(0.01)", "TF1Adam(learning_rate=0.01, epsilon=1e-08)", E),
        ("train.AdamOptimizer", "f(0.01, 0.8, 0.99, 1e-6)",
         "TF1Adam(learning_rate=0.01, beta_1=0.8, beta_2=0.99, epsilon=1e-6)", E),
        ("train.AdamOptimizer", "f(beta2=0.98, learning_rate=1e-3)",
         "TF1Adam(learning_rate=1e-3, beta_2=0.98, epsilon=1e-08)", E),
        # Adagrad: TF1 has no epsilon, legacy Keras turns 0 into 1e-7.
        ("train.AdagradOptimizer", "f(0.1)",
         "Adagrad(learning_rate=0.1, initial_accumulator_value=0.1, epsilon=1e-30)", E),
        ("train.AdagradOptimizer", "f(0.1, 0.01, name='ada')",
         "Adagrad(learning_rate=0.1, initial_accumulator_value=0.01, epsilon=1e-30, name='ada')", E),
        ("train.ProximalAdagradOptimizer", "f(0.1)",
         "Adagrad(learning_rate=0.1, initial_accumulator_value=0.1, epsilon=1e-30)", E),
        ("train.ProximalAdagradOptimizer", "f(0.1, l1_regularization_strength=0.0, l2_regularization_strength=0)",
         "Adagrad(learning_rate=0.1, initial_accumulator_value=0.1, epsilon=1e-30)", E),
        ("train.FtrlOptimizer", "f(0.1, l1_regularization_strength=0.01, accum_name='a', linear_name='l')",
         "Ftrl(learning_rate=0.1, l1_regularization_strength=0.01)", E),
        ("train.FtrlOptimizer", "f(0.1, -0.5, 0.2, beta=None)",
         "Ftrl(learning_rate=0.1, learning_rate_power=-0.5, initial_accumulator_value=0.2)", E),
        ("train.AdadeltaOptimizer", "f()", "Adadelta(epsilon=1e-08)", E),
        ("train.AdadeltaOptimizer", "f(1.0, 0.9)", "Adadelta(learning_rate=1.0, rho=0.9, epsilon=1e-08)", E),
    ],
)
def test_optimizer(api, tf1, keras, safety):
    result = optimizer(api, call(tf1))
    prefix = "" if keras.startswith("TF1") else OPT  # TF1's Adam: a class of the migrated program
    assert (result.code, result.safety, result.after_compile) == (prefix + keras, safety, ())
    assert bool(result.why) == (safety is N)


@pytest.mark.parametrize(
    "tf1, keras",
    [
        ("f(0.01)", "RMSprop(learning_rate=0.01, epsilon=1e-10)"),
        ("f(0.01, 0.8, 0.5, 1e-6, False, True)",
         "RMSprop(learning_rate=0.01, rho=0.8, momentum=0.5, epsilon=1e-6, centered=True)"),
        ("f(learning_rate=0.01, decay=0.95, centered=False, name='rms')",
         "RMSprop(learning_rate=0.01, rho=0.95, epsilon=1e-10, centered=False, name='rms')"),
    ],
)
def test_rmsprop_sets_the_mean_square_slots_to_ones_as_tf1_does(tf1, keras):
    result = optimizer("train.RMSPropOptimizer", call(tf1))
    assert (result.code, result.safety, result.after_compile) == (OPT + keras, E, (RMS_ONES,))
    cst.parse_module(result.after_compile[0])  # a valid statement


def test_momentum_names_the_learning_rate_that_must_stay_constant():
    result = optimizer("train.MomentumOptimizer", call("f(lr, 0.9)"))
    assert result.safety is N and "learning_rate=lr" in result.why and "constant" in result.why


@pytest.mark.parametrize(
    "api, tf1, message",
    [
        ("train.MomentumOptimizer", "f(tf1.train.exponential_decay(0.1, step, 100, 0.9), 0.9)", "changing learning rate"),
        ("train.ProximalAdagradOptimizer", "f(0.1, l1_regularization_strength=0.01)", "l1_regularization_strength"),
        ("train.ProximalAdagradOptimizer", "f(0.1, 0.1, 0.0, l2)", "l2_regularization_strength"),
        ("train.SyncReplicasOptimizer", "f(opt, 4)", "asynchronous"),
        ("train.ProximalGradientDescentOptimizer", "f(0.1)", "no Keras optimizer"),
        ("train.AdamOptimizer", "f(*args)", "cannot be mapped statically"),
        ("train.AdamOptimizer", "f(**kwargs)", "cannot be mapped statically"),
        ("train.AdamOptimizer", "f(0.1, amsgrad=True)", "cannot be mapped statically"),
        ("train.AdamOptimizer", "f(0.1, 0.9, 0.999, 1e-8, False, 'a', 7)", "cannot be mapped statically"),
        ("train.AdamOptimizer", "f(0.1, learning_rate=0.2)", "cannot be mapped statically"),
        ("train.GradientDescentOptimizer", "f()", "missing learning_rate"),
        ("train.MomentumOptimizer", "f(0.1)", "missing momentum"),
    ],
)
def test_optimizer_without_keras_equivalent(api, tf1, message):
    with pytest.raises(NoKerasEquivalent, match=message) as error:
        optimizer(api, call(tf1))
    assert str(error.value).startswith(api)


# -- learning-rate schedules ----------------------------------------------


@pytest.mark.parametrize(
    "api, tf1, keras",
    [
        ("train.exponential_decay", "f(0.1, tf1.train.get_global_step(), 1000, 0.96)",
         "ExponentialDecay(initial_learning_rate=0.1, decay_steps=1000, decay_rate=0.96)"),
        ("train.exponential_decay", "f(0.1, step, 1000, 0.96, staircase=True)",
         "ExponentialDecay(initial_learning_rate=0.1, decay_steps=1000, decay_rate=0.96, staircase=True)"),
        ("train.exponential_decay",
         "f(global_step=step, decay_rate=0.5, decay_steps=10, learning_rate=lr, name='decay')",
         "ExponentialDecay(initial_learning_rate=lr, decay_steps=10, decay_rate=0.5, name='decay')"),
        ("train.piecewise_constant", "f(step, [100, 200], [0.1, 0.01, 0.001])",
         "PiecewiseConstantDecay(boundaries=[100, 200], values=[0.1, 0.01, 0.001])"),
        ("train.polynomial_decay", "f(0.1, step, 1000)", "PolynomialDecay(initial_learning_rate=0.1, decay_steps=1000)"),
        ("train.polynomial_decay", "f(0.1, step, 1000, 0.001, 2.0, True)",
         "PolynomialDecay(initial_learning_rate=0.1, decay_steps=1000, end_learning_rate=0.001, power=2.0, cycle=True)"),
        ("train.inverse_time_decay", "f(0.1, step, 10, 0.5, True)",
         "InverseTimeDecay(initial_learning_rate=0.1, decay_steps=10, decay_rate=0.5, staircase=True)"),
        ("train.cosine_decay", "f(0.1, step, 1000, alpha=0.1)",
         "CosineDecay(initial_learning_rate=0.1, decay_steps=1000, alpha=0.1)"),
        ("train.cosine_decay_restarts", "f(0.1, step, 100, m_mul=0.5)",
         "CosineDecayRestarts(initial_learning_rate=0.1, first_decay_steps=100, m_mul=0.5)"),
        # TF1 builds natural_exp_decay as ExponentialDecay(decay_rate=exp(-decay_rate)).
        ("train.natural_exp_decay", "f(0.1, step, 10, 0.5, staircase=True)",
         "ExponentialDecay(initial_learning_rate=0.1, decay_steps=10, decay_rate=0.6065306597126334, staircase=True)"),
    ],
)
def test_learning_rate_schedule(api, tf1, keras):
    result = learning_rate_schedule(api, call(tf1))
    assert (result.code, result.safety, result.after_compile) == (SCHED + keras, E, ())


@pytest.mark.parametrize(
    "api, tf1, message",
    [
        ("train.natural_exp_decay", "f(0.1, step, 10, rate)", r"math\.exp\(-decay_rate\)"),
        ("train.linear_cosine_decay", "f(0.1, step, 10)", "no Keras learning-rate schedule"),
        ("train.exponential_decay", "f(0.1, step, 10)", "missing decay_rate"),
        ("train.exponential_decay", "f(0.1, step, 10, 0.5, **options)", "cannot be mapped statically"),
    ],
)
def test_schedule_without_keras_equivalent(api, tf1, message):
    with pytest.raises(NoKerasEquivalent, match=message):
        learning_rate_schedule(api, call(tf1))


# -- losses ---------------------------------------------------------------


@pytest.mark.parametrize(
    "api, tf1, keras, labels, predictions",
    [
        ("losses.mean_squared_error", "f(labels, predictions)", "MeanSquaredError()", "labels", "predictions"),
        ("losses.mean_squared_error", "f(predictions=p, labels=y, weights=1.0, scope='l', loss_collection=None)",
         "MeanSquaredError()", "y", "p"),
        ("losses.mean_squared_error", "f(y, p, 1, reduction=tf1.losses.Reduction.SUM_BY_NONZERO_WEIGHTS)",
         "MeanSquaredError()", "y", "p"),
        ("losses.mean_squared_error", "f(y, p, reduction='weighted_mean')", "MeanSquaredError()", "y", "p"),
        ("losses.mean_squared_error", "f(y, p, reduction=Reduction.SUM_OVER_BATCH_SIZE)", "MeanSquaredError()", "y", "p"),
        ("losses.absolute_difference", "f(y, p)", "MeanAbsoluteError()", "y", "p"),
        ("losses.huber_loss", "f(y, p)", "Huber()", "y", "p"),
        ("losses.huber_loss", "f(y, p, 1.0, 2.0)", "Huber(delta=2.0)", "y", "p"),
        ("losses.softmax_cross_entropy", "f(onehot, logits)", "CategoricalCrossentropy(from_logits=True)",
         "onehot", "logits"),
        ("losses.softmax_cross_entropy", "f(logits=z, onehot_labels=tf1.one_hot(y, 10), label_smoothing=0.1)",
         "CategoricalCrossentropy(from_logits=True, label_smoothing=0.1)", "tf1.one_hot(y, 10)", "z"),
        ("losses.sparse_softmax_cross_entropy", "f(labels=y, logits=z)",
         "SparseCategoricalCrossentropy(from_logits=True)", "y", "z"),
        ("losses.sigmoid_cross_entropy", "f(y, z, 1.0, 0.2)",
         "BinaryCrossentropy(from_logits=True, label_smoothing=0.2)", "y", "z"),
        ("losses.hinge_loss", "f(y, z)", "Hinge()", "y", "z"),
    ],
)
def test_loss(api, tf1, keras, labels, predictions):
    result, got_labels, got_predictions = loss(api, call(tf1))
    assert (result.code, result.safety, result.after_compile) == ("keras.losses." + keras, E, ())
    assert (source(got_labels), source(got_predictions)) == (labels, predictions)


def test_log_loss_is_numeric_because_keras_clips():
    result, labels, predictions = loss("losses.log_loss", call("f(y, p, epsilon=1e-7)"))
    assert (result.code, result.safety) == ("keras.losses.BinaryCrossentropy()", N)
    assert "clips" in result.why
    assert (source(labels), source(predictions)) == ("y", "p")


@pytest.mark.parametrize(
    "api, tf1, message",
    [
        ("losses.mean_squared_error", "f(y, p, weights=w)", "non-zero weights"),
        ("losses.mean_squared_error", "f(y, p, 0.5)", "non-zero weights"),
        ("losses.mean_squared_error", "f(y, p, reduction=tf1.losses.Reduction.SUM)", "reduction="),
        ("losses.mean_squared_error", "f(y, p, reduction='none')", "reduction="),
        ("losses.mean_squared_error", "f(y)", "missing predictions"),
        ("losses.log_loss", "f(y, p, epsilon=1e-4)", "epsilon=1e-4"),
        ("losses.mean_pairwise_squared_error", "f(y, p)", "pairwise"),
        ("losses.cosine_distance", "f(y, p, axis=1)", "CosineSimilarity"),
        ("losses.compute_weighted_loss", "f(l)", "no Keras loss"),
        ("losses.softmax_cross_entropy", "f(y, z, from_logits=False)", "cannot be mapped statically"),
    ],
)
def test_loss_without_keras_equivalent(api, tf1, message):
    with pytest.raises(NoKerasEquivalent, match=message):
        loss(api, call(tf1))


# -- layers ---------------------------------------------------------------


@pytest.mark.parametrize(
    "api, tf1, keras",
    [
        ("layers.Dense", "f(10)", "Dense(units=10)"),
        ("layers.Dense", "f(10, tf.nn.relu, False, name='hidden')",
         "Dense(units=10, activation=\"relu\", use_bias=False, name='hidden')"),
        ("layers.Dense", "f(units=1, activation=None, kernel_initializer=init, kernel_regularizer=None)",
         "Dense(units=1, kernel_initializer=init)"),
        ("layers.Dense", "f(4, activation='tanh', trainable=False)", "Dense(units=4, activation='tanh', trainable=False)"),
        ("layers.Conv2D", "f(32, 3)", "Conv2D(filters=32, kernel_size=3, data_format=\"channels_last\")"),
        ("layers.Conv2D", "f(32, (3, 3), padding='same', data_format='channels_first', activation=tf1.nn.elu)",
         "Conv2D(filters=32, kernel_size=(3, 3), padding='same', data_format='channels_first', activation=\"elu\")"),
        ("layers.MaxPooling2D", "f(2, 2)",
         "MaxPooling2D(pool_size=2, strides=2, data_format=\"channels_last\")"),
        ("layers.AveragePooling2D", "f((3, 3), (1, 1), 'same')",
         "AveragePooling2D(pool_size=(3, 3), strides=(1, 1), padding='same', data_format=\"channels_last\")"),
        ("layers.Flatten", "f()", "Flatten()"),
        ("layers.BatchNormalization", "f()", "BatchNormalization()"),
        ("layers.BatchNormalization", "f(axis=1, momentum=0.9, renorm=True, fused=None)",
         "BatchNormalization(axis=1, momentum=0.9, renorm=True)"),
    ],
)
def test_object_layer(api, tf1, keras):
    result, inputs = layer(api, call(tf1), functional=False)
    assert (result.code, result.safety, result.after_compile, inputs) == ("keras.layers." + keras, E, (), None)


@pytest.mark.parametrize(
    "api, tf1, keras, inputs",
    [
        ("layers.dense", "f(x, 10)", "Dense(units=10)", "x"),
        ("layers.dense", "f(inputs=net, units=10, activation=tf.math.sigmoid, reuse=None)",
         "Dense(units=10, activation=\"sigmoid\")", "net"),
        ("layers.dense", "f(h, 10, tf.sigmoid, name='logits', reuse=False)",
         "Dense(units=10, activation=\"sigmoid\", name='logits')", "h"),
        ("layers.dense", "f(features['x'], units=2, activation=tf.compat.v1.nn.softmax)",
         "Dense(units=2, activation=\"softmax\")", "features['x']"),
        ("layers.conv2d", "f(images, 16, 5, activation=tf.nn.relu)",
         "Conv2D(filters=16, kernel_size=5, data_format=\"channels_last\", activation=\"relu\")", "images"),
        ("layers.conv2d", "f(images, 16, 5, data_format=None)",
         "Conv2D(filters=16, kernel_size=5, data_format=None)", "images"),
        # TF1 requires strides; Keras would default them to pool_size.
        ("layers.max_pooling2d", "f(net, pool_size=[2, 2], strides=1)",
         "MaxPooling2D(pool_size=[2, 2], strides=1, data_format=\"channels_last\")", "net"),
        ("layers.average_pooling2d", "f(net, 2, 2, padding='same', name='pool')",
         "AveragePooling2D(pool_size=2, strides=2, padding='same', data_format=\"channels_last\", name='pool')", "net"),
        ("layers.flatten", "f(net)", 'Flatten(data_format="channels_last")', "net"),
        ("layers.flatten", "f(net, 'flat', 'channels_first')", "Flatten(data_format='channels_first', name='flat')",
         "net"),
        ("layers.batch_normalization", "f(net, training=mode == tf.estimator.ModeKeys.TRAIN)",
         "BatchNormalization()", "net"),
        ("layers.batch_normalization", "f(net, 1, 0.9, 1e-5, training=is_training)",
         "BatchNormalization(axis=1, momentum=0.9, epsilon=1e-5)", "net"),
    ],
)
def test_functional_layer(api, tf1, keras, inputs):
    result, got_inputs = layer(api, call(tf1), functional=True)
    assert (result.code, result.safety, result.after_compile) == ("keras.layers." + keras, E, ())
    assert source(got_inputs) == inputs


@pytest.mark.parametrize("tf1", ["f(net)", "f(net, 0.3)", "f(net, rate=0.3, training=False)", "f(net, 0.5, None, 1, False)"])
def test_dropout_without_training_is_a_no_op_in_tf1(tf1):
    result, inputs = layer("layers.dropout", call(tf1), functional=True)
    assert result is IDENTITY and result.code == ""
    assert source(inputs) == "net"


@pytest.mark.parametrize(
    "api, tf1, functional, keras",
    [
        ("layers.dropout", "f(net, 0.3, training=mode == TRAIN)", True, "Dropout(rate=0.3)"),
        ("layers.dropout", "f(net, training=training, seed=7)", True, "Dropout(rate=0.5, seed=7)"),
        ("layers.Dropout", "f()", False, "Dropout(rate=0.5)"),
        ("layers.Dropout", "f(0.2, name='drop')", False, "Dropout(rate=0.2, name='drop')"),
    ],
)
def test_dropout_in_training_is_statistical_only(api, tf1, functional, keras):
    result, _ = layer(api, call(tf1), functional=functional)
    assert (result.code, result.safety) == ("keras.layers." + keras, N)
    assert "random" in result.why


@pytest.mark.parametrize(
    "api, tf1, functional, message",
    [
        ("layers.batch_normalization", "f(net)", True, r"training=False \(the default\)"),
        ("layers.batch_normalization", "f(net, training=False)", True, "training=False"),
        ("layers.batch_normalization", "f(net, training=True)", True, "batch statistics in fit only"),
        ("layers.dropout", "f(net, training=True)", True, "drops units in fit only"),
        ("layers.dropout", "f(net, training=None)", True, "training=None"),
        ("layers.dense", "f(x, 10, reuse=True)", True, "reuse"),
        ("layers.dense", "f(x, 10, reuse=tf1.AUTO_REUSE)", True, "reuse"),
        ("layers.dense", "f(x, 10, kernel_regularizer=tf.contrib.layers.l2_regularizer(0.1))", True,
         "kernel_regularizer"),
        ("layers.Conv2D", "f(8, 3, bias_regularizer=reg)", False, "REGULARIZATION_LOSSES"),
        ("layers.dense", "f(x, 10, activation=my_activation)", True, "activation=my_activation"),
        ("layers.dense", "f(x, 10, activation=tf.nn.leaky_relu)", True, "activation=tf.nn.leaky_relu"),
        ("layers.dense", "f(x, 10, activation=lambda t: t * 2)", True, "activation=lambda"),
        ("layers.dense", "f(x)", True, "missing units"),
        ("layers.max_pooling2d", "f(x, 2)", True, "missing strides"),
        ("layers.Dense", "f(10, input_shape=(3,))", False, "cannot be mapped statically"),
        ("layers.conv3d", "f(x, 8, 3)", True, "no Keras layer"),
        ("layers.dense", "f(x, 10)", False, "no Keras layer"),
    ],
)
def test_layer_without_keras_equivalent(api, tf1, functional, message):
    with pytest.raises(NoKerasEquivalent, match=message):
        layer(api, call(tf1), functional=functional)


def test_generated_code_parses():
    for result in (
        optimizer("train.RMSPropOptimizer", call("f(0.1, momentum=0.9)")),
        learning_rate_schedule("train.piecewise_constant", call("f(step, [10], [0.1, 0.01])")),
        loss("losses.huber_loss", call("f(y, p, delta=d)"))[0],
        layer("layers.conv2d", call("f(x, 8, (3,\n 3))"), functional=True)[0],
    ):
        assert isinstance(cst.parse_expression(result.code), cst.Call)


@pytest.mark.parametrize("module", ["rewrites.keras_equivalents", "rewrites.keras_optimizers"])
def test_the_modules_before_and_after_is_what_they_translate(module):
    import importlib
    import re

    doc = importlib.import_module(module).__doc__
    before = doc[doc.index("Before::"):doc.index("After::")]
    after = doc[doc.index("After::"):]
    translate = {r"train\.\w+Optimizer": optimizer, r"train\.\w+_decay": learning_rate_schedule,
                 r"layers\.\w+": lambda api, node: layer(api, node, functional=True)[0],
                 r"losses\.\w+": lambda api, node: loss(api, node)[0]}
    calls = re.findall(r"^    tf\.([\w.]+)(\(.*\))$", before, re.MULTILINE)
    assert calls
    for api, arguments in calls:
        function = next(f for pattern, f in translate.items() if re.fullmatch(pattern, api))
        assert function(api, call(f"f{arguments}")).code in after, api
