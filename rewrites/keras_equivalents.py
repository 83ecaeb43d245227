"""TF1 optimizers, losses, layers and learning-rate schedules -> Keras 2 source code.

Pure translation tables shared by the Estimator and cluster rewrites: each function
takes the TF1 api name (``TFName.api``) and the libcst call, and returns the source
of the Keras expression that computes the same thing, or raises
``NoKerasEquivalent`` saying why not and what a person should do. Generated code
names Keras ``keras`` (the migrated program has ``import tf_keras as keras``) and
uses the legacy optimizers, as ParameterServerStrategy training wants.

Before::

    tf.train.AdamOptimizer(0.01)
    tf.train.RMSPropOptimizer(learning_rate=0.01, decay=0.8)

After::

    keras.optimizers.legacy.Adam(learning_rate=0.01, epsilon=1e-08)
    keras.optimizers.legacy.RMSprop(learning_rate=0.01, rho=0.8, epsilon=1e-10)
    # after model.compile(...), in the same strategy scope:
    for variable in model.trainable_variables:
        optimizer.add_slot(variable, "rms", initializer="ones")

Arguments are bound to the TF1 signature (positional or keyword) and always
written as Keras keywords. A TF1 default that differs from Keras' is written out
(Adam's ``epsilon=1e-08``, ``conv2d``'s ``data_format="channels_last"``), and so is
what TF1 requires and Keras would default (pooling ``strides``, dropout ``rate``);
other argument expressions are copied as written.

Safety: EXACT where both sides run the same maths (measured differences at float
rounding level), NUMERIC with a ``why`` where they differ in documented ways,
NoKerasEquivalent where they compute something else. Numbers: MAPPING.md.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import libcst as cst

from migrator.findings import Safety
from rewrites.syntax import bind_arguments, source


@dataclass(frozen=True)
class KerasCode:
    """A Keras expression and how far it can be trusted.

    why: for Safety.NUMERIC, one line on what differs from TF1 (a finding message); for IDENTITY, why.
    after_compile: statements to run right after ``model.compile(...)``, inside the same
        strategy scope, with ``optimizer`` and ``model`` bound and the model built.
    """

    code: str
    safety: Safety
    why: str = ""
    after_compile: tuple[str, ...] = ()


IDENTITY = KerasCode("", Safety.EXACT, "a no-op in TF1: replace the call by its inputs")
"""What ``layer`` returns for a TF1 layer call that computes its inputs unchanged
(``dropout`` without ``training``): there is no Keras layer to create."""


class NoKerasEquivalent(Exception):
    """The call cannot be translated safely; str(error) says why and what a person should do."""


@dataclass(frozen=True)
class Translation:
    """One TF1 callable and its Keras counterpart.

    tf1: the TF1 signature as TF1 documents it; parameters without a default are required.
    keywords: the Keras keywords in the Keras signature's order: a TF1 parameter name
        (passed on when given), or ``keyword=source`` (always written). A bound TF1
        parameter not listed is dropped; the functions below refuse the values of
        dropped parameters that would change the numbers.
    renames: TF1 parameter -> Keras keyword, where they differ.
    explicit: TF1 parameters whose TF1 default differs from Keras': written out when absent.
    """

    keras: str
    tf1: str
    keywords: tuple[str, ...]
    renames: Mapping[str, str] = field(default_factory=dict)
    explicit: tuple[str, ...] = ()


# TFM206 (Estimator programs) and TFM105 (between-graph programs): ParameterServerStrategy takes one partitioner.
PARTITIONER_FOR_EVERY_VARIABLE = ("the partitioner moves onto ParameterServerStrategy, which applies it to every "
                                  "variable the program creates, so the variables made here, not partitioned in TF1, "
                                  "are split too (placement only: the numbers are the same)")

_LEGACY = "keras.optimizers.legacy."
_SCHEDULES = "keras.optimizers.schedules."

OPTIMIZERS = {
    "train.GradientDescentOptimizer": Translation(
        _LEGACY + "SGD", "learning_rate, use_locking=False, name='GradientDescent'", ("learning_rate", "name")),
    "train.MomentumOptimizer": Translation(
        _LEGACY + "SGD", "learning_rate, momentum, use_locking=False, name='Momentum', use_nesterov=False",
        ("learning_rate", "momentum", "use_nesterov", "name"), renames={"use_nesterov": "nesterov"}),
    "train.AdamOptimizer": Translation(
        _LEGACY + "Adam", "learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-08, use_locking=False, name='Adam'",
        ("learning_rate", "beta1", "beta2", "epsilon", "name"), renames={"beta1": "beta_1", "beta2": "beta_2"},
        explicit=("epsilon",)),
    # TF1 Adagrad has no epsilon; legacy Keras adds it to sqrt(accumulator) and turns 0 into 1e-7.
    "train.AdagradOptimizer": Translation(
        _LEGACY + "Adagrad", "learning_rate, initial_accumulator_value=0.1, use_locking=False, name='Adagrad'",
        ("learning_rate", "initial_accumulator_value", "epsilon=1e-30", "name"), explicit=("initial_accumulator_value",)),
    # l1 = l2 = 0 (checked below): plain Adagrad.
    "train.ProximalAdagradOptimizer": Translation(
        _LEGACY + "Adagrad", "learning_rate, initial_accumulator_value=0.1, l1_regularization_strength=0.0, "
        "l2_regularization_strength=0.0, use_locking=False, name='ProximalAdagrad'",
        ("learning_rate", "initial_accumulator_value", "epsilon=1e-30", "name"), explicit=("initial_accumulator_value",)),
    "train.RMSPropOptimizer": Translation(
        _LEGACY + "RMSprop", "learning_rate, decay=0.9, momentum=0.0, epsilon=1e-10, use_locking=False, "
        "centered=False, name='RMSProp'", ("learning_rate", "decay", "momentum", "epsilon", "centered", "name"),
        renames={"decay": "rho"}, explicit=("epsilon",)),
    "train.FtrlOptimizer": Translation(
        _LEGACY + "Ftrl", "learning_rate, learning_rate_power=-0.5, initial_accumulator_value=0.1, "
        "l1_regularization_strength=0.0, l2_regularization_strength=0.0, use_locking=False, name='Ftrl', "
        "accum_name=None, linear_name=None, l2_shrinkage_regularization_strength=0.0, beta=None",
        ("learning_rate", "learning_rate_power", "initial_accumulator_value", "l1_regularization_strength",
         "l2_regularization_strength", "name", "l2_shrinkage_regularization_strength", "beta")),
    "train.AdadeltaOptimizer": Translation(
        _LEGACY + "Adadelta", "learning_rate=0.001, rho=0.95, epsilon=1e-08, use_locking=False, name='Adadelta'",
        ("learning_rate", "rho", "epsilon", "name"), explicit=("epsilon",)),
}

# TF1 initialises RMSProp's mean-square slot to ones, Keras to zeros.
_RMS_SLOTS_TO_ONES = ('# TF1 started the mean-square slots at ones, Keras at zeros.\n'
                      'for variable in model.trainable_variables:\n    optimizer.add_slot(variable, "rms", initializer="ones")')

# The compat.v1 decay functions evaluate these Keras classes at the global step, which Keras drops.
SCHEDULES = {
    "train.exponential_decay": Translation(
        _SCHEDULES + "ExponentialDecay", "learning_rate, global_step, decay_steps, decay_rate, staircase=False, name=None",
        ("learning_rate", "decay_steps", "decay_rate", "staircase", "name"), renames={"learning_rate": "initial_learning_rate"}),
    "train.piecewise_constant": Translation(
        _SCHEDULES + "PiecewiseConstantDecay", "x, boundaries, values, name=None", ("boundaries", "values", "name")),
    "train.polynomial_decay": Translation(
        _SCHEDULES + "PolynomialDecay",
        "learning_rate, global_step, decay_steps, end_learning_rate=0.0001, power=1.0, cycle=False, name=None",
        ("learning_rate", "decay_steps", "end_learning_rate", "power", "cycle", "name"),
        renames={"learning_rate": "initial_learning_rate"}),
    "train.inverse_time_decay": Translation(
        _SCHEDULES + "InverseTimeDecay", "learning_rate, global_step, decay_steps, decay_rate, staircase=False, name=None",
        ("learning_rate", "decay_steps", "decay_rate", "staircase", "name"), renames={"learning_rate": "initial_learning_rate"}),
    # TF1 builds it as ExponentialDecay with decay_rate exp(-decay_rate): written out for a literal rate.
    "train.natural_exp_decay": Translation(
        _SCHEDULES + "ExponentialDecay", "learning_rate, global_step, decay_steps, decay_rate, staircase=False, name=None",
        ("learning_rate", "decay_steps", "decay_rate", "staircase", "name"), renames={"learning_rate": "initial_learning_rate"}),
    "train.cosine_decay": Translation(
        _SCHEDULES + "CosineDecay", "learning_rate, global_step, decay_steps, alpha=0.0, name=None",
        ("learning_rate", "decay_steps", "alpha", "name"), renames={"learning_rate": "initial_learning_rate"}),
    "train.cosine_decay_restarts": Translation(
        _SCHEDULES + "CosineDecayRestarts",
        "learning_rate, global_step, first_decay_steps, t_mul=2.0, m_mul=1.0, alpha=0.0, name=None",
        ("learning_rate", "first_decay_steps", "t_mul", "m_mul", "alpha", "name"),
        renames={"learning_rate": "initial_learning_rate"}),
}

# Every TF1 loss ends in these; `weights` and `reduction` are checked, the others dropped.
_LOSS_TAIL = "scope=None, loss_collection='losses', reduction='weighted_sum_by_nonzero_weights'"

# The first two parameters are (labels, predictions|logits); Keras takes them at call time.
LOSSES = {
    "losses.mean_squared_error": Translation(
        "keras.losses.MeanSquaredError", f"labels, predictions, weights=1.0, {_LOSS_TAIL}", ()),
    "losses.absolute_difference": Translation(
        "keras.losses.MeanAbsoluteError", f"labels, predictions, weights=1.0, {_LOSS_TAIL}", ()),
    "losses.huber_loss": Translation(
        "keras.losses.Huber", f"labels, predictions, weights=1.0, delta=1.0, {_LOSS_TAIL}", ("delta",)),
    "losses.softmax_cross_entropy": Translation(
        "keras.losses.CategoricalCrossentropy",
        f"onehot_labels, logits, weights=1.0, label_smoothing=0, {_LOSS_TAIL}",
        ("from_logits=True", "label_smoothing")),
    "losses.sparse_softmax_cross_entropy": Translation(
        "keras.losses.SparseCategoricalCrossentropy", f"labels, logits, weights=1.0, {_LOSS_TAIL}",
        ("from_logits=True",)),
    "losses.sigmoid_cross_entropy": Translation(
        "keras.losses.BinaryCrossentropy",
        f"multi_class_labels, logits, weights=1.0, label_smoothing=0, {_LOSS_TAIL}",
        ("from_logits=True", "label_smoothing")),
    # TF1 {0, 1} labels become {-1, 1} in both.
    "losses.hinge_loss": Translation("keras.losses.Hinge", f"labels, logits, weights=1.0, {_LOSS_TAIL}", ()),
    "losses.log_loss": Translation(
        "keras.losses.BinaryCrossentropy", f"labels, predictions, weights=1.0, epsilon=1e-07, {_LOSS_TAIL}", ()),
}

# With every weight 1 these all divide the summed losses by their number, as Keras does.
_SAME_AS_KERAS_REDUCTION = {"SUM_BY_NONZERO_WEIGHTS": "weighted_sum_by_nonzero_weights",
                            "SUM_OVER_BATCH_SIZE": "weighted_sum_over_batch_size", "MEAN": "weighted_mean"}

_DENSE = ("units, activation=None, use_bias=True, kernel_initializer=None, bias_initializer=zeros_initializer(), "
          "kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None, kernel_constraint=None, "
          "bias_constraint=None, trainable=True, name=None")
_CONV2D = ('filters, kernel_size, strides=(1, 1), padding="valid", data_format="channels_last", dilation_rate=(1, 1), '
           "activation=None, use_bias=True, kernel_initializer=None, bias_initializer=zeros_initializer(), "
           "kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None, kernel_constraint=None, "
           "bias_constraint=None, trainable=True, name=None")
_POOLING = 'pool_size, strides, padding="valid", data_format="channels_last", name=None'
_BN_INITIALIZERS = ("beta_initializer=zeros_initializer(), gamma_initializer=ones_initializer(), "
                    "moving_mean_initializer=zeros_initializer(), moving_variance_initializer=ones_initializer(), "
                    "beta_regularizer=None, gamma_regularizer=None, beta_constraint=None, gamma_constraint=None")
_BN_KERAS = ("axis", "momentum", "epsilon", "center", "scale", "beta_initializer", "gamma_initializer",
             "moving_mean_initializer", "moving_variance_initializer", "beta_regularizer", "gamma_regularizer",
             "beta_constraint", "gamma_constraint", "renorm", "renorm_clipping", "renorm_momentum", "fused",
             "virtual_batch_size", "adjustment", "trainable", "name")
_DENSE_KERAS = ("units", "activation", "use_bias", "kernel_initializer", "bias_initializer", "kernel_regularizer",
                "bias_regularizer", "activity_regularizer", "kernel_constraint", "bias_constraint", "trainable", "name")
_CONV2D_KERAS = ("filters", "kernel_size", "strides", "padding", "data_format", "dilation_rate") + _DENSE_KERAS[1:]
_POOLING_KERAS = ("pool_size", "strides", "padding", "data_format", "name")

# Object form `layers.Dense(...)`. Keras' data_format=None means keras.json's setting: TF1's is written out.
LAYERS = {
    "layers.Dense": Translation("keras.layers.Dense", _DENSE, _DENSE_KERAS),
    "layers.Conv2D": Translation("keras.layers.Conv2D", _CONV2D, _CONV2D_KERAS, explicit=("data_format",)),
    "layers.MaxPooling2D": Translation("keras.layers.MaxPooling2D", _POOLING, _POOLING_KERAS, explicit=("data_format",)),
    "layers.AveragePooling2D": Translation(
        "keras.layers.AveragePooling2D", _POOLING, _POOLING_KERAS, explicit=("data_format",)),
    "layers.Flatten": Translation("keras.layers.Flatten", "data_format=None, name=None", ("data_format", "name")),
    "layers.Dropout": Translation(
        "keras.layers.Dropout", "rate=0.5, noise_shape=None, seed=None, name=None", ("rate", "noise_shape", "seed", "name"),
        explicit=("rate",)),
    "layers.BatchNormalization": Translation(
        "keras.layers.BatchNormalization",
        f"axis=-1, momentum=0.99, epsilon=0.001, center=True, scale=True, {_BN_INITIALIZERS}, renorm=False, "
        "renorm_clipping=None, renorm_momentum=0.99, fused=None, trainable=True, virtual_batch_size=None, "
        "adjustment=None, name=None", _BN_KERAS),
}

# Functional form `layers.dense(inputs, ...)`: the inputs come first; `reuse` and `training` are checked.
FUNCTIONAL_LAYERS = {
    "layers.dense": Translation("keras.layers.Dense", f"inputs, {_DENSE}, reuse=None", _DENSE_KERAS),
    "layers.conv2d": Translation(
        "keras.layers.Conv2D", f"inputs, {_CONV2D}, reuse=None", _CONV2D_KERAS, explicit=("data_format",)),
    "layers.max_pooling2d": Translation(
        "keras.layers.MaxPooling2D", f"inputs, {_POOLING}", _POOLING_KERAS, explicit=("data_format",)),
    "layers.average_pooling2d": Translation(
        "keras.layers.AveragePooling2D", f"inputs, {_POOLING}", _POOLING_KERAS, explicit=("data_format",)),
    "layers.flatten": Translation(
        "keras.layers.Flatten", 'inputs, name=None, data_format="channels_last"', ("data_format", "name"),
        explicit=("data_format",)),
    "layers.dropout": Translation(
        "keras.layers.Dropout", "inputs, rate=0.5, noise_shape=None, seed=None, training=False, name=None",
        ("rate", "noise_shape", "seed", "name"), explicit=("rate",)),
    "layers.batch_normalization": Translation(
        "keras.layers.BatchNormalization",
        f"inputs, axis=-1, momentum=0.99, epsilon=0.001, center=True, scale=True, {_BN_INITIALIZERS}, training=False, "
        "trainable=True, name=None, reuse=None, renorm=False, renorm_clipping=None, renorm_momentum=0.99, fused=None, "
        "virtual_batch_size=None, adjustment=None", _BN_KERAS),
}

AUC = Translation("keras.metrics.AUC", "labels, predictions, weights=None, num_thresholds=200, metrics_collections=None, "
                  "updates_collections=None, curve='ROC', name=None, summation_method='trapezoidal', thresholds=None", ())
# TF1 summation -> Keras': for ROC both trapezoidal ('interpolation'); for PR 'interpolation' is TF1's careful one.
_AUC_SUMMATION = {"trapezoidal": "interpolation", "careful_interpolation": "interpolation", "minoring": "minoring",
                  "majoring": "majoring"}

# A table read only through `embedding_lookup` is a Keras Embedding.
GET_VARIABLE = Translation(
    "keras.layers.Embedding", "name, shape=None, dtype=None, initializer=None, regularizer=None, trainable=None, "
    "collections=None, caching_device=None, partitioner=None, validate_shape=True, use_resource=None, "
    "custom_getter=None, constraint=None, synchronization=None, aggregation=None", ())
EMBEDDING_LOOKUP = Translation(
    "keras.layers.Embedding", "params, ids, partition_strategy='mod', name=None, validate_indices=True, max_norm=None", ())
_MOD_LOOKUP = ("embedding_lookup on the partitioned {}: TF1 looked id i up \"mod\" (shard i % n), a TF2 sharded "
               "Embedding \"div\" (row i of the whole table): the same computation with the table's rows in another "
               "order: restore_tf1_checkpoint permutes the rows of a TF1 checkpoint (tf-migrate parity compares them so)")

# TensorFlow activation functions (reached as `<...>.nn.<f>` or `<...>.math.<f>`) with the same Keras activation.
_ACTIVATIONS = {"relu", "relu6", "elu", "selu", "sigmoid", "tanh", "softmax", "log_softmax", "softplus", "softsign",
                "swish", "silu", "gelu"}
# ... and the ones TensorFlow also has at its top level (`tf.sigmoid`).
_TOP_LEVEL_ACTIVATIONS = {"sigmoid", "tanh"}

# Functional layers that behave differently while training: what Keras does in fit only.
_TRAINING_ONLY = {"layers.dropout": "drops units", "layers.batch_normalization": "normalises with batch statistics"}

_REFUSED = {
    "train.SyncReplicasOptimizer": "Keras training under ParameterServerStrategy is asynchronous and has no "
    "synchronous-replicas optimizer; keep the wrapped optimizer and accept asynchronous updates, or train with "
    "MultiWorkerMirroredStrategy instead",
    "losses.mean_pairwise_squared_error": "Keras has no pairwise squared error loss; write a custom loss function",
    "losses.cosine_distance": "Keras' CosineSimilarity normalises its inputs and has the opposite sign; "
    "use 1 + keras.losses.CosineSimilarity(axis=...) only if the TF1 inputs were already unit-normalised",
}


# -- the four translations ----------------------------------------------------


def optimizer(api: str, call: cst.Call) -> KerasCode:
    """A ``tf.compat.v1.train.*Optimizer(...)`` call -> a legacy Keras optimizer."""
    translation = _lookup(OPTIMIZERS, api, "optimizer")
    bound = _bind(api, call, translation)
    if api == "train.ProximalAdagradOptimizer":
        for strength in ("l1_regularization_strength", "l2_regularization_strength"):
            if strength in bound and not _is_number(bound[strength], 0):
                raise NoKerasEquivalent(f"{api} with {strength} other than 0: Keras has no proximal Adagrad; keep "
                                        "this optimizer out of the migration or write a legacy-Adagrad subclass "
                                        "that calls tf.raw_ops.ResourceApplyProximalAdagrad")
    code = _keras_call(translation, bound)
    if api == "train.MomentumOptimizer":
        return _momentum(api, code, bound["learning_rate"])
    if api == "train.RMSPropOptimizer":
        return KerasCode(code, Safety.EXACT, after_compile=(_RMS_SLOTS_TO_ONES,))
    return KerasCode(code, Safety.EXACT)


def learning_rate_schedule(api: str, call: cst.Call) -> KerasCode:
    """A ``tf.compat.v1.train.*_decay(..., global_step, ...)`` call -> a Keras schedule.

    The global step argument is dropped: the caller checks that it is the global step.
    """
    translation = _lookup(SCHEDULES, api, "learning-rate schedule")
    bound = _bind(api, call, translation)
    if api == "train.natural_exp_decay":
        rate = bound["decay_rate"]
        if not isinstance(rate, (cst.Integer, cst.Float)):
            raise NoKerasEquivalent(f"{api} with decay_rate={source(rate)}: write keras.optimizers.schedules."
                                    "ExponentialDecay(..., decay_rate=math.exp(-decay_rate)) by hand")
        bound["decay_rate"] = cst.Float(repr(math.exp(-rate.evaluated_value)))
    return KerasCode(_keras_call(translation, bound), Safety.EXACT)


def loss(api: str, call: cst.Call, scalar_weight: bool = False) -> tuple[KerasCode, cst.BaseExpression,
                                                                         cst.BaseExpression]:
    """A ``tf.compat.v1.losses.*(labels, predictions|logits, ...)`` call -> (Keras loss object, labels, predictions).

    ``scalar_weight``: the caller knows ``weights`` is one number w: TF1's loss is then w times the mean, which the
    caller gives Keras as compile's ``loss_weights``."""
    translation = _lookup(LOSSES, api, "loss")
    bound = _bind(api, call, translation)
    if "weights" in bound and not _is_number(bound["weights"], 1) and not scalar_weight:
        raise NoKerasEquivalent(f"{api} with weights: TF1 divides the weighted sum by the number of non-zero weights, "
                                "Keras by the batch size; pass them as sample weights with reduction='sum' divided by "
                                "the non-zero weight count, by hand")
    if "reduction" in bound and not _is_reduction(bound["reduction"], _SAME_AS_KERAS_REDUCTION):
        raise NoKerasEquivalent(f"{api} with reduction={source(bound['reduction'])}: Keras losses average over the "
                                "batch; choose the matching Keras reduction by hand")
    labels, predictions = (bound[name] for name in list(_signature(translation.tf1))[:2])
    code = _keras_call(translation, bound)
    if api == "losses.log_loss":
        if "epsilon" in bound and not _is_number(bound["epsilon"], 1e-07):
            raise NoKerasEquivalent(f"{api} with epsilon={source(bound['epsilon'])}: Keras' BinaryCrossentropy "
                                    "always uses 1e-07; write the loss by hand")
        why = ("TF1 log_loss adds epsilon inside the logarithms, Keras clips the predictions to [1e-07, 1 - 1e-07] "
               "(and reads the logits of a sigmoid output): the losses differ where predictions are near 0 or 1")
        return KerasCode(code, Safety.NUMERIC, why), labels, predictions
    return KerasCode(code, Safety.EXACT), labels, predictions


