"""Tier 2, faithful: a model_fn that tier 1 cannot translate is kept as written and run in Keras.

Real model_fns stack constructs no table of TF1 -> Keras pairs covers (a net built by a helper in a
loop, a hand-written cross-entropy, ``tf.cond``, ``get_variable`` with its own initializer). Then the
model_fn's own code is kept and called from a generated Keras model whose ``call`` runs under
``tf.compat.v1.keras.utils.track_tf1_style_variables`` (TensorFlow's guide "Use TF1.x models in TF2
workflows"): Keras tracks the variables, layers and regularizers the code makes, by their TF1
names. Only what TF2 cannot run inside a ``tf.function`` changes in the model_fn:

- the optimizer and ``minimize`` go: the same optimizer from the table of tier 1 is compiled with
  the Keras model, whose generated ``train_step`` applies it to the model_fn's loss;
- ``return EstimatorSpec(mode, loss=loss, ...)`` returns ``{"loss": loss}``;
- the batch norms' ``UPDATE_OPS`` around ``minimize`` go: Keras updates the moving statistics as
  the layers run;
- ``tf.losses.get_regularization_loss()`` reads nothing inside the shim: where the model_fn added
  it, the generated step adds the regularizers Keras tracked (``self.losses``), and only there.

Before::

    def model_fn(features, labels, mode, params):
      net = dense_stack(features["x"], params["hidden_units"])
      logits = tf.matmul(net, tf.get_variable("w", [8, 3], regularizer=l2))
      loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits))
      loss += tf.losses.get_regularization_loss()
      optimizer = tf.train.AdamOptimizer(params["learning_rate"])
      train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
      return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

After::

    def model_fn(features, labels, mode, params):
      net = dense_stack(features["x"], params["hidden_units"])
      logits = tf.matmul(net, tf.compat.v1.get_variable("w", [8, 3], regularizer=l2))
      loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits))
      loss += tf.compat.v1.losses.get_regularization_loss()
      return {"loss": loss}
    ...  # class ModelFnModel(keras.Model), and build_model(dataset, params) compiling it with
         # keras.optimizers.legacy.Adam(learning_rate=params["learning_rate"], epsilon=1e-08)
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from rewrites import keras_equivalents as keras_code
from rewrites import keras_optimizers
from rewrites.estimator.specs import SPECS
from rewrites.estimator.training import GLOBAL_STEP
from rewrites.program.modules import ModuleView
from rewrites.program.spelling import Spelling
from rewrites.syntax import Unsupported, bound_values, children, first_line, is_name, single_assign, subtree
from rewrites.tf1_checkpoints import Slots, tf1_slots

# What adds the regularizers to a TF1 loss: inside the shim it reads nothing, the generated step adds them.
REGULARIZATION = {"losses.get_regularization_loss", "losses.get_regularization_losses", "losses.get_total_loss"}
UPDATE_OPS = "GraphKeys.UPDATE_OPS"
# eval_metric_ops: TF1's metric -> the Keras metric computing the same from the same tensors, which the model_fn
# hands it in that order (Keras' update_state(y_true, y_pred, sample_weight), Mean's (values, sample_weight)).
METRICS = {"metrics.accuracy": ("Accuracy", ("labels", "predictions", "weights")),
           "metrics.mean_squared_error": ("MeanSquaredError", ("labels", "predictions", "weights")),
           "metrics.root_mean_squared_error": ("RootMeanSquaredError", ("labels", "predictions", "weights")),
           "metrics.mean_absolute_error": ("MeanAbsoluteError", ("labels", "predictions", "weights")),
           "metrics.mean": ("Mean", ("values", "weights"))}
METRIC_OPTIONS = ("metrics_collections", "updates_collections", "name")
MINIMIZE = ("loss", "global_step", "var_list", "gate_gradients", "aggregation_method",
            "colocate_gradients_with_ops", "name", "grad_loss")
TRAINING_ONLY = ("compute_gradients", "apply_gradients", "clip_by_global_norm")
BLOCKS = (cst.IndentedBlock, cst.Else, cst.If, cst.ExceptHandler, cst.Finally)


@dataclass
class Faithful:
    """A model_fn kept as written (tier 2), and what the migration changes in it."""

    why: Unsupported                    # the construct that kept it from tier 1
    why_at: str                         # where that is: `line N`, or `path:N` in another module
    parameters: list[str]               # the model_fn's, in order (the generated call passes them by name)
    optimizer: str = ""                 # the Keras optimizer (code, at the model_fn)
    after_compile: tuple[str, ...] = ()
    slots: Slots | None = None
    loss: str = ""                      # the name of the tensor minimize() took
    regularization: bool = False        # the model_fn added TF1's regularization losses to it
    removed: list[cst.BaseStatement] = field(default_factory=list)
    returns: dict[cst.BaseStatement, str] = field(default_factory=dict)  # `return EstimatorSpec(...)` -> its code
    metrics: dict[str, str] = field(default_factory=dict)  # eval_metric_ops: key -> the Keras metric (code)
    expressions: dict[cst.CSTNode, str] = field(default_factory=dict)  # a tf.metrics call -> the tensors it took
    notes: list[tuple[str, cst.CSTNode, str]] = field(default_factory=list)


class FaithfulReader:
    def __init__(self, view: ModuleView, spelling: Spelling) -> None:
        self.view, self.api, self.spelling = view, view.api, spelling

    def read(self, function: cst.FunctionDef, parameters: list[str], why: Unsupported) -> Faithful:
        """The model_fn ``function`` (called with ``parameters``), kept; ``why``: what tier 1 could not read."""
        self.faithful = Faithful(why, self._where(why), parameters)
        if "config" in parameters or not set(parameters) <= {"features", "labels", "mode", "params"}:
            raise Unsupported(function.params, "a model_fn taking more than features, labels, mode and params, kept "
                                               "as written (tier 2), is not migrated yet")
        self.optimizer_name: str | None = None
        self.local = {name for statement in _statements(function.body.body) for name in _assigned(statement)}
        self.problems: list[Unsupported] = []
        self.inside: set[int] = set()  # statements of a block read as a whole
        self.steps: dict[str, cst.BaseStatement] = {}  # names bound to the global step
        self.dicts: dict[str, cst.Dict] = {}
        self.metric_calls: dict[str, tuple[cst.Call, cst.Name]] = {}  # name -> the tf.metrics call bound to it
        self.function = function
        for statement in _statements(function.body.body):
            if id(statement) in self.inside:
                continue
            try:
                self._statement(statement)
            except Unsupported as problem:
                self.problems.append(problem)
            except keras_code.NoKerasEquivalent as problem:
                self.problems.append(Unsupported(statement, str(problem)))
        for node in subtree(function.body):
            if isinstance(node, cst.Call) and self.api(node.func) in REGULARIZATION:
                self.faithful.regularization = True
        self._global_step_only_minimized(function)
        self._nothing_reads_what_goes(function)
        self._no_partitioner()
        if not self.problems and not (self.faithful.optimizer and self.faithful.loss):
            self.problems.append(Unsupported(function, "the model_fn must make a tf.train optimizer and minimize its "
                                                       "loss with it"))
        if self.problems:
            raise Unsupported.of_all(self.problems)
        return self.faithful

    def _where(self, problem: Unsupported) -> str:
        if problem.path not in (None, self.view.path):
            return f"{problem.path}"
        try:
            return f"line {self.view.position(problem.node)[0]}"
        except KeyError:  # a node made by the reader, not the module's
            return "the model_fn"

    def _statement(self, statement: cst.BaseStatement) -> None:
        if isinstance(statement, cst.With) and self._around_minimize(statement):
            return
        small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 \
            else None
        if isinstance(small, cst.Return) and isinstance(small.value, cst.Call) and self.api(small.value.func) in SPECS:
            self.faithful.returns[statement] = self._result(small.value)
            return
        assign = single_assign(statement)
        if assign is None:
            self._refuse_training(statement)
            return
        target, value = assign
        if isinstance(value, cst.Dict):
            self.dicts[target] = value  # eval_metric_ops, maybe
        elif isinstance(value, cst.Call) and self.api(value.func) in METRICS:
            self.metric_calls[target] = value, statement.body[0].targets[0].target
            return
        if not isinstance(value, cst.Call):
            self._refuse_training(statement)
            return
        api = self.api(value.func) or ""
        chained = value.func.value if isinstance(value.func, cst.Attribute) and value.func.attr.value == "minimize" \
            else None
        if isinstance(chained, cst.Call) and _is_optimizer(self.api(chained.func)):
            self._optimizer(None, self.api(chained.func), chained, statement)
            self._minimize(value, statement)
        elif _is_optimizer(api):
            self._optimizer(target, api, value, statement)
        elif self._is_minimize(value):
            self._minimize(value, statement)
        elif api == "get_collection" and value.args and self.api(value.args[0].value) == UPDATE_OPS:
            self.faithful.removed.append(statement)
        elif api in GLOBAL_STEP:
            self.steps[target] = statement  # read by minimize alone (checked after the walk)
        elif api in SPECS:
            raise Unsupported(statement, "an EstimatorSpec held in a name, in a model_fn kept as written (tier 2): "
                                         "return it where it is made")
        else:
            self._refuse_training(statement)

    def _nothing_reads_what_goes(self, function: cst.FunctionDef) -> None:
        """What the removed statements bound (the optimizer, the train_op, the update ops) is read nowhere else:
        `tf.group(train_op, ...)` would read a name gone."""
        gone = [*self.faithful.removed, *self.faithful.returns]
        inside = {id(node) for statement in gone for node in subtree(statement)}
        bound = {name for statement in gone for inner in _statements([statement]) for name in _assigned(inner)}
        for name in sorted(bound - set(self.steps)):
            read = next((node for node in _reads(function.body, name) if id(node) not in inside), None)
            if read is not None:
                self.problems.append(Unsupported(read, f"`{name}`, which TF1's training needed and the Keras model "
                                                       "does not, is read here: in a model_fn kept as written (tier 2) "
                                                       "that is not migrated yet"))
                return

    def _no_partitioner(self) -> None:
        """TF1's shim holds no sharded variable (`partitioner arg for get_variable is unsupported in TF2`): a
        partitioner anywhere in the model_fn's module keeps it out of tier 2, for now."""
        for node in subtree(self.view.module):
            if isinstance(node, cst.Call) and ("partitioner" in (self.api(node.func) or "") or any(
                    arg.keyword is not None and arg.keyword.value == "partitioner" for arg in node.args)):
                self.problems.append(Unsupported(node, f"`{first_line(node)}`: a partitioned variable in a model_fn "
                                                       "kept as written (tier 2) is not migrated yet (TF1's variables "
                                                       "in Keras cannot be sharded)"))
                return

    def _global_step_only_minimized(self, function: cst.FunctionDef) -> None:
        """A name bound to the global step goes with minimize, which alone may read it."""
        gone = {id(node) for statement in [*self.faithful.removed, *self.steps.values()] for node in subtree(statement)}
        for name, statement in self.steps.items():
            read = next((node for node in _reads(function.body, name) if id(node) not in gone), None)
            if read is not None:
                self.problems.append(Unsupported(read, f"the model_fn reads the global step (`{name}`) other than "
                                                       "in minimize: in a model_fn kept as written (tier 2) that is "
                                                       "not migrated yet"))
            else:
                self.faithful.removed.append(statement)

    def _optimizer(self, target: str, api: str, call: cst.Call, statement) -> None:
        read = {node.value for arg in call.args for node in subtree(arg.value) if isinstance(node, cst.Name)}
        locals_read = sorted(read & self.local - {"params"})
        if locals_read:
            raise Unsupported(call, f"the optimizer's arguments read {', '.join(locals_read)}, computed in the "
                                    "model_fn: the Keras optimizer is made where the model is built, from params")
        if self.faithful.optimizer:
            raise Unsupported(call, "a second optimizer in the model_fn: one Keras optimizer trains the model")
        code = keras_optimizers.optimizer(api, self.spelling.spelled(call))
        self.faithful.optimizer, self.faithful.after_compile = self.spelling.code(
            cst.parse_expression(code.code)), code.after_compile
        if code.why:
            self.faithful.notes.append(("TFM401", call, code.why))
        self.faithful.slots = tf1_slots(api, call, keras_momentum=True)
        self.optimizer_name = target
        if statement not in self.faithful.removed:
            self.faithful.removed.append(statement)

    def _is_minimize(self, call: cst.Call) -> bool:
        func = call.func
        return isinstance(func, cst.Attribute) and func.attr.value == "minimize" and is_name(
            func.value, self.optimizer_name or "")

    def _minimize(self, call: cst.Call, statement) -> None:
        args = bound_values(call, MINIMIZE)
        if set(args) - {"loss", "global_step", "name"}:
            raise Unsupported(call, "minimize() with more than the loss and the global step, in a model_fn kept as "
                                    "written (tier 2), is not migrated yet")
        if not isinstance(args.get("loss"), cst.Name):
            raise Unsupported(call, "minimize() of an expression: bind the loss to a name first")
        self.faithful.loss = args["loss"].value
        if statement not in self.faithful.removed:
            self.faithful.removed.append(statement)

    def _around_minimize(self, statement: cst.With) -> bool:
        """`with tf.control_dependencies(update_ops):` around the optimizer and minimize: the batch norms' updates,
        which Keras makes as the layers run. The block goes if all it holds does."""
        call = statement.items[0].item if len(statement.items) == 1 else None
        if not (isinstance(call, cst.Call) and self.api(call.func) == "control_dependencies"):
            return False
        body = list(_statements(statement.body.body))
        for inner in body:
            self._statement(inner)
            self.inside.add(id(inner))
        if not all(inner in self.faithful.removed or id(inner) in {id(s) for s in self.steps.values()}
                   for inner in statement.body.body):
            raise Unsupported(statement, "`with tf.control_dependencies(...)` around more than the optimizer and "
                                         "minimize, in a model_fn kept as written (tier 2): not migrated yet")
        self.faithful.removed.append(statement)
        return True

    def _result(self, spec: cst.Call) -> str:
        """`return EstimatorSpec(mode, loss=loss, ...)` -> `return {"loss": loss}` (the loss, for the Keras steps)."""
        args = bound_values(spec, SPECS[self.api(spec.func)])
        unsupported = sorted(set(args) - {"mode", "loss", "train_op", "predictions", "eval_metric_ops"})
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
        return "return {" + ", ".join(results) + "}"

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
                                                 "kept as written (tier 2), is not migrated yet (accuracy, mean, "
                                                 "mean_squared_error, root_mean_squared_error and "
                                                 "mean_absolute_error are)")
            keras, parameters = METRICS[api]
            args = bound_values(call, (*parameters, *METRIC_OPTIONS))
            if {"metrics_collections", "updates_collections"} & set(args):
                raise Unsupported(call, f"tf.{api} with collections, in a model_fn kept as written (tier 2), is not "
                                        "migrated yet")
            given = [args.get(name) for name in parameters if name in args]
            if len(given) != len([name for name in parameters[:-1]]) + ("weights" in args):
                raise Unsupported(call, f"tf.{api} without its tensors named, in a model_fn kept as written (tier 2)")
            self.faithful.metrics[key.evaluated_value] = f'keras.metrics.{keras}(name="{key.evaluated_value}")'
            tensors = [self.spelling.code(value) for value in given]
            self.faithful.expressions[call] = f"({tensors[0]},)" if len(tensors) == 1 else f"({', '.join(tensors)})"

    def _read_only_here(self, name: cst.Name, here: cst.CSTNode) -> cst.Call:
        """The metric call bound to ``name``, which nothing but eval_metric_ops (``here``) may read: its value
        becomes the tensors the metric took."""
        call, target = self.metric_calls[name.value]
        other = next((node for node in _reads(self.function.body, name.value) if node is not here and node is not
                      target), None)
        if other is not None:
            raise Unsupported(other, f"`{name.value}`, a tf.metrics result, read besides eval_metric_ops, in a model_fn "
                                     "kept as written (tier 2): not migrated yet")
        return call

    def _refuse_training(self, statement) -> None:
        """What trains outside minimize (gradients computed or applied by hand), or reads the global step
        otherwise, is not migrated yet. Of a compound statement, its header (its blocks are read on their own)."""
        heads = [statement] if isinstance(statement, cst.SimpleStatementLine) else [
            child for child in children(statement) if not isinstance(child, BLOCKS)]
        for node in (node for head in heads for node in subtree(head)):
            if isinstance(node, cst.Call):
                api = self.api(node.func) or ""
                name = node.func.attr.value if isinstance(node.func, cst.Attribute) else ""
                if name in TRAINING_ONLY or api in GLOBAL_STEP or (name == "minimize"):
                    raise Unsupported(node, f"`{first_line(node)}` in a model_fn kept as written (tier 2): only "
                                            "`optimizer.minimize(loss, global_step=...)` trains it, for now")


