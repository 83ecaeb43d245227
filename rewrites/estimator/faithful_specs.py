"""Tier 2: a kept model_fn's EstimatorSpecs -> the results the generated Keras model reads (part of
rewrites/estimator/faithful.py, mixed into its FaithfulReader).

``return EstimatorSpec(mode, loss=loss, eval_metric_ops=metrics)`` returns ``{"loss": loss,
"metrics": metrics}``, each ``tf.metrics`` call of ``eval_metric_ops`` becoming the tuple of the
tensors it took, which the generated model hands the Keras metric of the same name. A spec held in
a name (``spec = EstimatorSpec(...)``, then ``return spec``) holds the results instead.
"""

from __future__ import annotations

import libcst as cst

from rewrites.estimator.faithful_metrics import METRICS, MIGRATED, keras_metric
from rewrites.estimator.signatures import DEFAULT_SIGNATURE, EXPORT_OUTPUTS, signature_name, with_default
from rewrites.estimator.specs import SPECS

SUMMARIES = {f"summary.{name}" for name in ("scalar", "histogram", "image", "audio", "text")}  # TF1's, for TensorBoard
from rewrites.syntax import Unsupported, bound_values, first_line, is_name, name_reads, statement_value, subtree


class SpecReading:
    """Mixed into FaithfulReader: EstimatorSpec results and eval_metric_ops."""

    def _held_spec(self, target: str, spec: cst.Call, statement) -> None:
        """`spec = EstimatorSpec(...)`, then `return spec`: the name holds the results instead. Read otherwise, it
        would be a dict where the model_fn expects an EstimatorSpec."""
        returned = {id(node.value) for node in subtree(self.function.body) if isinstance(node, cst.Return)}
        bound = id(statement.body[0].targets[0].target)
        other = next((node for node in name_reads(self.function.body, target) if id(node) not in returned | {bound}),
                     None)
        self.faithful.returns[statement] = f"{target} = {self._result(spec)}"
        if other is not None:
            raise Unsupported(other, f"`{target}`, an EstimatorSpec, read other than by `return {target}`, in a "
                                     "model_fn kept as written (tier 2): not migrated yet")

    def _result(self, spec: cst.Call) -> str:
        """`EstimatorSpec(mode, loss=loss, ...)` -> `{"loss": loss}` (the loss, for the Keras steps)."""
        args = bound_values(spec, SPECS[self.api(spec.func)])
        unsupported = sorted(set(args) - {"mode", "loss", "train_op", "predictions", "eval_metric_ops",
                                          "export_outputs"})
        if unsupported:
            raise Unsupported(spec, f"EstimatorSpec({unsupported[0]}=...) in a model_fn kept as written (tier 2) is "
                                    "not migrated yet")
        loss = args.get("loss")
        if loss is not None and not is_name(loss, self.faithful.loss or loss.value if isinstance(loss, cst.Name)
                                            else ""):
            raise Unsupported(loss, "the EstimatorSpec must return the loss the optimizer minimizes")
        results = [f'"loss": {self.spelling.code(loss)}'] if loss is not None else []
        if args.get("eval_metric_ops") is not None and not is_name(args["eval_metric_ops"], "None"):
            self._eval_metrics(args["eval_metric_ops"])
            results.append(f'"metrics": {self.spelling.code(args["eval_metric_ops"])}')
        predictions = args.get("predictions")
        if predictions is not None and not is_name(predictions, "None"):
            results.append(f'"predictions": {self.spelling.code(predictions)}')
            self.faithful.predictions_dict = isinstance(predictions, cst.Dict) or (
                isinstance(predictions, cst.Name) and predictions.value in self.dicts)
            results.append(f'"export_outputs": {self._export_outputs(args.get("export_outputs"), predictions)}')
        elif args.get("export_outputs") is not None and not is_name(args["export_outputs"], "None"):
            raise Unsupported(args["export_outputs"], "export_outputs without predictions (TF1 raised here too)")
        return "{" + ", ".join(results) + "}"

    def _export_outputs(self, node: cst.BaseExpression | None, predictions: cst.BaseExpression) -> str:
        """export_outputs -> each signature's outputs (code), their methods in ``signatures``: TF1's default (the
        predictions as `serving_default`) when there are none, a single one also the default, as TF1 had them."""
        if node is None or is_name(node, "None"):
            self._signatures(node or predictions, [(DEFAULT_SIGNATURE, "predict", DEFAULT_SIGNATURE)])
            return f'{{"{DEFAULT_SIGNATURE}": {self.spelling.code(predictions)}}}'
        bound = self.dicts.get(node.value) if isinstance(node, cst.Name) else None
        written = bound if bound is not None else node
        if not isinstance(written, cst.Dict):
            raise Unsupported(node, "export_outputs other than a dict of export outputs written in the model_fn, "
                                    "in a model_fn kept as written (tier 2), is not migrated yet")
        read = [self._export_output(element) for element in written.elements]
        signatures = with_default([(name, method, name) for name, method, _ in read])
        if signatures is None:
            raise Unsupported(node, "several export_outputs, none of them the default (`serving_default`): TF1 raised "
                                    "here too")
        self._signatures(node, signatures)
        if bound is not None:  # the dict stays where it is made, holding the outputs
            for element, (_, _, code) in zip(written.elements, read):
                self.faithful.expressions[element.value] = code
            return self.spelling.code(node)
        return "{" + ", ".join(f'"{name}": {code}' for name, _, code in read) + "}"

    def _signatures(self, node: cst.CSTNode, signatures: list[tuple[str, str, str]]) -> None:
        if self.faithful.signatures not in (None, signatures):
            raise Unsupported(node, "EstimatorSpecs exporting different signatures, in a model_fn kept as written "
                                    "(tier 2), are not migrated yet")
        self.faithful.signatures = signatures

    def _export_output(self, element) -> tuple[str, str, str]:
        """One entry of export_outputs: (signature name, method, its outputs as code)."""
        name = signature_name(self.view, getattr(element, "key", None))
        call = element.value
        api = self.api(call.func) if isinstance(call, cst.Call) else None
        if name is None or api not in EXPORT_OUTPUTS:
            raise Unsupported(element.value, f"`{first_line(element.value)}` in export_outputs, in a model_fn kept as "
                                             "written (tier 2), is not migrated yet (PredictOutput, "
                                             "ClassificationOutput and RegressionOutput under a string key are)")
        method, arguments = EXPORT_OUTPUTS[api]
        args = bound_values(call, tuple(arguments))
        if method == "predict":
            return name, method, self.spelling.code(args["outputs"])
        given = ", ".join(f'"{arguments[argument]}": {self.spelling.code(value)}' for argument, value in args.items())
        return name, method, "{" + given + "}"

    def _eval_metrics(self, node: cst.BaseExpression) -> None:
        """eval_metric_ops: a dict of tf.metrics calls (written there, or bound to a name above), each call becoming
        the tuple of the tensors it took, for the Keras metric the generated model updates with them."""
        ops = self.dicts.get(node.value) if isinstance(node, cst.Name) else node
        if not isinstance(ops, cst.Dict):
            raise Unsupported(node, "eval_metric_ops other than a dict of tf.metrics calls, in a model_fn kept as "
                                    "written (tier 2), is not migrated yet")
        for element in ops.elements:
            key, call = getattr(element, "key", None), element.value
            if isinstance(call, cst.Name) and call.value in self.metric_calls:  # `accuracy = tf.metrics.accuracy(...)`
                call = self._read_only_here(call, element.value)
            api = self.api(call.func) if isinstance(call, cst.Call) else None
            if not isinstance(key, cst.SimpleString) or api not in METRICS:
                raise Unsupported(element.value, f"`{first_line(element.value)}` in eval_metric_ops, in a model_fn "
                                                 f"kept as written (tier 2), is not migrated yet ({MIGRATED} are)")
            metric = keras_metric(api, call, key.evaluated_value, self.spelling, self._local_names())
            self.faithful.metrics[key.evaluated_value] = metric.code
            if metric.generated:
                self.faithful.templates.add(metric.generated)
            if metric.note:
                self.faithful.notes.append(("TFM310", call, metric.note))
            tensors = metric.tensors
            self.faithful.expressions[call] = f"({tensors[0]},)" if len(tensors) == 1 else f"({', '.join(tensors)})"

    def _local_names(self) -> frozenset[str]:
        """The names the model_fn binds (its parameters, its assignments), but `params`."""
        bound = {param.name.value for param in self.function.params.params}
        bound |= {target.value for node in subtree(self.function.body) if isinstance(node, cst.AssignTarget)
                  for target in subtree(node.target) if isinstance(target, cst.Name)}
        return frozenset(bound - {"params"})

    def _read_only_here(self, name: cst.Name, here: cst.CSTNode) -> cst.Call:
        """The metric call bound to ``name``, which nothing but eval_metric_ops (``here``) and summaries (which tier
        2 drops) may read: its value becomes the tensors the metric took."""
        call, target = self.metric_calls[name.value]
        summaries = {id(node) for statement in subtree(self.function.body) if self.summary_line(statement)
                     for node in subtree(statement)}
        other = next((node for node in name_reads(self.function.body, name.value) if node is not here and node is not
                      target and id(node) not in summaries), None)
        if other is not None:
            raise Unsupported(other, f"`{name.value}`, a tf.metrics result, read besides eval_metric_ops, in a model_fn "
                                     "kept as written (tier 2): not migrated yet")
        return call

    def summary_line(self, statement: cst.CSTNode) -> bool:
        """`tf.summary.scalar("accuracy", accuracy[1])` on a line of its own (tier 2 drops it)."""
        call = statement_value(statement) if isinstance(statement, cst.SimpleStatementLine) else None
        return isinstance(call, cst.Call) and isinstance(statement.body[0], cst.Expr) \
            and self.api(call.func) in SUMMARIES