def layer(api: str, call: cst.Call, *, functional: bool,
          name: str | None = None) -> tuple[KerasCode, cst.BaseExpression | None]:
    """A ``tf.compat.v1.layers`` call -> (Keras layer constructor, the inputs or None); ``name``: the Keras
    layer's name (code) in place of the call's.

    Object form (``layers.Dense(units)``, functional=False): (constructor, None).
    Functional form (``layers.dense(inputs, units)``, functional=True): (constructor, inputs),
    or (IDENTITY, inputs) for a call that changes nothing.

    ``training`` is for the caller: a ``dropout``/``batch_normalization`` call with a
    ``training`` expression (or an object-form ``Dropout``/``BatchNormalization`` layer,
    called later) must train only in TRAIN mode, which is what Keras ``fit`` does.
    """
    translation = _lookup(FUNCTIONAL_LAYERS if functional else LAYERS, api, "layer")
    bound = _bind(api, call, translation)
    if name is not None:
        bound["name"] = cst.parse_expression(name)
    if "reuse" in bound and not _is_name(bound["reuse"], "None", "False"):
        raise NoKerasEquivalent(f"{api} with reuse: Keras shares weights by calling the same layer object twice; "
                                "create the layer once and call it where the TF1 code reused its variables")
    _check_regularizers(api, bound)
    if "activation" in bound:
        bound["activation"] = _activation(api, bound["activation"])
    inputs, training = bound.get("inputs"), bound.get("training")
    if api == "layers.dropout" and (training is None or _is_name(training, "False")):
        return IDENTITY, inputs
    if api in _TRAINING_ONLY:
        _check_training(api, training)
    code = _keras_call(translation, bound)
    if translation.keras == "keras.layers.Dropout":
        return KerasCode(code, Safety.NUMERIC, "dropout masks are random: TF1 and Keras drop different units, so the "
                                               "two runs agree only statistically"), inputs
    return KerasCode(code, Safety.EXACT), inputs


