"""Tier 2: a kept model_fn's EstimatorSpecs -> the results the generated Keras model reads (part of
rewrites/estimator/faithful.py, mixed into its FaithfulReader).

``return EstimatorSpec(mode, loss=loss, eval_metric_ops=metrics)`` returns ``{"loss": loss,
"metrics": metrics}``, each ``tf.metrics`` call of ``eval_metric_ops`` becoming the tuple of the
tensors it took, which the generated model hands the Keras metric of the same name; also where a
function of the module that only the model_fn calls computes it (``loss, rmse = compute_errors(...)``:
each ``tf.metrics`` call it returns there becomes the tensors). A spec held in a name (``spec =
EstimatorSpec(...)``, then ``return spec``) holds the results instead.
"""

from __future__ import annotations

import libcst as cst

from rewrites.estimator.faithful_metrics import METRICS, MIGRATED, keras_metric
from rewrites.estimator.faithful_scaffold import fed_variables
from rewrites.estimator.signatures import DEFAULT_SIGNATURE, EXPORT_OUTPUTS, signature_name, with_default
from rewrites.estimator.specs import SPECS
from rewrites.program.values import own_nodes
from rewrites.syntax import (Unsupported, bound_values, first_line, is_name, name_reads, single_assign, statement_value,
                             subtree)

SUMMARIES = {f"summary.{name}" for name in ("scalar", "histogram", "image", "audio", "text")}  # TF1's, for TensorBoard


