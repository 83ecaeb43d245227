"""``add_metrics(estimator, metric_fn)`` -> the Keras metrics compiled with a canned estimator's model.

``tf.estimator.add_metrics`` (``tf.contrib.estimator.add_metrics`` in TF 1.x) wrapped an Estimator
so that evaluate also reported what ``metric_fn(labels, predictions)`` returned: a dict of
``tf.metrics`` results on the head's predictions. Each entry becomes the Keras metric that reports
the same value under the same key; the wrapping statement and the metric_fn go with the Estimator.

Before::

    def my_rmse(labels, predictions):
      pred_values = tf.squeeze(predictions["predictions"], axis=-1)
      return {"rmse": tf.metrics.root_mean_squared_error(labels=labels, predictions=pred_values)}

    estimator = tf.estimator.DNNRegressor(hidden_units=[8], feature_columns=columns)
    estimator = tf.contrib.estimator.add_metrics(estimator, my_rmse)

After (in the canned model's compile; the first metric is TF1's eval loss, rewrites/estimator/eval_loss.py)::

    metrics=[TF1EvalLoss(keras.losses.MeanSquaredError(reduction="none"), summed=True),
             keras.metrics.MeanSquaredError(name="average_loss"),
             keras.metrics.RootMeanSquaredError(name="rmse")]
"""

from __future__ import annotations

import re

import libcst as cst

from rewrites.estimator.metrics import METRICS_ON_OUTPUT
from rewrites.estimator.program import Model
from rewrites.program.modules import ModuleView
from rewrites.program.places import Value
from rewrites.program.values import Values
from rewrites.syntax import (Replace, Unsupported, bind_arguments, bound_values, is_docstring, names_read, source,
                             subtree)

ADD_METRICS = {"contrib.estimator.add_metrics", "estimator.add_metrics"}
METRIC_FN_PARAMETERS = ("labels", "predictions", "features", "config")
SQUEEZE = {"squeeze", "compat.v1.squeeze"}
COMPUTED = '''class {name}(keras.metrics.{base}):
    """tf.{api} of the metric_fn's own expressions of the labels and predictions ("{key}")."""

    def update_state(self, y_true, y_pred, sample_weight=None):
        return super().update_state({y_true}, {y_pred}, sample_weight)
'''
HOW = ("a metric_fn of `name = ...` statements and `return {\"key\": tf.metrics.X(labels, predictions[...])}` is "
       "migrated")


def wrapped(call: Value) -> cst.BaseExpression | None:
    """The Estimator an ``add_metrics(...)`` call wraps (None: not such a call, or not readable)."""
    if not isinstance(call.node, cst.Call) or call.api() not in ADD_METRICS:
        return None
    bound = bind_arguments(call.node, ("estimator", "metric_fn"))
    return bound["estimator"][1].value if bound and "estimator" in bound else None


