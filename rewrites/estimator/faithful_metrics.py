"""Tier 2: eval_metric_ops of a model_fn kept as written -> the Keras metric computing the same from the same tensors.

The model_fn hands the generated model the tensors TF1's metric took, in the order of Keras' ``update_state``
(``y_true, y_pred, sample_weight``; Mean's ``values, sample_weight``); the Keras metric is made with the arguments
that keep TF1's count. Where the two count alike only for some values, a note says so.

Before::

    metrics = {"auc": tf.metrics.auc(labels, probabilities, summation_method="careful_interpolation")}

After::

    metrics = {"auc": (labels, probabilities)}
    ...  # the generated model: "auc": keras.metrics.AUC(name="auc")
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from rewrites.syntax import Unsupported, bound_values, names_read

TENSORS = ("labels", "predictions", "weights")
COLLECTIONS = ("metrics_collections", "updates_collections")
PLAIN = (*TENSORS, *COLLECTIONS, "name")  # the signature of most tf.metrics
ABOVE_ZERO = ("counts a prediction positive above 0, TF1 when it is not 0: the same for class ids, booleans and "
              "probabilities, not for negative values")
TRAPEZOIDAL = ("sums the curve by interpolation (TF1's summation_method=\"careful_interpolation\"): TF1's default "
               "trapezoidal sum gives a slightly different value")
# TF1's summation_method of tf.metrics.auc -> Keras' (None: its default, interpolation).
SUMMATION = {"careful_interpolation": None, "trapezoidal": None, "minoring": "minoring", "majoring": "majoring"}


@dataclass(frozen=True)
class Metric:
    keras: str                        # the class in keras.metrics (or the generated one)
    parameters: tuple[str, ...]       # TF1's, in order
    tensors: tuple[str, ...] = TENSORS  # those update_state takes, in its order (the last, weights, optional)
    options: str = ""                 # the Keras metric's own arguments
    note: str = ""
    given: tuple[str, ...] = ()       # TF1's arguments the metric is made with, by the same name
    generated: str = ""               # the template of the class, where Keras has none computing TF1's metric


METRICS = {"metrics.accuracy": Metric("Accuracy", PLAIN),
           "metrics.mean_squared_error": Metric("MeanSquaredError", PLAIN),
           "metrics.root_mean_squared_error": Metric("RootMeanSquaredError", PLAIN),
           "metrics.mean_absolute_error": Metric("MeanAbsoluteError", PLAIN),
           "metrics.mean": Metric("Mean", ("values", "weights", *COLLECTIONS, "name"), ("values", "weights")),
           "metrics.precision": Metric("Precision", PLAIN, options="thresholds=0.0", note=ABOVE_ZERO),
           "metrics.recall": Metric("Recall", PLAIN, options="thresholds=0.0", note=ABOVE_ZERO),
           "metrics.auc": Metric("AUC", (*TENSORS, "num_thresholds", *COLLECTIONS, "curve", "name",
                                         "summation_method", "thresholds")),
           "metrics.mean_per_class_accuracy": Metric(
               "TF1MeanPerClassAccuracy", ("labels", "predictions", "num_classes", "weights", *COLLECTIONS, "name"),
               given=("num_classes",), generated="tf1_mean_per_class_accuracy.py.j2"),
           "metrics.average_precision_at_k": Metric(
               "TF1AveragePrecisionAtK", ("labels", "predictions", "k", "weights", *COLLECTIONS, "name"),
               given=("k",), generated="tf1_average_precision_at_k.py.j2"),
           "metrics.mean_cosine_distance": Metric(
               "TF1MeanCosineDistance", ("labels", "predictions", "dim", "weights", *COLLECTIONS, "name"),
               given=("dim",), generated="tf1_mean_cosine_distance.py.j2")}
MIGRATED = ("accuracy, mean, mean_squared_error, root_mean_squared_error, mean_absolute_error, precision, recall, auc, "
            "mean_per_class_accuracy, average_precision_at_k, mean_cosine_distance")


@dataclass
class KerasMetric:
    code: str            # the Keras metric, made with its name
    tensors: list[str]   # what the model_fn hands it (code)
    note: str = ""
    generated: str = ""  # the template of its class, which the migrated module defines


def keras_metric(api: str, call: cst.Call, name: str, spelling, local: frozenset[str] = frozenset()) -> KerasMetric:
    """The Keras metric of eval_metric_ops' ``name``, for the TF1 metric ``call`` of ``api`` (a key of METRICS).
    ``local``: the names the model_fn binds but `params`, which the generated model making the metric cannot read."""
    metric = METRICS[api]
    args = bound_values(call, metric.parameters)
    if set(COLLECTIONS) & set(args):
        raise Unsupported(call, f"tf.{api} with collections, in a model_fn kept as written (tier 2), is not migrated "
                                "yet")
    if any(tensor not in args for tensor in metric.tensors[:-1]):
        raise Unsupported(call, f"tf.{api} without its tensors named, in a model_fn kept as written (tier 2)")
    if any(argument not in args for argument in metric.given):
        raise Unsupported(call, f"tf.{api} without its {', '.join(metric.given)}, in a model_fn kept as written "
                                "(tier 2)")
    read = next((node.value for argument in metric.given for node in names_read(args[argument])
                 if node.value in local), None)
    if read is not None:
        raise Unsupported(call, f"tf.{api} of a {', '.join(metric.given)} read from `{read}`, which the model_fn "
                                "computes, in a model_fn kept as written (tier 2): the Keras metric is made before it")
    options, note = [metric.options] if metric.options else [], metric.note
    options += [f"{argument}={spelling.code(args[argument])}" for argument in metric.given]
    if metric.keras == "AUC":
        options, note = _auc(call, args, spelling)
    made = metric.keras if metric.generated else f"keras.metrics.{metric.keras}"
    code = f'{made}({"".join(f"{option}, " for option in options)}name="{name}")'
    return KerasMetric(code, [spelling.code(args[tensor]) for tensor in metric.tensors if tensor in args],
                       f"tf.{api} -> keras.metrics.{metric.keras}, which {note}" if note else "", metric.generated)


def _auc(call: cst.Call, args: dict[str, cst.BaseExpression], spelling) -> tuple[list[str], str]:
    """Keras' AUC of TF1's thresholds and curve, and the sum Keras has of TF1's summation_method."""
    options = [f"{key}={spelling.code(args[key])}" for key in ("num_thresholds", "curve", "thresholds") if key in args]
    given = args.get("summation_method")
    method = "trapezoidal" if given is None else given.evaluated_value if isinstance(given, cst.SimpleString) else None
    if method not in SUMMATION:
        raise Unsupported(call, "tf.metrics.auc of a summation_method that is not a literal TF1 name, in a model_fn "
                                "kept as written (tier 2)")
    if SUMMATION[method]:
        options.append(f'summation_method="{SUMMATION[method]}"')
    return options, TRAPEZOIDAL if method == "trapezoidal" else ""
