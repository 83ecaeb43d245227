"""Where the worker's graph is placed: `with tf.device(tf.train.replica_device_setter(...)):`, or `with
tf.device(device_fn):` of a ``device_fn`` bound once to one in the function (the binding goes with the graph), the
device block alone in a `with tf.Graph().as_default() as graph:` whose graph the Supervisor is given
(`Supervisor(graph, ...)`, as the cloudml-samples trainers build theirs), or a `with tf.Graph().as_default():` holding
both the device block and the session: that block goes too, the migrated program having no graph.
"""

from __future__ import annotations

import libcst as cst

from rewrites.between_graph.graph import Names
from rewrites.between_graph.local import Local, local_branch
from rewrites.between_graph.session import Session
from rewrites.syntax import Unsupported, bind_arguments, first_line, is_name, subtree

DEVICE_SETTER = "train.replica_device_setter"
SETTER_PARAMETERS = ("ps_tasks", "ps_device", "worker_device", "merge_devices", "cluster", "ps_ops", "ps_strategy")


def is_device_block(statement, names: Names, followed=()) -> bool:
    """`with tf.device(tf.train.replica_device_setter(...)):`, or ``followed``, `with tf.device(device):` of a
    setter a function makes (device_functions.py)."""
    if id(statement) in followed:
        return True
    if not (isinstance(statement, cst.With) and len(statement.items) == 1):
        return False
    call = statement.items[0].item
    return (isinstance(call, cst.Call) and names.api(call.func) == "device" and len(call.args) == 1
            and isinstance(call.args[0].value, cst.Call) and names.api(call.args[0].value.func) == DEVICE_SETTER)


def held_by_graph(statement, names: Names, scope: cst.CSTNode | None = None) -> cst.With | None:
    """The device block of `with tf.Graph().as_default() as graph:` holding nothing else (its device named in
    ``scope``, the function holding it: named_device)."""
    if not (isinstance(statement, cst.With) and len(statement.items) == 1 and _makes_a_graph(statement.items[0].item,
                                                                                              names)):
        return None
    body = statement.body.body
    if len(body) != 1:
        return None
    return body[0] if is_device_block(body[0], names) or named_device(body[0], scope, names) else None


def named_device(statement, scope: cst.CSTNode | None, names: Names) -> bool:
    """`with tf.device(device_fn):`, ``device_fn`` bound once in ``scope`` (the function holding the block), to a
    replica_device_setter; a TFM104 where it is one only in a branch (another device, where the program trains
    without the cluster)."""
    if scope is None or not (isinstance(statement, cst.With) and len(statement.items) == 1):
        return False
    call = statement.items[0].item
    if not (isinstance(call, cst.Call) and names.api(call.func) == "device" and len(call.args) == 1
            and isinstance(call.args[0].value, cst.Name)):
        return False
    name = call.args[0].value.value
    bound = _bindings(scope, name)
    setters = [node for node, value in bound if isinstance(value, cst.Call) and names.api(value.func) == DEVICE_SETTER]
    if not setters:
        return False
    if len(bound) == 1 or local_of(statement, scope, names) is not None:
        return True
    other = next(value for node, value in bound if node not in setters)
    raise Unsupported(statement, f"the graph's device `{name}` is a replica_device_setter in one branch and "
                                 f"`{names.code(other) if other is not None else '...'}` in another, where the "
                                 "program trains without the cluster: only training on the cluster is migrated; "
                                 "migrate the program by hand")


def local_of(device: cst.With, scope: cst.CSTNode, names: Names) -> Local | None:
    """The Local (local.py) of a device block placed by a name bound to the setter in an `if` and to nothing in its
    `else:`: the program also trains without a cluster."""
    placed = device.items[0].item.args[0].value
    if not isinstance(placed, cst.Name):
        return None
    bound = _bindings(scope, placed.value)
    setters = [(node, value) for node, value in bound
               if isinstance(value, cst.Call) and names.api(value.func) == DEVICE_SETTER]
    return local_branch(scope, [*setters, *(b for b in bound if b not in setters)], names.code, names.spelled)


def check_places_variables(device: cst.With, scope: cst.CSTNode, names: Names, setter: cst.Call | None) -> None:
    """The graph's replica_device_setter (``setter``, a function's that the block follows, or the one the block
    calls or names) is given a cluster or ps tasks: without, TF1's setter is None and places nothing, so each task's
    session kept the variables on its own task, trained apart; ParameterServerStrategy would share them."""
    placed = device.items[0].item.args[0].value
    if setter is not None:
        setters = [setter]
    elif isinstance(placed, cst.Name):
        setters = [value for _, value in _bindings(scope, placed.value)
                   if isinstance(value, cst.Call) and names.api(value.func) == DEVICE_SETTER]
    else:
        setters = [placed]
    for call in setters:
        bound = bind_arguments(call, SETTER_PARAMETERS)
        if bound is None or any(names.code(bound[key][1].value) not in ("None", "0")
                                for key in ("ps_tasks", "cluster") if key in bound):
            continue
        raise Unsupported(call, f"`{first_line(call)}` is given neither a cluster nor ps tasks: TF1's setter is then "
                                "None and places nothing, so each task's session kept the graph's variables on its "
                                "own task and trained its own model; ParameterServerStrategy would share them on the "
                                "ps tasks: give the setter the cluster (`cluster=...`) if the tasks are to share the "
                                "model, or migrate the program by hand")