def metric_inputs(api: str, call: cst.Call) -> tuple[cst.BaseExpression | None, cst.BaseExpression | None]:
    """The (labels, predictions) a ``tf.compat.v1.metrics`` call compares."""
    bound = _bind(api, call, _lookup({"metrics.auc": AUC}, api, "metric"))
    return bound.get("labels"), bound.get("predictions")


def auc(call: cst.Call, name: str, from_logits: bool) -> KerasCode:
    """``tf1.metrics.auc(labels, predictions, ...)`` -> ``keras.metrics.AUC(...)`` (the caller checks the tensors).

    ``from_logits``: TF1 read the sigmoid of the model's output, Keras reads the output.
    """
    bound = _bind("metrics.auc", call, AUC)
    if "weights" in bound or "thresholds" in bound:
        raise NoKerasEquivalent("metrics.auc with weights or thresholds: write the Keras AUC by hand")
    curve = _string(bound.get("curve"), "ROC")
    summation = _string(bound.get("summation_method"), "trapezoidal")
    if curve not in ("ROC", "PR") or summation not in _AUC_SUMMATION:
        raise NoKerasEquivalent("metrics.auc with a curve or summation_method that is not a literal Keras knows")
    arguments = [f"num_thresholds={source(bound['num_thresholds'])}"] if "num_thresholds" in bound else []
    arguments += [f'curve="{curve}"'] if curve != "ROC" else []
    keras_summation = _AUC_SUMMATION[summation]
    arguments += [f'summation_method="{keras_summation}"'] if keras_summation != "interpolation" else []
    arguments += ["from_logits=True"] if from_logits else []
    code = f'keras.metrics.AUC({", ".join([*arguments, f"name={name!r}"])})'.replace("'", '"')
    if curve == "PR" and summation == "trapezoidal":
        return KerasCode(code, Safety.NUMERIC, "metrics.auc of the PR curve: TF1 sums it with trapezoids, Keras "
                                               "interpolates (1.2e-5 apart on 200 examples here); TF1's summation_method="
                                               "'careful_interpolation' is what Keras computes")
    return KerasCode(code, Safety.EXACT)


