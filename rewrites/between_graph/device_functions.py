"""The graph's device made by a function of the program: `device, target = device_and_target()` before `with
tf.device(device):`, the function starting the task's Server (a ps task joins it there) and returning
`(tf.train.replica_device_setter(...), server.target)` (tensorflow/ecosystem's docker and YARN MNIST).

The device block is read as a replica_device_setter's, the session's master `target` as the server's target. The
migrated function returns its server (`server = device_and_target()`), which serves the cluster as one made where
the graph is: ParameterServerStrategy places the variables, so the setter goes, with what only it read
(`worker_device = ...`). Another return of a pair of constants, the single-machine run the function chose under a
test (`return (None, "")`), raises instead: the migrated program trains on a cluster (a TFM103 note says so).
Any other shape is named (Unsupported).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from rewrites.syntax import Unsupported, first_line, is_name, names_read, source, statement_value, subtree

SERVERS = {"train.Server", "distribute.Server"}
DEVICE_SETTER = "train.replica_device_setter"
RAISED = "the migrated program trains on a cluster: start it as a ps or worker task"
LOCAL = ("the single-machine run `{function}()` chose where `{test}` raises: the migrated program trains on a "
         "ParameterServerStrategy cluster; start it as TF1's tasks")


@dataclass
class DeviceFunction:
    """`device, target = function()`, whose function makes the graph's replica_device_setter and the server."""

    call: cst.SimpleStatementLine       # `device, target = function()`
    device: str
    target: str
    function: cst.FunctionDef
    server: str                          # the name of the Server the function makes (and, migrated, returns)
    setter_return: cst.SimpleStatementLine
    local_returns: list[tuple[cst.SimpleStatementLine, cst.BaseExpression]] = field(default_factory=list)
    setter_only: list[cst.BaseStatement] = field(default_factory=list)  # statements only the setter read

    @property
    def setter(self) -> cst.Call:
        """The `replica_device_setter(...)` call the function returns."""
        return _pair(self.setter_return.body[0].value)[0]


def device_name(statement: cst.CSTNode, api) -> str | None:
    """NAME of `with tf.device(NAME):`."""
    if not (isinstance(statement, cst.With) and len(statement.items) == 1):
        return None
    call = statement.items[0].item
    if isinstance(call, cst.Call) and api(call.func) == "device" and len(call.args) == 1 \
            and isinstance(call.args[0].value, cst.Name):
        return call.args[0].value.value
    return None


def follow(module: cst.Module, api) -> dict[int, DeviceFunction]:
    """id of each `with tf.device(device):` block whose device a function of the module makes -> that function,
    read. A device bound by a call of another shape is left to _refuse_device_from_a_call's finding; a function
    of the module that returns a replica_device_setter in a shape not read is named."""
    functions = {s.name.value: s for s in module.body if isinstance(s, cst.FunctionDef)}
    found = {}
    for block in _blocks(module):
        for at, statement in enumerate(block):
            device = device_name(statement, api)
            call = next((s for s in reversed(block[:at]) if device in _pair_targets(s)), None) if device else None
            value = statement_value(call) if call is not None else None
            if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and not value.args
                    and value.func.value in functions):
                continue
            function = functions[value.func.value]
            if not any(isinstance(n, cst.Call) and api(n.func) == DEVICE_SETTER for n in subtree(function)):
                continue
            found[id(statement)] = _read(call, device, function, module, api)
    return found


def _read(call: cst.SimpleStatementLine, device: str, function: cst.FunctionDef, module: cst.Module,
          api) -> DeviceFunction:
    name = function.name.value
    uses = [n for n in subtree(module) if is_name(n, name)]
    if len(uses) != 2:
        raise Unsupported(call, f"the graph's device comes from `{name}()`, which the module names elsewhere too: "
                                "migrate the graph by hand")
    targets = _pair_targets(call)
    if targets.index(device) != 0:
        raise Unsupported(call, f"`{first_line(call)}`: the device is read as the first of the pair `{name}()` "
                                "returns")
    target = targets[1]
    returns = [s for s in subtree(function) if isinstance(s, cst.SimpleStatementLine)
               and isinstance(s.body[0], cst.Return)]
    setter, local = None, []
    for statement in returns:
        pair = _pair(statement.body[0].value)
        if pair is None:
            raise Unsupported(statement, f"`{name}()` returns `{first_line(statement)}`: a pair of the device "
                                         "setter and the server's target is read")
        if isinstance(pair[0], cst.Call) and api(pair[0].func) == DEVICE_SETTER and setter is None:
            setter = statement, pair
        elif all(isinstance(e, (cst.Name, cst.SimpleString)) and (not isinstance(e, cst.Name) or is_name(e, "None"))
                 for e in pair):
            local.append((statement, _test(function, statement)))
        else:
            raise Unsupported(statement, f"`{name}()` returns `{first_line(statement)}`: a pair of the device "
                                         "setter and the server's target is read")
    if setter is None:
        raise Unsupported(function, f"`{name}()` makes a replica_device_setter it does not return as read")
    statement, (made, served) = setter
    server = served.value.value if isinstance(served, cst.Attribute) and served.attr.value == "target" \
        and isinstance(served.value, cst.Name) else None
    started = next((s for s in function.body.body if server is not None
                    and _pair_targets(s) == [server] and isinstance(v := statement_value(s), cst.Call)
                    and api(v.func) in SERVERS), None)
    if started is None:
        raise Unsupported(statement, f"`{name}()` returns `{source(served)}` with its device setter: the target of "
                                     "a Server it starts is read")
    joined = any(isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and is_name(n.func.value, server)
                 and n.func.attr.value == "join" for n in subtree(function))
    if not joined:
        raise Unsupported(started, f"`{server}`, the server `{name}()` starts, is not joined there: the ps tasks "
                                   "would run the worker's code")
    return DeviceFunction(call, device, target, function, server, statement, local,
                          _setter_only(function, made, statement))


