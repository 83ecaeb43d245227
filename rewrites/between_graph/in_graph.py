"""In-graph programs: the chief builds ops on the cluster's tasks itself (`with tf.device("/job:worker/task:0")`) and
runs them in a plain `tf.Session` on its server's target; the other tasks make their server and `join()` it.

TF2 runs such a graph eagerly: the serving tasks make their `tf.distribute.Server` where they join it, and the chief,
instead of serving, connects its eager context to the cluster as its own task
(`tf.config.experimental_connect_to_cluster(...)`, which starts the server at the chief's address) before it calls
the function building the graph. The ops run as they are made, on the devices named; `sess.run(t)` becomes
`t.numpy()`, the same values. `with tf.Graph().as_default():` goes, and a `replica_device_setter` (a device function,
which eager `tf.device` refuses) becomes the device it gives ops that are not variables: its `worker_device`.

Only a graph without state is migrated so: a variable, an optimizer, a placeholder or a random op (each
`sess.run` drew new numbers) stops the program with a TFM104 naming it.
"""

from __future__ import annotations

import sys

import libcst as cst

from rewrites.syntax import (Unsupported, bind_arguments, children, is_name, single_assign, root, source,
                             statement_value, subtree)

PLAIN = ("a plain `{session}` runs the cluster's graph: only a MonitoredTrainingSession or a Supervisor's session, or "
         "an in-graph program (ops placed on the tasks, no variables) run by the chief, is migrated; ")
SERVERS = {"train.Server", "distribute.Server"}
SERVER = ("server_or_cluster_def", "job_name", "task_index", "protocol", "config", "start")
SESSION = ("target", "graph", "config")
INITIALIZERS = {"global_variables_initializer", "initialize_all_variables", "compat.v1.global_variables_initializer",
                "compat.v1.initialize_all_variables"}
CLUSTER_API = SERVERS | {"train.ClusterSpec", "train.ServerDef", "train.replica_device_setter", "Graph"}
# What gives the graph state, by a fragment of its API name: the eager ops would compute something else.
STATEFUL = ("Variable", "variable", "placeholder", "Optimizer", "random", "train.", "layers.", "keras.", "summary.",
            "collection", "assign", "py_func", "py_function", "numpy_function", "control_dependencies", "Saver",
            "Session", "data.", "tables", "print", "Print", "Assert", "debugging.", "queue", "Queue", "read", "write")
DATA_LOADERS = ("keras.datasets.",)  # numpy arrays, no graph
# Modules whose functions build no graph of their own (TensorFlow's are read by their API name).
PLAIN_MODULES = {*sys.stdlib_module_names, "tensorflow", "numpy", "six", "absl"}
# The session as the migrated module spells it, before its `with` goes (rewrites/program/spelling.py).
SPELLED_SESSIONS = {"tf.compat.v1.Session", "tf.compat.v1.InteractiveSession"}
CONFIG_PROTO = {"ConfigProto", "compat.v1.ConfigProto"}
# ConfigProto fields of the chief's session -> what sets them in TF2.
CONFIG = {"log_device_placement": "tf.debugging.set_log_device_placement",
          "allow_soft_placement": "tf.config.set_soft_device_placement"}
WORKER_DEVICE = '"/job:worker"'  # replica_device_setter's default worker_device
CONNECTED = "# TF1's chief ran the graph in a session on its server: TF2's connects to the cluster as its own task."
IN_GRAPH = ("in-graph program -> the chief connects to the cluster (tf.config.experimental_connect_to_cluster) and "
            "runs the ops eagerly on the tasks named; the other tasks serve; the chief starts no Server of its own")