def get_variable_arguments(call: cst.Call) -> dict[str, cst.BaseExpression]:
    """The arguments of a ``get_variable(...)`` call by parameter name."""
    return _bind("get_variable", call, GET_VARIABLE)


def embedding(table: Mapping[str, cst.BaseExpression], partitioned: bool,
              lookup: cst.Call) -> tuple[KerasCode, cst.BaseExpression]:
    """``get_variable(name, [rows, width])`` (its ``table`` arguments) read by ``embedding_lookup(table, ids)``
    -> (Keras Embedding, ids).

    ``partitioned``: the table is split by a partitioner, so TF1's default "mod" lookup
    and TF2's "div" one hold its rows in different orders.
    """
    unsupported = sorted(set(table) - {"name", "shape", "partitioner"})
    if unsupported:
        raise NoKerasEquivalent(f"get_variable with {', '.join(unsupported)} read by embedding_lookup: only a name, a "
                                "[rows, width] shape and a partitioner are migrated; write the Embedding by hand")
    shape = table.get("shape")
    if not (isinstance(shape, (cst.List, cst.Tuple)) and len(shape.elements) == 2):
        raise NoKerasEquivalent("get_variable read by embedding_lookup needs a literal [rows, width] shape")
    rows, width = (source(element.value) for element in shape.elements)
    args = _bind("nn.embedding_lookup", lookup, EMBEDDING_LOOKUP)
    if "max_norm" in args and not _is_name(args["max_norm"], "None"):
        raise NoKerasEquivalent("embedding_lookup with max_norm: Keras' Embedding does not clip; write it by hand")
    strategy = lookup_strategy(lookup)
    if strategy not in ("mod", "div"):
        raise NoKerasEquivalent("embedding_lookup with a partition_strategy that is not a literal \"mod\" or \"div\"")
    # TF1's get_variable initialises with glorot_uniform, Keras' Embedding with uniform(-0.05, 0.05).
    code = (f"{GET_VARIABLE.keras}(input_dim={rows}, output_dim={width}, embeddings_initializer=\"glorot_uniform\", "
            f"name={source(table['name'])})")
    if partitioned and strategy == "mod":
        return KerasCode(code, Safety.NUMERIC, _MOD_LOOKUP.format(source(table["name"]))), args["ids"]
    return KerasCode(code, Safety.EXACT), args["ids"]


