"""The model_fn's mode branches and what it returns (part of the model_fn reader).

``if mode == ModeKeys.PREDICT:`` / ``EVAL:`` branches that return an EstimatorSpec are read for
their predictions and metrics; the TRAIN spec must return the loss and train_op built above. A
TPUEstimatorSpec is read the same way, its ``eval_metrics=(metric_fn, [labels, logits])`` as the
metrics ``metric_fn`` returns, computed on those tensors.
"""

from __future__ import annotations

import libcst as cst

from rewrites import hooks as hooks_code
from rewrites import keras_equivalents as keras_code
from rewrites.estimator.signatures import EXPORT_OUTPUTS, signature_name, with_default
from rewrites.syntax import Unsupported, bound_values, is_docstring, is_name, list_elements, single_assign

ESTIMATOR_SPEC = ("mode", "predictions", "loss", "train_op", "eval_metric_ops", "export_outputs", "training_chief_hooks",
                  "training_hooks", "scaffold", "evaluation_hooks", "prediction_hooks")
TPU_ESTIMATOR_SPEC = ("mode", "predictions", "loss", "train_op", "eval_metrics", "export_outputs", "scaffold_fn",
                      "host_call", "training_hooks", "evaluation_hooks", "prediction_hooks")
SPECS = {"estimator.EstimatorSpec": ESTIMATOR_SPEC, "estimator.tpu.TPUEstimatorSpec": TPU_ESTIMATOR_SPEC}
MODE_STRINGS = {"train": "TRAIN", "eval": "EVAL", "infer": "PREDICT"}  # ModeKeys' values, compared as written
SPEC_NOT_MIGRATED = {
    "training_chief_hooks": "training_chief_hooks: " + hooks_code.CUSTOM,
    "scaffold": "a Scaffold (custom init or saver): set up the Keras model's initial values and checkpoints by hand",
    "scaffold_fn": "a scaffold_fn (custom init or saver): set up the Keras model's initial values and checkpoints by "
                   "hand",
    "host_call": "a host_call (TPU summaries): write them with a Keras callback or keras.callbacks.TensorBoard",
    "evaluation_hooks": "evaluation_hooks: write them as Keras callbacks of evaluate by hand",
    "prediction_hooks": "prediction_hooks: write them as Keras callbacks of predict by hand",
}


