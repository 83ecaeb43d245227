"""Tier 2, faithful: a model_fn that tier 1 cannot translate is kept as written and run in Keras.

Real model_fns stack constructs no table of TF1 -> Keras pairs covers (a net built by a helper in a
loop, a hand-written cross-entropy, ``tf.cond``, ``get_variable`` with its own initializer). Then the
model_fn's own code is kept and called from a generated Keras model whose ``call`` runs under
``tf.compat.v1.keras.utils.track_tf1_style_variables`` (TensorFlow's guide "Use TF1.x models in TF2
workflows"): Keras tracks the variables, layers and regularizers the code makes, by their TF1
names. Only what TF2 cannot run inside a ``tf.function`` changes in the model_fn:

- the optimizer and ``minimize`` (or ``tf.contrib.layers.optimize_loss``, rewrites/estimator/optimize_loss.py, or
  ``create_train_op``, rewrites/estimator/create_train_op.py) go: the same optimizer from the table of tier 1 is
  compiled with the Keras model, whose generated ``train_step`` applies it to the model_fn's loss;
- what the optimizer's arguments read in the model_fn goes to the build function with it
  (rewrites/estimator/faithful_rates.py); an optimizer picked by a flag or parameter in an ``if`` / ``elif`` chain
  is compiled as the one the same value picks (rewrites/estimator/faithful_choice.py);
- ``return EstimatorSpec(mode, loss=loss, ...)`` returns ``{"loss": loss}``;
- the batch norms' ``UPDATE_OPS`` around ``minimize`` go: Keras updates the moving statistics as
  the layers run;
- where the model_fn adds TF1's regularization losses (which the shim's collection holds only some of), the
  reading goes and the generated step adds the regularizers Keras tracked (``self.losses``)
  (rewrites/estimator/faithful_regularization.py).

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
      return {"loss": loss}
    ...  # class ModelFnModel(keras.Model), whose step adds the regularizers to the loss, and build_model(dataset,
         # params) compiling it with
         # TF1Adam(learning_rate=params["learning_rate"], epsilon=1e-08)
"""

from __future__ import annotations

import re

from dataclasses import dataclass, field

import libcst as cst

from rewrites import keras_equivalents as keras_code
from rewrites import keras_optimizers
from rewrites.estimator import faithful_regularization as regularization
from rewrites.estimator import faithful_keras, faithful_tables
from rewrites.estimator import create_train_op, optimize_loss
from rewrites.estimator.faithful_choice import is_optimizer, read_choice
from rewrites.estimator.faithful_helpers import HelperReading
from rewrites.estimator.faithful_rates import Rates
from rewrites.estimator.faithful_metrics import METRICS
from rewrites.estimator.faithful_specs import SpecReading
from rewrites.estimator.specs import SPECS
from rewrites.estimator.training import GLOBAL_STEP
from rewrites.program.modules import ModuleView
from rewrites.program.spelling import Spelling
from rewrites.syntax import (Unsupported, bound_values, children, first_line, is_name, is_none, name_reads,
                             single_assign, source, statement_value, subtree)
from rewrites.tf1_checkpoints import Slots, scoped, tf1_slots

UPDATE_OPS = "GraphKeys.UPDATE_OPS"
LOGS = {"summary.scalar", "summary.histogram", "identity"}  # what only logs a tensor, for TensorBoard or a hook
MINIMIZE = ("loss", "global_step", "var_list", "gate_gradients", "aggregation_method",
            "colocate_gradients_with_ops", "name", "grad_loss")
TRAINING_ONLY = ("compute_gradients", "apply_gradients", "clip_by_global_norm")
COLLECTIONS = {"trainable_variables", "global_variables", "all_variables", "local_variables", "model_variables",
               "get_collection", "get_collection_ref"}  # what reads TF1's graph collections