def _is_optimizer(api: str | None) -> bool:
    return bool(api) and api.startswith("train.") and api.endswith("Optimizer")


def _reads(body: cst.CSTNode, name: str) -> list[cst.Name]:
    """The names ``name`` in ``body`` (not an attribute or a keyword so named)."""
    not_names = {id(node.attr) for node in subtree(body) if isinstance(node, cst.Attribute)} | {
        id(node.keyword) for node in subtree(body) if isinstance(node, cst.Arg) and node.keyword is not None}
    return [node for node in subtree(body) if is_name(node, name) and id(node) not in not_names]


def _statements(statements):
    """Each statement, and those in its blocks (not in nested functions or classes)."""
    for statement in statements:
        yield statement
        if not isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            for block in _blocks(statement):
                yield from _statements(block.body)


def _blocks(statement) -> list[cst.IndentedBlock]:
    """The blocks of a compound statement: its body, an else's, an elif's, an except's, a finally's."""
    found, stack = [], children(statement)
    while stack:
        node = stack.pop(0)
        if isinstance(node, cst.IndentedBlock):
            found.append(node)
        elif isinstance(node, BLOCKS):
            stack.extend(children(node))
    return found


def _assigned(statement) -> set[str]:
    assign = single_assign(statement)
    return {assign[0]} if assign else set()
