"""Reading a TF1 ``model_fn`` into the Keras model, loss, optimizer and metrics it stands for.

Used by the Estimator rewrite (rewrites/estimator/); the translation of single calls
lives in rewrites/keras_equivalents.py and keras_optimizers.py. A model_fn is read statement by statement:

- layers (``tf1.layers.Dense(...)(x)``, ``tf1.layers.dense(x, ...)``) become Keras
  layers called the same way; a straight chain on a ``features`` tensor becomes a
  ``keras.Sequential``, anything else a functional ``keras.Model`` on ``features``
  (a dict of ``keras.Input`` when the model_fn reads ``features["name"]``);
- a few pure tensor functions between layers (``argmax``, ``softmax``, ``concat``, ...)
  are kept as they are: they work on Keras tensors;
- the loss, the optimizer (on a constant rate or a decay schedule of the global step)
  and ``minimize`` become ``compile``; ``eval_metric_ops`` become compile metrics;
- ``if mode == ModeKeys.PREDICT`` / ``EVAL`` branches that only return an
  EstimatorSpec are read for their metrics; the predictions are not needed by ``fit``;
- a partitioner on a ``variable_scope`` around layers moves onto the strategy.

Anything else raises ``Unsupported``, naming the node a person should look at.
"""

from __future__ import annotations

import textwrap
from collections.abc import Collection

import libcst as cst

from migrator.findings import Safety
from rewrites import keras_equivalents as keras_code
from rewrites import keras_optimizers
from rewrites.estimator.layers import LayerReading
from rewrites.estimator.metrics import MetricReading
from rewrites.estimator.program import Model
from rewrites.estimator.specs import SPECS, SpecReading, is_raise
from rewrites.estimator.training import GLOBAL_STEP, TrainingReading
from rewrites.program.spelling import Spelling
from rewrites.program.spelling import MODE_KEYS
from rewrites.program.constants import UNKNOWN
from rewrites.program.places import Place, Value
from rewrites.program.values import Values
from rewrites.syntax import Unsupported, first_line, is_docstring, is_name, is_read_only, single_assign, subtree
from rewrites.tf1_checkpoints import tf1_slots
from rewrites.tf1_names import TF1Names, placeholders_resolved

DICT_METHODS = {"values", "items", "keys", "get", "pop", "copy", "update"}
# Estimator passes these by name: a model_fn takes `features` and any of the others, in any order.
MODEL_FN_PARAMETERS = ("features", "labels", "mode", "params", "config")
CONFIG_READS = {
    "num_ps_replicas": " (config.num_ps_replicas: the ps tasks of the cluster; under ParameterServerStrategy a "
                       "partitioner of the strategy, variable_partitioner=, shards the variables, so the model needs "
                       "no count of them)",
    "is_chief": " (config.is_chief: the migrated program trains on the chief alone; drop the branch)",
}
NO_MOVING_AVERAGE_UPDATES = ("batch_normalization without its UPDATE_OPS on the train_op: TF1 never updated the "
                             "moving mean and variance, Keras updates them in fit, so evaluate and predict, which "
                             "use them, differ from TF1 (training losses do not)")
# Functions of tensors only (no variables, no randomness): kept as they are between layers.
PURE_FUNCTIONS = {"argmax", "argmin", "math.argmax", "math.argmin", "nn.softmax", "nn.sigmoid", "nn.relu",
                  "nn.tanh", "math.sigmoid", "math.tanh", "sigmoid", "tanh", "concat", "reshape", "squeeze",
                  "expand_dims", "cast", "identity", "reduce_mean", "reduce_sum", "reduce_max", "reduce_min",
                  "math.reduce_mean", "math.reduce_sum", "math.reduce_max", "math.reduce_min", "stack", "unstack",
                  "transpose", "to_float", "to_int32", "to_int64", "one_hot", "square", "sqrt", "exp", "log",
                  "abs", "round", "math.round", "nn.l2_normalize", "math.l2_normalize", "nn.log_softmax",
                  "nn.softplus", "nn.elu", "nn.relu6", "add_n", "matmul", "squared_difference",
                  "math.squared_difference", "shape", "size", "split", "tile", "where", "clip_by_value",
                  "nn.top_k", "math.top_k", "gather", "string_to_number", "strings.to_number"}
