"""Calls in the worker's graph to functions of its own module (`logits, probabilities = predict(x)`).

Migrated, a call of the graph runs in the step function, at every step: a function whose body (and that of the
module's functions it calls in turn) is only ops of tensors computes there what it computed in TF1's graph, and is
kept as it is. One that makes variables or placeholders, reads TF1's queues or writes to graph collections,
summaries or globals would do that at every step: the program is left, naming what the function does and where.
A call to a function of another module of the program (a file found next to it) is not followed yet: left too.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field

import libcst as cst

from rewrites.program.imports import find_module
from rewrites.syntax import Unsupported, children, first_line

# What a function run at every step may not do: (test of the TensorFlow API it calls, why).
MAKES_VARIABLES = "makes variables: the step function would make them again at every step; make them in the " \
                  "graph's own block (or Keras layers in the strategy's scope) by hand"
ITERATORS = ("make_one_shot_iterator", "make_initializable_iterator", "get_next")  # methods of TF1's datasets
REFUSED: tuple[tuple[Callable[[str], bool], str], ...] = (
    (lambda api: api in ("Variable", "get_variable", "get_local_variable", "variable_scope", "make_template")
     or api.startswith(("layers.", "keras.layers.", "contrib.layers.", "contrib.slim.", "contrib.rnn."))
     or (api.startswith("train.") and api.endswith("Optimizer")), MAKES_VARIABLES),
    (lambda api: api.startswith("train.") and "global_step" in api, "makes or reads the global step: the migrated "
     "program counts steps with its optimizer's iterations"),
    (lambda api: api in ("placeholder", "placeholder_with_default"), "makes a placeholder: TF 2 has none; the "
     "step's inputs are the placeholders of the graph's own block"),
    (lambda api: api.endswith(("input_producer", "Reader", "Queue")) or api in (
        "train.batch", "train.shuffle_batch", "train.batch_join", "train.shuffle_batch_join", "train.maybe_batch",
        "train.limit_epochs", "train.slice_input_producer"),
     "reads TF1's input queues: a TF 2 step cannot run them; feed the batches as a tf.data dataset by hand"),
    (lambda api: api.startswith("data."), "reads a tf.data input: the step would start it anew at every step; "
     "read the batches in the graph's own block (`x, y = iterator.get_next()`)"),
    (lambda api: api in ("add_to_collection", "add_to_collections", "get_collection", "get_collection_ref")
     or api.startswith("summary."), "writes to the TF1 graph's collections or summaries: the "
     "migrated step has none"),
)


@dataclass
class ModuleCode:
    """What of its module the graph may call: its functions, and the modules of the program it imports."""

    functions: dict[str, cst.FunctionDef] = field(default_factory=dict)  # the module's top-level ones, by name
    program_modules: dict[str, str] = field(default_factory=dict)  # a name bound by an import -> the module's path


def check_calls(value: cst.BaseExpression, module: ModuleCode, api: Callable[[cst.CSTNode], str | None]) -> None:
    """Unsupported, at the first thing a function of the module called in ``value`` (or one it calls, or uses)
    does that the step function cannot do at every step, or at a call of another module of the program (not
    followed); the message names the graph's call."""
    called = {id(node.func) for node in _in_order(value) if isinstance(node, cst.Call)}
    for node in _in_order(value):
        if isinstance(node, cst.Name) and node.value in module.functions and id(node) not in called:
            _check(module.functions[node.value], module.functions, api, f"`{node.value}` in the graph", set())
        if not isinstance(node, cst.Call):
            continue
        if isinstance(node.func, cst.Name) and node.func.value in module.functions:
            _check(module.functions[node.func.value], module.functions, api, f"`{first_line(node)}` in the graph",
                   set())
        root = node.func
        while isinstance(root, cst.Attribute):
            root = root.value
        if isinstance(root, cst.Name) and root.value in module.program_modules and api(node.func) is None:
            raise Unsupported(node, f"`{first_line(node)}` in the graph: a function of another module of the program "
                                    f"({module.program_modules[root.value]}), which the migration does not follow "
                                    "yet; migrate it by hand")


def _check(function: cst.FunctionDef, functions: dict[str, cst.FunctionDef], api, used: str, seen: set) -> None:
    """``used``: how the graph uses the function (or the one leading to it, whose name ``seen`` starts with)."""
    called = used + (f" (through `{function.name.value}`)" if seen else "")
    seen.add(function.name.value)
    for node in _in_order(function.body):
        if isinstance(node, (cst.Global, cst.Nonlocal)):
            raise Unsupported(node, f"{called} sets `{first_line(node)}`: run at every step now, its function must "
                                    "only compute tensors; migrate it by hand")
        if isinstance(node, cst.Name) and node.value in functions and node.value not in seen:
            _check(functions[node.value], functions, api, used, seen)
        _refuse(node, api, called)


def _refuse(node: cst.CSTNode, api, where: str) -> None:
    """Unsupported if ``node`` calls TensorFlow to do what a step cannot do at every step."""
    name = api(node.func) if isinstance(node, cst.Call) else None
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in ITERATORS:
        name = f"data.Iterator.{node.func.attr.value}"
    why = next((why for test, why in REFUSED if name and test(name)), None)
    if why is not None:
        raise Unsupported(node, f"{where} calls tf.{name}, which {why}")


def _in_order(node: cst.CSTNode):
    """``node`` and every node below it, in the order of the source."""
    stack = [node]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(children(node)))


def check_unpacked(value: cst.BaseExpression, module: ModuleCode, api: Callable[[cst.CSTNode], str | None]) -> None:
    """`a, b = f(...)` in the graph: of TensorFlow, or of a function of the module, which check_calls reads."""
    for node in _in_order(value):
        _refuse(node, api, f"`{first_line(value)}`, unpacked in the graph,")
    check_calls(value, module, api)
    if isinstance(value, cst.Call) and api(value.func) is None and not (
            isinstance(value.func, cst.Name) and value.func.value in module.functions):
        raise Unsupported(value, f"`{first_line(value)}` in the graph: a function neither of TensorFlow nor of the "
                                 "graph's module, which the migration does not follow; migrate it by hand")


def module_code(module: cst.Module, path: str) -> ModuleCode:
    """The functions at the top of the module at ``path`` (the last of those of one name), and its module-level
    imports of modules of the program (files found from it on disk), or of what they define."""
    found = ModuleCode({statement.name.value: statement for statement in module.body
                        if isinstance(statement, cst.FunctionDef)})
    for statement in module.body:
        for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
            for name, candidates in _imported(small):
                where = next(filter(None, (find_module(path, dotted, level, os.path.isfile)
                                           for dotted, level in candidates)), None)
                if where is not None:
                    found.program_modules[name] = os.path.relpath(where, os.path.dirname(path) or ".")
    return found


def _imported(small: cst.BaseSmallStatement):
    """(name bound, [(dotted module, leading dots) it may come from]) of an import statement."""
    if isinstance(small, cst.Import):
        for alias in small.names:
            dotted = alias.evaluated_name
            yield alias.evaluated_alias or dotted.split(".")[0], [(dotted if alias.asname else dotted.split(".")[0], 0)]
    elif isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
        base, level = cst.Module([]).code_for_node(small.module) if small.module else "", len(small.relative)
        for alias in small.names:  # a module of a package, or an object of a module
            yield (alias.evaluated_alias or alias.evaluated_name,
                   [(f"{base}.{alias.evaluated_name}".strip("."), level), (base, level)])