def lookup_strategy(lookup: cst.Call) -> str | None:
    """The ``partition_strategy`` of an ``embedding_lookup(...)`` call: "mod" (its default), "div", or None when
    not a literal."""
    strategy = _bind("nn.embedding_lookup", lookup, EMBEDDING_LOOKUP).get("partition_strategy")
    return "mod" if strategy is None else strategy.evaluated_value if isinstance(strategy, cst.SimpleString) else None


def optimizer_arguments(api: str, call: cst.Call) -> dict[str, cst.BaseExpression]:
    """The arguments of a ``tf.compat.v1.train.*Optimizer`` call by TF1 parameter name (defaults left out)."""
    return _bind(api, call, _lookup(OPTIMIZERS, api, "optimizer"))


def optimizer_default_name(api: str) -> str:
    """The ``name`` of a TF1 optimizer not given one: its slots are named after it."""
    return _signature(_lookup(OPTIMIZERS, api, "optimizer").tf1)["name"].evaluated_value


def layer_arguments(api: str, call: cst.Call, *, functional: bool) -> dict[str, cst.BaseExpression]:
    """The arguments of a ``tf.compat.v1.layers`` call by TF1 parameter name (``layer`` has checked them)."""
    return _bind(api, call, _lookup(FUNCTIONAL_LAYERS if functional else LAYERS, api, "layer"))