def _test(function: cst.FunctionDef, statement: cst.SimpleStatementLine) -> cst.BaseExpression:
    """The test of the `if` of the function's body whose block ends with ``statement``."""
    for branch in function.body.body:
        if isinstance(branch, cst.If) and branch.orelse is None and branch.body.body[-1] is statement:
            return branch.test
    raise Unsupported(statement, f"`{first_line(statement)}` is read at the end of an `if` of "
                                 f"`{function.name.value}()`'s body, without `else`")


def _setter_only(function: cst.FunctionDef, setter: cst.Call, returned: cst.CSTNode) -> list[cst.BaseStatement]:
    """`name = value` statements of the function's body whose names only the setter reads."""
    read = {id(n) for n in names_read(setter)}
    found = []
    for statement in function.body.body:
        targets = _pair_targets(statement)
        if len(targets) != 1 or statement is returned:
            continue
        uses = [n for n in names_read(function) if n.value == targets[0]
                and id(n) not in {id(t) for t in subtree(statement.body[0].targets[0])}]
        if uses and all(id(n) in read for n in uses):
            found.append(statement)
    return found


def migrate(followed: DeviceFunction, edits, caller: cst.CSTNode) -> list[tuple[str, cst.CSTNode, str]]:
    """The function returns its server, the call binds it; the notes of the local runs that now raise."""
    taken = next((n for n in subtree(caller) if is_name(n, followed.server)), None)
    if taken is not None:
        raise Unsupported(taken, f"the migrated program binds `{followed.server}`, the server "
                                 f"`{followed.function.name.value}()` returns, where this code already uses it")
    name = followed.function.name.value
    edits.replace(followed.call, [followed.call.with_changes(body=[cst.parse_statement(
        f"{followed.server} = {name}()\n").body[0]])])
    first = (followed.setter_only or [followed.setter_return])[0]  # its blank lines, without the setter's comments
    edits.replace(followed.setter_return, [cst.parse_statement(f"return {followed.server}\n").with_changes(
        leading_lines=[line for line in first.leading_lines if not line.comment])])
    for statement in followed.setter_only:
        edits.remove(statement)
    notes = []
    for statement, test in followed.local_returns:
        edits.replace(statement, [cst.parse_statement(f'raise ValueError("{RAISED}")\n').with_changes(
            leading_lines=statement.leading_lines)])
        notes.append(("TFM103", statement, LOCAL.format(function=name, test=source(test))))
    return notes


def _pair(value: cst.BaseExpression | None) -> list[cst.BaseExpression] | None:
    if isinstance(value, cst.Tuple) and len(value.elements) == 2 \
            and not any(isinstance(e, cst.StarredElement) for e in value.elements):
        return [e.value for e in value.elements]
    return None


def _pair_targets(statement: cst.CSTNode) -> list[str]:
    """The names `a, b = ...` or `a = ...` binds, in order ([] for anything else)."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
            and isinstance(statement.body[0], cst.Assign) and len(statement.body[0].targets) == 1):
        return []
    node = statement.body[0].targets[0].target
    elements = [e.value for e in node.elements] if isinstance(node, (cst.Tuple, cst.List)) else [node]
    return [e.value for e in elements] if all(isinstance(e, cst.Name) for e in elements) else []


def _blocks(module: cst.Module):
    """Every block of statements of the module."""
    yield list(module.body)
    for node in subtree(module):
        if isinstance(node, cst.IndentedBlock):
            yield list(node.body)