class AddedMetrics:
    """Reads one add_metrics call into ``model.metrics`` (the keys it reports replace those of the same name)."""

    def __init__(self, values: Values, model: Model, canned: str | None, spelling, home: ModuleView) -> None:
        self.values, self.model, self.canned, self.spelling, self.home = values, model, canned, spelling, home

    def read(self, call: Value) -> None:
        if self.canned is None:
            raise call.fail("add_metrics of a custom Estimator: put the metrics in its model_fn's eval_metric_ops "
                            "and run tf-migrate again")
        args = bound_values(call.node, ("estimator", "metric_fn"))
        if "metric_fn" not in args:
            raise call.fail("add_metrics without a metric_fn")
        function = self.values.resolve(Value(args["metric_fn"], call.place))
        if not isinstance(function.node, cst.FunctionDef):
            raise call.fail("add_metrics' metric_fn must be a function defined in the files given")
        self.view = function.view
        names = [param.name.value for param in function.node.params.params]
        params = function.node.params
        if set(names) - set(METRIC_FN_PARAMETERS) or isinstance(params.star_arg, cst.Param) or params.star_kwarg:
            raise function.fail("a metric_fn takes labels, predictions, features and config by those names")
        self.local: dict[str, cst.BaseExpression] = {}
        returned = self._body(function.node)
        self.written = dict(self.local)
        added = [self._metric(element) for element in self._entries(returned)]
        keys = {key for key, _ in added}
        self.model.metrics = [m for m in self.model.metrics if not any(f'name="{k}"' in m for k in keys)]
        self.model.metrics += [code for _, code in added]
        self.model.helpers.append((function.view, function.node))
        reported = ", ".join([*re.findall(r'name="(\w+)"', " ".join(self.model.metrics)), "loss"])
        self.model.notes = [(rule, node, re.sub(r"the Keras model reports [^:]*:", f"the Keras model reports {reported}:",
                                                message)) for rule, node, message in self.model.notes]

    def _body(self, function: cst.FunctionDef) -> cst.BaseExpression:
        *statements, last = [s for s in function.body.body if not is_docstring(s)]
        for statement in statements:
            small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) else None
            if not (isinstance(small, cst.Assign) and len(small.targets) == 1
                    and isinstance(small.targets[0].target, cst.Name)):
                raise Unsupported(statement, HOW, self.view.path)
            self.local[small.targets[0].target.value] = small.value
        small = last.body[0] if isinstance(last, cst.SimpleStatementLine) else None
        if not isinstance(small, cst.Return) or small.value is None:
            raise Unsupported(last, HOW, self.view.path)
        return small.value

    def _resolve(self, node: cst.BaseExpression) -> cst.BaseExpression:
        while isinstance(node, cst.Name) and node.value in self.local:
            node = self.local.pop(node.value)
        return node

    def _entries(self, returned: cst.BaseExpression) -> list[cst.DictElement]:
        found = self._resolve(returned)
        if not (isinstance(found, cst.Dict) and all(isinstance(e, cst.DictElement) and isinstance(
                e.key, cst.SimpleString) for e in found.elements)):
            raise Unsupported(returned, HOW, self.view.path)
        return list(found.elements)

    def _metric(self, element: cst.DictElement) -> tuple[str, str]:
        key = element.key.evaluated_value
        call = self._resolve(element.value)
        api = self.view.api(call.func) if isinstance(call, cst.Call) else None
        if api is None or not api.startswith("metrics."):
            raise Unsupported(element, HOW, self.view.path)
        args = bound_values(call, ("labels", "predictions", "weights", "metrics_collections", "updates_collections",
                                   "name"))
        if set(args) - {"labels", "predictions", "name"} or not {"labels", "predictions"} <= set(args):
            raise Unsupported(call, f"tf.{api} is migrated on (labels, predictions[...]) without weights",
                              self.view.path)
        regressor = self.canned.endswith("Regressor")
        labels, prediction = self._resolve(args["labels"]), self._prediction(args["predictions"])
        plain = isinstance(labels, cst.Name) and labels.value == "labels"
        if regressor and api in METRICS_ON_OUTPUT and not (plain and prediction):
            return key, self._computed(key, api, call, args["labels"], args["predictions"])
        if not plain:
            raise Unsupported(call, f"tf.{api} is migrated on (labels, predictions[...]) without weights",
                              self.view.path)
        if regressor and prediction == "predictions" and api in METRICS_ON_OUTPUT:
            return key, f'keras.metrics.{METRICS_ON_OUTPUT[api]}(name="{key}")'
        accuracy = next((m for m in self.model.metrics if 'name="accuracy"' in m), None)
        if not regressor and prediction == "class_ids" and api == "metrics.accuracy" and accuracy:
            return key, accuracy.replace('name="accuracy"', f'name="{key}"')
        raise Unsupported(call, f"tf.{api} of predictions[{prediction!r}] of a canned {self.canned}: migrated are "
                                "mean_squared_error, root_mean_squared_error and mean_absolute_error of a regressor's "
                                "\"predictions\", and accuracy of a classifier's \"class_ids\"", self.view.path)

    def _computed(self, key: str, api: str, call: cst.Call, labels: cst.BaseExpression,
                  predictions: cst.BaseExpression) -> str:
        """A Keras metric of what the metric_fn computed from the labels and a regressor's predictions (`labels *
        SCALE`, `tf.cast(predictions["predictions"], tf.float64) * SCALE`): a class written before the model that
        computes the same from the labels and the model's output before the metric counts them."""
        if self.view is not self.home:
            raise Unsupported(call, f"tf.{api} of what a metric_fn of another module than the estimator's computes "
                                    "is not migrated yet", self.view.path)
        allowed = _module_names(self.view.module) | {"labels", "predictions", *self.written}
        code = {}
        for name, node in (("labels", labels), ("predictions", predictions)):
            read = self._read(node, set())
            if not read <= allowed or (name == "labels") != ("labels" in read) or \
                    (name == "labels") == ("predictions" in read):
                raise Unsupported(call, f"tf.{api} of what the metric_fn computes from labels and predictions is "
                                        "migrated when its labels argument reads only the labels and its predictions "
                                        "argument only predictions[\"predictions\"], besides module-level names",
                                  self.view.path)
            code[name] = self._expanded(node)
        y_pred = _replaced(code["predictions"], _is_the_prediction, "y_pred")
        if any(isinstance(n, cst.Name) and n.value == "predictions" for n in subtree(y_pred)):
            raise Unsupported(call, f"tf.{api} of predictions other than predictions[\"predictions\"]",
                              self.view.path)
        name = "".join(part.capitalize() for part in re.split(r"\W+|_", key) if part) + "Metric"
        if name in _module_names(self.view.module):
            raise Unsupported(call, f"the migrated program names the metric class `{name}`, which this module "
                                    "already uses", self.view.path)
        y_true = source(_replaced(code["labels"], lambda n: isinstance(n, cst.Name) and n.value == "labels", "y_true"))
        self.model.classes.append(COMPUTED.format(name=name, base=METRICS_ON_OUTPUT[api], key=key, api=api,
                                                  y_true=y_true, y_pred=source(y_pred)))
        return f'{name}(name="{key}")'

    def _read(self, node: cst.BaseExpression, seen: set[str]) -> set[str]:
        """The names ``node`` reads, through the metric_fn's own names to what they hold."""
        found = set()
        for name in names_read(node):
            found.add(name.value)
            if name.value in self.written and name.value not in seen:
                found |= self._read(self.written[name.value], seen | {name.value})
        return found

    def _expanded(self, node: cst.BaseExpression) -> cst.BaseExpression:
        """``node`` spelled for TF2, each of the metric_fn's names replaced by what it holds."""
        code = cst.parse_expression(self.spelling(self.view).code(node))
        local = {n for n in subtree(code) if isinstance(n, cst.Name) and n.value in self.written
                 and not _is_attribute_name(code, n)}
        return code.visit(Replace({n: _enclosed(self._expanded(self.written[n.value])) for n in local}))

    def _prediction(self, node: cst.BaseExpression | None) -> str | None:
        """The key of ``predictions[key]`` that ``node`` is (also squeezed on its last axis), None otherwise."""
        node = self._resolve(node) if node is not None else None
        if isinstance(node, cst.Call) and self.view.api(node.func) in SQUEEZE:
            args = bound_values(node, ("input", "axis", "name", "squeeze_dims"))
            if source(args.get("axis", cst.Name("None"))) not in ("-1", "1", "[-1]", "[1]"):
                return None
            node = self._resolve(args.get("input"))
        if not (isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name)
                and node.value.value == "predictions" and len(node.slice) == 1):
            return None
        index = node.slice[0].slice
        if isinstance(index, cst.Index) and isinstance(index.value, cst.SimpleString):
            return index.value.evaluated_value
        return None


