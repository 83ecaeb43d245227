"""TF1 losses, layers, metrics and embedding tables -> Keras 2 source code.

Pure translation tables shared by the Estimator and cluster rewrites (optimizers and
learning-rate schedules: rewrites/keras_optimizers.py): each function takes the TF1 api
name (``TFName.api``) and the libcst call, and returns the source of the Keras expression
that computes the same thing, or raises ``NoKerasEquivalent`` saying why not and what a
person should do. Generated code names Keras 2 ``keras`` (the migrated program imports it as
``--keras`` says: rewrites/base.py KERAS_IMPORTS).

Before::

    tf.layers.dense(features["x"], 10, activation=tf.nn.relu)
    tf.layers.conv2d(images, 32, 5)
    tf.losses.softmax_cross_entropy(onehot_labels, logits)

After::

    keras.layers.Dense(units=10, activation="relu")                       # inputs: features["x"]
    keras.layers.Conv2D(filters=32, kernel_size=5, data_format="channels_last")
    keras.losses.CategoricalCrossentropy(from_logits=True)               # (labels, logits)

Arguments are bound to the TF1 signature (positional or keyword) and always written as
Keras keywords (rewrites/keras_translation.py). A TF1 default that differs from Keras' is
written out (``conv2d``'s ``data_format="channels_last"``), and so is what TF1 requires and
Keras would default (pooling ``strides``, dropout ``rate``); other argument expressions are
copied as written.

Safety: EXACT where both sides run the same maths (measured differences at float
rounding level), NUMERIC with a ``why`` where they differ in documented ways,
NoKerasEquivalent where they compute something else. Numbers: MAPPING.md.
"""

from __future__ import annotations

from collections.abc import Mapping

import libcst as cst

from migrator.findings import Safety
from rewrites.keras_translation import (KerasCode, NoKerasEquivalent, Translation, bind, is_name_in, is_number,
                                        keras_call, lookup, signature)
from rewrites.syntax import source

IDENTITY = KerasCode("", Safety.EXACT, "a no-op in TF1: replace the call by its inputs")
"""What ``layer`` returns for a TF1 layer call that computes its inputs unchanged
(``dropout`` without ``training``): there is no Keras layer to create."""


# TFM206 (Estimator programs) and TFM105 (between-graph programs): ParameterServerStrategy takes one partitioner.
PARTITIONER_FOR_EVERY_VARIABLE = ("the partitioner moves onto ParameterServerStrategy, which applies it to every "
                                  "variable the program creates, so the variables made here, not partitioned in TF1, "
                                  "are split too (placement only: the numbers are the same)")

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

# Losses that are not translated, and why.
_REFUSED = {
    "losses.mean_pairwise_squared_error": "Keras has no pairwise squared error loss; write a custom loss function",
    "losses.cosine_distance": "Keras' CosineSimilarity normalises its inputs and has the opposite sign; "
    "use 1 + keras.losses.CosineSimilarity(axis=...) only if the TF1 inputs were already unit-normalised",
}


# -- the translations ---------------------------------------------------------


def loss(api: str, call: cst.Call, scalar_weight: bool = False) -> tuple[KerasCode, cst.BaseExpression,
                                                                         cst.BaseExpression]:
    """A ``tf.compat.v1.losses.*(labels, predictions|logits, ...)`` call -> (Keras loss object, labels, predictions).

    ``scalar_weight``: the caller knows ``weights`` is one number w: TF1's loss is then w times the mean, which the
    caller gives Keras as compile's ``loss_weights``."""
    translation = lookup(LOSSES, api, "loss", _REFUSED)
    bound = bind(api, call, translation)
    if "weights" in bound and not is_number(bound["weights"], 1) and not scalar_weight:
        raise NoKerasEquivalent(f"{api} with weights: TF1 divides the weighted sum by the number of non-zero weights, "
                                "Keras by the batch size; pass them as sample weights with reduction='sum' divided by "
                                "the non-zero weight count, by hand")
    if "reduction" in bound and not _is_reduction(bound["reduction"], _SAME_AS_KERAS_REDUCTION):
        raise NoKerasEquivalent(f"{api} with reduction={source(bound['reduction'])}: Keras losses average over the "
                                "batch; choose the matching Keras reduction by hand")
    labels, predictions = (bound[name] for name in list(signature(translation.tf1))[:2])
    code = keras_call(translation, bound)
    if api == "losses.log_loss":
        if "epsilon" in bound and not is_number(bound["epsilon"], 1e-07):
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
    translation = lookup(FUNCTIONAL_LAYERS if functional else LAYERS, api, "layer")
    bound = bind(api, call, translation)
    if name is not None:
        bound["name"] = cst.parse_expression(name)
    if "reuse" in bound and not is_name_in(bound["reuse"], "None", "False"):
        raise NoKerasEquivalent(f"{api} with reuse: Keras shares weights by calling the same layer object twice; "
                                "create the layer once and call it where the TF1 code reused its variables")
    _check_regularizers(api, bound)
    if "activation" in bound:
        bound["activation"] = _activation(api, bound["activation"])
    inputs, training = bound.get("inputs"), bound.get("training")
    if api == "layers.dropout" and (training is None or is_name_in(training, "False")):
        return IDENTITY, inputs
    if api in _TRAINING_ONLY:
        _check_training(api, training)
    code = keras_call(translation, bound)
    if translation.keras == "keras.layers.Dropout":
        return KerasCode(code, Safety.NUMERIC, "dropout masks are random: TF1 and Keras drop different units, so the "
                                               "two runs agree only statistically"), inputs
    return KerasCode(code, Safety.EXACT), inputs