def migrate(view, names, spelling, session: cst.Call, edits) -> set[cst.CSTNode]:
    """The edits making the in-graph program of the plain ``session`` TF2's (``spelling``: the module's TF2
    spelling); the statements they remove."""
    why = PLAIN.format(session=source(session.func))
    opening = view.parent(view.parent(session))
    if not (isinstance(opening, cst.With) and len(opening.items) == 1 and opening.items[0].item is session
            and opening.items[0].asname is not None and isinstance(opening.items[0].asname.name, cst.Name)):
        raise Unsupported(session, why + "only `with tf.Session(...) as sess:` is read; migrate the program by hand")
    stop = _first_stop(view, names, session)
    if stop is not None:
        raise Unsupported(stop[0], why + stop[1])
    builder = _function(view, opening)
    removed = {opening, *_session_body(view, names, opening, builder, edits, why)}
    config = _config(session, names, why)
    made, joins, chief = _server(view, names, builder, opening, why)
    _check_server_reads(view, opening, made, chief, why)
    moved = spelling.spelled(made).with_changes(leading_lines=[line for line in made.leading_lines if line.comment])
    edits.remove(made)
    for join in joins:
        edits.insert_before(join, [moved])
    for statement in _graphs(view, names):
        removed.add(statement)
    for call in (node for node in subtree(view.module) if isinstance(node, cst.Call)
                 and names.api(node.func) == "train.replica_device_setter"):
        edits.expressions[call] = _worker_device(call)
    for node in subtree(view.module):
        if isinstance(node, cst.Call) and names.api(node.func) == "device":
            edits.expressions[node.func] = cst.parse_expression("tf.device")  # a device string, or None
    edits.insert_before(chief, [_connect(view, names, made, why), *config])
    return removed | {made}


def without_graphs(code: str) -> str:
    """The code with its `with tf.Graph().as_default():` blocks replaced by their bodies: eager ops."""
    return cst.parse_module(code).visit(_Unwrap()).code


class _Unwrap(cst.CSTTransformer):
    """The graph's and the session's `with` blocks go (the program has no other session: STATEFUL)."""

    def leave_With(self, original_node: cst.With, updated_node: cst.With):
        call = updated_node.items[0].item
        graph = (updated_node.items[0].asname is None and isinstance(call, cst.Call)
                 and isinstance(call.func, cst.Attribute) and call.func.attr.value == "as_default"
                 and isinstance(call.func.value, cst.Call) and source(call.func.value.func) == "tf.Graph")
        session = isinstance(call, cst.Call) and source(call.func) in SPELLED_SESSIONS
        if len(updated_node.items) != 1 or not (graph or session):
            return updated_node
        body = list(updated_node.body.body)
        body[0] = body[0].with_changes(leading_lines=[*updated_node.leading_lines, *body[0].leading_lines])
        return cst.FlattenSentinel(body)


def _check_server_reads(view, opening: cst.With, made: cst.BaseStatement, chief: cst.BaseStatement,
                        why: str) -> None:
    """The chief makes no server now: the program reads `server.target` only where it has one (`if server:`) or in
    the session that goes, and passes `server` on only if it is bound besides (`server = None`)."""
    server = single_assign(made)[0]
    gone = {id(node) for item in opening.items for node in subtree(item)}
    for node in subtree(view.module):
        if not (isinstance(node, cst.Attribute) and node.attr.value == "target" and isinstance(node.value, cst.Name)
                and id(node) not in gone):
            continue
        if not any(isinstance(parent, cst.If) and is_name(parent.test, node.value.value)
                   for parent in _ancestors(view, node)):
            raise Unsupported(node, why + f"`{source(node)}` is read where `{node.value.value}` may be no server "
                                          "(the chief makes none in TF2): migrate the program by hand")
    bound = [s for s in subtree(_scope(view, made)) if isinstance(s, cst.SimpleStatementLine) and s is not made
             and (single_assign(s) or ("",))[0] == server]
    read = next((node for node in subtree(chief) if is_name(node, server) and id(node) not in gone), None)
    if read is not None and not bound:
        raise Unsupported(read, why + f"the chief makes no server in TF2 and `{server}` is bound only to one: "
                                      "migrate the program by hand")


def _ancestors(view, node: cst.CSTNode):
    while (node := view.parent(node)) is not None:
        yield node