def _module_names(module: cst.Module) -> set[str]:
    """The names the module binds at its top level (assignments, imports, functions, classes)."""
    found = set()
    for statement in module.body:
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            found.add(statement.name.value)
        for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
            if isinstance(small, cst.Assign):
                found.update(n.value for t in small.targets for n in subtree(t.target) if isinstance(n, cst.Name))
            elif isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(small.names, cst.ImportStar):
                found.update((a.evaluated_alias or a.evaluated_name).split(".")[0] for a in small.names)
    return found


def _enclosed(node: cst.BaseExpression) -> cst.BaseExpression:
    """``node`` in parentheses where it is an operation (it replaces a name inside another expression)."""
    if isinstance(node, (cst.Name, cst.Call, cst.Attribute, cst.Subscript, cst.BaseNumber, cst.BaseString)):
        return node
    return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def _is_attribute_name(tree: cst.CSTNode, name: cst.Name) -> bool:
    return any(isinstance(n, cst.Attribute) and n.attr is name for n in subtree(tree))


def _is_the_prediction(node: cst.CSTNode) -> bool:
    """`predictions["predictions"]`: a regressor's output."""
    if not (isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name) and node.value.value == "predictions"
            and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index)):
        return False
    key = node.slice[0].slice.value
    return isinstance(key, cst.SimpleString) and key.evaluated_value == "predictions"


def _replaced(tree: cst.BaseExpression, which, name: str) -> cst.BaseExpression:
    return tree.visit(Replace({n: cst.Name(name) for n in subtree(tree) if which(n)}))