# Statements that only log, in the model_fn: `print` and tf.logging run once as the model is built, in TF1 and in
# the Keras function alike, so they stay; summaries and named identities served TF1's graph and hooks, and go.
LOGGING_KEPT = ("logging.",)
LOGGING_DROPPED = ("summary.", "identity", "add_to_collection", "add_to_collections")
DROPPED = ("{} served TF1's graph (summaries, tensors named for a logging hook): the Keras model has no place for it, "
           "so it goes; log from a Keras callback or keras.callbacks.TensorBoard")
# The model_fn's calls by API: the reader method for `target = <call>` (prefixes end with a dot).
CALLS = {"get_variable": "_table", "nn.embedding_lookup": "_embedding", "feature_column.input_layer": "_input_layer",
         "losses.get_total_loss": "_total_loss", "tpu.CrossShardOptimizer": "_cross_shard",
         "layers.": "_layer", "losses.": "_loss", "metrics.": "_metric_call",
         "distribute.experimental.partitioners.": "_named_partitioner"}


class ModelFnReader(LayerReading, TrainingReading, MetricReading, SpecReading):
    """Reads one model_fn."""

    def __init__(self, place: Place, values: Values, spelling: Spelling, flags: bool = False) -> None:
        """``place``: where the model_fn's body is read (its params bound to Estimator's); ``spelling``: of its
        module, which the migration makes TF2; ``flags``: a command-line flag counts as its default (TPUEstimator's
        use_tpu)."""
        self.view, self.place, self.values = place.view, place, values
        self.api = place.view.api
        self.resolved = lambda node: values.resolve(Value(node, place))
        self.resolve = lambda node: self.resolved(node).node  # what a name, params["key"] stands for
        self.constant = lambda node: values.constant(Value(node, place), MODE_KEYS, flags)
        self.aliases: dict[str, str] = {}     # a metric_fn's parameter -> the model_fn tensor it is given
        self.columns: dict[str, str] = {}     # feature columns the model_fn names: name -> code
        self.code = spelling.code          # a node's code, its TF1 references respelled for TF2
        self.spelled = spelling.spelled
        self.model = Model()
        self.current = "features"     # the last layer's output, while the layers form a chain
        self.loss_name: str | None = None
        self.losses_made = 0            # tf.losses calls, each added to TF1's LOSSES collection
        self.optimizer_name: str | None = None
        self.optimizer_call: cst.Call | None = None  # `tf.train.XOptimizer(...)` where minimize() is chained on it
        self.train_op: str | None = None
        self.schedules: dict[str, str] = {}      # name -> Keras schedule code
        self.metric_calls: dict[str, tuple[str, cst.Call]] = {}
        self.pure: dict[str, cst.Call] = {}      # name -> pure function call
        self.specs: dict[str, cst.Call] = {}     # name -> the EstimatorSpec(...) it holds
        self.dicts: dict[str, cst.Dict] = {}
        self.eval_metric_ops: cst.BaseExpression | None = None
        self.training_flags: set[str] = set()  # names bound to `mode == ModeKeys.TRAIN`
        self.batch_norms: list[cst.Call] = []
        self.update_ops: dict[str, int] = {}  # name -> batch norms created before it was collected
        self.updates_attached = 0  # how many batch norms' updates the train_op depends on (UPDATE_OPS)
        self.tables: dict[str, tuple[dict, bool, str | None]] = {}  # get_variable tables: name -> (arguments,
        # partitioned, TF1's name of it)
        self.table_lookups: set[int] = set()  # the names of tables that embedding_lookup reads
        self.in_partitioned_scope = False
        self.unpartitioned_weights: list[cst.Call] = []  # layers with weights outside any partitioned scope
        self.tf1_names = TF1Names()
        self.partitioners: dict[str, cst.Call] = {}  # name -> the partitioner it was bound to

    def read(self, function: cst.FunctionDef, bound: Collection[str] = ()) -> Model:
        """``bound``: parameters given values elsewhere (a method's self, functools.partial's keywords)."""
        params = [param.name.value for param in function.params.params if param.name.value not in bound]
        if ("features" not in params or not set(params) <= set(MODEL_FN_PARAMETERS) or function.params.kwonly_params
                or function.params.star_kwarg or isinstance(function.params.star_arg, cst.Param)):
            raise Unsupported(function.params, "a model_fn takes features, and maybe labels, mode, params and config, "
                                               "by those names (Estimator passes them by name)")
        deleted = {id(node) for statement in function.body.body if _deletes(statement) for node in subtree(statement)}
        config = next(((node, attribute) for node, attribute in _config_reads(function.body)
                       if id(node) not in deleted), None)
        if config is not None:
            raise Unsupported(config[0], "the model_fn reads the RunConfig (config): give the Keras model what it "
                                         "needs from it by hand" + CONFIG_READS.get(config[1], ""))
        self.model.uses_params = "params" in params
        self._features_by_key(function)
        self.returned = self.trained_first = False
        self.problems: list[Unsupported] = []
        self.unread: set[str] = set()   # names bound by statements that could not be read
        self._statements([s for s in function.body.body if not is_docstring(s)])
        if self.problems:
            raise Unsupported.of_all(self.problems)
        self._check_tables_only_looked_up(function)
        if not self.returned and not self.trained_first:
            raise Unsupported(function, "the model_fn must end with `return EstimatorSpec(mode, loss=..., "
                                        "train_op=...)`")
        model = self.model
        if not model.layers or not model.loss or not model.optimizer:
            raise Unsupported(function, "the model_fn needs layers, a tf.losses loss and an optimizer")
        if self.eval_metric_ops is not None:
            model.metrics = self._metrics(self.eval_metric_ops)
        if model.output != self.current:
            model.chain = False
        model.tf1_names_known = self.tf1_names.known
        if self.updates_attached < len(self.batch_norms):
            model.notes.append(("TFM401", self.batch_norms[0], NO_MOVING_AVERAGE_UPDATES))
        if model.partitioner and self.unpartitioned_weights:
            model.notes.append(("TFM206", self.unpartitioned_weights[0], keras_code.PARTITIONER_FOR_EVERY_VARIABLE))
        return model

    def _features_by_key(self, function: cst.FunctionDef) -> None:
        """`features["x"]` anywhere in the model_fn (in a layer's call, in `tf.concat([...])`) makes the model's
        inputs a dict of keras.Input; a dict used otherwise (`features.values()`) is not migrated."""
        for node in subtree(function.body):
            if isinstance(node, cst.Subscript) and is_name(node.value, "features") and len(node.slice) == 1 \
                    and isinstance(node.slice[0].slice, cst.Index) \
                    and isinstance(node.slice[0].slice.value, (cst.SimpleString, cst.Name)):
                self.model.features_dict = self.model.reads_features = True
            elif isinstance(node, cst.Attribute) and is_name(node.value, "features") and node.attr.value in DICT_METHODS:
                raise Unsupported(node, f"features.{node.attr.value}(): the model's inputs are read by key "
                                        "(`features[\"x\"]`) in the migrated model; read them so by hand")

    def _statements(self, statements) -> None:
        """The model_fn's statements in order; the TRAIN spec's `return` ends them. A statement that cannot be
        read is noted and the others read on, so that every thing stopping the model_fn is found, not the first
        alone (what follows from one, reading a name it bound, is not counted again)."""
        for statement in statements:
            try:
                self._one(statement)
            except Unsupported as problem:
                if not self._follows_from_a_problem(problem):
                    self.problems.append(problem)
                self.unread |= _bound_names(statement)

    def _one(self, statement) -> None:
        if is_raise(statement) and (self.returned or self.trained_first):
            # After the return that serves every mode (never reached), or after TRAIN's: EVAL and PREDICT raise.
            self.model.evaluates = self.model.evaluates and not self.trained_first
            self.returned = True
            return
        if self.returned:
            raise Unsupported(statement, "code after the model_fn's return")
        if isinstance(statement, cst.SimpleStatementLine) and isinstance(statement.body[0], cst.Return):
            self.returned = True
            if self.trained_first:
                self._other_modes_return(statement)
            else:
                self._train_return(statement)
        else:
            self._statement(statement)

    def _follows_from_a_problem(self, problem: Unsupported) -> bool:
        """Does ``problem`` read a name a statement that could not be read binds?"""
        return any(isinstance(node, cst.Name) and node.value in self.unread for node in subtree(problem.node))

    def _statement(self, statement) -> None:
        if isinstance(statement, cst.With):
            self._with(statement)
        elif isinstance(statement, cst.If):
            self._if(statement)
        elif isinstance(statement, cst.For):
            self._for_loop(statement)
        elif (assign := single_assign(statement)) is not None:
            target, value = assign
            if isinstance(value, cst.Dict):
                self.dicts[target] = value
            elif self._mode_of(value) == "TRAIN":
                self.training_flags.add(target)
            elif isinstance(value, cst.Call) and self.api(value.func) in GLOBAL_STEP:
                self.pure[target] = value  # the global step, for minimize
            elif isinstance(value, cst.Call) and self.api(value.func) in SPECS:
                self.specs[target] = value  # returned below
            elif self._column_definitions(value):
                self.columns[target] = self.code(value)  # inputs described for input_layer, written if it needs them
            elif isinstance(value, cst.Call):
                self._call(target, value, statement)
            elif self.constant(value) is not UNKNOWN or is_read_only(value) or self._pure_expression(value):
                self._emit(target, self.code(value))  # a Python value, or tensor arithmetic the model's code reads
                self.model.chain = False
            else:
                raise Unsupported(statement, f"`{first_line(statement)}` in the model_fn is not migrated yet")
        elif self._logging(statement) or self._asserts_training(statement) or _does_nothing(statement):
            return
        else:
            raise Unsupported(statement, f"`{first_line(statement)}` in the model_fn: only assignments, "
                                         "mode branches and variable scopes are migrated yet")

    def _if(self, statement: cst.If) -> None:
        """An if decided before the program runs (use_tpu=False, a hyperparameter's literal): its branch; `if mode
        == TRAIN:` without an else: the training path; else a PREDICT or EVAL branch."""
        known = self.constant(statement.test)
        if self._mode_of(statement.test) == "TRAIN" and statement.orelse is None and not self.trained_first:
            self._statements(statement.body.body)
            if self.returned:  # `if mode == TRAIN: ... return spec` first: what follows serves EVAL and PREDICT
                self.returned, self.trained_first = False, True
            return
        if known is UNKNOWN or self._mode_of(statement.test) is not None:
            self._mode_branch(statement)
            return
        orelse = statement.orelse
        branch = statement.body.body if known else [] if orelse is None else \
            orelse.body.body if isinstance(orelse, cst.Else) else [orelse]
        self._statements(branch)

    def _column_definitions(self, node: cst.BaseExpression) -> bool:
        """A feature column, or a list (or comprehension) of them: a description of inputs, not an op."""
        if isinstance(node, cst.ListComp):
            return self._column_definitions(node.elt)
        if isinstance(node, (cst.List, cst.Tuple)):
            return bool(node.elements) and all(self._column_definitions(e.value) for e in node.elements)
        api = self.api(node.func) if isinstance(node, cst.Call) else None
        return (api or "").startswith("feature_column.") and api != "feature_column.input_layer"

    def _pure_expression(self, node: cst.BaseExpression) -> bool:
        """Arithmetic, subscripts and pure functions of the model's tensors and Python values."""
        if isinstance(node, cst.Call):
            return self.api(node.func) in PURE_FUNCTIONS and all(self._pure_expression(arg.value) for arg in node.args)
        if isinstance(node, (cst.BinaryOperation, cst.Comparison)):
            parts = [node.left, node.right] if isinstance(node, cst.BinaryOperation) else \
                [node.left, *(part.comparator for part in node.comparisons)]
            return all(self._pure_expression(part) for part in parts)
        if isinstance(node, cst.UnaryOperation):
            return self._pure_expression(node.expression)
        if isinstance(node, cst.Subscript):
            return self._pure_expression(node.value) and all(
                isinstance(element.slice, cst.Index) and self._pure_expression(element.slice.value)
                for element in node.slice)
        if isinstance(node, (cst.Tuple, cst.List)):
            return all(self._pure_expression(element.value) for element in node.elements)
        return is_read_only(node) or self.constant(node) is not UNKNOWN

    def _asserts_training(self, statement) -> bool:
        """`assert mode == ModeKeys.TRAIN` holds where the Keras model trains: it goes."""
        small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 \
            else None
        return isinstance(small, cst.Assert) and self._mode_of(small.test) == "TRAIN"

    def _logging(self, statement) -> bool:
        """`print(...)` and `tf.logging.X(...)` stay; `tf.summary.X(...)` and `tf.identity(t, name=...)` go."""
        value = statement.body[0].value if isinstance(statement, cst.SimpleStatementLine) and len(
            statement.body) == 1 and isinstance(statement.body[0], cst.Expr) else None
        if not isinstance(value, cst.Call):
            return False
        api = self.api(value.func) or ""
        if api.startswith(LOGGING_KEPT) or is_name(value.func, "print"):
            self.model.lines.append(self.code(statement).strip())
            self.model.chain = False
            return True
        if api.startswith(LOGGING_DROPPED):
            self.model.notes.append(("TFM402", statement, DROPPED.format(f"tf.{api}")))
            self.model.dropped.append(statement)
            return True
        return False

    def _call(self, target: str, call: cst.Call, statement) -> None:
        if _chained_minimize(call):
            self._call(target, call.func.value, statement)  # the optimizer, made where it minimizes
            self.optimizer_call = call.func.value
        callee = call.func.func if isinstance(call.func, cst.Call) else call.func
        api = self.api(callee) or ""
        reader = CALLS.get(api) or next((CALLS[prefix] for prefix in CALLS if prefix.endswith(".")
                                         and api.startswith(prefix)), None)
        try:
            if reader is not None:
                getattr(self, reader)(api, call, target)
            elif api in PURE_FUNCTIONS:
                inner = next((arg.value for arg in call.args if not self._pure_expression(arg.value)), None)
                if inner is not None:
                    raise Unsupported(inner, f"`{first_line(inner)}` inside tf.{api}(...) in the model_fn: bind it to "
                                             "a name first (`logits = tf.layers.dense(...)`), then apply "
                                             f"tf.{api} to the name, and run tf-migrate again")
                self._emit(target, self.code(call))
                self.model.chain = False
                self.pure[target] = call
            elif api in keras_optimizers.SCHEDULES:
                self._check_global_step(api, call)
                self.schedules[target] = keras_optimizers.learning_rate_schedule(api, self.spelled(call)).code
            elif api == "train.MomentumOptimizer" and self._scheduled_rate(call):
                self.model.optimizer, self.model.tf1_momentum = self._tf1_momentum(call), True
                self.model.slots = tf1_slots(api, call)
                self.optimizer_name = target
            elif api.startswith("train.") and api.endswith("Optimizer"):
                code = keras_optimizers.optimizer(api, self._with_schedule(self.spelled(call)))
                self.model.optimizer, self.model.after_compile = self._piece(code, call), code.after_compile
                self.model.slots = tf1_slots(api, call, keras_momentum=True)
                self.optimizer_name = target
            elif self._is_update_ops(call):
                self.update_ops[target] = len(self.batch_norms)
            elif self._is_minimize(call):
                self.train_op = target
            else:
                raise Unsupported(call, f"`{api or first_line(callee)}` in the model_fn: no Keras translation yet "
                                        "(tf.layers, tf.losses, tf.metrics, optimizers, decay schedules and "
                                        "minimize are migrated)")
        except keras_code.NoKerasEquivalent as problem:
            raise Unsupported(call, str(problem)) from None

    def _emit(self, target: str, code: str) -> None:
        """One statement of the Keras model's code: `target = code`."""
        self.model.lines.append(f"{target} = {code}")
        self.model.bound.append(target)

    def _for_loop(self, statement: cst.For) -> None:
        """`for units in [...]:` (or `for i, units in enumerate(...)`) around layers stays a loop around the Keras
        layers, named as TF1 numbered them: by the loop's index (`enumerate` is added if it had none)."""
        from templates import wrap

        target = statement.target
        names = [target] if isinstance(target, cst.Name) else [element.value for element in target.elements] \
            if isinstance(target, cst.Tuple) else []
        if statement.orelse is not None or statement.asynchronous or not names or \
                not all(isinstance(name, cst.Name) for name in names):
            raise Unsupported(statement, "a for loop other than `for name in values:` in the model_fn")
        iterated, index = statement.iter, None
        if isinstance(iterated, cst.Call) and is_name(iterated.func, "enumerate") and len(iterated.args) == 1 \
                and isinstance(target, cst.Tuple) and len(names) == 2:
            iterated, index = iterated.args[0].value, names[0].value
        values = self.constant(iterated)
        length = len(values) if isinstance(values, (list, tuple)) else \
            f"len({self.code(iterated)})" if is_read_only(iterated) else None
        taken = {*self.model.bound, *(name.value for name in names), "features", "input_spec", "params"}
        counter = index or next(name for name in ("index", *(f"index_{i}" for i in range(2, 99))) if name not in taken)
        outer, self.model.lines = self.model.lines, []
        self.tf1_names.begin_loop(counter, length)
        for inner in statement.body.body:
            self._statement(inner)
        resolved = self.tf1_names.end_loop()
        body, self.model.lines = [placeholders_resolved(line, resolved) for line in self.model.lines], outer
        self.model.layers = [placeholders_resolved(layer, resolved) for layer in self.model.layers]
        if not body:  # it only wrote summaries, which go
            return
        counted = index is None and any(counter in name for name in resolved.values() if name)
        header = (f"for {counter}, {self.code(target)} in enumerate({self.code(iterated)}):" if counted else
                  f"for {self.code(target)} in {self.code(statement.iter)}:")
        self.model.lines.append("\n".join([header, *(textwrap.indent(wrap(line, 8), "    ") for line in body)]))
        self.model.bound += [name.value for name in names] + ([counter] if counted else [])
        self.model.chain = False

    def _with(self, statement: cst.With) -> None:
        """`with variable_scope(...)` or `with control_dependencies(update_ops)`, then the statements inside."""
        call = statement.items[0].item if len(statement.items) == 1 else None
        api = self.api(call.func) if isinstance(call, cst.Call) else None
        outer_partitioned, outer_scopes = self.in_partitioned_scope, self.tf1_names.scopes
        if api == "variable_scope":
            self.in_partitioned_scope |= self._variable_scope(call)
        elif api == "control_dependencies" and (count := self._update_ops_count(call)) is not None:
            self._train_op_after_updates(statement)
            self.updates_attached = count
        else:
            raise Unsupported(statement, f"`{first_line(statement)}` in the model_fn is not migrated yet")
        for inner in statement.body.body:
            self._statement(inner)
        self.in_partitioned_scope, self.tf1_names.scopes = outer_partitioned, outer_scopes

    def _piece(self, code: keras_code.KerasCode, node: cst.CSTNode) -> str:
        if code.safety is Safety.NUMERIC:
            self.model.notes.append(("TFM401", node, code.why))
        return code.code