# -- helpers ----------------------------------------------------------------


def _lookup(table: Mapping[str, Translation], api: str, kind: str) -> Translation:
    if api in _REFUSED:
        raise NoKerasEquivalent(f"{api}: {_REFUSED[api]}")
    if api not in table:
        raise NoKerasEquivalent(f"{api}: no Keras {kind} is known to compute the same thing; translate it by hand")
    return table[api]


@functools.lru_cache(maxsize=None)
def _signature(tf1: str) -> dict[str, cst.BaseExpression | None]:
    """"learning_rate, epsilon=1e-08" -> {"learning_rate": None, "epsilon": <1e-08>}: parameter -> default."""
    function = cst.ensure_type(cst.parse_statement(f"def f({tf1}): pass"), cst.FunctionDef)
    return {param.name.value: param.default for param in function.params.params}


def _bind(api: str, call: cst.Call, translation: Translation) -> dict[str, cst.BaseExpression]:
    """TF1 parameter -> argument expression; NoKerasEquivalent when that cannot be known statically."""
    defaults = _signature(translation.tf1)
    bound = bind_arguments(call, list(defaults))
    if bound is None:
        raise NoKerasEquivalent(f"{api}: the arguments cannot be mapped statically (*args, **kwargs, an unknown "
                                "keyword or too many arguments); translate the call by hand")
    missing = [name for name, default in defaults.items() if default is None and name not in bound]
    if missing:
        raise NoKerasEquivalent(f"{api}: missing {', '.join(missing)}; TF1 requires it, so this call never ran")
    return {name: arg.value for name, (_, arg) in bound.items()}


