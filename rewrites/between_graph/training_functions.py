"""`train_op = training(loss, learning_rate)` in the graph: a function of the module making the optimizer (and the
global step) and returning `optimizer.minimize(loss, global_step=global_step)`, as the TF1 tutorials' MNIST
`training` did (tensorflow/ecosystem's docker and YARN trainers call it).

Read as if its statements stood in the graph, its parameters replaced by the call's arguments: the optimizer
becomes the TF2 optimizer (its learning rate the argument the graph passed), the loss it minimizes is the graph's,
its global step the optimizer's iterations; its tf.summary ops go as the graph's do (TFM109), and the function goes
from the migrated module. Read: a function of plain parameters, named nowhere else in the module, whose statements
are summaries, `optimizer = tf.train.XOptimizer(...)`, the global step (`tf.Variable(0, trainable=False)`,
`tf.train.get_or_create_global_step()`), `train_op = optimizer.minimize(loss, global_step=...)` and `return
train_op` (or `return optimizer.minimize(...)`). A function making an optimizer otherwise is named (Unsupported).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import libcst as cst

from rewrites.between_graph import graph_calls
from rewrites.syntax import Unsupported, bind_arguments, first_line, is_name, names_read, single_assign


@dataclass
class TrainingFunction:
    """What the function makes, as the graph calls it."""

    function: cst.FunctionDef
    optimizer: tuple[str, cst.Call] | None = None          # its name in the function, the TF1 optimizer's call
    step: tuple[str, cst.Call] | None = None               # the global step's, likewise
    minimize: cst.Call | None = None
    summaries: list[cst.BaseStatement] = field(default_factory=list)
    arguments: dict[str, cst.BaseExpression] = field(default_factory=dict)  # parameter -> the graph's argument


def is_optimizer(api: str | None) -> bool:
    return bool(api) and api.startswith("train.") and api.endswith("Optimizer")


def read(call: cst.BaseExpression, module: graph_calls.ModuleCode, api: Callable[[cst.CSTNode], str | None],
         is_step: Callable[[str | None, cst.Call], bool], summaries: set[str]) -> TrainingFunction | None:
    """The training function ``call`` calls, read (None: ``call`` calls no function of the module making a TF1
    optimizer). ``is_step``: is `name = <that call>` the global step; ``summaries``: the tf.summary ops."""
    if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value in module.functions):
        return None
    function = module.functions[call.func.value]
    if not any(isinstance(node, cst.Call) and is_optimizer(api(node.func)) for node in graph_calls.in_order(function)):
        return None
    used = f"`{first_line(call)}` in the graph makes the optimizer in `{function.name.value}`"
    params = function.params
    if not isinstance(params.star_arg, cst.MaybeSentinel) or params.star_kwarg is not None or params.kwonly_params \
            or params.posonly_params:
        raise Unsupported(function, f"{used}, a function of other than plain parameters: migrate it by hand")
    if module.names[function.name.value] != 2:
        raise Unsupported(call, f"{used}, a function the module names elsewhere too: the migrated program has no "
                                "TF1 optimizer; migrate the other uses by hand")
    bound = bind_arguments(call, [param.name.value for param in params.params])
    defaults = {param.name.value: param.default for param in params.params if param.default is not None}
    if bound is None or set(defaults) | set(bound) != {param.name.value for param in params.params}:
        raise Unsupported(call, f"{used}: its arguments are not read")
    found = TrainingFunction(function, arguments={**defaults, **{name: arg.value for name, (_, arg) in bound.items()}})
    body = list(function.body.body)
    if body and _is_docstring(body[0]):
        body = body[1:]
    returned = None
    for statement in body:
        small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 \
            else None
        assign = single_assign(statement)
        value = assign[1] if assign else getattr(small, "value", None)
        if isinstance(small, cst.Expr) and isinstance(value, cst.Call) and api(value.func) in summaries:
            found.summaries.append(statement)
        elif assign and isinstance(value, cst.Call) and is_optimizer(api(value.func)) and found.optimizer is None:
            found.optimizer = assign[0], value
        elif assign and isinstance(value, cst.Call) and is_step(api(value.func), value) and found.step is None:
            found.step = assign[0], value
        elif isinstance(small, (cst.Assign, cst.Return)) and _minimizes(value, found) and found.minimize is None:
            found.minimize = value
            returned = None if isinstance(small, cst.Return) else assign[0] if assign else "?"
        elif isinstance(small, cst.Return) and returned is not None and is_name(value, returned):
            returned = None
        else:
            raise Unsupported(statement, f"{used}: `{first_line(statement)}` there; the optimizer, the global step, "
                                         "summaries and `return optimizer.minimize(loss, global_step=...)` are "
                                         "migrated")
    if found.minimize is None or returned is not None or not isinstance(body[-1].body[0], cst.Return):
        raise Unsupported(call, f"{used}, which must return `optimizer.minimize(...)` (or a name bound to it)")
    return found


def _minimizes(value, found: TrainingFunction) -> bool:
    return found.optimizer is not None and isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
        and value.func.attr.value == "minimize" and is_name(value.func.value, found.optimizer[0])


def _is_docstring(statement) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and isinstance(statement.body[0], cst.Expr) \
        and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))


def substituted(code: cst.CSTNode, found: TrainingFunction, tensors: set[str], used: str) -> cst.CSTNode:
    """``code`` (of the function) with each of its parameters replaced by the graph's argument, which must not
    read the graph's tensors (the optimizer is made in the strategy's scope, before the step)."""
    reads = {id(node): node.value for node in names_read(code) if node.value in found.arguments}
    for name in set(reads.values()):
        if {node.value for node in names_read(found.arguments[name])} & tensors:
            raise Unsupported(found.arguments[name], f"{used}, its `{name}` a tensor of the graph "
                                                     f"(`{first_line(found.arguments[name])}`): migrate it by hand")
    return code.visit(_Substitution(reads, found.arguments))


class _Substitution(cst.CSTTransformer):
    def __init__(self, reads: dict[int, str], values: dict[str, cst.BaseExpression]) -> None:
        super().__init__()
        self.reads, self.values = reads, values

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
        return self.values[self.reads[id(original)]] if id(original) in self.reads else updated