def _first_stop(view, names, session: cst.Call) -> tuple[cst.Call, str] | None:
    """The first call that may give the graph state: of TensorFlow's (STATEFUL), or of a module that could build a
    graph (not a decorator's)."""
    decorators = {id(node) for d in subtree(view.module) if isinstance(d, cst.Decorator) for node in subtree(d)}
    for node in _in_order(view.module):
        if not isinstance(node, cst.Call) or node is session:
            continue
        api = names.api(node.func)
        if api is not None and api not in CLUSTER_API | INITIALIZERS and any(part in api for part in STATEFUL) \
                and not any(loader in api for loader in DATA_LOADERS):
            return node, (f"`{source(node.func)}` is not a stateless op of the graph (no variables, optimizers, "
                          "placeholders, random ops or Keras are); migrate it by hand")
        module = view.imported(root(node.func).value) if isinstance(root(node.func), cst.Name) else None
        if api is None and module is not None and id(node) not in decorators \
                and module.replace(":", ".").split(".")[0] not in PLAIN_MODULES:
            return node, (f"`{source(node.func)}` of `{module}` may make variables the migration cannot see; "
                          "migrate the program by hand")
    return None


def _in_order(node: cst.CSTNode):
    """``node`` and every node below it, in the order of the source."""
    yield node
    for child in children(node):
        yield from _in_order(child)


def _function(view, node: cst.CSTNode) -> cst.FunctionDef:
    scope = view.parent(node)
    while scope is not None and not isinstance(scope, cst.FunctionDef):
        scope = view.parent(scope)
    if scope is None:
        raise Unsupported(node, "an in-graph session at module level: migrate the program by hand")
    return scope


def _session_body(view, names, opening: cst.With, builder: cst.FunctionDef, edits, why: str) -> list:
    """The session's body without it: `sess.run(t)` -> `t.numpy()`, runs of initializers (and their names) gone."""
    sess = opening.items[0].asname.name.value
    initializers = {}
    for node in subtree(builder):
        assign = single_assign(node) if isinstance(node, cst.SimpleStatementLine) else None
        if assign and isinstance(assign[1], cst.Call) and names.api(assign[1].func) in INITIALIZERS:
            initializers[assign[0]] = node
    lists = {name for node in subtree(builder) if (name := (single_assign(node) or ("", None))[0])
             and isinstance(single_assign(node)[1], (cst.List, cst.ListComp))}
    gone = []
    for statement in opening.body.body:
        for node in subtree(statement):
            if not is_name(node, sess) or node is statement:
                continue
            call = view.parent(view.parent(node))
            if not (isinstance(call, cst.Call) and call.func is view.parent(node)
                    and isinstance(call.func, cst.Attribute) and call.func.attr.value == "run"
                    and len(call.args) == 1 and call.args[0].keyword is None):
                raise Unsupported(node, why + f"`{sess}` is used besides `{sess}.run(tensors)`: migrate it by hand")
            fetched = call.args[0].value
            if statement_value(statement) is call and isinstance(statement.body[0], cst.Expr):
                # A run for its effect: the eager ops ran as they were made; an initializer of no variables.
                gone.append(statement)
                if isinstance(fetched, cst.Name) and fetched.value in initializers:
                    gone.append(initializers[fetched.value])
                continue
            edits.expressions[call] = _numpy(fetched, lists, why)
    if all(statement in gone for statement in opening.body.body):
        raise Unsupported(opening, why + "the session runs nothing it keeps; migrate the program by hand")
    for statement in gone:
        edits.remove(statement)
    return gone


def _numpy(fetched: cst.BaseExpression, lists: set[str], why: str) -> cst.BaseExpression:
    """The value `sess.run(fetched)` gave, of eager tensors: `t.numpy()`, a list of them for a list (or a name
    of ``lists``, bound to one)."""
    if isinstance(fetched, cst.List):
        return fetched.with_changes(elements=[e.with_changes(value=_numpy(e.value, lists, why))
                                              for e in fetched.elements])
    if isinstance(fetched, cst.Name) and fetched.value in lists:
        return cst.parse_expression(f"[tensor.numpy() for tensor in {fetched.value}]")
    if isinstance(fetched, (cst.Name, cst.Attribute, cst.Subscript)):
        return cst.Call(func=cst.Attribute(value=fetched, attr=cst.Name("numpy")))
    raise Unsupported(fetched, why + "only runs of a tensor or a list of tensors are migrated; migrate it by hand")