def _keras_call(translation: Translation, bound: Mapping[str, cst.BaseExpression]) -> str:
    """``Keras(keyword=source, ...)``: the given arguments and the TF1 defaults Keras does not share.

    A literal None where TF1's default is None means "the default", as it does in Keras: left out.
    """
    defaults = _signature(translation.tf1)
    arguments = []
    for name in translation.keywords:
        if "=" in name:
            arguments.append(name)
            continue
        value = bound.get(name, defaults[name] if name in translation.explicit else None)
        if value is not None and not (_is_name(value, "None") and _is_name(defaults[name], "None")):
            arguments.append(f"{translation.renames.get(name, name)}={source(value)}")
    return f"{translation.keras}({', '.join(arguments)})"


def _momentum(api: str, code: str, learning_rate: cst.BaseExpression) -> KerasCode:
    """TF1 applies the current learning rate to the whole accumulator, Keras folds each step's rate into it."""
    if isinstance(learning_rate, (cst.Integer, cst.Float)):
        return KerasCode(code, Safety.EXACT)
    if isinstance(learning_rate, cst.Call):
        raise NoKerasEquivalent(f"{api} with learning_rate={source(learning_rate)}: with a changing learning rate "
                                "Keras' momentum differs from TF1's (measured 2x); write a legacy-SGD subclass whose "
                                "dense update calls tf.raw_ops.ResourceApplyMomentum, or keep the rate constant")
    return KerasCode(code, Safety.NUMERIC, f"momentum: same as TF1 only while learning_rate={source(learning_rate)} "
                                          "stays constant (TF1 scales the whole accumulator by the current rate)")


