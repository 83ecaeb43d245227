"""Calls in the worker's graph to functions of its own module (`logits, probabilities = predict(x)`).

Migrated, a call of the graph runs in the step function, at every step: a function whose body (and that of the
module's functions it calls in turn) is only ops of tensors computes there what it computed in TF1's graph, and is
kept as it is. One that makes variables or placeholders, reads TF1's queues or writes to graph collections,
summaries or globals would do that at every step: the program is left, naming what the function does and where.
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from rewrites.syntax import Unsupported, first_line, subtree

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


def check_calls(value: cst.BaseExpression, functions: dict[str, cst.FunctionDef],
                api: Callable[[cst.CSTNode], str | None]) -> None:
    """Unsupported, at the first thing a function of ``functions`` called in ``value`` (or one it calls, or uses)
    does that the step function cannot do at every step; the message names the graph's call."""
    for node in subtree(value):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value in functions:
            _check(functions[node.func.value], functions, api, node, set())


def _check(function: cst.FunctionDef, functions: dict[str, cst.FunctionDef], api, call: cst.Call, seen: set) -> None:
    seen.add(function.name.value)
    called = f"`{first_line(call)}` in the graph" + (
        "" if function.name.value == call.func.value else f" (through `{function.name.value}`)")
    for node in subtree(function.body):
        if isinstance(node, (cst.Global, cst.Nonlocal)):
            raise Unsupported(node, f"{called} sets `{first_line(node)}`: run at every step now, its function must "
                                    "only compute tensors; migrate it by hand")
        if isinstance(node, cst.Name) and node.value in functions and node.value not in seen:
            _check(functions[node.value], functions, api, call, seen)
        name = api(node.func) if isinstance(node, cst.Call) else None
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in ITERATORS:
            name = f"data.Iterator.{node.func.attr.value}"
        why = next((why for test, why in REFUSED if name and test(name)), None)
        if why is not None:
            raise Unsupported(node, f"{called} calls tf.{name}, which {why}")


def check_unpacked(value: cst.BaseExpression, functions: dict[str, cst.FunctionDef],
                   api: Callable[[cst.CSTNode], str | None]) -> None:
    """`a, b = f(...)` in the graph: of TensorFlow, or of a function of the module, which check_calls reads."""
    if isinstance(value, cst.Call) and api(value.func) is None and not (
            isinstance(value.func, cst.Name) and value.func.value in functions):
        raise Unsupported(value, f"`{first_line(value)}` in the graph: a function neither of TensorFlow nor of the "
                                 "graph's module, which the migration does not follow; migrate it by hand")


def module_functions(module: cst.Module) -> dict[str, cst.FunctionDef]:
    """The functions defined at the top of the module, by name (the last of those of one name)."""
    return {statement.name.value: statement for statement in module.body if isinstance(statement, cst.FunctionDef)}