def _config(session: cst.Call, names, why: str) -> list[cst.BaseStatement]:
    """The chief's session config as TF2's settings (CONFIG)."""
    args = bind_arguments(session, SESSION)
    if args is None or "graph" in args:
        raise Unsupported(session, why + "the session's arguments cannot be read; migrate the program by hand")
    if "config" not in args:
        return []
    config = args["config"][1].value
    fields = bind_arguments(config, tuple(CONFIG)) if isinstance(config, cst.Call) \
        and names.api(config.func) in CONFIG_PROTO else None
    if fields is None or any(position is not None for position, _ in fields.values()):
        raise Unsupported(config, why + f"a session config other than ConfigProto({', '.join(CONFIG)}) is not "
                                        "migrated; migrate the program by hand")
    return [cst.parse_statement(f"{CONFIG[field]}({source(arg.value)})\n") for field, (_, arg) in fields.items()]


def _server(view, names, builder: cst.FunctionDef, opening: cst.With, why: str):
    """(the one `server = tf.train.Server(...)`, the `server.join()` statements of the tasks that serve, the
    statement of the chief's branch before which it connects: the one calling the function building the graph, or
    the branch's first, when the session is in the branch itself)."""
    made = [node for node in subtree(view.module) if isinstance(node, cst.Call) and names.api(node.func) in SERVERS]
    statement = view.parent(view.parent(made[0])) if len(made) == 1 else None
    assign = single_assign(statement) if statement is not None else None
    if assign is None or assign[1] is not made[0]:
        raise Unsupported(made[0] if made else opening.items[0].item,
                          why + "the chief's server is read where the module makes it (`server = "
                                "tf.train.Server(...)`, once); migrate the program by hand")
    for node in subtree(_scope(view, statement)):
        if not isinstance(node, cst.If) or isinstance(view.parent(node), cst.If):
            continue
        bodies = []
        while isinstance(node, (cst.If, cst.Else)):
            bodies.append(list(node.body.body))
            node = node.orelse if isinstance(node, cst.If) else None
        joins = [s for body in bodies for s in body if _is_join(s, assign[0])]
        chiefs = [body[0] if any(node is opening for node in subtree(s)) else s for body in bodies for s in body
                  if any(node is opening or isinstance(node, cst.Call) and is_name(node.func, builder.name.value)
                         for node in subtree(s))]
        if joins and len(chiefs) == 1:
            return statement, joins, chiefs[0]
    raise Unsupported(statement, why + f"the tasks that do not run the session must `{assign[0]}.join()` in the "
                                       "branches of one `if`; migrate the program by hand")


def _scope(view, node: cst.CSTNode) -> cst.CSTNode:
    scope = view.parent(node)
    while scope is not None and not isinstance(scope, (cst.FunctionDef, cst.Module)):
        scope = view.parent(scope)
    return scope


def _guard(view, statement: cst.CSTNode) -> list[cst.BaseExpression]:
    """The tests of the `if`s ``statement`` runs in (their bodies, not their `else`), in its function."""
    tests, node = [], statement
    while not isinstance(parent := view.parent(node), (cst.FunctionDef, cst.Module, type(None))):
        if isinstance(parent, cst.If) and node is parent.body:
            tests.insert(0, parent.test)
        node = parent
    return tests