TRAINABLE = "GraphKeys.TRAINABLE_VARIABLES"
VARIABLES = {"Variable", "compat.v1.Variable", "Variable.__init__"}  # what makes a variable no getter sees
REMADE = ("the Keras model running it would make the variable again at each call, which its training refuses; make "
          "it with get_variable")
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
    check_numerics: bool = False        # the step stops the training at a NaN or infinite loss, as TF1's did
    tf1_momentum: bool = False          # the optimizer is the generated TF1Momentum class
    learning_rate: str = ""             # the rate LearningRate computes of Keras schedules (code), if generated
    templates: set[str] = field(default_factory=set)  # the generated classes the Keras metrics are
    removed: list[cst.BaseStatement] = field(default_factory=list)
    # statements replaced: `return EstimatorSpec(...)` -> its code, `loss = train_op = None` -> `loss = None`
    replaced: dict[cst.BaseStatement, str] = field(default_factory=dict)
    metrics: dict[str, str] = field(default_factory=dict)  # eval_metric_ops: key -> the Keras metric (code)
    expressions: dict[cst.CSTNode, str] = field(default_factory=dict)  # a tf.metrics call -> the tensors it took
    # the signatures an export has: (name, method, the key of its outputs in the results' export_outputs)
    signatures: list[tuple[str, str, str]] | None = None  # None: the model_fn predicts nothing
    predictions_dict: bool = True  # its predictions are a dict (else one tensor)
    collections: bool = False  # it reads TF1's trainable variables, which a custom getter collects
    tables: bool = False  # it partitions embedding tables, which Keras makes, sharded
    mod_tables: bool = False  # ... and looks them up "mod"
    float64: bool = False  # its module computes in float64, which TF1's layers took from their inputs
    keras_layers: bool = False  # its module makes Keras layers, through the generated KERAS_LAYER
    lookup_table: cst.Call | None = None  # a call making a lookup table as the model runs: exported by TF1's graph
    notes: list[tuple[str, cst.CSTNode, str]] = field(default_factory=list)