def _config_reads(body: cst.CSTNode) -> list[tuple[cst.Name, str | None]]:
    """Each read of the name `config` (not a keyword or an attribute so named), with the attribute it reads."""
    names = [node for node in subtree(body) if is_name(node, "config")]
    not_reads = {id(node.keyword) for node in subtree(body) if isinstance(node, cst.Arg) and node.keyword} | {
        id(node.attr) for node in subtree(body) if isinstance(node, cst.Attribute)}
    attributes = {id(node.value): node.attr.value for node in subtree(body) if isinstance(node, cst.Attribute)}
    return [(name, attributes.get(id(name))) for name in names if id(name) not in not_reads]


def _bound_names(statement) -> set[str]:
    """The names a statement binds (assignment targets, loop variables, `with ... as`), anywhere in it."""
    found = set()
    for node in subtree(statement):
        targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else \
            [node.target] if isinstance(node, (cst.AnnAssign, cst.AugAssign, cst.For)) else \
            [item.asname.name for item in node.items if item.asname] if isinstance(node, cst.With) else []
        found |= {name.value for target in targets for name in subtree(target) if isinstance(name, cst.Name)}
    return found


def _deletes(statement) -> bool:
    """`del params, config`: the model_fn says it does not use them."""
    return isinstance(statement, cst.SimpleStatementLine) and all(isinstance(s, cst.Del) for s in statement.body)


def _does_nothing(statement) -> bool:
    """`pass`, and `del` of names (the model_fn's parameters it does not use): nothing for the Keras model."""
    return isinstance(statement, cst.SimpleStatementLine) and all(
        isinstance(small, cst.Pass) or (isinstance(small, cst.Del) and isinstance(small.target, (cst.Name, cst.Tuple)))
        for small in statement.body)


def _chained_minimize(call: cst.Call) -> bool:
    """`tf.train.AdamOptimizer(rate).minimize(loss, ...)`."""
    return isinstance(call.func, cst.Attribute) and call.func.attr.value == "minimize" \
        and isinstance(call.func.value, cst.Call)
