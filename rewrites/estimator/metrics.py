"""The model_fn's eval_metric_ops -> Keras metrics compiled with the model (part of the model_fn reader).

``tf.metrics.X(labels, predictions)`` on the model's output (or accuracy on its argmax, AUC on its
sigmoid) becomes the Keras metric that reports the same value, named by its eval_metric_ops key.
"""

from __future__ import annotations

import libcst as cst

from rewrites import keras_equivalents as keras_code
from rewrites.estimator import eval_loss
from rewrites.program.constants import UNKNOWN
from rewrites.syntax import Unsupported, bound_values, source

METRICS_ON_OUTPUT = {"metrics.accuracy": "Accuracy", "metrics.mean_squared_error": "MeanSquaredError",
                     "metrics.root_mean_squared_error": "RootMeanSquaredError",
                     "metrics.mean_absolute_error": "MeanAbsoluteError"}
METRICS_BY_HAND = {
    "metrics.precision": "TF1 counts every non-zero prediction as positive, keras.metrics.Precision thresholds "
    "probabilities (at 0.5 by default): compile Precision(thresholds=...) on a probability output by hand",
    "metrics.recall": "TF1 counts every non-zero prediction as positive, keras.metrics.Recall thresholds "
    "probabilities (at 0.5 by default): compile Recall(thresholds=...) on a probability output by hand",
    "metrics.mean": "Keras compiles metrics of (labels, output): the mean of the model's loss is migrated; report "
    "the mean of another tensor from a custom keras.metrics.Metric by hand",
}
ARGMAX = {"argmax", "math.argmax"}
SIGMOID = {"sigmoid", "nn.sigmoid", "math.sigmoid"}


class MetricReading:
    """Mixed into ModelFnReader: reads eval_metric_ops."""

    def _metric_call(self, api: str, call: cst.Call, target: str) -> None:
        self.metric_calls[target] = (api, call)

    def _metrics(self, node: cst.BaseExpression) -> list[str]:
        ops = self.dicts.get(node.value) if isinstance(node, cst.Name) else node
        if not isinstance(ops, cst.Dict):
            raise Unsupported(node, "eval_metric_ops must be a dict written in the model_fn")
        metrics = []
        for element in ops.elements:
            value = element.value if isinstance(element, cst.DictElement) else None
            call = self.metric_calls.get(value.value) if isinstance(value, cst.Name) else (
                ((self.api(value.func) or ""), value) if isinstance(value, cst.Call) else None)
            if not (isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString) and call
                    and call[0].startswith("metrics.")):
                raise Unsupported(element, "an eval_metric_ops entry that is not `\"name\": a tf.metrics result`")
            metrics.append(self._metric(element.key.evaluated_value, *call))
        return metrics

    def _metric(self, key: str, api: str, call: cst.Call) -> str:
        if api == "metrics.auc":
            return self._auc(key, call)
        if api == "metrics.mean":
            return self._mean(key, call)
        if api in METRICS_BY_HAND:
            raise Unsupported(call, f"{api}: {METRICS_BY_HAND[api]}")
        args = bound_values(call, ("labels", "predictions", "weights", "metrics_collections", "updates_collections", "name"))
        labels, predictions = args.get("labels"), args.get("predictions")
        if "weights" in args and self.constant(args["weights"]) in (UNKNOWN, None, 0):
            raise Unsupported(call, f"{api} with tensor weights: compile it as a weighted metric with the weights as "
                                    "sample weights of the dataset, by hand")
        if not self._names(labels, "labels"):
            raise Unsupported(call, f"{api} is migrated on (labels, a tensor of the model)")
        if api == "metrics.accuracy" and self._is_argmax_of_output(predictions):
            return f'keras.metrics.SparseCategoricalAccuracy(name="{key}")'
        if api in METRICS_ON_OUTPUT and self._names(predictions, self.model.output):
            return f'keras.metrics.{METRICS_ON_OUTPUT[api]}(name="{key}")'
        raise Unsupported(call, f"{api} on `{self.code(predictions) if predictions else '?'}`: migrated on the "
                                "model's output, or accuracy on its argmax")

    def _mean(self, key: str, call: cst.Call) -> str:
        """`tf.metrics.mean(loss)` of the model's loss: the mean of the per-batch losses, as TF1 averaged them."""
        args = bound_values(call, ("values", "weights", "metrics_collections", "updates_collections", "name"))
        if set(args) - {"values", "name"} or not self._names(args.get("values"), self.loss_name or ""):
            raise Unsupported(call, f"metrics.mean: {METRICS_BY_HAND['metrics.mean']}")
        return eval_loss.metric(self.model, key)

    def _names(self, node: cst.BaseExpression | None, name: str) -> bool:
        """Is ``node`` the model_fn's ``name`` (also through a metric_fn's parameter)?"""
        return isinstance(node, cst.Name) and self.aliases.get(node.value, node.value) == name

    def _auc(self, key: str, call: cst.Call) -> str:
        """AUC of the model's output (probabilities), or of its sigmoid (the output is logits)."""
        try:
            labels, predictions = keras_code.metric_inputs("metrics.auc", call)
            applied = self._function_of_output(predictions)
            if not self._names(labels, "labels") or applied not in (None, *SIGMOID):
                raise Unsupported(call, "metrics.auc is migrated on (labels, the model's output or its sigmoid)")
            return self._piece(keras_code.auc(self.spelled(call), key, from_logits=applied is not None), call)
        except keras_code.NoKerasEquivalent as problem:
            raise Unsupported(call, str(problem)) from None

    def _function_of_output(self, node: cst.BaseExpression | None) -> str | None:
        """None for the model's output itself, the api of `f(output)` (written in place or named), "" otherwise."""
        if self._names(node, self.model.output):
            return None
        call = self.pure.get(self.aliases.get(node.value, node.value)) if isinstance(node, cst.Name) else node
        if isinstance(call, cst.Call) and len(call.args) == 1 and self._names(call.args[0].value, self.model.output):
            return self.api(call.func) or ""
        return ""

    def _is_argmax_of_output(self, node: cst.BaseExpression | None) -> bool:
        call = self.pure.get(self.aliases.get(node.value, node.value)) if isinstance(node, cst.Name) else node
        if not isinstance(call, cst.Call) or self.api(call.func) not in ARGMAX or not call.args:
            return False
        axis = bound_values(call, ("input", "axis", "name", "dimension", "output_type")).get("axis")
        return (self._names(call.args[0].value, self.model.output)
                and isinstance(axis, (cst.Integer, cst.UnaryOperation)) and source(axis) in ("1", "-1"))