class SpecReading:
    """Mixed into FaithfulReader: EstimatorSpec results and eval_metric_ops."""

    def _held_spec(self, target: str, spec: cst.Call, statement) -> None:
        """`spec = EstimatorSpec(...)`, then `return spec`: the name holds the results instead. Read otherwise, it
        would be a dict where the model_fn expects an EstimatorSpec."""
        returned = {id(node.value) for node in subtree(self.function.body) if isinstance(node, cst.Return)}
        bound = id(statement.body[0].targets[0].target)
        other = next((node for node in name_reads(self.function.body, target) if id(node) not in returned | {bound}),
                     None)
        self.faithful.replaced[statement] = f"{target} = {self._result(spec)}"
        if other is not None:
            raise Unsupported(other, f"`{target}`, an EstimatorSpec, read other than by `return {target}`, in a "
                                     "model_fn kept as written (tier 2): not migrated yet")

    def _result(self, spec: cst.Call) -> str:
        """`EstimatorSpec(mode, loss=loss, ...)` -> `{"loss": loss}` (the loss, for the Keras steps)."""
        args = bound_values(spec, SPECS[self.api(spec.func)])
        unsupported = sorted(set(args) - {"mode", "loss", "train_op", "predictions", "eval_metric_ops",
                                          "export_outputs", "scaffold"})
        if unsupported:
            raise Unsupported(spec, f"EstimatorSpec({unsupported[0]}=...) in a model_fn kept as written (tier 2) is "
                                    "not migrated yet")
        if "scaffold" in args:
            fed_variables(self, args["scaffold"])
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
        if isinstance(node, cst.Name) and self.helper_metrics(node):
            return
        ops = self.dicts.get(node.value) if isinstance(node, cst.Name) else node
        if not isinstance(ops, cst.Dict):
            raise Unsupported(node, "eval_metric_ops other than a dict of tf.metrics calls, in a model_fn kept as "
                                    "written (tier 2), is not migrated yet")
        for element in ops.elements:
            key, call = getattr(element, "key", None), element.value
            if isinstance(call, cst.Name) and call.value in self.metric_calls:  # `accuracy = tf.metrics.accuracy(...)`
                call = self._read_only_here(call, element.value)
            returned = self._returned_metrics(call, element.value) if isinstance(key, cst.SimpleString) else None
            calls, owner = returned or ([call], self.function)
            if not isinstance(key, cst.SimpleString) or not all(
                    isinstance(call, cst.Call) and self.api(call.func) in METRICS for call in calls):
                raise Unsupported(element.value, f"`{first_line(element.value)}` in eval_metric_ops, in a model_fn "
                                                 f"kept as written (tier 2), is not migrated yet ({MIGRATED} are)")
            for call in calls:
                self._metric(key.evaluated_value, call, owner)

    def _metric(self, key: str, call: cst.Call, owner: cst.FunctionDef) -> None:
        """eval_metric_ops' ``key`` is the Keras metric of TF1's metric ``call`` (in the function ``owner``), which
        becomes the tensors it took."""
        metric = keras_metric(self.api(call.func), call, key, self.spelling, self._local_names(owner))
        if self.faithful.metrics.setdefault(key, metric.code) != metric.code:
            raise Unsupported(call, f"`{key}` in eval_metric_ops is one of two metrics, in a model_fn kept as written "
                                    f"(tier 2): not migrated yet")
        if metric.generated:
            self.faithful.templates.add(metric.generated)
        if metric.note:
            self.faithful.notes.append(("TFM310", call, metric.note))
        tensors = metric.tensors
        self.faithful.expressions[call] = f"({tensors[0]},)" if len(tensors) == 1 else f"({', '.join(tensors)})"

    def _local_names(self, function: cst.FunctionDef) -> frozenset[str]:
        """The names ``function`` (the model_fn, or a helper it calls) binds: its parameters, its assignments, but
        `params`."""
        bound = {param.name.value for param in function.params.params}
        bound |= {target.value for node in subtree(function.body) if isinstance(node, cst.AssignTarget)
                  for target in subtree(node.target) if isinstance(target, cst.Name)}
        return frozenset(bound - {"params"})

    def _returned_metrics(self, value: cst.BaseExpression, here: cst.CSTNode) -> tuple[list, cst.FunctionDef] | None:
        """What a function of the module, called by the model_fn alone, returns for eval_metric_ops: the TF1 metric
        calls (maybe in several `return`s) of `benchmark(features, labels)`, or of `rmse` in `loss, rmse =
        compute_errors(...)`, and that function. None where ``value`` is neither."""
        index, call = None, value
        if isinstance(value, cst.Name):
            bound = [(target, name, statement) for statement in subtree(self.function.body)
                     if isinstance(statement, cst.Assign) for target in statement.targets
                     for name in subtree(target.target) if is_name(name, value.value)]
            if len(bound) != 1 or not isinstance(bound[0][2].value, cst.Call):
                return None
            (target, name, statement), = bound
            call = statement.value
            if isinstance(target.target, cst.Tuple):
                index = next(i for i, element in enumerate(target.target.elements) if element.value is name)
            elif target.target is not name:
                return None
            self._read_only_here(value, here, name)
        helper = self._helper(call, "computes a metric of eval_metric_ops")
        if helper is None:
            return None
        calls = []
        for node in own_nodes(helper):
            if isinstance(node, cst.Return):
                returned = node.value
                if index is not None:
                    elements = returned.elements if isinstance(returned, cst.Tuple) else ()
                    returned = elements[index].value if index < len(elements) else None
                calls += self._metric_bound(helper, returned) if isinstance(returned, cst.Name) else [returned]
        return calls, helper

    def _helper(self, call: cst.BaseExpression, what: str) -> cst.FunctionDef | None:
        """The module's function ``call`` calls, which nothing but that call uses (else Unsupported: it ``what``)."""
        if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Name)):
            return None
        nodes = self.view.top_level.get(call.func.value, [])
        if len(nodes) != 1 or not isinstance(nodes[0], cst.FunctionDef):
            return None
        references = self.view.tree.references_to(self.view, call.func.value)
        if [node for _, node in references] != [call.func]:
            raise Unsupported(call, f"`{call.func.value}`, which {what}, is also called elsewhere, in a model_fn kept "
                                    "as written (tier 2): not migrated yet")
        return nodes[0]

    def _metric_bound(self, helper: cst.FunctionDef, name: cst.Name) -> list:
        """The values of `rmse` in the helper's `return loss, rmse`: bound to TF1 metrics (one in each branch,
        maybe) and read by its returns alone; else the name itself."""
        values = [assign[1] for statement in own_nodes(helper) if isinstance(statement, cst.SimpleStatementLine)
                  and (assign := single_assign(statement)) and assign[0] == name.value]
        allowed = {id(node) for node in own_nodes(helper) if isinstance(node, cst.Return) for node in subtree(node)}
        targets = [node.target for node in own_nodes(helper) if isinstance(node, cst.AssignTarget)
                   and is_name(node.target, name.value)]
        allowed |= {id(target) for target in targets}
        if not values or len(targets) != len(values) or any(
                id(node) not in allowed for node in name_reads(helper.body, name.value)):
            return [name]
        return values

    def _read_only_here(self, name: cst.Name, here: cst.CSTNode, target: cst.CSTNode | None = None) -> cst.Call:
        """The metric call bound to ``name``, which nothing but eval_metric_ops (``here``) and summaries (which tier
        2 drops) may read: its value becomes the tensors the metric took."""
        call, target = self.metric_calls[name.value] if target is None else (None, target)
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