def _bindings(scope: cst.CSTNode, name: str) -> list[tuple[cst.CSTNode, cst.BaseExpression | None]]:
    """(node, value) of each binding of ``name`` in ``scope`` (value None: not a plain `name = value`)."""
    found = []
    for node in subtree(scope):
        if isinstance(node, cst.Assign):
            found += [(node, node.value if len(node.targets) == 1 and is_name(t.target, name) else None)
                      for t in node.targets if any(is_name(n, name) for n in subtree(t.target))]
        elif isinstance(node, cst.AugAssign | cst.AnnAssign | cst.For | cst.AsName):
            target = node.name if isinstance(node, cst.AsName) else node.target
            found += [(node, None)] if any(is_name(n, name) for n in subtree(target)) else []
    return found


def graph_block(device: cst.With, opening: cst.CSTNode, view, names: Names, scope: cst.CSTNode) -> cst.With | None:
    """`with tf.Graph().as_default():` whose block holds both the device block and the session (the census
    trainers' `run()`): it goes, the migrated program having no graph (Unsupported where ``scope``, the function
    holding it, uses the graph it names, `as graph`)."""
    holder = view.parent(view.parent(device))
    if not (isinstance(holder, cst.With) and len(holder.items) == 1 and _makes_a_graph(holder.items[0].item, names)
            and view.parent(view.parent(opening)) is holder):
        return None
    name = holder.items[0].asname.name if holder.items[0].asname is not None else None
    if name is not None:
        use = next((node for node in uses(scope, name.value) if node is not name), None) \
            if isinstance(name, cst.Name) else name
        if use is not None:
            raise Unsupported(use, f"`{first_line(name)}`, the TF1 graph the session trains, is used besides: the "
                                   "migrated program has no graph; migrate that use by hand")
    return holder


def _makes_a_graph(call, names: Names) -> bool:
    """`tf.Graph().as_default()`"""
    return (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value == "as_default"
            and not call.args and isinstance(call.func.value, cst.Call) and names.api(call.func.value.func) == "Graph")


def check_graph_argument(session: Session, wrapper: cst.With | None, scope: cst.CSTNode) -> None:
    """A graph built in `with tf.Graph().as_default() as graph:` is the one the session's Supervisor is given
    (`Supervisor(graph, ...)`), and the name is used nowhere else: the migrated program has no graph."""
    if wrapper is None:
        if session.graph is not None:
            raise Unsupported(session.graph, "Supervisor(graph=...) is not migrated: do its work around the migrated "
                                             "loop by hand")
        return
    name = wrapper.items[0].asname.name if wrapper.items[0].asname is not None else None
    if not (isinstance(name, cst.Name) and session.graph is not None and is_name(session.graph, name.value)):
        raise Unsupported(wrapper, "the graph is built in its own `tf.Graph()`, which the session is not given as "
                                   "a Supervisor's `graph`: migrate the graph by hand")
    use = next((node for node in uses(scope, name.value) if node is not name and node is not session.graph), None)
    if use is not None:
        raise Unsupported(use, f"`{name.value}`, the TF1 graph, is used besides making the session: the migrated "
                               "program has no graph; migrate that use by hand")


def device_binding(device: cst.With, view, scope: cst.CSTNode) -> list[cst.BaseStatement]:
    """`device_fn = tf.train.replica_device_setter(...)` of a device block naming its device (named_device): it goes
    with the graph (and so does `device_fn = ''` of a Local); a TFM104 where it is read elsewhere."""
    placed = device.items[0].item.args[0].value
    if not isinstance(placed, cst.Name):
        return []
    bound = [node for node, _ in _bindings(scope, placed.value)]
    use = next((node for node in uses(scope, placed.value) if node is not placed
                and not any(node is target.target for other in bound for target in other.targets)), None)
    if use is not None:
        raise Unsupported(use, f"`{placed.value}`, the graph's device, is used besides placing it: migrate that use "
                               "by hand")
    return [view.parent(assign) for assign in bound]


def uses(code: cst.CSTNode, name: str) -> list[cst.Name]:
    """The Name nodes of ``name`` in the code, but not `f(name=...)` keywords nor `x.name` attributes."""
    keywords = {id(node.keyword) for node in subtree(code) if isinstance(node, cst.Arg) and node.keyword}
    keywords |= {id(node.attr) for node in subtree(code) if isinstance(node, cst.Attribute)}
    return [node for node in subtree(code) if is_name(node, name) and id(node) not in keywords]