class SpecReading:
    """Mixed into ModelFnReader: mode branches and the EstimatorSpecs they return."""

    def _mode_branch(self, statement: cst.If) -> None:
        """`if mode == ModeKeys.PREDICT|EVAL:` [statements] `return EstimatorSpec(...)`, with no else."""
        mode = self._branch_mode(statement)
        if mode is None or statement.orelse is not None:
            raise Unsupported(statement, f"`if {self.code(statement.test)}:` in the model_fn: only `if mode == "
                                         "ModeKeys.PREDICT/EVAL:` branches that return an EstimatorSpec, and ifs "
                                         "decided before the program runs, are migrated")
        *body, last = statement.body.body
        if is_raise(last):  # the model does not serve the mode: a program that uses it is refused where it does
            self.model.evaluates = self.model.evaluates and mode != "EVAL"
            return
        for inner in body:
            self._statement(inner)
        args = self._spec(last)
        if mode == "PREDICT" and "predictions" in args:
            self.model.predictions = self._predictions(args["predictions"])
        if mode == "EVAL":
            if not is_name(args.get("loss"), self.loss_name or ""):
                raise Unsupported(last, "the EVAL EstimatorSpec must return the loss the TRAIN one minimizes")
            self._eval_metrics(args)

    def _branch_mode(self, statement: cst.If) -> str | None:
        mode = self._mode_of(statement.test)
        return mode if mode in ("PREDICT", "EVAL") else None

    def _mode_of(self, test: cst.BaseExpression) -> str | None:
        """"TRAIN" for `mode == ModeKeys.TRAIN` (or the other way round), None for anything else."""
        if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1
                and isinstance(test.comparisons[0].operator, cst.Equal)):
            return None
        left, right = test.left, test.comparisons[0].comparator
        if is_name(right, "mode"):
            left, right = right, left
        if not is_name(left, "mode"):
            return None
        api = self.api(right) or ""
        if api.startswith("estimator.ModeKeys."):
            return api.rpartition(".")[2]
        return MODE_STRINGS.get(self.constant(right)) if isinstance(right, cst.SimpleString) else None

    def _spec(self, statement) -> dict[str, cst.BaseExpression]:
        small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 else None
        call = small.value if isinstance(small, cst.Return) else None
        if isinstance(call, cst.Name):  # `spec = EstimatorSpec(...)` above
            call = self.specs.get(call.value, call)
        api = self.api(call.func) if isinstance(call, cst.Call) else None
        if api not in SPECS:
            raise Unsupported(statement, "expected `return EstimatorSpec(mode, ...)`")
        args = bound_values(call, SPECS[api])
        for name, message in SPEC_NOT_MIGRATED.items():
            if name in args and not is_name(args[name], "None"):
                raise Unsupported(args[name], message)
        if "export_outputs" in args and not is_name(args["export_outputs"], "None"):
            self._export_outputs(args["export_outputs"], args.get("predictions"))
        return args

    def _export_outputs(self, node: cst.BaseExpression, predictions: cst.BaseExpression | None) -> None:
        """export_outputs -> the signatures the export has, each output one of the predictions (by its key)."""
        written = self.dicts.get(node.value, node) if isinstance(node, cst.Name) else node
        if predictions is None or not isinstance(written, cst.Dict):
            raise Unsupported(node, "export_outputs other than a dict written in the model_fn, beside its "
                                    "predictions, is not migrated yet")
        entries = {code: key for key, code in self._predictions(predictions) if key is not None}
        read = []
        for element in written.elements:
            name = signature_name(self.view, getattr(element, "key", None))
            call = element.value
            api = self.api(call.func) if isinstance(call, cst.Call) else None
            if name is None or api not in EXPORT_OUTPUTS:
                raise Unsupported(call, "export_outputs entries other than PredictOutput, ClassificationOutput and "
                                        "RegressionOutput under a string key are not migrated yet")
            method, arguments = EXPORT_OUTPUTS[api]
            args = bound_values(call, tuple(arguments))
            if method == "predict" and "outputs" in args and self.code(args["outputs"]) == self.code(predictions):
                read.append((name, method, None))  # every prediction
                continue
            given = self.dicts.get(args["outputs"].value, args["outputs"]) if method == "predict" and isinstance(
                args.get("outputs"), cst.Name) else args.get("outputs")
            pairs = ([(_key(e.key), e.value) for e in given.elements] if isinstance(given, cst.Dict) else []) \
                if method == "predict" else [(arguments[argument], value) for argument, value in args.items()]
            keys = {output: _key(cst.parse_expression(entries[self.code(value)]))
                    if self.code(value) in entries else None for output, value in pairs}
            if not pairs or None in keys.values() or None in keys:
                raise Unsupported(call, "an export output whose tensors are not the model_fn's predictions (each "
                                        "under a string key) is not migrated yet")
            read.append((name, method, keys))
        signatures = with_default(read)
        if signatures is None:
            raise Unsupported(node, "several export_outputs, none of them the default (`serving_default`): TF1 raised "
                                    "here too")
        self.model.signatures = signatures

    def _train_return(self, statement) -> None:
        args = self._spec(statement)
        for hook in list_elements(args.get("training_hooks")):
            if not isinstance(hook, cst.Call):
                raise Unsupported(hook, "a training hook that is not constructed in the EstimatorSpec")
            try:
                hooks_code.read_hook(self.api(hook.func), hook, self.model.hooks)
            except keras_code.NoKerasEquivalent as problem:
                raise Unsupported(hook, str(problem)) from None
        if "eval_metric_ops" in args or "eval_metrics" in args:
            if self.eval_metric_ops is not None:
                raise Unsupported(statement, "eval metrics returned twice")
            self._eval_metrics(args)
        if not (is_name(args.get("loss"), self.loss_name or "") and is_name(args.get("train_op"), self.train_op or "")):
            raise Unsupported(statement, "the model_fn must end with `return EstimatorSpec(mode, loss=..., "
                                         "train_op=...)` returning the loss and the train_op built above")

    def _other_modes_return(self, statement) -> None:
        """The spec returned after `if mode == TRAIN: ... return spec`: EVAL's (and maybe PREDICT's)."""
        args = self._spec(statement)
        if "loss" in args and not is_name(args["loss"], self.loss_name or ""):
            raise Unsupported(statement, "the EVAL EstimatorSpec must return the loss the TRAIN one minimizes")
        if "eval_metric_ops" in args or "eval_metrics" in args:
            if self.eval_metric_ops is not None:
                raise Unsupported(statement, "eval metrics returned twice")
            self._eval_metrics(args)
        if "predictions" in args and self.model.predictions is None:
            self.model.predictions = self._predictions(args["predictions"])

    def _eval_metrics(self, args: dict) -> None:
        """eval_metric_ops, or a TPUEstimatorSpec's (metric_fn, tensors): the metric calls, by their keys."""
        if "eval_metric_ops" in args:
            self.eval_metric_ops = args["eval_metric_ops"]
        elif "eval_metrics" in args:
            self.eval_metric_ops = self._metric_fn(args["eval_metrics"])

    def _metric_fn(self, node: cst.BaseExpression) -> cst.BaseExpression:
        """`(metric_fn, [labels, logits])`: metric_fn's statements read with its parameters meaning those tensors;
        the dict it returns."""
        pair = self.resolve(node)
        if not (isinstance(pair, (cst.Tuple, cst.List)) and len(pair.elements) == 2):
            raise Unsupported(node, "eval_metrics must be a (metric_fn, tensors) pair written out")
        function_node, tensors = (element.value for element in pair.elements)
        function_value = self.resolved(function_node)
        function = function_value.node
        tensors = self.resolve(tensors)
        if not isinstance(function, cst.FunctionDef) or not isinstance(tensors, (cst.List, cst.Tuple)):
            raise Unsupported(node, "eval_metrics=(metric_fn, [tensors]) with metric_fn a function of the program and "
                                    "the tensors a list written out")
        params = [param.name.value for param in function.params.params]
        names = [element.value for element in tensors.elements]
        if len(params) != len(names) or not all(isinstance(name, cst.Name) for name in names):
            raise Unsupported(tensors, "metric_fn's tensors must be names of the model_fn, one per parameter")
        self.aliases.update({param: name.value for param, name in zip(params, names) if param != name.value})
        self.model.helpers.append((function_value.view, function))
        body = [s for s in function.body.body if not is_docstring(s)]
        *statements, last = body
        for statement in statements:
            assign = single_assign(statement)
            if assign is None or not isinstance(assign[1], cst.Call):
                raise Unsupported(statement, "a metric_fn of `name = tf.metrics...(...)` or pure functions, then "
                                             "`return {...}`, is migrated")
            self._call(assign[0], assign[1], statement)
        returned = last.body[0].value if isinstance(last, cst.SimpleStatementLine) and isinstance(
            last.body[0], cst.Return) else None
        if returned is None:
            raise Unsupported(last, "metric_fn must end with `return {name: metric, ...}`")
        return returned

    def _predictions(self, node: cst.BaseExpression) -> list[tuple[str | None, str]]:
        """The PREDICT spec's predictions: (key, code) per entry of its dict, or [(None, code)] for one tensor."""
        predictions = self.dicts.get(node.value, node) if isinstance(node, cst.Name) else node
        if not isinstance(predictions, cst.Dict):
            return [(None, self.code(predictions))]
        if not all(isinstance(e, cst.DictElement) for e in predictions.elements):
            raise Unsupported(node, "predictions with `**` entries are not migrated yet: write the dict out")
        return [(self.code(element.key), self.code(element.value)) for element in predictions.elements]


def _key(node: cst.BaseExpression) -> str | None:
    return node.evaluated_value if isinstance(node, cst.SimpleString) else None


def is_raise(statement) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and isinstance(statement.body[0], cst.Raise)
