"""Canned estimators -> the Keras model of the same structure, with the numbers they had.

A ``DNNClassifier`` / ``DNNRegressor`` / ``LinearClassifier`` / ``LinearRegressor`` /
``DNNLinearCombinedClassifier`` / ``DNNLinearCombinedRegressor`` is read from its arguments into the
``Model`` the model_fn reader would give (rewrites/estimator/program.py): the feature columns as
Keras layers (rewrites/estimator/columns.py, shared with ``input_layer`` in a model_fn), the hidden
layers, the logits, the head's loss and metrics, and the optimizer the estimator would have made,
with the defaults that are invisible in the source (read from tensorflow_estimator 2.15's
``canned/``):

- v1 (``tf.compat.v1.estimator.X``, or ``tf.estimator.X`` in a module whose ``tf`` is compat.v1
  or TF 1.x's, its plain ``tf`` reaching APIs TF 2 has only in compat.v1): ``tf.compat.v1.train``
  optimizers (a DNN's Adagrad at 0.05, a linear model's Ftrl at 0.2), the training loss summed over
  the batch;
- v2 (``tf.estimator.X`` of TF 2): legacy Keras optimizers (a DNN's Adagrad at its own default,
  0.001; a linear model's Ftrl at 0.2), the loss averaged over the batch.

A combined (wide & deep) estimator becomes a ``keras.experimental.WideDeepModel`` of a linear and a
DNN model on the same features: their logits summed, each part trained by its own optimizer (the
DNN's Adagrad at 0.001, the linear part's Ftrl at min(0.005, 1/sqrt(linear columns)) in both
versions), as ``dnn_linear_combined.py`` did.

Hidden units known at run time only (a flag) are given to the build function, the layers a loop over
them, and so are numeric columns of keys known at run time only (a DNN's input layer and a linear model
loop over them in name order; the linear model's layers are named after TF1's scopes); ``batch_norm``
puts ``BatchNormalization(momentum=0.999)`` after each hidden layer, as dnn.py did.
A ``weight_column`` becomes Keras' sample weights and a ``label_vocabulary`` a lookup of the labels:
the inputs map both (``read.py``). ``predict`` yields what the head predicted (``head_predictions``).

Used by read.py in the place of a model_fn; the rest of the migration is the custom Estimator's.
TFM309 reports each one; switched off, the program is left manual (TFM302).

Before::

    import tensorflow.compat.v1 as tf

    def main(_):
      columns = [tf.feature_column.numeric_column("x"), tf.feature_column.numeric_column("y")]
      classifier = tf.estimator.DNNClassifier(hidden_units=[16], feature_columns=columns, n_classes=3)
      classifier.train(input_fn=train_input_fn, max_steps=FLAGS.train_steps)

After::

    import tensorflow as tf
    import tf_keras as keras

    def build_dnn_classifier_model(input_spec):
      \"\"\"TF1's canned DNNClassifier as a Keras model, compiled as it trained.\"\"\"
      features = {}
      for name, spec in input_spec.items():
        # Feature columns took a feature of one value per example as [batch, 1].
        shape = spec.shape[1:] if spec.shape.rank > 1 else [1]
        features[name] = keras.Input(shape=shape, dtype=spec.dtype, name=name)
      # input_layer: the numeric columns in name order, each flattened to float32.
      net = keras.layers.Concatenate()([
          keras.layers.Flatten()(tf.cast(features[key], tf.float32))
          for key in ("x", "y")])
      net = keras.layers.Dense(units=16, activation="relu", name="dnn/hiddenlayer_0")(net)
      logits = keras.layers.Dense(units=3, name="dnn/logits")(net)
      model = keras.Model(inputs=features, outputs=logits)
      optimizer = keras.optimizers.legacy.Adagrad(
          learning_rate=0.05, initial_accumulator_value=0.1, epsilon=1e-30)
      model.compile(
          optimizer,
          loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="sum"),
          metrics=[
              keras.metrics.SparseCategoricalAccuracy(name="accuracy"),
              keras.metrics.SparseCategoricalCrossentropy(from_logits=True, name="average_loss")])
      return model

    def main(_):
      columns = [tf.feature_column.numeric_column("x"), tf.feature_column.numeric_column("y")]
      ...  # strategy_for_this_task(), the dataset
      with strategy.scope():
        model = build_dnn_classifier_model(dataset.element_spec[0])

      model.fit(dataset, epochs=1, steps_per_epoch=FLAGS.train_steps, verbose=2)
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import libcst as cst

from rewrites import keras_equivalents as keras_code
from rewrites import keras_optimizers
from rewrites.estimator.column_reader import ColumnReader
from rewrites.estimator.column_writer import Writer, input_layer, linear_model, uses_math
from rewrites.estimator.columns import Embedding, Numeric, SharedEmbedding, Weighted, has_runtime
from rewrites.estimator.heads import head, head_predictions, head_signatures
from rewrites.estimator.program import Model
from rewrites.program.constants import UNKNOWN
from rewrites.program.places import Value
from rewrites.program.values import Values
from rewrites.syntax import Unsupported, bound_values, is_none
from rewrites.tf1_checkpoints import Slots, keras_slots, tf1_slots

DNN_CLASSIFIER_V2 = ("hidden_units", "feature_columns", "model_dir", "n_classes", "weight_column", "label_vocabulary",
                     "optimizer", "activation_fn", "dropout", "config", "warm_start_from", "loss_reduction",
                     "batch_norm")
DNN_CLASSIFIER_V1 = (*DNN_CLASSIFIER_V2[:9], "input_layer_partitioner", *DNN_CLASSIFIER_V2[9:])
DNN_REGRESSOR_V2 = ("hidden_units", "feature_columns", "model_dir", "label_dimension", "weight_column", "optimizer",
                    "activation_fn", "dropout", "config", "warm_start_from", "loss_reduction", "batch_norm")
DNN_REGRESSOR_V1 = (*DNN_REGRESSOR_V2[:8], "input_layer_partitioner", *DNN_REGRESSOR_V2[8:])
LINEAR_CLASSIFIER_V2 = ("feature_columns", "model_dir", "n_classes", "weight_column", "label_vocabulary", "optimizer",
                        "config", "warm_start_from", "loss_reduction", "sparse_combiner")
LINEAR_CLASSIFIER_V1 = (*LINEAR_CLASSIFIER_V2[:7], "partitioner", *LINEAR_CLASSIFIER_V2[7:])
LINEAR_REGRESSOR_V2 = ("feature_columns", "model_dir", "label_dimension", "weight_column", "optimizer", "config",
                       "warm_start_from", "loss_reduction", "sparse_combiner")
LINEAR_REGRESSOR_V1 = (*LINEAR_REGRESSOR_V2[:6], "partitioner", *LINEAR_REGRESSOR_V2[6:])
COMBINED_CLASSIFIER_V2 = ("model_dir", "linear_feature_columns", "linear_optimizer", "dnn_feature_columns",
                          "dnn_optimizer", "dnn_hidden_units", "dnn_activation_fn", "dnn_dropout", "n_classes",
                          "weight_column", "label_vocabulary", "config", "warm_start_from", "loss_reduction",
                          "batch_norm", "linear_sparse_combiner")
COMBINED_CLASSIFIER_V1 = (*COMBINED_CLASSIFIER_V2[:11], "input_layer_partitioner", *COMBINED_CLASSIFIER_V2[11:])
COMBINED_REGRESSOR_V2 = tuple("label_dimension" if name == "n_classes" else name for name in COMBINED_CLASSIFIER_V2
                              if name != "label_vocabulary")
COMBINED_REGRESSOR_V1 = (*COMBINED_REGRESSOR_V2[:10], "input_layer_partitioner", *COMBINED_REGRESSOR_V2[10:])
# A combined estimator's parts read as the DNN and linear estimators' arguments.
DNN_PART = {"dnn_feature_columns": "feature_columns", "dnn_hidden_units": "hidden_units",
            "dnn_activation_fn": "activation_fn", "dnn_dropout": "dropout", "dnn_optimizer": "optimizer",
            "batch_norm": "batch_norm"}
LINEAR_PART = {"linear_feature_columns": "feature_columns", "linear_sparse_combiner": "sparse_combiner",
               "linear_optimizer": "optimizer"}


@dataclass(frozen=True)
class Kind:
    """A canned estimator migrated: its model ("dnn" or "linear"), its parameters in v1 and v2, and the learning
    rate each version gives an optimizer named by a string (None: the optimizer's own default)."""

    model: str
    v1: tuple[str, ...]
    v2: tuple[str, ...]
    rates: tuple[str | None, str | None]
    default_optimizer: str


# dnn.py: v1 get_optimizer_instance(opt, learning_rate=0.05); v2 get_optimizer_instance_v2(opt), no rate.
# linear.py: both versions pass learning_rate=0.2 (_LEARNING_RATE) with the default "Ftrl"; its
# min(0.2, 1/sqrt(columns)) applies only to optimizer=None.
KINDS = {"estimator.DNNClassifier": Kind("dnn", DNN_CLASSIFIER_V1, DNN_CLASSIFIER_V2, ("0.05", None), "Adagrad"),
         "estimator.DNNRegressor": Kind("dnn", DNN_REGRESSOR_V1, DNN_REGRESSOR_V2, ("0.05", None), "Adagrad"),
         "estimator.LinearClassifier": Kind("linear", LINEAR_CLASSIFIER_V1, LINEAR_CLASSIFIER_V2, ("0.2", "0.2"),
                                            "Ftrl"),
         "estimator.LinearRegressor": Kind("linear", LINEAR_REGRESSOR_V1, LINEAR_REGRESSOR_V2, ("0.2", "0.2"), "Ftrl"),
         # dnn_linear_combined.py: the DNN part's optimizer at 0.001 (_DNN_LEARNING_RATE), in both versions.
         "estimator.DNNLinearCombinedClassifier": Kind("combined", COMBINED_CLASSIFIER_V1, COMBINED_CLASSIFIER_V2,
                                                       ("0.001", "0.001"), "Adagrad"),
         "estimator.DNNLinearCombinedRegressor": Kind("combined", COMBINED_REGRESSOR_V1, COMBINED_REGRESSOR_V2,
                                                      ("0.001", "0.001"), "Adagrad")}
COMBINED_LINEAR_RATE = 0.005  # dnn_linear_combined.py: min(0.005, 1 / sqrt(linear columns)), both versions
NOT_YET = {"warm_start_from": "warm_start_from", "input_layer_partitioner":
           "input_layer_partitioner", "partitioner": "partitioner"}
KERAS_DEFAULT_RATES = {"Adagrad": "0.001", "Adam": "0.001", "Ftrl": "0.001", "RMSprop": "0.001", "SGD": "0.01"}
# Optimizers named by a string: v1's tf.compat.v1.train class (optimizers.py), v2's legacy Keras class.
OPTIMIZER_NAMES = {"Adagrad": ("train.AdagradOptimizer", "Adagrad"), "Adam": ("train.AdamOptimizer", "Adam"),
                   "Ftrl": ("train.FtrlOptimizer", "Ftrl"), "RMSProp": ("train.RMSPropOptimizer", "RMSprop"),
                   "SGD": ("train.GradientDescentOptimizer", "SGD")}
ACTIVATIONS = {"nn.relu": '"relu"', "nn.tanh": '"tanh"', "nn.sigmoid": '"sigmoid"', "nn.elu": '"elu"',
               "nn.selu": '"selu"', "nn.softplus": '"softplus"', "nn.relu6": "tf.nn.relu6", "sigmoid": '"sigmoid"',
               "tanh": '"tanh"'}
REDUCTIONS = {"SUM": '"sum"', "SUM_OVER_BATCH_SIZE": None}
MIGRATED = "canned {name} -> a Keras model of the same layers, trained as {version}: {how}"
V1 = "v1 (tf.compat.v1.estimator.{name})"
V1_ERA = ("v1 (tf.estimator.{name} of TF 1.x: this module's plain `tf` reaches APIs TF 2 has only in "
          "tf.compat.v1, so the program ran on TF 1.x)")
V2 = ("v2 (tf.estimator.{name} of TF 2; a program that ran on TF 1.x had v1, which sums the loss: spell "
      "it tf.compat.v1.estimator.{name} and run tf-migrate again)")
NOT_REPORTED = ("the canned {name} also reported {metrics} in evaluate; the Keras model reports {reported}: "
                "compute the others from predictions if the program needs them")


@dataclass
class Canned:
    """A canned estimator read: its Keras model, and what its build function takes that is known at run time only
    (feature columns, hidden units): parameter -> the estimator's argument."""

    name: str
    model: Model
    keywords: dict[str, Value]


def parameters(estimator: Value, tf1_era: bool = False) -> tuple[str, ...] | None:
    """The parameters of a canned estimator migrated (of the version its spelling means); None for others.
    ``tf1_era``: the module's plain `tf` is TF 1.x's, whose tf.estimator was v1."""
    kind = KINDS.get(estimator.api())
    if kind is None:
        return None
    return kind.v1 if _is_v1(estimator, tf1_era) else kind.v2


def _is_v1(estimator: Value, tf1_era: bool) -> bool:
    return estimator.view.tf_name(estimator.node.func).via == "v1" or tf1_era


class CannedReader:
    def __init__(self, values: Values) -> None:
        self.values = values

    def read(self, estimator: Value, tf1_era: bool = False) -> Canned:
        name = estimator.api().rpartition(".")[2]
        kind, v1 = KINDS[estimator.api()], _is_v1(estimator, tf1_era)
        args = {key: Value(node, estimator.place)
                for key, node in bound_values(estimator.node, parameters(estimator, tf1_era)).items()}
        for key, value in args.items():
            if key in NOT_YET and not is_none(self.values.resolve(value).node):
                raise value.fail(f"{name}({NOT_YET[key]}=...) is not migrated yet: migrate this estimator by hand "
                                 "and prove it with tf-migrate parity")
        if kind.model == "combined" and not {"linear_feature_columns", "dnn_feature_columns"} <= set(args):
            raise estimator.fail(f"{name} without both linear and dnn feature columns is not migrated yet")
        if kind.model != "combined" and ("feature_columns" not in args or (
                kind.model == "dnn" and "hidden_units" not in args)):
            raise estimator.fail(f"{name} without " + ("hidden_units and " if kind.model == "dnn" else "") +
                                 "feature_columns")
        classifier = name.endswith("Classifier")
        units = self._units(args, classifier)
        if v1 and not classifier and units > 1:
            raise args["label_dimension"].fail(f"a v1 {name} with label_dimension > 1 sums its loss over every "
                                               "label, Keras' over examples: not migrated yet")
        model = Model(features_dict=True, columns=True, chain=False, output="logits")
        writer, keywords = Writer(), {}
        if kind.model == "combined":
            dnn = {DNN_PART[key]: value for key, value in args.items() if key in DNN_PART}
            linear = {LINEAR_PART[key]: value for key, value in args.items() if key in LINEAR_PART}
            columns = self._dnn(model, dnn, units, writer, "dnn_logits", keywords, combined=True)
            linear_columns = self._linear(model, linear, units, writer, "linear_logits", keywords, combined=True)
            model.wide_deep = ("linear_logits", "dnn_logits")
        elif kind.model == "dnn":
            columns, linear_columns = self._dnn(model, args, units, writer, "logits", keywords), []
        else:
            columns, linear_columns = [], self._linear(model, args, units, writer, "logits", keywords)
        model.lines += writer.lines
        model.bound += writer.bound
        model.tf1_renamed = writer.renamed
        if uses_math(columns):
            model.imports.append("math")
        reduction = self._reduction(args, v1)
        model.loss, model.metrics, unreported = head(classifier, units, reduction)
        if unreported:
            reported = ", ".join(re.findall(r'name="(\w+)"', " ".join(model.metrics)) + ["loss"])
            model.notes.append(("TFM309", estimator.node, NOT_REPORTED.format(name=name, metrics=unreported,
                                                                              reported=reported)))
        model.sample_weight = self._weight_column(args.get("weight_column"))
        model.label_vocabulary = self._label_vocabulary(args.get("label_vocabulary"))
        model.predictions = head_predictions(classifier, units, model.label_vocabulary)
        model.signatures = head_signatures(classifier, units)
        rate = kind.rates[0 if v1 else 1]
        how = [f"the loss {'summed' if reduction else 'averaged'} over the batch"]
        optimizer = args.get("dnn_optimizer" if kind.model == "combined" else "optimizer")
        model.optimizer, model.slots = self._optimizer(model, optimizer, kind.default_optimizer, v1, rate, keywords)
        part = "the DNN part " if kind.model == "combined" else ""
        if optimizer is None:
            how.insert(0, f"{part}{kind.default_optimizer} at {rate or KERAS_DEFAULT_RATES[kind.default_optimizer]}")
        if kind.model == "combined":
            linear_rate = repr(min(COMBINED_LINEAR_RATE, 1 / math.sqrt(len(linear_columns))))
            model.wide_deep_optimizer, model.wide_deep_slots = self._optimizer(
                model, args.get("linear_optimizer"), "Ftrl", v1, linear_rate, keywords)
            if "linear_optimizer" not in args:
                how.insert(len(how) - 1, f"the linear part Ftrl at {linear_rate}")
        via_v1 = estimator.view.tf_name(estimator.node.func).via == "v1"
        version = (V1 if via_v1 else V1_ERA if v1 else V2).format(name=name)
        model.notes.insert(0, ("TFM309", estimator.node, MIGRATED.format(name=name, version=version, how=", ".join(how))))
        return Canned(name, model, keywords)

    def _dnn(self, model: Model, args: dict[str, Value], units: int, writer: Writer, target: str,
             keywords: dict[str, Value], combined: bool = False) -> list | None:
        """The DNN's code into ``writer``, and into ``keywords`` what it takes at run time; its columns (None: made
        at run time)."""
        if "hidden_units" not in args:
            raise args["feature_columns"].fail("a DNN without hidden units")
        columns = ColumnReader(self.values).read(args["feature_columns"])
        code = "dnn_feature_columns" if combined else "feature_columns"
        if columns is None or has_runtime(columns):
            keywords[code] = args["feature_columns"]
        input_layer(columns, code, "net", writer, scope="dnn/input_from_feature_columns/input_layer")
        self._hidden_layers(writer, model, args, keywords)
        writer.assign(target, f'keras.layers.Dense(units={units}, name="dnn/logits")(net)')
        return columns

    def _linear(self, model: Model, args: dict[str, Value], units: int, writer: Writer, target: str,
                keywords: dict[str, Value], combined: bool = False) -> list | None:
        """The linear model's code into ``writer``, and into ``keywords`` what it takes at run time; its columns
        (None: numeric columns made at run time: not for a combined model, whose linear rate depends on their
        number)."""
        columns = ColumnReader(self.values).read(args["feature_columns"], dense=False)
        if columns is None and combined:
            raise args["feature_columns"].fail("the linear part of feature columns made at run time is not migrated "
                                               "yet: write the list out")
        if columns is None:
            keywords["feature_columns"] = args["feature_columns"]
            linear_model(None, units, "sum", target, writer, "feature_columns")
            model.runtime_linear = True
            return None
        if any(isinstance(column, (Embedding, SharedEmbedding)) for column in columns):
            raise args["feature_columns"].fail("an embedding_column in a linear model is not migrated yet")
        combiner = self.values.constant(args["sparse_combiner"]) if "sparse_combiner" in args else "sum"
        if combiner not in ("sum", "mean", "sqrtn"):
            raise args["sparse_combiner"].fail("sparse_combiner must be \"sum\", \"mean\" or \"sqrtn\"")
        if combiner == "sqrtn" and any(isinstance(column, Weighted) for column in columns):
            raise args["sparse_combiner"].fail('sparse_combiner="sqrtn" over weighted ids (the root of the sum of the '
                                               "squared weights) is not migrated yet")
        code = "linear_feature_columns" if combined else "feature_columns"
        if has_runtime(columns):
            keywords[code] = args["feature_columns"]
        linear_model(columns, units, combiner, target, writer, code)
        return columns

    def _weight_column(self, given: Value | None) -> str | None:
        """The key of the feature weighing each example: a string, or a numeric column's key."""
        if given is None or is_none(self.values.resolve(given).node):
            return None
        key = self.values.constant(given)
        if not isinstance(key, str):
            column = ColumnReader(self.values).column(given)
            key = column.key if isinstance(column, Numeric) and column.normalizer is None else None
        if key is None:
            raise given.fail("weight_column must be a key or a numeric_column the migration can read")
        return key

    def _hidden_layers(self, writer: Writer, model: Model, args: dict[str, Value], keywords: dict[str, Value]) -> None:
        """The hidden layers: written out, or, for hidden units known at run time, a loop over them."""
        hidden = self.values.constant(args["hidden_units"])
        if hidden is UNKNOWN:
            keywords["hidden_units"] = args["hidden_units"]
        elif not (isinstance(hidden, (list, tuple)) and hidden and all(isinstance(n, int) for n in hidden)):
            raise args["hidden_units"].fail("hidden_units must be a list of numbers")
        activation = self._activation(args.get("activation_fn"))
        dropout = args.get("dropout")
        rate = None
        if dropout is not None and not is_none(self.values.resolve(dropout).node):
            rate = self.values.constant(dropout)
            if not isinstance(rate, (int, float)):
                raise dropout.fail("dropout must be a number the migration can read (the Keras model is built apart)")
        # After each hidden layer, as TF1: dropout in training only, as Keras does; batch normalisation with
        # the momentum dnn.py gave it (batch statistics in training, moving ones otherwise, in both).
        after = [f"net = keras.layers.Dropout(rate={rate})(net)"] if rate is not None else []
        if "batch_norm" in args and self._flag(args["batch_norm"], "batch_norm"):
            after.append('net = keras.layers.BatchNormalization(momentum=0.999, '
                         'name=f"dnn/hiddenlayer_{index}/batchnorm_{index}")(net)')
        if hidden is UNKNOWN:
            writer.lines.append("\n    ".join([
                "for index, units in enumerate(hidden_units):",
                f'net = keras.layers.Dense(units=units, activation={activation}, name=f"dnn/hiddenlayer_{{index}}")(net)',
                *after]))
            writer.bound.append("net")
        else:
            for index, units in enumerate(hidden):
                writer.assign("net", f'keras.layers.Dense(units={units}, activation={activation}, '
                                     f'name="dnn/hiddenlayer_{index}")(net)')
                writer.lines += [line.replace('f"dnn/hiddenlayer_{index}/batchnorm_{index}"',
                                              f'"dnn/hiddenlayer_{index}/batchnorm_{index}"') for line in after]
        if rate is not None:
            model.notes.append(("TFM401", dropout.node, "dropout's random masks differ between TF1 and Keras: "
                                                        "the losses agree only statistically"))

    def _label_vocabulary(self, given: Value | None) -> list[str] | None:
        if given is None or is_none(self.values.resolve(given).node):
            return None
        vocabulary = self.values.constant(given)
        if not (isinstance(vocabulary, (list, tuple)) and vocabulary and all(isinstance(w, str) for w in vocabulary)):
            raise given.fail("label_vocabulary must be a list of strings where the estimator is made (the inputs "
                             "look the labels up in it)")
        return list(vocabulary)

    def _flag(self, given: Value, name: str) -> bool:
        value = self.values.constant(given)
        if not isinstance(value, bool):
            raise given.fail(f"{name} must be True or False where the estimator is made (the Keras model is built "
                             "apart)")
        return value

    def _activation(self, given: Value | None) -> str:
        if given is None:
            return '"relu"'
        api = given.view.api(given.node)
        if api in ACTIVATIONS:
            return ACTIVATIONS[api]
        raise given.fail("activation_fn other than a tf.nn activation is not migrated yet: write the Keras model by "
                         "hand")

    def _units(self, args: dict[str, Value], classifier: bool) -> int:
        key, default = ("n_classes", 2) if classifier else ("label_dimension", 1)
        value = self.values.constant(args[key]) if key in args else default
        if not isinstance(value, int) or value < 1 or (classifier and value < 2):
            raise args[key].fail(f"{key} must be a number the migration can read")
        return 1 if classifier and value == 2 else value

    def _passed_in(self, api: str, call: cst.Call, given: Value, keywords: dict[str, Value]) -> cst.Call:
        """The optimizer's call with each argument known only at run time (`learning_rate=args.rate`) read from a
        parameter of the build function of its TF1 name, which the driver passes (the Keras model is built apart)."""
        place = self.values.resolve(given).place
        arguments = keras_optimizers.optimizer_arguments(api, call)
        unknown = {name: node for name, node in arguments.items()
                   if self.values.constant(Value(node, place)) is UNKNOWN}
        if any(name in keywords or name == "name" for name in unknown):
            raise given.fail("the optimizer's arguments must be numbers the migration can read (the Keras model is "
                             "built apart), or read once, by one optimizer")
        for name, node in unknown.items():
            keywords[name] = Value(node, place)
        passed = {id(node): name for name, node in unknown.items()}
        return call.with_changes(args=[arg.with_changes(value=cst.Name(passed[id(arg.value)]))
                                       if id(arg.value) in passed else arg for arg in call.args])

    def _reduction(self, args: dict[str, Value], v1: bool) -> str | None:
        """Keras' reduction= for the loss, None for its default (the mean over the batch)."""
        if "loss_reduction" not in args:
            return REDUCTIONS["SUM"] if v1 else None
        given = args["loss_reduction"]
        api = given.view.api(given.node) or ""
        kind = api.rpartition(".")[2]
        if not api.startswith(("losses.Reduction.", "keras.losses.Reduction.")) or kind not in REDUCTIONS:
            raise given.fail("loss_reduction other than SUM or SUM_OVER_BATCH_SIZE is not migrated yet")
        return REDUCTIONS[kind]

    def _optimizer(self, model: Model, given: Value | None, default: str, v1: bool,
                   rate: str | None, keywords: dict[str, Value]) -> tuple[str, Slots]:
        """The optimizer the estimator made: from a name (at the estimator's rate), or the object given; and how
        TF1's checkpoints name its slots. Arguments known at run time join ``keywords``."""
        name = default if given is None else self.values.constant(given)
        if isinstance(name, str):
            if name not in OPTIMIZER_NAMES:
                raise given.fail(f"optimizer {name!r} is not one of the canned estimators' names")
            tf1_class, keras_class = OPTIMIZER_NAMES[name]
            if not v1:  # v2 made the legacy Keras class
                code = f"keras.optimizers.legacy.{keras_class}({f'learning_rate={rate}' if rate else ''})"
                return code, keras_slots(keras_class)
            call = cst.parse_expression(f"tf.compat.v1.{tf1_class}(learning_rate={rate})")
            return self._tf1_optimizer(model, tf1_class, call, given, keywords)
        node = self.values.resolve(given).node
        api = given.view.api(node.func) if isinstance(node, cst.Call) else None
        if v1 and api is not None and api.startswith("train.") and api.endswith("Optimizer"):
            return self._tf1_optimizer(model, api, node, given, keywords)
        raise given.fail("the optimizer must be a name, or a tf.compat.v1.train optimizer of a v1 estimator made "
                         "where the estimator is; other optimizers are not migrated yet")

    def _tf1_optimizer(self, model: Model, api: str, call: cst.Call, given: Value | None,
                       keywords: dict[str, Value]) -> tuple[str, Slots]:
        if given is not None:
            call = self._passed_in(api, call, given, keywords)
        try:
            code = keras_optimizers.optimizer(api, call)
            slots = tf1_slots(api, call, keras_momentum=True)
        except keras_code.NoKerasEquivalent as problem:
            raise Unsupported(given.node if given else call, str(problem)) from None
        if code.safety.value == "numeric" and given is not None:
            model.notes.append(("TFM401", given.node, code.why))
        model.after_compile = code.after_compile
        return code.code, slots