def metric_inputs(api: str, call: cst.Call) -> tuple[cst.BaseExpression | None, cst.BaseExpression | None]:
    """The (labels, predictions) a ``tf.compat.v1.metrics`` call compares."""
    bound = bind(api, call, lookup({"metrics.auc": AUC}, api, "metric"))
    return bound.get("labels"), bound.get("predictions")


def auc(call: cst.Call, name: str, from_logits: bool) -> KerasCode:
    """``tf1.metrics.auc(labels, predictions, ...)`` -> ``keras.metrics.AUC(...)`` (the caller checks the tensors).

    ``from_logits``: TF1 read the sigmoid of the model's output, Keras reads the output.
    """
    bound = bind("metrics.auc", call, AUC)
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
    return bind("get_variable", call, GET_VARIABLE)


def embedding(table: Mapping[str, cst.BaseExpression], partitioned: bool,
              lookup: cst.Call) -> tuple[KerasCode, cst.BaseExpression]:
    """``get_variable(name, [rows, width])`` (its ``table`` arguments) read by ``embeddinglookup(table, ids)``
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
    args = bind("nn.embedding_lookup", lookup, EMBEDDING_LOOKUP)
    if "max_norm" in args and not is_name_in(args["max_norm"], "None"):
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
    """The ``partition_strategy`` of an ``embeddinglookup(...)`` call: "mod" (its default), "div", or None when
    not a literal."""
    strategy = bind("nn.embedding_lookup", lookup, EMBEDDING_LOOKUP).get("partition_strategy")
    return "mod" if strategy is None else strategy.evaluated_value if isinstance(strategy, cst.SimpleString) else None


def layer_arguments(api: str, call: cst.Call, *, functional: bool) -> dict[str, cst.BaseExpression]:
    """The arguments of a ``tf.compat.v1.layers`` call by TF1 parameter name (``layer`` has checked them)."""
    return bind(api, call, lookup(FUNCTIONAL_LAYERS if functional else LAYERS, api, "layer"))


# -- helpers ----------------------------------------------------------------


def _check_training(api: str, training: cst.BaseExpression | None) -> None:
    """Keras switches the layer's training behaviour on in fit only: TF1 must have switched by the mode."""
    if training is None or is_name_in(training, "True", "False", "None"):
        given = "False (the default)" if training is None else source(training)
        raise NoKerasEquivalent(f"{api} with training={given}: TF1 does the same in every mode, Keras "
                                f"{_TRAINING_ONLY[api]} in fit only; if TRAIN mode only was meant, pass "
                                "training=(mode == tf.estimator.ModeKeys.TRAIN) in the TF1 code first")


def _check_regularizers(api: str, bound: Mapping[str, cst.BaseExpression]) -> None:
    for name, value in bound.items():
        if name.endswith("_regularizer") and not is_name_in(value, "None"):
            raise NoKerasEquivalent(
                f"{api} with {name}: TF1 collects the penalty in REGULARIZATION_LOSSES and counts it only if the "
                "loss adds them (tf1.losses.get_total_loss), Keras always adds it (and tf.contrib l2_regularizer "
                "halves the sum, keras.regularizers.L2 does not); translate the regularizer by hand")


def _activation(api: str, value: cst.BaseExpression) -> cst.BaseExpression:
    """A TF1 activation -> the Keras activation name, or None (linear) or a string as given."""
    if isinstance(value, cst.SimpleString) or is_name_in(value, "None"):
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


