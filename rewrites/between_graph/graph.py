"""The worker's graph, read from the `with tf.device(replica_device_setter(...)):` block.

Each statement is an assignment: a placeholder (a step argument), a variable (created in the
strategy's scope), a Dense layer (``tf.layers.dense``, ``tf.layers.Dense(...)(x)``,
``tf.keras.layers.Dense(...)(x)``: a Keras layer created and built in the scope, called in the
step), the batches of a ``tf.data`` iterator (``make_one_shot_iterator().get_next()``: a
per-worker dataset whose iterator the step reads), the global step (``get_or_create_global_step``,
or a zero integer variable ``minimize`` advances: the optimizer's ``iterations``), an optimizer and its ``minimize`` (the Keras optimizer applying the tape's
gradients), ops of tensors (run in the step, under the tape), or what only a TF1 session used
(an initializer, a ``Saver``, merged summaries: dropped when nothing but the session reads them).
A seed or a print stays in its place; ``with tf.name_scope(...)`` blocks are read as their statements. A call to
a function of the module (``a, b = predict(x)``) is computation when the function only computes tensors
(graph_calls.py); one making variables becomes a tf.Module made in the scope, called in the step
(model_functions.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import libcst as cst

from rewrites import keras_equivalents as keras_code
from rewrites import keras_optimizers
from rewrites.between_graph import (graph_calls, input_functions, inputs, model_functions, model_modules,
                                    synchronous, training_functions)
from rewrites.between_graph.fallbacks import newer_api
from rewrites.between_graph.holders import session_only_attribute
from rewrites.keras_equivalents import PARTITIONER_FOR_EVERY_VARIABLE
from rewrites.syntax import (Unsupported, bind_arguments, first_line, is_literal_int, is_name, single_assign,
                             statement_value, subtree)
from rewrites.tf1_checkpoints import Slots, tf1_slots
from rewrites.tf1_names import TF1Names

GLOBAL_STEP = {"train.get_or_create_global_step", "train.get_global_step", "train.create_global_step",
               "contrib.framework.get_or_create_global_step"}
GET_VARIABLE = ("name", "shape", "dtype", "initializer", "regularizer", "trainable", "collections", "caching_device",
                "partitioner")
MINIMIZE = ("loss", "global_step", "var_list")
SEEDS = {"set_random_seed", "random.set_random_seed", "random.set_seed"}
ZERO_INITIALIZERS = {"constant_initializer", "zeros_initializer", "initializers.zeros", "initializers.constant"}
ITERATOR_FUNCTIONS = {"data.make_one_shot_iterator"}
# Layers built in the strategy's scope for the shape of their input: Dense only, whose kernel needs its last axis.
DENSE = {"layers.dense": True, "layers.Dense": False, "keras.layers.Dense": False}
# What only a TF1 session reads: gone with the session.
SESSION_ONLY = {"global_variables_initializer", "initialize_all_variables", "local_variables_initializer",
                "train.Saver", "summary.merge_all", "summary.FileWriter"}
SUMMARIES = {"summary.scalar", "summary.histogram", "summary.image", "summary.audio", "summary.text",
             "summary.tensor_summary"}


def _targets(target: cst.BaseExpression) -> list[cst.BaseExpression]:
    """What `a, self.b = ...` assigns to, each."""
    return [e.value for e in target.elements] if isinstance(target, cst.Tuple | cst.List) else [target]


def _not_trained(args: dict) -> bool:
    """`trainable=False`, or an integer variable (no dtype: its initial value's), which no optimizer trains."""
    if "trainable" in args:
        return is_name(args["trainable"][1].value, "False")
    return "dtype" not in args


@dataclass
class Names:
    """How the rewrite reads the user's code: ``api(node)`` names a TensorFlow API, ``code(node)`` is a node's
    code as the migrated module spells it."""

    api: Callable[[cst.CSTNode], str | None]
    code: Callable[[cst.CSTNode], str]
    spelled: Callable[[cst.CSTNode], cst.CSTNode]  # a copy with its TensorFlow references respelled
    module: graph_calls.ModuleCode = field(default_factory=graph_calls.ModuleCode)  # what the graph may call


@dataclass
class Graph:
    """What the worker's graph holds, read from the device-setter block."""

    placeholders: list[str] = field(default_factory=list)
    variables: list[str] = field(default_factory=list)         # TF2 code creating them, in order
    variable_names: list[str] = field(default_factory=list)
    computation: list[str] = field(default_factory=list)  # code run in the step, under the tape
    computed: list[str] = field(default_factory=list)     # the names it binds
    global_step: str | None = None
    optimizer: str = ""
    optimizer_name: str | None = None
    after_optimizer: tuple[str, ...] = ()
    partitioner: str | None = None               # the TF2 partitioner one get_variable used: the strategy's
    unpartitioned: list[cst.Call] = field(default_factory=list)  # get_variables without one
    loss: str | None = None
    train_op: str | None = None
    sync_replicas: cst.Call | None = None        # `SyncReplicasOptimizer(...)`: synchronous steps
    flag: synchronous.Flag | None = None         # the flag choosing it at run time: synchronous or not
    tracked: list[str] = field(default_factory=list)  # what a checkpoint holds: variables and layers, by name
    tf1_names: dict[str | None, str] = field(default_factory=dict)  # TF1's name of each variable (code; None:
    # not known) -> its TF2 code
    tf1_named: list[str] = field(default_factory=list)  # the layers whose variables carry TF1's names
    step_name: str = '"global_step"'                 # TF1's name of the global step (code)
    slots: Slots | None = None          # how TF1 named the optimizer's slots, and Keras' names of them
    shapes: dict[str, str] = field(default_factory=dict)  # tensor name -> code of its static shape
    dtypes: dict[str, str] = field(default_factory=dict)  # placeholder -> code of its dtype
    dataset: str | None = None                   # the name of the dataset a one-shot iterator reads
    iterator: str | None = None
    dataset_statements: list[cst.BaseStatement] = field(default_factory=list)  # building it, in the graph
    input_names: list[str] = field(default_factory=list)  # what the graph computed for its input alone: moved
    # into the dataset function (inputs.py)
    returns: list[tuple[cst.SimpleStatementLine, list, object]] = field(default_factory=list)  # a function's
    # statements making its iterator and returning its batches, what replaces them (its pipeline's return), and its
    # module (a graph_calls.ModuleCode; None: the graph's) (input_functions.py)
    input_call: cst.Call | None = None  # the call of that function
    iterated_elsewhere: list[cst.Call] = field(default_factory=list)  # its calls in other TF1 graphs (input_functions.py)
    elements: list[str] = field(default_factory=list)  # the names of get_next()'s tensors, in order
    packed: bool = False                               # `x, y = iterator.get_next()`: a tuple unpacked
    session_only: dict[str, cst.BaseStatement] = field(default_factory=dict)  # name -> `name = tf.train.Saver()`
    summaries: list[cst.BaseStatement] = field(default_factory=list)  # `tf.summary.scalar(...)`: dropped
    merged: list[str] = field(default_factory=list)  # `summary_op = tf.summary.merge_all()`: a run may fetch it
    models: list[tuple[cst.FunctionDef, cst.ClassDef, object]] = field(default_factory=list)  # a function making
    # variables, the tf.Module replacing it, its module (a model_modules.OtherHome; None: the graph's)
    kept: list[tuple[cst.ClassDef, object, cst.Call, cst.FunctionDef]] = field(default_factory=list)  # the Keras
    # layer running a function kept as TF1 code, its module (a graph_calls.ModuleCode; None: the graph's), the graph's
    # call, the function (model_modules.py)
    training_functions: list[cst.FunctionDef] = field(default_factory=list)  # gone (training_functions.py)
    notes: list[tuple[str, cst.CSTNode, str]] = field(default_factory=list)

    @property
    def tensors(self) -> set[str]:
        """The names bound to the graph's tensors, which only exist in the step (or dataset) function once
        migrated."""
        return {*self.placeholders, *self.elements, self.loss, self.train_op, self.global_step, self.iterator,
                *self.computed, *self.input_names} - {None}

    @property
    def inputs(self) -> list[str]:
        """What the step function takes: a batch of the iterator's, then the placeholders' values."""
        return [*self.elements, *self.placeholders]


def read_graph(device: cst.With, names: Names, until: cst.BaseStatement | None = None) -> Graph:
    """The graph of the device block (up to ``until``, a statement of its own, where the session's code starts)."""
    return _Reader(names).read(device, until)


class _Reader:
    def __init__(self, names: Names) -> None:
        self.api, self.code, self.spelled, self.module = names.api, names.code, names.spelled, names.module
        self.tf1_names = TF1Names()
        self.names_in_use: dict[str, int] = {}  # TF1's graph's, for the variables' names

    def read(self, device: cst.With, until: cst.BaseStatement | None = None) -> Graph:
        graph = Graph()
        statements = list(self._statements(device, until))
        pipeline = {id(statement) for statement in inputs.pipeline(statements, self.api)}
        for statement in statements:
            if id(statement) in pipeline:
                graph.dataset_statements.append(statement)
                continue
            value = statement_value(statement)
            if isinstance(value, cst.Call) and self.api(value.func) in SUMMARIES and single_assign(statement) is None:
                graph.summaries.append(statement)
                continue
            if self._get_next(graph, statement, value):
                continue
            if isinstance(value, cst.SimpleString | cst.ConcatenatedString):  # code commented out as a string
                continue
            if isinstance(value, cst.Call) and single_assign(statement) is None and self._run_once(graph, value):
                continue
            if isinstance(statement, cst.If) and self._flag(graph, statement):
                continue
            if inputs.is_mapped_function(statement):
                graph.dataset_statements.append(statement)
                continue
            if (found := input_functions.input_function(value, self.module, self.api)) is not None:
                self._input_function(graph, statement, value, found)
                continue
            training = training_functions.read(value, self.module, self.api, self._is_step, SUMMARIES)
            if training is not None:
                self._training(graph, statement, value, training)
                continue
            if (function := model_functions.model_function(value, self.module, self.api)) is not None:
                self._model(graph, statement, value, function)
                continue
            if (found := model_modules.other_model_function(value, self.module)) is not None:
                self._model(graph, statement, value, found[1], model_modules.other_home(value, *found, self.module))
                continue
            if (kept := model_modules.kept_function(statement, value, self.module, self.api)) is not None:
                model_modules.keep(graph, statement, value, kept, self.module, self.code)
                continue
            assign = single_assign(statement)
            if assign is None and _unpacked(statement):  # `logits, probabilities = predict(x)`
                graph_calls.check_unpacked(value, self.module, self.api, {
                    s.name.value for s in graph.dataset_statements if isinstance(s, cst.FunctionDef)})
                self._computation(graph, statement, value)
                continue
            small = statement.body[0] if assign is None and value is not None else None
            target = next((n for t in small.targets for n in _targets(t.target) if not isinstance(n, cst.Name)),
                          None) if isinstance(small, cst.Assign) else None
            if target is not None and (held := session_only_attribute(statement, self.api, SESSION_ONLY)):
                graph.session_only[held] = statement  # a trainer's `self.saver = tf.train.Saver()` (holders.py)
                continue
            if target is not None:
                raise Unsupported(statement, f"`{first_line(statement)}` in the graph assigns to "
                                             f"`{self.code(target)}`: only assignments to names are migrated")
            if assign is None:
                raise Unsupported(statement, f"`{first_line(statement)}` in the graph: only assignments are migrated")
            self._assignment(graph, statement, *assign)
        if not (graph.loss and graph.train_op and graph.variables):
            raise Unsupported(device, "the graph needs variables, a loss and `train_op = optimizer.minimize(loss)`")
        self._into_dataset(graph, device, until)
        inputs.check(graph.dataset, graph.dataset_statements, device)
        if (sharded := inputs.shard_note(graph.dataset_statements, self.api)) is not None:
            graph.notes.append(("TFM103", *sharded))
        if graph.partitioner is not None:
            lookup = next((node for node in subtree(device) if isinstance(node, cst.Call)
                           and self.api(node.func) == "nn.embedding_lookup"), None)
            if lookup is not None:
                raise Unsupported(lookup, "embedding_lookup on partitioned variables: TF1 looked ids up \"mod\", a "
                                          "TF2 sharded variable \"div\"; use a Keras Embedding, by hand")
            if graph.unpartitioned:
                graph.notes.append(("TFM105", graph.unpartitioned[0], PARTITIONER_FOR_EVERY_VARIABLE))
        return graph

    def _run_once(self, graph: Graph, call: cst.Call) -> bool:
        """A seed, or a print, where the graph was built: kept in its place among the variables, run once."""
        if self.api(call.func) in SEEDS:  # TF2's ops draw other numbers from the same seed
            graph.variables.append(f"tf.random.set_seed({', '.join(self.code(arg) for arg in call.args)})")
        elif is_name(call.func, "print"):
            graph.variables.append(self.code(call))
        else:
            return False
        return True

    def _statements(self, block: cst.With, until: cst.BaseStatement | None = None):
        """The block's statements (up to ``until``), those of `with tf.name_scope(...)` blocks in it in their place:
        a name scope names ops, which the migrated step does not keep."""
        for statement in block.body.body:
            if statement is until:
                return
            items = statement.items if isinstance(statement, cst.With) else ()
            if len(items) == 1 and isinstance(items[0].item, cst.Call) and items[0].asname is None \
                    and self.api(items[0].item.func) == "name_scope":
                yield from self._statements(statement)
            else:
                yield from newer_api(statement) or [statement]

    def _assignment(self, graph: Graph, statement, target: str, value: cst.BaseExpression) -> None:
        api = self.api(value.func) if isinstance(value, cst.Call) else None
        if api == "placeholder":
            graph.placeholders.append(target)
            shape = bind_arguments(value, ("dtype", "shape", "name"))
            if shape is not None and "shape" in shape:
                graph.shapes[target] = self.code(shape["shape"][1].value)
            if shape is not None and "dtype" in shape:
                graph.dtypes[target] = self.code(self.spelled(shape["dtype"][1].value))
        elif self._dense(value) is not None:
            self._layer(graph, statement, target, value)
        elif self._iterator(value) is not None:
            if graph.dataset is not None:
                raise Unsupported(value, "two iterators in the graph: one input is migrated")
            graph.dataset = self._iterator(value)
            graph.iterator = target
        elif self._is_dataset(value) and (target == graph.dataset or graph.dataset is None):
            graph.dataset_statements.append(statement)
        elif graph.global_step is None and self._is_step_counter(api, value):
            graph.global_step = target
            graph.step_name = self._variable_name(api, value) or graph.step_name
        elif api == "get_variable":
            self._variable(graph, target, value)
        elif api == "Variable":
            graph.variables.append(f"{target} = {self.code(value.with_changes(func=cst.parse_expression('tf.Variable')))}")
            graph.variable_names.append(target)
            graph.tracked.append(target)
            graph.tf1_names[self._variable_name(api, value)] = target
        elif api in GLOBAL_STEP:
            graph.global_step = target
        elif api in SESSION_ONLY or synchronous.is_hook(value, graph.optimizer_name):
            graph.session_only[target] = statement
            graph.merged += [target] if api == "summary.merge_all" else []
        elif api is not None and api.startswith("train.") and api.endswith("Optimizer"):
            self._optimizer(graph, target, value)
        elif self._is_minimize(value, graph):
            self._minimize(graph, target, value)
        elif self._is_chained_minimize(value):  # `train_op = tf1.train.XOptimizer(...).minimize(loss, ...)`
            self._optimizer(graph, "optimizer", value.func.value)
            self._minimize(graph, target, value)
        else:
            self._computation(graph, statement, value)

    def _is_step_counter(self, api: str | None, call) -> bool:
        """`tf.Variable(0, trainable=False)` or `get_variable("global_step", [], initializer=zeros, trainable=False)`:
        the step counter when minimize() advances it, which _minimize checks (it refuses any other)."""
        if api == "Variable":
            args = bind_arguments(call, ("initial_value", "trainable", "name", "dtype"))
            start = args and args.get("initial_value")
            return bool(start) and is_literal_int(start[1].value, 0) and _not_trained(args)
        if api != "get_variable":
            return False
        args = bind_arguments(call, GET_VARIABLE)
        if (args is None or set(args) - {"name", "shape", "dtype", "initializer", "trainable"}
                or not ("trainable" in args and _not_trained(args))):  # get_variable's dtype is float32 by default
            return False
        shape, start = args.get("shape"), args.get("initializer")
        return (shape is not None and isinstance(shape[1].value, (cst.List, cst.Tuple)) and not shape[1].value.elements
                and start is not None and isinstance(start[1].value, cst.Call)
                and self.api(start[1].value.func) in ZERO_INITIALIZERS
                and all(is_literal_int(arg.value, 0) for arg in start[1].value.args))

    def _variable(self, graph: Graph, target: str, call: cst.Call) -> None:
        args = bind_arguments(call, GET_VARIABLE)
        if args is None or not {"name", "shape"} <= set(args) or set(args) - {"name", "shape", "dtype", "initializer",
                                                                               "partitioner"}:
            raise Unsupported(call, "get_variable is migrated with a name, a shape, a dtype, an initializer and a "
                                    "partitioner; regularizers and other arguments are not yet")
        if "partitioner" in args:
            self._partitioner(graph, args["partitioner"][1].value)
        else:
            graph.unpartitioned.append(call)
        # get_variable's default initializer: TF1's glorot_uniform, which TF2 still has as compat.v1.
        initializer = (self.code(args["initializer"][1].value) if "initializer" in args
                       else "tf.compat.v1.glorot_uniform_initializer()")
        dtype = f", dtype={self.code(args['dtype'][1].value)}" if "dtype" in args else ""
        shape, name = self.code(args["shape"][1].value), self.code(args["name"][1].value)
        graph.variables.append(f"{target} = tf.Variable({initializer}({shape}{dtype}), name={name})")
        graph.variable_names.append(target)
        graph.tracked.append(target)
        graph.tf1_names[self._unique(self.tf1_names.variable(args["name"][1].value))] = target

    def _variable_name(self, api: str | None, call: cst.Call) -> str | None:
        """TF1's name (code) of `get_variable(name, ...)` or `Variable(..., name=...)`, None if not a string."""
        if api == "get_variable":
            args = bind_arguments(call, GET_VARIABLE)
            return self._unique(self.tf1_names.variable(args["name"][1].value) if args and "name" in args else None)
        args = bind_arguments(call, ("initial_value", "trainable", "collections", "validate_shape", "caching_device",
                                     "name"))
        return self._unique(self.tf1_names.variable(args["name"][1].value if args and "name" in args
                                                    else cst.SimpleString('"Variable"')))

    def _unique(self, code: str | None) -> str | None:
        """The name (code) TF1's graph gave a variable asking for ``code``: made unique as Graph.unique_name did
        (`Variable`, `Variable_1`, ...; case aside); a name not written as a string is taken as it is."""
        literal = cst.parse_expression(code) if code is not None else None
        if not isinstance(literal, cst.SimpleString):
            return code
        name = literal.evaluated_value
        key = name.lower()
        i = self.names_in_use.get(key, 0)
        self.names_in_use[key] = i + 1
        if i == 0:
            return code
        base = key
        while key in self.names_in_use:
            key, i = f"{base}_{i}", i + 1
        self.names_in_use[key] = 1
        return f'"{name}_{i - 1}"'

    def _partitioner(self, graph: Graph, node: cst.BaseExpression) -> None:
        """A get_variable's partitioner (made TF2's by TFM201-203) becomes the strategy's, for every variable."""
        api = self.api(node.func) if isinstance(node, cst.Call) else None
        if not (api or "").startswith("distribute.experimental.partitioners."):
            raise Unsupported(node, "a partitioner other than the three compat.v1 ones along axis 0 (TFM201-203)")
        if graph.partitioner not in (None, self.code(node)):
            raise Unsupported(node, "two different partitioners: ParameterServerStrategy takes one for every "
                                    "variable; choose one, or write a Partitioner that decides by shape")
        graph.partitioner = self.code(node)

    def _optimizer(self, graph: Graph, target: str, call: cst.Call,
                   spelled: Callable[[cst.CSTNode], cst.CSTNode] | None = None) -> None:
        """``spelled``: how the call is written in the migrated program (of a training function: with the graph's
        arguments)."""
        if self.api(call.func) == synchronous.API:
            self._sync_replicas(graph, target, call)
            return
        try:
            code = keras_optimizers.optimizer(self.api(call.func), (spelled or self.spelled)(call))
        except keras_code.NoKerasEquivalent as problem:
            raise Unsupported(call, str(problem)) from None
        if code.safety.value == "numeric":
            graph.notes.append(("TFM106", call, code.why))
        graph.optimizer, graph.optimizer_name = f"{target} = {code.code}", target
        graph.after_optimizer = code.after_compile
        graph.slots = tf1_slots(self.api(call.func), call, keras_momentum=True)

    def _sync_replicas(self, graph: Graph, target: str, call: cst.Call, runtime: frozenset[str] = frozenset()
                       ) -> tuple[str, str] | None:
        """`SyncReplicasOptimizer(opt, ...)`: the optimizer it wraps, named as the program names the wrapper; what
        to check at run time of its arguments (``runtime``: names computed then)."""
        wrapped, check = synchronous.wrapped_optimizer(call, self.code, runtime)
        if isinstance(wrapped, cst.Name) and wrapped.value == graph.optimizer_name:
            graph.optimizer = f"{target} = {graph.optimizer.split(' = ', 1)[1]}"
        elif isinstance(wrapped, cst.Call) and (self.api(wrapped.func) or "").startswith("train."):
            self._optimizer(graph, target, wrapped)
        else:
            raise Unsupported(wrapped, "SyncReplicasOptimizer of an optimizer made in the graph is migrated")
        graph.optimizer_name, graph.sync_replicas = target, call
        return check

    def _flag(self, graph: Graph, statement: cst.If) -> bool:
        """`if FLAGS.sync_replicas:` wrapping the optimizer in a SyncReplicasOptimizer, then making its session
        machinery: synchronous training chosen at run time (synchronous.Flag)."""
        if graph.flag is not None:
            return synchronous.read_machinery(statement, graph.flag, graph.optimizer_name, self.api)
        found = synchronous.flagged_optimizer(statement, graph.optimizer_name, self.api, self.spelled)
        if found is None:
            return False
        graph.flag, wrapper = found
        target, call = single_assign(wrapper)
        graph.flag.check = self._sync_replicas(graph, target, call, synchronous.setup_names(graph.flag))
        return True

    def _is_step(self, api: str | None, call: cst.Call) -> bool:
        return api in GLOBAL_STEP or self._is_step_counter(api, call)

    def _training(self, graph: Graph, statement, call: cst.Call, found: training_functions.TrainingFunction) -> None:
        """`train_op = training(loss, rate)`: its optimizer, made with the graph's arguments, minimizing the graph's
        loss; the step counted by the optimizer (training_functions.py)."""
        assign = single_assign(statement)
        used = f"`{first_line(call)}` in the graph"
        if assign is None or graph.optimizer_name is not None:
            raise Unsupported(statement, f"{used} makes an optimizer: migrated as `train_op = training(...)`, the "
                                         "graph's one optimizer")
        found.arguments = {name: self.spelled(value) for name, value in found.arguments.items()}
        args = bind_arguments(found.minimize, MINIMIZE)
        loss = found.arguments.get(args["loss"][1].value.value) if args and "loss" in args \
            and isinstance(args["loss"][1].value, cst.Name) else None
        step = args.get("global_step") if args else None
        if args is None or "var_list" in args or not isinstance(loss, cst.Name) or found.step is None \
                or step is None or not is_name(step[1].value, found.step[0]):
            raise Unsupported(found.minimize, f"{used}: minimize(loss, global_step=...) of a loss the graph names, "
                                              "over every variable, advancing the function's global step is migrated")
        self._optimizer(graph, found.optimizer[0], found.optimizer[1], lambda node: training_functions.substituted(
            self.spelled(node), found, graph.tensors, used))
        graph.step_name = self._variable_name(self.api(found.step[1].func), found.step[1]) or graph.step_name \
            if self.api(found.step[1].func) not in GLOBAL_STEP else graph.step_name
        graph.loss, graph.train_op = loss.value, assign[0]
        graph.summaries += found.summaries
        graph.training_functions.append(found.function)

    def _is_minimize(self, value, graph: Graph) -> bool:
        return (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
                and value.func.attr.value == "minimize" and is_name(value.func.value, graph.optimizer_name or ""))

    def _is_chained_minimize(self, value) -> bool:
        if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
                and value.func.attr.value == "minimize" and isinstance(value.func.value, cst.Call)):
            return False
        api = self.api(value.func.value.func) or ""
        return api.startswith("train.") and api.endswith("Optimizer")

    def _minimize(self, graph: Graph, target: str, call: cst.Call) -> None:
        args = bind_arguments(call, MINIMIZE)
        if args is None or "var_list" in args or not isinstance(args.get("loss", (0, cst.Arg(cst.Name("_"))))[1].value,
                                                                cst.Name):
            raise Unsupported(call, "minimize(loss, global_step=...) of a named loss over every variable is migrated")
        step = args.get("global_step")
        if step is None or not is_name(step[1].value, graph.global_step or ""):
            raise Unsupported(call, "minimize() must advance the global step (global_step=...)")
        graph.loss, graph.train_op = args["loss"][1].value.value, target

    def _computation(self, graph: Graph, statement, value) -> None:
        """Ops of tensors: kept as they are, in the step. Anything making variables stays manual."""
        for node in subtree(value):
            api = self.api(node.func) if isinstance(node, cst.Call) else None
            if api is None:
                continue
            if api.startswith("contrib.") and ("regularizer" in api or "initializer" in api):
                raise Unsupported(node, f"{api} (tf.contrib, gone in TF 2) in the graph's computation: not migrated "
                                        "yet; use its keras.regularizers / keras.initializers counterpart by hand")
            if api.startswith(("layers.", "keras.layers.", "contrib.")) or api in ("get_variable", "variable_scope"):
                raise Unsupported(node, f"{api} creates variables inside the graph's computation: not migrated yet; "
                                        "create them (or Keras layers) in the strategy's scope by hand")
        graph_calls.check_calls(value, self.module, self.api)
        graph.computation.append(self.code(statement).strip())
        graph.computed += _unpacked(statement) or [single_assign(statement)[0]]

    def _model(self, graph: Graph, statement, call: cst.Call, function: cst.FunctionDef,
               home: model_modules.OtherHome | None = None) -> None:
        """`a, b = build(x)`, a function of the module making variables: a tf.Module made in the strategy's
        scope (of the function's name), called in the step; the placeholders it returns are the step's."""
        name = function.name.value
        module, api, spelled = (home.module, home.module.api, home.spelled) if home else (
            self.module, self.api, self.spelled)
        model = model_functions.read(call, function, module, api, home.uses if home else self.module.names[name] - 1)
        if home is not None:
            home.check(model)
        if module.names[model.class_name]:
            raise Unsupported(call, f"`{first_line(call)}` in the graph makes variables: its function becomes the "
                                    f"tf.Module `{model.class_name}`, a name the module already has")
        assign = single_assign(statement)
        targets = _unpacked(statement) or ([assign[0]] if assign else [])
        if len(targets) != len(model.returned):
            raise Unsupported(statement, f"`{first_line(statement)}` in the graph: its function makes variables and "
                                         f"returns {len(model.returned)} values; bind each to a name")
        fed = {local: target for local, target in zip(model.returned, targets) if local is not None}
        built = model_functions.arguments(model, call, model.built_from, self.code)
        graph.variables.append(f"{name} = {home.prefix if home else ''}{model.class_name}({built})")
        graph.variable_names.append(f"*{name}.trainable_variables")
        graph.tracked.append(name)
        for variable, _, made in model.variables:
            scopes = self.tf1_names.scopes  # a name scope names TF1's Variables
            self.tf1_names.scopes = (*scopes, *([model.scopes[variable]] if variable in model.scopes else []))
            tf1_name = self._variable_name("Variable", made)
            self.tf1_names.scopes = scopes
            literal = tf1_name is not None and isinstance(cst.parse_expression(tf1_name), cst.SimpleString)
            graph.tf1_names[tf1_name if literal else None] = f"{name}.{variable}"
        for local, placeholder in model.placeholders.items():
            self._assignment(graph, statement, fed[local], placeholder)
        fed_here = [fed[local] for local in model.placeholders]
        arguments = model_functions.arguments(model, call, model.called_with, self.code, fed_here)
        graph.computation.append(f"{', '.join(targets)} = {name}({arguments})")
        graph.computed += [target for target in targets if target not in fed_here]
        graph.models.append((function, model_functions.module_class(model, spelled, module.indent), home))

    # -- input: a tf.data iterator ----------------------------------------------------------

    def _iterator(self, value) -> str | None:
        """The dataset name of `dataset.make_one_shot_iterator()` / `tf.data.make_one_shot_iterator(dataset)`."""
        if not isinstance(value, cst.Call):
            return None
        if self.api(value.func) in ITERATOR_FUNCTIONS and len(value.args) == 1 and isinstance(value.args[0].value,
                                                                                               cst.Name):
            return value.args[0].value.value
        if isinstance(value.func, cst.Attribute) and value.func.attr.value == "make_one_shot_iterator" \
                and isinstance(value.func.value, cst.Name) and not value.args:
            return value.func.value.value
        return None

    def _is_dataset(self, value) -> bool:
        """A tf.data pipeline: `tf.data.X(...)...` or `dataset.map(...)` of the dataset being built."""
        while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute):
            if (self.api(value.func) or "").startswith("data."):
                return True
            value = value.func.value
        return isinstance(value, cst.Name) and value.value == "dataset"

    def _get_next(self, graph: Graph, statement, value) -> bool:
        """`x, y = iterator.get_next()` (or of `dataset.make_one_shot_iterator()`): the step's batch."""
        if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
                and value.func.attr.value == "get_next" and not value.args):
            return False
        source_of = value.func.value
        if self._iterator(source_of) is not None:
            graph.dataset = self._iterator(source_of)
        elif (pipeline := inputs.iterated(source_of, self.api)) is not None and graph.dataset is None:
            graph.dataset, bound = inputs.bound(pipeline, graph.dataset_statements)
            graph.dataset_statements.append(bound)
        elif not (isinstance(source_of, cst.Name) and source_of.value == graph.iterator):
            raise Unsupported(value, "get_next() of an iterator other than a one-shot iterator of the graph's dataset "
                                     "(initializable iterators run an initializer in the session): migrate it by hand")
        self._batch(graph, statement)
        return True

    def _batch(self, graph: Graph, statement) -> None:
        """`x, y = <the iterator's next batch>`: the step's inputs."""
        target = statement.body[0].targets[0].target if isinstance(statement.body[0], cst.Assign) \
            and len(statement.body[0].targets) == 1 else None
        names = [e.value for e in target.elements] if isinstance(target, (cst.Tuple, cst.List)) else [target]
        if not all(isinstance(name, cst.Name) for name in names):
            raise Unsupported(statement, "get_next()'s batch must be assigned to names")
        graph.elements = [name.value for name in names]
        graph.packed = isinstance(target, (cst.Tuple, cst.List))
        for name in graph.elements:
            graph.shapes[name] = f"{name}_spec.shape"

    def _input_function(self, graph: Graph, statement, call: cst.Call, found: tuple) -> None:
        """`x, y = read_examples(path, 100, epochs)`, a function of the module returning its pipeline's batches:
        it returns the pipeline now, the call building the per-worker dataset (input_functions.py)."""
        if graph.dataset is not None:
            raise Unsupported(call, "two iterators in the graph: one input is migrated")
        graph.dataset, bound = inputs.bound(call, graph.dataset_statements)
        graph.dataset_statements.append(bound)
        home, edits, elsewhere = found
        graph.input_call = call
        graph.iterated_elsewhere = elsewhere
        graph.returns += [(batches, pipeline, home) for batches, pipeline in edits]
        self._batch(graph, statement)

    def _into_dataset(self, graph: Graph, device: cst.With, until) -> None:
        """What the graph computes for its input alone (`files = tf.gfile.Glob(...)`, `num_epochs = ...`): moved
        out of the step into the per-worker dataset function, in the order of the graph."""
        statements = list(self._statements(device, until))
        moved = inputs.computed_for(graph.dataset_statements, {
            assign[0]: s for s in statements
            if (assign := single_assign(s)) is not None and self.code(s).strip() in graph.computation})
        for statement in moved:
            graph.computation.remove(self.code(statement).strip())
            graph.computed.remove(single_assign(statement)[0])
            graph.input_names.append(single_assign(statement)[0])
        graph.dataset_statements = inputs.in_order([*moved, *graph.dataset_statements], statements,
                                                   graph.tensors - {*graph.input_names} | {*graph.variable_names})

    # -- layers --------------------------------------------------------------------------------

    def _dense(self, value) -> tuple[str, cst.Call, cst.BaseExpression] | None:
        """(api, the layer's constructor call, its input) of `tf.layers.dense(x, ...)` / `Dense(...)(x)`."""
        if not isinstance(value, cst.Call):
            return None
        if DENSE.get(self.api(value.func)):
            return self.api(value.func), value, None
        if isinstance(value.func, cst.Call) and DENSE.get(self.api(value.func.func)) is False and len(value.args) == 1:
            return self.api(value.func.func), value.func, value.args[0].value
        return None

    def _layer(self, graph: Graph, statement, target: str, value: cst.Call) -> None:
        api, constructor, inputs = self._dense(value)
        if api == "keras.layers.Dense":
            code = "keras." + self.code(constructor).split("keras.", 1)[1]
        else:
            try:
                translated, inputs = keras_code.layer(api, self.spelled(constructor), functional=inputs is None)
            except keras_code.NoKerasEquivalent as problem:
                raise Unsupported(value, str(problem)) from None
            code = translated.code
        if not isinstance(inputs, cst.Name) or inputs.value not in graph.shapes:
            raise Unsupported(value, "a layer whose input has no static shape in the graph (a placeholder's, another "
                                     "layer's, the iterator's): build it in the strategy's scope by hand")
        units = bind_arguments(constructor, ("units",) if api != "layers.dense" else ("inputs", "units"))
        layer, shape = f"{target}_layer", graph.shapes[inputs.value]
        arguments = {arg.keyword.value: arg.value for arg in constructor.args if arg.keyword} \
            if api == "keras.layers.Dense" else keras_code.layer_arguments(api, constructor, functional=DENSE[api])
        scope = self.tf1_names.layer(api, arguments)  # a string: no loops in a graph
        for variable in self.tf1_names.variables(api, arguments) if scope is not None else ():
            graph.tf1_names[f"{scope[:-1]}/{variable}\""] = f"{layer}.{variable}"
        graph.variables += [f"{layer} = {code}", f"{layer}.build({shape})"]
        graph.variable_names.append(f"*{layer}.trainable_variables")
        graph.tracked.append(layer)
        graph.shapes[target] = _dense_output(shape, self.code(units["units"][1].value)) \
            if units and "units" in units else f"{layer}.compute_output_shape({shape})"
        graph.computation.append(f"{target} = {layer}({inputs.value})")
        graph.computed.append(target)


def _unpacked(statement) -> list[str]:
    """The names of `a, b = value` (a tuple or list of names), else none."""
    small = statement.body[0] if statement_value(statement) is not None else None
    target = small.targets[0].target if isinstance(small, cst.Assign) and len(small.targets) == 1 else None
    names = target.elements if isinstance(target, (cst.Tuple, cst.List)) else ()
    return [element.value.value for element in names] if names and all(
        isinstance(element, cst.Element) and isinstance(element.value, cst.Name) for element in names) else []


def _dense_output(shape: str, units: str) -> str:
    """A Dense layer's output shape: its input's with the last axis `units`."""
    try:
        node = cst.parse_expression(shape)
    except cst.ParserSyntaxError:
        node = None
    if isinstance(node, (cst.List, cst.Tuple)) and node.elements:
        head = [cst.Module([]).code_for_node(e.value) for e in node.elements[:-1]]
        return f"[{', '.join([*head, units])}]"
    return f"[*{shape}[:-1], {units}]"