def _check_training(api: str, training: cst.BaseExpression | None) -> None:
    """Keras switches the layer's training behaviour on in fit only: TF1 must have switched by the mode."""
    if training is None or _is_name(training, "True", "False", "None"):
        given = "False (the default)" if training is None else source(training)
        raise NoKerasEquivalent(f"{api} with training={given}: TF1 does the same in every mode, Keras "
                                f"{_TRAINING_ONLY[api]} in fit only; if TRAIN mode only was meant, pass "
                                "training=(mode == tf.estimator.ModeKeys.TRAIN) in the TF1 code first")


def _check_regularizers(api: str, bound: Mapping[str, cst.BaseExpression]) -> None:
    for name, value in bound.items():
        if name.endswith("_regularizer") and not _is_name(value, "None"):
            raise NoKerasEquivalent(
                f"{api} with {name}: TF1 collects the penalty in REGULARIZATION_LOSSES and counts it only if the "
                "loss adds them (tf1.losses.get_total_loss), Keras always adds it (and tf.contrib l2_regularizer "
                "halves the sum, keras.regularizers.L2 does not); translate the regularizer by hand")


def _activation(api: str, value: cst.BaseExpression) -> cst.BaseExpression:
    """A TF1 activation -> the Keras activation name, or None (linear) or a string as given."""
    if isinstance(value, cst.SimpleString) or _is_name(value, "None"):
        return value
    dotted = _dotted(value)
    if dotted and len(dotted) >= 2:
        module, function = dotted[-2], dotted[-1]
        known = function in _ACTIVATIONS and module in ("nn", "math")
        if known or (function in _TOP_LEVEL_ACTIVATIONS and len(dotted) == 2):
            return cst.SimpleString(f'"{function}"')
    raise NoKerasEquivalent(f"{api} with activation={source(value)}: not a TensorFlow activation with a Keras name; "
                            "pass the Keras activation (a name like \"relu\" or a function) by hand")


def _dotted(node: cst.BaseExpression) -> list[str] | None:
    if isinstance(node, cst.Name):
        return [node.value]
    if isinstance(node, cst.Attribute):
        head = _dotted(node.value)
        return head + [node.attr.value] if head else None
    return None


def _string(node: cst.BaseExpression | None, default: str) -> str | None:
    """A string literal's value, ``default`` when absent, None when not a literal."""
    if node is None:
        return default
    return node.evaluated_value if isinstance(node, cst.SimpleString) else None


def _is_reduction(node: cst.BaseExpression, allowed: Mapping[str, str]) -> bool:
    """``tf1.losses.Reduction.MEAN`` style or its string value, ``"weighted_mean"``."""
    if isinstance(node, cst.Attribute):
        return node.attr.value in allowed
    return isinstance(node, cst.SimpleString) and node.evaluated_value in allowed.values()


def _is_number(node: cst.BaseExpression, value: float) -> bool:
    return isinstance(node, (cst.Integer, cst.Float)) and math.isclose(node.evaluated_value, value, rel_tol=1e-12)


def _is_name(node: cst.BaseExpression | None, *names: str) -> bool:
    return isinstance(node, cst.Name) and node.value in names