class FaithfulReader(SpecReading, HelperReading):
    def __init__(self, view: ModuleView, spelling: Spelling) -> None:
        self.view, self.api, self.spelling = view, view.api, spelling

    def read(self, function: cst.FunctionDef, parameters: list[str], why: Unsupported) -> Faithful:
        """The model_fn ``function`` (called with ``parameters``), kept; ``why``: what tier 1 could not read."""
        self.faithful = Faithful(why, self._where(why), parameters)
        # Keras 2 casts a layer's inputs to float32; TF1's layers made float64 variables for float64 inputs.
        self.faithful.float64 = bool(re.search(r"\bfloat64\b|\btf\.double\b", self.view.tree.sources.get(
            self.view.path, "")))
        if "config" in parameters or not set(parameters) <= {"features", "labels", "mode", "params"}:
            raise Unsupported(function.params, "a model_fn taking more than features, labels, mode and params, kept "
                                               "as written (tier 2), is not migrated yet")
        self.optimizer_name: str | None = None
        self.problems: list[Unsupported] = []
        self.inside: set[int] = set()  # statements of a block read as a whole
        self.steps: dict[str, cst.BaseStatement] = {}  # names bound to the global step
        self.dicts: dict[str, cst.Dict] = {}
        self.update_names: set[str] = set()  # bound to the UPDATE_OPS collection
        self.metric_calls: dict[str, tuple[cst.Call, cst.Name]] = {}  # name -> the tf.metrics call bound to it
        self.metric_helpers: dict[str, tuple] = {}  # name -> the helper returning eval_metric_ops (faithful_helpers)
        self.function = function
        self.rates = Rates(self.api, self.spelling.spelled, function, list(_statements(function.body.body)),
                           self.steps, parameters, self.module_function)
        self.scheduled: dict[str, cst.BaseStatement] = {}  # decay schedules of the global step, for the optimizer
        for statement in _statements(function.body.body):
            if id(statement) in self.inside:
                continue
            try:
                self._statement(statement)
            except Unsupported as problem:
                self.problems.append(problem)
            except keras_code.NoKerasEquivalent as problem:
                self.problems.append(Unsupported(statement, str(problem)))
        self._regularization(function)
        self._schedules_carried()
        self._global_step_only_minimized(function)
        self._nothing_reads_what_goes(function)
        self._tables(function)
        self.faithful.lookup_table = faithful_tables.lookup_table_made(self.view.module, function, self.api)
        self._keras_layers(function)
        self._no_plain_variables(function)
        self._no_collections_read(function)
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
        if self._writes_a_summary(statement):
            return
        if isinstance(statement, cst.If) and self._optimizer_choice(statement):
            return
        small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 \
            else None
        if isinstance(small, cst.Return) and isinstance(small.value, cst.Call) and self.api(small.value.func) in SPECS:
            self.faithful.replaced[statement] = "return {}"  # a spec not migrated reads nothing that goes, either
            self.faithful.replaced[statement] = f"return {self._result(small.value)}"
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
            if any(isinstance(node, cst.Call) and self.api(node.func) in keras_optimizers.SCHEDULES
                   for node in subtree(value)):
                self.scheduled[target] = statement  # `floor + exponential_decay(...)`, the optimizer's rate maybe
                return
            self._refuse_training(statement)
            return
        api = self.api(value.func) or ""
        chained = value.func.value if isinstance(value.func, cst.Attribute) and value.func.attr.value == "minimize" \
            else None
        if isinstance(chained, cst.Call) and is_optimizer(self.api(chained.func)):
            self._optimizer(None, self.api(chained.func), chained, statement)
            self._minimize(value, statement)
        elif is_optimizer(api):
            self._optimizer(target, api, value, statement)
        elif self._is_minimize(value):
            self._minimize(value, statement)
        elif self._is_update_ops(value):
            self.faithful.removed.append(statement)
            self.update_names.add(target)
        elif api in optimize_loss.OPTIMIZE_LOSS:
            self._train_call(optimize_loss.read(value, self.api), statement, "optimize_loss")
        elif (parameters := create_train_op.parameters(self.view, value.func)) is not None:
            self._train_call(create_train_op.read(value, parameters, self.api), statement, "create_train_op")
        elif api in GLOBAL_STEP:
            self.steps[target] = statement  # read by minimize alone (checked after the walk)
        elif api in keras_optimizers.SCHEDULES:
            self.scheduled[target] = statement  # the optimizer's learning rate (checked after the walk)
        elif api in SPECS:
            self._held_spec(target, value, statement)
        elif not self._mode_helper(target, value, statement):
            self._refuse_training(statement)

    def _regularization(self, function: cst.FunctionDef) -> None:
        """Where the model_fn adds TF1's regularization losses, the generated step adds Keras' instead
        (rewrites/estimator/faithful_regularization.py)."""
        reading = regularization.RegularizationReader(self.view, function).read()
        self.problems += reading.problems
        elsewhere = regularization.read_elsewhere(self.view, function)
        if elsewhere is not None:
            self.problems.append(elsewhere)
        self.faithful.regularization = reading.regularized
        self.faithful.removed += reading.removed
        self.regularization_terms = list(reading.expressions)  # terms taken out of the loss, and the names they read
        for node, new in reading.expressions.items():
            self.faithful.expressions[node] = self.spelling.code(new)
        changed = [*reading.removed, *reading.expressions]
        if changed:
            self.faithful.notes.append(("TFM310", changed[0], "TF1's regularization losses are no longer added to "
                                                              "the loss here: the Keras model's step adds the "
                                                              "regularizers it tracked (`sum(self.losses)`)"))

    def _schedules_carried(self) -> None:
        """A decay schedule of the global step goes to the Keras optimizer, which reads it: it must read it. A local
        the optimizer alone read goes too."""
        for name, statement in self.rates.inlined.items():  # `rate` before the `base` it reads
            gone = {id(node) for removed in self.faithful.removed for node in subtree(removed)} | {
                id(node) for node in subtree(statement)}
            if not any(id(node) not in gone for node in name_reads(self.function.body, name)):
                self.faithful.removed.append(statement)
        for name, statement in self.scheduled.items():
            if self.faithful.optimizer and statement not in self.faithful.removed:
                self.problems.append(Unsupported(statement, f"`{name}`, a decay schedule of the global step that the "
                                                            "optimizer's learning rate does not read, in a model_fn "
                                                            "kept as written (tier 2): not migrated yet"))

    def _nothing_reads_what_goes(self, function: cst.FunctionDef) -> None:
        """What the removed statements bound (the optimizer, the train_op, the update ops) is read nowhere else:
        `tf.group(train_op, ...)` would read a name gone."""
        gone = [*self.faithful.removed, *self.faithful.replaced, *self.regularization_terms]
        inside = {id(node) for statement in gone for node in subtree(statement)}
        bound = {name for statement in gone for inner in _statements([statement]) for name in _assigned(inner)}
        held = {name for statement, code in self.faithful.replaced.items() if not code.startswith("return ")
                for name in _assigned(statement)}  # holds the results now
        for name in sorted(bound - set(self.steps) - held):
            reads = [node for node in name_reads(function.body, name) if id(node) not in inside]
            for unset in {id(s): s for node in reads if _sets_none(s := self.view.statement_of(node), name)}.values():
                self._unset(unset, name)  # `train_op = None` outside TRAIN
                inside |= {id(node) for node in subtree(unset)}
            for logged in {id(s): s for node in reads if self._only_logs(s := self.view.statement_of(node))}.values():
                self.faithful.removed.append(logged)
                self.faithful.notes.append(("TFM310", logged, f"`{first_line(logged)}` goes with `{name}`, which "
                                                              "only TF1's training computed (a summary or a named "
                                                              "tensor: nothing the program computes changes)"))
                inside |= {id(node) for node in subtree(logged)}
            read = next((node for node in reads if id(node) not in inside), None)
            if read is not None:
                self.problems.append(Unsupported(read, f"`{name}`, which TF1's training needed and the Keras model "
                                                       "does not, is read here: in a model_fn kept as written (tier 2) "
                                                       "that is not migrated yet"))
                return

    def _unset(self, statement: cst.SimpleStatementLine, name: str) -> None:
        """`name = None` goes; of `loss = name = None`, `name =`."""
        assign = statement.body[0]
        kept = [target for target in assign.targets if not is_name(target.target, name)]
        if kept:
            self.faithful.replaced[statement] = source(assign.with_changes(targets=kept))
        else:
            self.faithful.removed.append(statement)

    def _writes_a_summary(self, statement) -> bool:
        """`tf.summary.image("images", inputs)` on a line of its own goes: TF1 wrote it to model_dir's events for
        TensorBoard; run in Keras it writes nothing (and an image summary fails when the model is first built)."""
        if not self.summary_line(statement):
            return False
        self.faithful.removed.append(statement)
        self.faithful.notes.append(("TFM310", statement, f"`{first_line(statement)}` goes: TF1 wrote the summary to "
                                                         "model_dir's events, which the model kept as written in Keras "
                                                         "does not (a keras.callbacks.TensorBoard writes the losses)"))
        return True

    def _only_logs(self, statement) -> bool:
        """`tf.summary.scalar("learning_rate", lr)` or `tf.identity(lr, name="learning_rate")` on a line of its own."""
        call = statement_value(statement)
        return isinstance(call, cst.Call) and isinstance(statement.body[0], cst.Expr) and self.api(call.func) in LOGS

    def _tables(self, function: cst.FunctionDef) -> None:
        """The embedding tables the model_fn partitions are made by Keras, sharded; their lookups read them in
        TF2's order (rewrites/estimator/faithful_tables.py)."""
        tables = faithful_tables.TableReader(self.view, self.spelling, function).read()
        elsewhere = faithful_tables.partitioned_elsewhere(self.view, function)
        self.problems += [*tables.problems, *([elsewhere] if elsewhere else [])]
        for call, code in tables.lookups.items():
            self.faithful.expressions[call] = code
        self.faithful.tables, self.faithful.mod_tables = bool(tables.names), tables.mod

    def _no_collections_read(self, function: cst.FunctionDef) -> None:
        """Inside the shim TF1's graph collections are empty. The trainable variables (`tf.add_n([tf.nn.l2_loss(v)
        for v in tf.trainable_variables()])`, a weight decay) are put in theirs by the generated model's custom
        getter, as TF1 had them, unless the model's code makes a `tf.Variable` or a Keras layer (whose variables TF1's
        graph held too) that no getter sees. Any other collection read in the model_fn (but the UPDATE_OPS that go
        with minimize, and the regularization losses) keeps it out of tier 2."""
        gone = {id(node) for statement in self.faithful.removed for node in subtree(statement)}
        for node in subtree(function.body):
            if isinstance(node, cst.Call) and id(node) not in gone and self._trainable_variables(node):
                self.faithful.collections = True
                made = next((other for other in subtree(self.view.module) if isinstance(other, cst.Call)
                             and self.api(other.func) in VARIABLES), None) \
                    or next(iter(faithful_keras.keras_made(self.view)), None)
                if made is not None:
                    self.problems.append(Unsupported(made, f"`{first_line(made)}` makes a variable TF1's "
                                                           "trainable variables held and the Keras model's custom "
                                                           "getter does not see, in a model_fn kept as written "
                                                           "(tier 2) that reads them: make it with get_variable"))
                    return
            elif isinstance(node, cst.Call) and id(node) not in gone and self.api(node.func) in COLLECTIONS \
                    and regularization.collection_scope(self.view, node) is None:  # read by _regularization
                self.problems.append(Unsupported(node, f"`{first_line(node)}` reads TF1's graph collections, which "
                                                       "are empty in a model_fn kept as written (tier 2): that is "
                                                       "not migrated yet"))
                return

    def _trainable_variables(self, call: cst.Call) -> bool:
        """`tf.trainable_variables()` or `tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES)`, of no scope."""
        api = self.api(call.func)
        if api == "trainable_variables":
            return not call.args
        return api == "get_collection" and len(call.args) == 1 and self.api(call.args[0].value) == TRAINABLE

    def _keras_layers(self, function: cst.FunctionDef) -> None:
        """The shim tracks TF1's variables, not Keras layers made as it runs: each call of the model would make new
        ones, with new weights. A Keras layer or model the model_fn's module makes in a function is made through
        get_or_create_layer (KERAS_LAYER): once, at the model's first call, as TF1 made it once in its graph."""
        calls = faithful_keras.keras_made(self.view)
        problem = faithful_keras.problem(self.view, calls, function, self.faithful.regularization)
        if problem is not None:
            self.problems.append(problem)
            return
        for call in calls:
            self.faithful.expressions[call], notes = faithful_keras.made_once(self.view, self.spelling, call)
            self.faithful.notes += [("TFM310", node, note) for node, note in notes]
        self.faithful.keras_layers = bool(calls)

    def _no_plain_variables(self, function: cst.FunctionDef) -> None:
        """The shim tracks get_variable's variables; a `tf.Variable` the model's code makes would be made again at
        each call of the Keras model, which fit's tf.function refuses."""
        code = faithful_keras.model_code(self.view, function)
        gone = {id(node) for statement in (*self.faithful.removed, *self.faithful.replaced)
                for node in subtree(statement)}
        made = next((node for node in subtree(self.view.module) if isinstance(node, cst.Call) and id(node) in code
                     and id(node) not in gone and self.api(node.func) in VARIABLES), None)
        if made is not None:
            self.problems.append(Unsupported(made, f"`{first_line(made)}` in a model_fn kept as written (tier 2): "
                                                   f"{REMADE}"))

    def _global_step_only_minimized(self, function: cst.FunctionDef) -> None:
        """A name bound to the global step goes with minimize, which alone may read it."""
        gone = {id(node) for statement in [*self.faithful.removed, *self.steps.values(), *self.scheduled.values()]
                for node in subtree(statement)}  # a schedule not carried out is a problem of its own
        for name, statement in self.steps.items():
            read = next((node for node in name_reads(function.body, name) if id(node) not in gone), None)
            if read is not None:
                self.problems.append(Unsupported(read, f"the model_fn reads the global step (`{name}`) other than "
                                                       "in minimize: in a model_fn kept as written (tier 2) that is "
                                                       "not migrated yet"))
            else:
                self.faithful.removed.append(statement)

    def _optimizer(self, target: str, api: str, call: cst.Call, statement) -> None:
        if self.faithful.optimizer:
            raise Unsupported(call, "a second optimizer in the model_fn: one Keras optimizer trains the model")
        self.optimizer_name = target  # its minimize is recognised, even if it is not migrated
        scheduled = len(self.rates.schedules)
        carried = self.spelling.spelled(self.rates.carried(call))
        self.faithful.learning_rate = self.faithful.learning_rate or self.rates.learning_rate
        if api == "train.MomentumOptimizer" and len(self.rates.schedules) > scheduled:
            self._tf1_momentum(call, carried, statement)
            return
        code = keras_optimizers.optimizer(api, carried)
        self.faithful.removed += [gone for gone in self.rates.schedules.values() if gone not in self.faithful.removed]
        self.faithful.optimizer, self.faithful.after_compile = self.spelling.code(
            cst.parse_expression(code.code)), code.after_compile
        if code.why:
            self.faithful.notes.append(("TFM401", call, code.why))
        self.faithful.slots = tf1_slots(api, call, keras_momentum=True)
        if statement not in self.faithful.removed:
            self.faithful.removed.append(statement)

    def _optimizer_choice(self, statement: cst.If) -> bool:
        """`if FLAGS.optimizer == "Adam": optimizer = tf.train.AdamOptimizer(...) elif ...`: the Keras optimizer the
        same value picks (rewrites/estimator/faithful_choice.py)."""
        choice = read_choice(statement, self.api, self.rates, self.spelling)
        if choice is None:
            return False
        if self.faithful.optimizer:
            raise Unsupported(statement, "a second optimizer in the model_fn: one Keras optimizer trains the model")
        self.inside |= {id(inner) for inner in choice.statements}
        self.faithful.learning_rate = self.rates.learning_rate
        self.optimizer_name, self.faithful.optimizer, self.faithful.slots = choice.name, choice.optimizer, choice.slots
        self.faithful.notes += [("TFM401", call, why) for call, why in choice.whys]
        self.faithful.removed += [gone for gone in [*self.rates.schedules.values(), statement]
                                  if gone not in self.faithful.removed]
        return True

    def _train_call(self, found: optimize_loss.TrainCall, statement, what: str) -> None:
        """`train_op = tf.contrib.layers.optimize_loss(loss, global_step, learning_rate, "Adam")` (its optimizer's
        variables in TF1's checkpoints under its variable scope, rewrites/estimator/optimize_loss.py) or
        `create_train_op(loss, optimizer)` (rewrites/estimator/create_train_op.py): its optimizer, minimizing the
        loss."""
        if not isinstance(found.loss, cst.Name):
            raise Unsupported(found.loss, f"{what} of an expression: bind the loss to a name first")
        if found.global_step is not None and not is_none(found.global_step) and not self.rates.is_step(
                found.global_step):
            raise Unsupported(found.global_step, f"{what} must advance the global step")
        ops = found.update_ops
        if not (ops is None or is_none(ops) or self._is_update_ops(ops) or (isinstance(ops, cst.Name) and
                                                                          ops.value in self.update_names)):
            raise Unsupported(ops, f"{what}(update_ops=...) other than the UPDATE_OPS collection")
        if found.instance is None:
            self._optimizer(None, found.api, found.call, statement)
        elif found.instance.value != self.optimizer_name:
            raise Unsupported(found.instance, f"{what} of an optimizer not made above in the model_fn")
        self.faithful.loss = found.loss.value
        self.faithful.check_numerics = found.check_numerics
        self.faithful.notes += [("TFM310", node, note) for node, note in found.notes]
        if found.scope:
            self.faithful.slots = scoped(self.faithful.slots, found.scope)
        if statement not in self.faithful.removed:
            self.faithful.removed.append(statement)

    def _is_update_ops(self, call) -> bool:
        return isinstance(call, cst.Call) and self.api(call.func) == "get_collection" and bool(call.args) and \
            self.api(call.args[0].value) == UPDATE_OPS

    def _tf1_momentum(self, call: cst.Call, carried: cst.Call, statement) -> None:
        """MomentumOptimizer on a decaying rate: Keras' SGD arguments, TF1's update (the generated TF1Momentum),
        its rate the Keras schedule."""
        sgd = cst.ensure_type(cst.parse_expression(keras_optimizers.optimizer(
            "train.MomentumOptimizer", self.spelling.spelled(call)).code), cst.Call)
        rate = keras_optimizers.optimizer_arguments("train.MomentumOptimizer", carried)["learning_rate"]
        args = [arg.with_changes(value=rate) if arg.keyword and arg.keyword.value == "learning_rate" else arg
                for arg in sgd.args]
        self.faithful.optimizer = source(sgd.with_changes(func=cst.Name("TF1Momentum"), args=args))
        self.faithful.tf1_momentum = True
        self.faithful.slots = tf1_slots("train.MomentumOptimizer", call)
        self.faithful.removed += [gone for gone in [*self.rates.schedules.values(), statement]
                                  if gone not in self.faithful.removed]

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


def _sets_none(statement, name: str) -> bool:
    """`name = None`, or `loss = name = None`."""
    small = statement.body[0] if is_none(statement_value(statement)) else None
    return isinstance(small, cst.Assign) and any(is_name(target.target, name) for target in small.targets)


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


def variable_made_elsewhere(view: ModuleView) -> Unsupported | None:
    """A `tf.Variable` made in a helper module of a model_fn kept as written (its code runs at each call)."""
    made = next((node for node in subtree(view.module) if isinstance(node, cst.Call)
                 and view.api(node.func) in VARIABLES), None)
    if made is None:
        return None
    return Unsupported(made, f"`{first_line(made)}` in a module of helpers of a model_fn kept as written (tier 2): "
                             f"{REMADE}", view.path)
