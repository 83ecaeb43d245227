"""TFM103-104: a between-graph parameter-server program becomes a ClusterCoordinator program.

TFM103 between-graph-program (numeric). The TF1 shape: each task starts a
``Server`` for its ``job_name`` / ``task_index``, ps tasks ``join()``, every worker builds
the graph under ``tf.device(replica_device_setter(...))`` (placeholders, variables, the
loss, an optimizer and ``minimize``) and runs ``train_op`` in a loop of a
``MonitoredTrainingSession`` until a ``StopAtStepHook``. In TF2 one client drives the
cluster: TF1's chief (the ``is_chief`` worker) builds a ``ParameterServerStrategy`` over
the same cluster (``SimpleClusterResolver``), creates the variables and the optimizer in
its scope, and schedules each step, a ``tf.function`` running the TF1 ops under a
``GradientTape``, on the workers with a ``ClusterCoordinator``; the other workers serve
it. The loop stays the program's own loop, the placeholders' values become the step's
arguments, and the loss is reported as the loop reported it. The command line stays as
it was, so the launch scripts still start every task. Float results may differ in the
last bits: prove it with ``tf-migrate parity``.

Before::

    server = tf1.train.Server(cluster, job_name=flags.job_name, task_index=flags.task_index)
    if flags.job_name == "ps":
      server.join()
      return
    with tf1.device(tf1.train.replica_device_setter(cluster=cluster)):
      x = tf1.placeholder(tf1.float32, [None, 3])
      y = tf1.placeholder(tf1.float32, [None, 1])
      weights = tf1.get_variable("weights", [3, 1])
      global_step = tf1.train.get_or_create_global_step()
      loss = tf1.losses.mean_squared_error(y, tf1.matmul(x, weights))
      train_op = tf1.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=global_step)
    hooks = [tf1.train.StopAtStepHook(last_step=20)]
    with tf1.train.MonitoredTrainingSession(master=server.target, is_chief=flags.task_index == 0,
                                            hooks=hooks) as sess:
      while not sess.should_stop():
        _, loss_value = sess.run([train_op, loss], feed_dict={x: batch_x, y: batch_y})

After::

    server = tf.distribute.Server(cluster, job_name=flags.job_name, task_index=flags.task_index)
    if flags.job_name == "ps":
      server.join()
      return
    if not (flags.task_index == 0):
      server.join()  # TF1's chief drives the cluster's training; the other workers serve it
    strategy = tf.distribute.experimental.ParameterServerStrategy(
        tf.distribute.cluster_resolver.SimpleClusterResolver(cluster, rpc_layer="grpc"))
    with strategy.scope():
      weights = tf.Variable(tf1.glorot_uniform_initializer()([3, 1]), name="weights")
      optimizer = keras.optimizers.legacy.SGD(learning_rate=0.1)
    coordinator = tf.distribute.coordinator.ClusterCoordinator(strategy)

    @tf.function
    def train_step(x, y):
      ...  # the loss under a GradientTape, apply_gradients, on a worker: strategy.run
    while int(optimizer.iterations) < 20:
      loss_value = coordinator.schedule(train_step, args=(batch_x, batch_y)).fetch()

TFM105 between-graph-partitioner (exact). A ``get_variable``'s partitioner moves onto the
strategy, which applies it to every variable the program creates: reported at the first
variable made without one, now split too (placement only: the numbers are the same).

TFM106 between-graph-numerics (numeric). A piece of the graph whose Keras counterpart differs
from TF1 in a documented way (an optimizer, rewrites/keras_equivalents.py): the message says how.

TFM104 between-graph-manual (manual). A program in a shape not migrated safely
(``SyncReplicasOptimizer``, ``Supervisor`` or a plain ``Session``, queue runners, hooks
other than ``StopAtStepHook``, ``tf.layers`` in the graph, partitioners other than one
axis-0 partitioner of ``get_variable`` (which moves onto the strategy), graph
collections, other uses of the session, ...): left untouched, the finding points at the
construct and says what to do.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from rewrites import keras_equivalents as keras_code
from rewrites.base import TFCodemod
from rewrites.keras_equivalents import PARTITIONER_FOR_EVERY_VARIABLE
from rewrites.syntax import (Unsupported, bind_arguments, first_line, is_name, list_elements, single_assign, source,
                             statement_value, subtree)

SESSION = "train.MonitoredTrainingSession"
GENERATED_NAMES = ("jobs", "resolver", "strategy", "coordinator", "train_step")  # and `optimizer`, for one made in its minimize call
SERVERS = {"train.Server", "distribute.Server"}
DEVICE_SETTER = "train.replica_device_setter"
GLOBAL_STEP = {"train.get_or_create_global_step", "train.get_global_step", "train.create_global_step"}
GRAPH_MODE = {"disable_eager_execution", "disable_v2_behavior"}
MONITORED_TRAINING_SESSION = ("master", "is_chief", "checkpoint_dir", "scaffold", "hooks", "chief_only_hooks",
                              "save_checkpoint_secs", "save_summaries_steps", "save_summaries_secs", "config",
                              "stop_grace_period_secs", "log_step_count_steps", "max_wait_secs",
                              "save_checkpoint_steps", "summary_dir", "save_graph_def")
SERVER = ("server_or_cluster_def", "job_name", "task_index", "protocol", "config", "start")
GET_VARIABLE = ("name", "shape", "dtype", "initializer", "regularizer", "trainable", "collections", "caching_device",
                "partitioner")
PLACEHOLDER = ("dtype", "shape", "name")
MINIMIZE = ("loss", "global_step", "var_list")
CHECKPOINTS_LEFT_TO_TF1 = ("checkpoint_dir", "save_checkpoint_secs", "save_checkpoint_steps")
ADVICE = {
    "train.SyncReplicasOptimizer": "ParameterServerStrategy trains asynchronously and has no synchronous-replicas "
    "optimizer; keep asynchronous updates, or move to MultiWorkerMirroredStrategy, by hand",
    "train.Supervisor": "a Supervisor's session: move to MonitoredTrainingSession first, or migrate by hand",
    "train.start_queue_runners": "queue runners feed a TF1 graph: feed the data as the step's arguments or a "
    "per-worker tf.data dataset by hand",
    "get_collection": "graph collections have no place in TF2 code: pass the values themselves",
}


@dataclass
class Graph:
    """What the worker's graph holds, read from the device-setter block."""

    placeholders: list[str] = field(default_factory=list)
    variables: list[str] = field(default_factory=list)         # TF2 code creating them, in order
    variable_names: list[str] = field(default_factory=list)
    computation: list[cst.BaseStatement] = field(default_factory=list)  # run in the step, under the tape
    global_step: str | None = None
    optimizer: str = ""
    optimizer_name: str | None = None
    after_optimizer: tuple[str, ...] = ()
    partitioner: str | None = None               # the TF2 partitioner one get_variable used: the strategy's
    unpartitioned: list[cst.Call] = field(default_factory=list)  # get_variables without one
    loss: str | None = None
    train_op: str | None = None
    notes: list[tuple[str, cst.CSTNode, str]] = field(default_factory=list)