def _check_read_again(view, made: cst.BaseStatement, expressions: list, why: str) -> None:
    """What made the server (and the `if`s it was made in) is read again where the tasks serve and the chief
    connects: the names it reads are bound once in their function."""
    scope = _scope(view, made)
    for node in (n for expression in expressions for n in subtree(expression)):
        if not isinstance(node, cst.Name) or isinstance(view.parent(node), cst.Attribute) \
                and view.parent(node).attr is node:
            continue
        bindings = [n for n in subtree(scope) if isinstance(n, (cst.AssignTarget, cst.For, cst.AugAssign))
                    and is_name(getattr(n, "target", None), node.value)]
        if len(bindings) > 1:
            raise Unsupported(node, why + f"`{node.value}` is bound more than once where the server is made: what it "
                                          "is where the tasks serve and the chief connects is not read; migrate the "
                                          "program by hand")


def _is_join(statement, server: str) -> bool:
    value = statement_value(statement)
    return (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value == "join"
            and is_name(value.func.value, server) and not value.args)


def _graphs(view, names) -> list[cst.With]:
    return [node for node in subtree(view.module) if isinstance(node, cst.With) and len(node.items) == 1
            and isinstance(call := node.items[0].item, cst.Call) and isinstance(call.func, cst.Attribute)
            and call.func.attr.value == "as_default" and isinstance(call.func.value, cst.Call)
            and names.api(call.func.value.func) == "Graph"]


def _worker_device(call: cst.Call) -> cst.BaseExpression:
    """What `replica_device_setter(...)` places ops that are not variables on: its worker_device (None: no device
    when it has no ps tasks, as without arguments)."""
    if not call.args:
        return cst.Name("None")
    args = bind_arguments(call, ("ps_tasks", "ps_device", "worker_device"))
    worker = next((arg.value for arg in call.args if arg.keyword and arg.keyword.value == "worker_device"), None)
    if worker is None and args is not None and "worker_device" in args:
        worker = args["worker_device"][1].value
    return worker if worker is not None else cst.parse_expression(WORKER_DEVICE)


def _connect(view, names, statement: cst.BaseStatement, why: str) -> cst.BaseStatement:
    """The chief's `tf.config.experimental_connect_to_cluster(...)` as its own task of the Server's cluster, where
    TF1's chief made its server (in the `if`s that made it)."""
    call = statement_value(statement)
    args = bind_arguments(call, SERVER)
    if args is None or not args.keys() <= {"server_or_cluster_def", "job_name", "task_index", "protocol"}:
        raise Unsupported(call, why + "a Server whose arguments cannot be read; migrate the program by hand")
    value = {key: source(arg.value) for key, (_, arg) in args.items()}
    cluster = value["server_or_cluster_def"]
    made = [single_assign(s)[1] for s in subtree(view.module) if isinstance(s, cst.SimpleStatementLine)
            and single_assign(s) and single_assign(s)[0] == cluster]
    made = names.api(made[0].func) if len(made) == 1 and isinstance(made[0], cst.Call) else None
    if "job_name" not in args:
        if made != "train.ServerDef":
            raise Unsupported(call, why + f"`{cluster}` is not one `tf.train.ServerDef(...)` of the module; migrate "
                                          "the program by hand")
        value = {"job_name": f"{cluster}.job_name", "task_index": f"{cluster}.task_index",
                 "protocol": f"{cluster}.protocol"}
        cluster = f"{cluster}.cluster"
    tests = _guard(view, statement)
    _check_read_again(view, statement, [*tests, *(arg.value for _, arg in args.values())], why)
    column = 8 if tests else 4  # 4 beyond the block's indentation as parsed (libcst keeps them relative to it)
    arguments = [cluster if made == "train.ClusterSpec" else f"tf.train.ClusterSpec({cluster})",
                 *(f"{key}={value[key]}" for key in ("job_name", "task_index", "protocol") if key in value)]
    connect = ("tf.config.experimental_connect_to_cluster(\n"
               + ",\n".join(" " * column + argument for argument in arguments) + ")\n")
    if tests:
        connect = f"if {' and '.join(source(test) for test in tests)}:\n    {connect}"
    return cst.parse_statement(connect).with_changes(leading_lines=[cst.EmptyLine(comment=cst.Comment(CONNECTED))])