class Rewrite(TFCodemod):
    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        updated_node = super().leave_Module(original_node, updated_node)
        found = _session_statement(original_node, self._api)
        if found is None:
            return updated_node
        block, session = found
        try:
            conflict = self.generated_import_conflict(original_node)
            if conflict is not None:
                raise Unsupported(*conflict)
            self._check_generated_names_are_free(block)
            new_block, notes = self._migrated_block(block, session)
        except Unsupported as problem:
            self.report("TFM104", problem.node, f"between-graph program left as it is: {problem}")
            return updated_node
        # TF2 runs eagerly: TF1's switch to graph mode goes.
        module = original_node.with_changes(body=[s for s in original_node.body if not self._enters_graph_mode(s)])
        module = module.deep_replace(block, new_block)
        self.report("TFM103", session, "between-graph training -> TF1's chief drives the cluster with a "
                                       "ClusterCoordinator of ParameterServerStrategy, the other workers serve; "
                                       "prove it with tf-migrate parity")
        for rule, node, message in notes:
            self.report(rule, node, message)
        self.add_generated_imports()
        return module

    def _check_generated_names_are_free(self, block) -> None:
        taken = next((node for node in subtree(block) if isinstance(node, cst.Name) and node.value in GENERATED_NAMES),
                     None)
        if taken is not None:
            raise Unsupported(taken, f"the migrated program defines `{taken.value}`, which this code already uses")

    def _api(self, node: cst.CSTNode) -> str | None:
        name = self.tf_name(node)
        return name.api if name else None

    # -- the block holding the session ---------------------------------------------

    def _migrated_block(self, block: cst.IndentedBlock | cst.Module, session: cst.With):
        self._session_only = self._only_for_the_session(block, session)
        statements = list(block.body)
        index = statements.index(session)
        device = next((s for s in reversed(statements[:index]) if self._is_device_setter(s)), None)
        if device is None:
            raise Unsupported(session, "no `with tf.device(replica_device_setter(...))` graph before the session "
                                       "in the same function: migrate the graph by hand")
        for statement in statements:
            self._refuse_graph_mode_leftovers(statement)
        graph = self._graph(device)
        server, cluster, protocol = self._server(statements[:statements.index(device)], session)
        is_chief, last_step = self._session_options(session)
        loop = self._loop(session, graph, last_step)
        self._check_graph_stays_in_the_step(statements, device, graph)
        body = []
        for statement in statements:
            seeded = self._seed(statement)
            if statement is device:
                body += self._serve_unless_chief(server, is_chief, statement)
                body += self._strategy(graph, cluster, protocol)
            elif statement is session:
                body += loop
            elif seeded is not None:
                body.append(seeded)
            elif not (self._enters_graph_mode(statement) or statement in self._session_only.values()):
                body.append(statement)
        return block.with_changes(body=body), graph.notes

    def _check_graph_stays_in_the_step(self, statements: list, device: cst.With, graph: Graph) -> None:
        """The graph's tensors live in the step function now: no code but the session's run may name them."""
        tensors = {*graph.placeholders, graph.loss, graph.train_op, graph.global_step,
                   *(single_assign(statement)[0] for statement in graph.computation)}
        skipped = {id(node) for node in subtree(self._run_statement)}
        for statement in statements:
            if statement is device:
                continue
            skipped |= {id(node.keyword) for node in subtree(statement) if isinstance(node, cst.Arg) and node.keyword}
            used = next((node for node in subtree(statement) if isinstance(node, cst.Name) and node.value in tensors
                         and id(node) not in skipped), None)
            if used is not None:
                raise Unsupported(used, f"`{used.value}`, a tensor of the TF1 graph, is used outside the session's "
                                        "run: it only exists in the step function now; migrate that use by hand")

    def _is_device_setter(self, statement) -> bool:
        if not (isinstance(statement, cst.With) and len(statement.items) == 1):
            return False
        call = statement.items[0].item
        return (isinstance(call, cst.Call) and self._api(call.func) == "device" and len(call.args) == 1
                and isinstance(call.args[0].value, cst.Call) and self._api(call.args[0].value.func) == DEVICE_SETTER)

    def _enters_graph_mode(self, statement) -> bool:
        value = statement_value(statement)
        return isinstance(value, cst.Call) and self._api(value.func) in GRAPH_MODE

    def _seed(self, statement) -> cst.BaseStatement | None:
        """`tf1.set_random_seed(s)` -> `tf.random.set_seed(s)`, TF2's global seed."""
        value = statement_value(statement)
        if isinstance(value, cst.Call) and self._api(value.func) in ("set_random_seed", "random.set_random_seed"):
            return statement.with_deep_changes(statement.body[0], value=value.with_changes(
                func=cst.parse_expression("tf.random.set_seed")))
        return None

    def _refuse_graph_mode_leftovers(self, statement) -> None:
        for node in subtree(statement):
            if isinstance(node, cst.Call) and self._api(node.func) in ADVICE:
                api = self._api(node.func)
                raise Unsupported(node, f"{api.rpartition('.')[2]}: {ADVICE[api]}")

    # -- roles ----------------------------------------------------------------------

    def _server(self, before: list, session: cst.With) -> tuple[str, str, str]:
        """(the server's name, its cluster as code, its protocol) from `server = Server(cluster, ...)`."""
        master = bind_arguments(session.items[0].item, MONITORED_TRAINING_SESSION) or {}
        target = master.get("master", (None, None))[1]
        name = target.value.value.value if (
            target is not None and isinstance(target.value, cst.Attribute) and target.value.attr.value == "target"
            and isinstance(target.value.value, cst.Name)) else None
        for statement in before:
            assign = single_assign(statement)
            if assign and assign[0] == name and isinstance(assign[1], cst.Call) and self._api(assign[1].func) in SERVERS:
                args = bind_arguments(assign[1], SERVER)
                if args is None or "server_or_cluster_def" not in args:
                    raise Unsupported(assign[1], "a Server whose cluster cannot be read statically")
                cluster = args["server_or_cluster_def"][1].value
                protocol = args["protocol"][1].value if "protocol" in args else cst.SimpleString('"grpc"')
                return name, source(cluster), source(protocol)
        raise Unsupported(session, "MonitoredTrainingSession(master=server.target) of a `server = Server(cluster, "
                                   "...)` in the same function is migrated; other masters are not")

    def _serve_unless_chief(self, server: str, is_chief: cst.BaseExpression, device: cst.With) -> list:
        chief = source(is_chief)
        code = (f"if not {chief if is_chief.lpar else f'({chief})'}:\n"
                f"    # TF1's chief drives the cluster's training now; the other workers serve it.\n"
                f"    {server}.join()\n")
        statement = cst.parse_statement(code)
        return [statement.with_changes(leading_lines=device.leading_lines)]

    def _session_options(self, session: cst.With) -> tuple[cst.BaseExpression, cst.BaseExpression]:
        """(is_chief, the StopAtStepHook's last step)."""
        call = session.items[0].item
        args = bind_arguments(call, MONITORED_TRAINING_SESSION)
        if args is None:
            raise Unsupported(call, "MonitoredTrainingSession arguments that cannot be read statically")
        for name in CHECKPOINTS_LEFT_TO_TF1 + ("scaffold", "chief_only_hooks"):
            if name in args:
                raise Unsupported(args[name][1], f"MonitoredTrainingSession({name}=...) is not migrated yet: add a "
                                                 "tf.train.CheckpointManager or the hooks' work by hand")
        if "is_chief" not in args:
            raise Unsupported(call, "MonitoredTrainingSession without is_chief: say which worker is TF1's chief")
        last_step = None
        hooks = args["hooks"][1].value if "hooks" in args else None
        if isinstance(hooks, cst.Name) and hooks.value in self._session_only:
            hooks = single_assign(self._session_only[hooks.value])[1]
        for hook in list_elements(hooks):
            if not (isinstance(hook, cst.Call) and self._api(hook.func) == "train.StopAtStepHook"):
                raise Unsupported(hook, "a hook other than StopAtStepHook(last_step=...): rewrite it as code around "
                                        "the migrated loop by hand")
            bound = bind_arguments(hook, ("num_steps", "last_step"))
            if bound is None or set(bound) != {"last_step"}:
                raise Unsupported(hook, "StopAtStepHook(num_steps=...) counts from wherever a run resumed: give "
                                        "last_step")
            last_step = bound["last_step"][1].value
        if last_step is None:
            raise Unsupported(call, "no StopAtStepHook(last_step=...): say when training stops")
        return args["is_chief"][1].value, last_step

    def _only_for_the_session(self, block, session: cst.With) -> dict[str, cst.CSTNode]:
        """name -> `name = value` statements of the block that only make an argument of the session (hooks,
        a ConfigProto): they go with it."""
        names = {arg.value.value for arg in session.items[0].item.args if isinstance(arg.value, cst.Name)}
        found = {}
        for statement in block.body:
            assign = single_assign(statement)
            if assign and assign[0] in names and len(_uses(block, assign[0])) == 2:  # bound here, used by the session
                found[assign[0]] = statement
        return found

    # -- the graph ----------------------------------------------------------------------

    def _graph(self, device: cst.With) -> Graph:
        graph = Graph()
        for statement in device.body.body:
            assign = single_assign(statement)
            if assign is None:
                raise Unsupported(statement, f"`{first_line(statement)}` in the graph: only assignments are migrated")
            target, value = assign
            api = self._api(value.func) if isinstance(value, cst.Call) else None
            if api == "placeholder":
                graph.placeholders.append(target)
            elif api == "get_variable":
                self._variable(graph, target, value)
            elif api == "Variable":
                graph.variables.append(f"{target} = {source(value.with_changes(func=cst.parse_expression('tf.Variable')))}")
                graph.variable_names.append(target)
            elif api in GLOBAL_STEP:
                graph.global_step = target
            elif api is not None and api.startswith("train.") and api.endswith("Optimizer"):
                self._optimizer(graph, target, value)
            elif self._is_minimize(value, graph):
                self._minimize(graph, target, value)
            elif self._is_chained_minimize(value):  # `train_op = tf1.train.XOptimizer(...).minimize(loss, ...)`
                self._optimizer(graph, "optimizer", value.func.value)
                self._minimize(graph, target, value)
            else:
                self._computation(graph, statement, value)
        if not (graph.loss and graph.train_op and graph.variables):
            raise Unsupported(device, "the graph needs variables, a loss and `train_op = optimizer.minimize(loss)`")
        if graph.partitioner is not None:
            lookup = next((node for statement in graph.computation for node in subtree(statement)
                           if isinstance(node, cst.Call) and self._api(node.func) == "nn.embedding_lookup"), None)
            if lookup is not None:
                raise Unsupported(lookup, "embedding_lookup on partitioned variables: TF1 looked ids up \"mod\", a "
                                          "TF2 sharded variable \"div\"; use a Keras Embedding, by hand")
            if graph.unpartitioned:
                graph.notes.append(("TFM105", graph.unpartitioned[0], PARTITIONER_FOR_EVERY_VARIABLE))
        return graph

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
        initializer = (source(args["initializer"][1].value) if "initializer" in args
                       else "tf.compat.v1.glorot_uniform_initializer()")
        dtype = f", dtype={source(args['dtype'][1].value)}" if "dtype" in args else ""
        shape, name = source(args["shape"][1].value), source(args["name"][1].value)
        graph.variables.append(f"{target} = tf.Variable({initializer}({shape}{dtype}), name={name})")
        graph.variable_names.append(target)

    def _partitioner(self, graph: Graph, node: cst.BaseExpression) -> None:
        """A get_variable's partitioner (made TF2's by TFM201-203) becomes the strategy's, for every variable."""
        api = self._api(node.func) if isinstance(node, cst.Call) else None
        if not (api or "").startswith("distribute.experimental.partitioners."):
            raise Unsupported(node, "a partitioner other than the three compat.v1 ones along axis 0 (TFM201-203)")
        if graph.partitioner not in (None, source(node)):
            raise Unsupported(node, "two different partitioners: ParameterServerStrategy takes one for every "
                                    "variable; choose one, or write a Partitioner that decides by shape")
        graph.partitioner = source(node)

    def _optimizer(self, graph: Graph, target: str, call: cst.Call) -> None:
        api = self._api(call.func)
        try:
            code = keras_code.optimizer(api, call)
        except keras_code.NoKerasEquivalent as problem:
            raise Unsupported(call, str(problem)) from None
        if code.safety.value == "numeric":
            graph.notes.append(("TFM106", call, code.why))
        graph.optimizer, graph.optimizer_name = f"{target} = {code.code}", target
        graph.after_optimizer = code.after_compile

    def _is_minimize(self, value, graph: Graph) -> bool:
        return (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
                and value.func.attr.value == "minimize" and is_name(value.func.value, graph.optimizer_name or ""))

    def _is_chained_minimize(self, value) -> bool:
        if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
                and value.func.attr.value == "minimize" and isinstance(value.func.value, cst.Call)):
            return False
        api = self._api(value.func.value.func) or ""
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
            api = self._api(node.func) if isinstance(node, cst.Call) else None
            if api is not None and (api.startswith("layers.") or api in ("get_variable", "variable_scope")):
                raise Unsupported(node, f"{api} creates variables inside the graph's computation: not migrated yet; "
                                        "create them (or Keras layers) in the strategy's scope by hand")
        graph.computation.append(statement)

    # -- the TF2 program ------------------------------------------------------------------

    def _strategy(self, graph: Graph, cluster: str, protocol: str) -> list[cst.BaseStatement]:
        from templates import render

        after = [line.replace("model.trainable_variables", f"[{', '.join(graph.variable_names)}]")
                 for line in graph.after_optimizer]
        computation = [source(statement).strip() for statement in graph.computation]
        text = render("coordinator_step.py.j2", cluster=cluster, protocol=protocol, partitioner=graph.partitioner,
                      variables=graph.variables,
                      optimizer=graph.optimizer, after_optimizer=after, placeholders=graph.placeholders,
                      computation=computation, loss=graph.loss, variable_names=graph.variable_names,
                      arguments=_tuple(graph.placeholders))
        module = cst.parse_module(text)
        statements = list(module.body)
        statements[0] = statements[0].with_changes(leading_lines=[*module.header, *statements[0].leading_lines])
        # Blank lines without the block's indentation on them.
        return [statement.with_changes(leading_lines=[line.with_changes(indent=False) if not line.comment else line
                                                      for line in statement.leading_lines])
                for statement in statements]

    def _loop(self, session: cst.With, graph: Graph, last_step: cst.BaseExpression) -> list[cst.BaseStatement]:
        """The session's body, its `while not sess.should_stop():` stopping at last_step, its run scheduled."""
        name = session.items[0].asname.name.value if session.items[0].asname else None
        loops = [s for s in session.body.body if isinstance(s, cst.While)]
        if name is None or len(loops) != 1 or not self._is_should_stop(loops[0].test, name):
            raise Unsupported(session, "the session's body must hold one `while not sess.should_stop():` loop")
        loop = loops[0]
        runs = [s for s in loop.body.body if any(self._is_run(node, name) for node in subtree(s))]
        if len(runs) != 1:
            raise Unsupported(loop, "the loop must run the session exactly once per step")
        self._run_statement = runs[0]
        body = [self._scheduled(statement, name, graph) if statement is runs[0] else [statement]
                for statement in loop.body.body]
        condition = cst.parse_expression(f"int({graph.optimizer_name}.iterations) < {source(last_step)}")
        new_loop = loop.with_changes(test=condition, body=loop.body.with_changes(body=[s for b in body for s in b]))
        statements = [new_loop if s is loop else s for s in session.body.body]
        for statement in statements:
            uses = [node for node in subtree(statement) if is_name(node, name)]
            if uses:
                raise Unsupported(uses[0], f"`{name}` is used outside the one run of each step: migrate that by hand")
        comments = [line for line in session.leading_lines if line.comment]
        statements[0] = statements[0].with_changes(leading_lines=[cst.EmptyLine(indent=False), *comments])
        return statements

    def _is_should_stop(self, test, name: str) -> bool:
        return (isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not)
                and isinstance(test.expression, cst.Call) and not test.expression.args
                and isinstance(test.expression.func, cst.Attribute) and test.expression.func.attr.value == "should_stop"
                and is_name(test.expression.func.value, name))

    @staticmethod
    def _is_run(node, name: str) -> bool:
        return (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "run"
                and is_name(node.func.value, name))

    def _scheduled(self, statement, name: str, graph: Graph) -> list[cst.BaseStatement]:
        """`_, step, loss_value = sess.run([train_op, global_step, loss], feed_dict={x: ..., y: ...})`
        -> `loss_value = coordinator.schedule(train_step, args=(...)).fetch()` and `step = int(...)`."""
        value = statement_value(statement)
        if not (isinstance(value, cst.Call) and self._is_run(value, name)):
            raise Unsupported(statement, "the session's run must be a statement of its own")
        args = bind_arguments(value, ("fetches", "feed_dict", "options", "run_metadata"))
        if args is None or set(args) != {"fetches", "feed_dict"}:
            raise Unsupported(value, "run(fetches, feed_dict={...}) is migrated")
        feeds = self._feeds(args["feed_dict"][1].value, graph)
        fetches, targets = self._fetches(statement, args["fetches"][1].value)
        if graph.train_op not in fetches:
            raise Unsupported(value, "a run without the train_op")
        unknown = next((fetch for fetch in fetches if fetch not in (graph.train_op, graph.loss, graph.global_step)), None)
        if unknown is not None:
            raise Unsupported(value, f"run() fetches `{unknown}`: the train_op, the loss and the global step are migrated")
        kept = dict((fetch, target) for fetch, target in zip(fetches, targets) if target)
        # One step at a time, as the TF1 loop ran them: the loop's test reads the step count.
        schedule = f"coordinator.schedule(train_step, args={_tuple(feeds)}).fetch()"
        lines = [f"{kept[graph.loss]} = {schedule}" if graph.loss in kept else schedule]
        if graph.global_step in kept:
            lines.append(f"{kept[graph.global_step]} = int({graph.optimizer_name}.iterations)")
        statements = [cst.parse_statement(line) for line in lines]
        statements[0] = statements[0].with_changes(leading_lines=statement.leading_lines)
        return statements

    def _feeds(self, feed_dict, graph: Graph) -> list[str]:
        if not isinstance(feed_dict, cst.Dict):
            raise Unsupported(feed_dict, "feed_dict must be a dict written in the run")
        fed = {}
        for element in feed_dict.elements:
            if not (isinstance(element, cst.DictElement) and isinstance(element.key, cst.Name)):
                raise Unsupported(feed_dict, "feed_dict keys must be the graph's placeholders")
            fed[element.key.value] = source(element.value)
        if set(fed) != set(graph.placeholders):
            raise Unsupported(feed_dict, "feed_dict must feed every placeholder, and only them")
        return [fed[placeholder] for placeholder in graph.placeholders]

    def _fetches(self, statement, fetches) -> tuple[list[str], list[str | None]]:
        """The fetched names and the names each is assigned to (None: not kept)."""
        items = [e.value for e in fetches.elements] if isinstance(fetches, (cst.List, cst.Tuple)) else [fetches]
        if not all(isinstance(item, cst.Name) for item in items):
            raise Unsupported(fetches, "run() fetches must be names of the graph")
        small = statement.body[0]
        if isinstance(small, cst.Expr):
            targets = [None] * len(items)
        elif isinstance(fetches, (cst.List, cst.Tuple)):
            target = small.targets[0].target if len(small.targets) == 1 else None
            if not (isinstance(target, (cst.Tuple, cst.List)) and len(target.elements) == len(items)
                    and all(isinstance(e.value, cst.Name) for e in target.elements)):
                raise Unsupported(statement, "run()'s results must be unpacked into names, one per fetch")
            targets = [None if e.value.value == "_" else e.value.value for e in target.elements]
        else:
            target = small.targets[0].target if len(small.targets) == 1 else None
            if not isinstance(target, cst.Name):
                raise Unsupported(statement, "run()'s result must be assigned to a name")
            targets = [target.value]
        return [item.value for item in items], targets


def _session_statement(module: cst.Module, api) -> tuple[cst.IndentedBlock | cst.Module, cst.With] | None:
    """The `with MonitoredTrainingSession(...) as sess:` statement and the block holding it (module or a function)."""
    blocks = [module, *(s.body for s in module.body if isinstance(s, cst.FunctionDef))]
    for block in blocks:
        for statement in block.body:
            if (isinstance(statement, cst.With) and len(statement.items) == 1
                    and isinstance(statement.items[0].item, cst.Call) and api(statement.items[0].item.func) == SESSION):
                return block, statement
    return None


def _uses(code: cst.CSTNode, name: str) -> list[cst.Name]:
    """The Name nodes of ``name`` in the code, but not `f(name=...)` keywords."""
    keywords = {id(node.keyword) for node in subtree(code) if isinstance(node, cst.Arg) and node.keyword}
    return [node for node in subtree(code) if is_name(node, name) and id(node) not in keywords]


def _tuple(items: list[str]) -> str:
    return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"
