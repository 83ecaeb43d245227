"""Calls in the worker's graph to functions of the program (`logits, probabilities = predict(x)`).

Migrated, a call of the graph runs in the step function, at every step: a function whose body (and that of the
functions it calls in turn) is only ops of tensors computes there what it computed in TF1's graph, and is kept as
it is. One of the module that makes variables becomes a tf.Module (model_functions.py). One that makes variables
otherwise, or placeholders, reads TF1's queues or writes to graph collections, summaries or globals would do that
at every step: the program is left, naming what the function does and where.
A function of another module of the program (`import model` then `model.inference(x)`, `from trainer.model
import inference`: a file found from the graph's, read from disk) is read the same way, and called from its module
as TF1 did; what stops it is named with its file and line, and so is its module's code run on import that a TF 2
program cannot run (its input function, input_functions.py, is changed with the graph's module when given with it). A call
into such a module of anything but a function defined at its top is left, and so is a
function of an imported module whose file is not found (named with its import).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Collection
from dataclasses import dataclass, field, replace

import libcst as cst

from rewrites import tf_api
from rewrites.program.imports import find_module
from rewrites.program.modules import Tree
from rewrites.program.spelling import Spelling
from rewrites.syntax import Unsupported, children, first_line

# What a function run at every step may not do: (test of the TensorFlow API it calls, why).
MAKES_VARIABLES = "makes variables: the step function would make them again at every step; make them in the " \
                  "graph's own block (or Keras layers in the strategy's scope) by hand"
ITERATORS = ("make_one_shot_iterator", "make_initializable_iterator", "get_next")  # methods of TF1's datasets
READS_DATA = ("reads a tf.data input: the step would start it anew at every step; build the pipeline and its one-shot "
              "iterator in the graph's own block (`x, y = tf.compat.v1.data.make_one_shot_iterator(dataset)."
              "get_next()`) or return those batches from a function of the graph's module, whose dataset becomes "
              "the per-worker dataset_fn")
REFUSED: tuple[tuple[Callable[[str], bool], str], ...] = (
    (lambda api: api in ("Variable", "get_variable", "get_local_variable", "variable_scope", "make_template")
     or api.startswith(("layers.", "keras.layers.", "contrib.layers.", "contrib.slim.", "contrib.rnn."))
     or (api.startswith("train.") and api.endswith("Optimizer")), MAKES_VARIABLES),
    (lambda api: api.startswith("train.") and "global_step" in api, "makes or reads the global step: the migrated "
     "program counts steps with its optimizer's iterations"),
    (lambda api: api in ("placeholder", "placeholder_with_default"), "makes a placeholder: TF 2 has none; the "
     "step's inputs are the placeholders of the graph's own block"),
    (lambda api: reads_queues(api),
     "reads TF1's input queues: a TF 2 step cannot run them; feed the batches as a tf.data dataset by hand"),
    (lambda api: api.startswith("data."), READS_DATA),
    (lambda api: api in ("add_to_collection", "add_to_collections", "get_collection", "get_collection_ref")
     or api.startswith("summary."), "writes to the TF1 graph's collections or summaries: the "
     "migrated step has none"),
)


def reads_queues(api: str) -> bool:
    """``api`` makes or reads TF1's input queues (and the queue runners that fill them)."""
    return api.endswith(("input_producer", "Reader", "Queue")) or api in (
        "train.batch", "train.shuffle_batch", "train.batch_join", "train.shuffle_batch_join", "train.maybe_batch",
        "train.limit_epochs", "train.slice_input_producer", "train.QueueRunner", "train.add_queue_runner",
        "train.queue_runner.QueueRunner", "train.queue_runner.add_queue_runner") \
        or api.startswith(("contrib.slim.queues", "contrib.slim.data", "contrib.slim.parallel_reader"))


# What the module of a function the step calls may not run on import (the migrated program imports it).
IMPORTED = (
    (lambda api: api in ("disable_v2_behavior", "disable_eager_execution", "disable_resource_variables",
                         "disable_tensor_equality", "disable_control_flow_v2"),
     "turns TF 2's behaviour off for the migrated program; remove that from the module by hand"),
    *REFUSED,
)


@dataclass
class ModuleCode:
    """What of its module the graph (or a function of another module it calls) may call: its functions, and the
    modules of the program it imports. Another module's also reads its TensorFlow names (``api``), places what
    it finds (``position``) and has its module-level statements, which run when the migrated program imports it."""

    functions: dict[str, cst.FunctionDef] = field(default_factory=dict)  # the module's top-level ones, by name
    program_modules: dict[str, str] = field(default_factory=dict)  # a name bound by an import -> the module's path
    # That name -> (the module's file, the object of the module the name binds; None: the module itself).
    imported: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    unfound: dict[str, str] = field(default_factory=dict)  # a name bound by an import found in no file -> the import
    file: str = ""
    api: Callable[[cst.CSTNode], str | None] | None = None
    position: Callable[[cst.CSTNode], tuple[int, int]] | None = None
    module_level: list[cst.SimpleStatementLine] = field(default_factory=list)
    loaded: dict[str, ModuleCode | None] = field(default_factory=dict)  # the other modules read so far, by file
    names: Counter = field(default_factory=Counter)  # how often the module names each name
    indent: str = "    "
    run: dict[str, str] = field(default_factory=dict)  # the texts of the files migrated with the graph's, by path
    path: str = ""  # another module's file, and its view (the nodes of its functions are the view's)
    view: Tree | None = None
    tree: cst.Module | None = None  # the module itself


class MakesVariables(Unsupported):
    """What a function the step would call does first that it cannot: make variables (model_modules.py may keep
    such a function as TF1 code in a Keras layer)."""


def check_calls(value: cst.BaseExpression, module: ModuleCode, api: Callable[[cst.CSTNode], str | None],
                refused=None) -> None:
    """Unsupported, at the first thing a function of the program called in ``value`` (or one it calls, or uses)
    does that the step function cannot do at every step (``refused``: REFUSED unless given), or at a call of
    another module of the program that is not one of its functions; the message names the graph's call."""
    nodes = _Nodes(value)
    for node in nodes:
        _check_use(node, nodes, module, api, None, set(), refused or REFUSED)


class _Nodes:
    """The nodes of some code in the order of the source, and what they are used as."""

    def __init__(self, code: cst.CSTNode) -> None:
        self.nodes = list(in_order(code))
        self.calls = {id(node.func): node for node in self.nodes if isinstance(node, cst.Call)}
        self.not_names = {id(node.attr) for node in self.nodes if isinstance(node, cst.Attribute)} | {
            id(node.keyword) for node in self.nodes if isinstance(node, cst.Arg) and node.keyword}

    def __iter__(self):
        return iter(self.nodes)

    def use(self, node: cst.CSTNode) -> cst.CSTNode:
        """The call of ``node``, or ``node`` when it is not called."""
        return self.calls.get(id(node), node)


def _check_use(node: cst.CSTNode, nodes: _Nodes, module: ModuleCode, api, used: str | None, seen: set,
               refused) -> None:
    """If ``node`` names a function of the program, that function checked. ``used``: how the graph uses the
    function ``node`` is in (None: ``node`` is the graph's)."""
    def how() -> str:
        return used or f"`{first_line(nodes.use(node))}` in the graph"

    if isinstance(node, cst.Name) and node.value in module.functions and id(node) not in nodes.not_names:
        if id(module.functions[node.value]) not in seen:
            _check(module.functions[node.value], module, api, how(), seen, refused)
    elif (found := other_function(node, module)) is not None:
        if id(found[1]) not in seen:
            _check_other(nodes.use(node), *found, how(), seen, refused)
    elif isinstance(node, cst.Call) and (name := _program_module(node.func, module)) and api(node.func) is None \
            and other_function(node.func, module) is None:
        raise Unsupported(node, f"{how()}: `{first_line(node)}` calls into another module of the program "
                                f"({module.program_modules[name]}) what is not a function defined at its top, "
                                "which the migration does not follow; migrate it by hand")


def _program_module(node: cst.CSTNode, module: ModuleCode) -> str | None:
    """The name of the program's module (or of its object) an expression starts with."""
    while isinstance(node, cst.Attribute):
        node = node.value
    return node.value if isinstance(node, cst.Name) and node.value in module.program_modules else None


def other_function(node: cst.CSTNode, module: ModuleCode) -> tuple[ModuleCode, cst.FunctionDef] | None:
    """(its module, the function) when ``node`` names a top-level function of another module of the program:
    `model.inference` (`import model`, `from trainer import model`) or `inference` (`from model import
    inference`)."""
    if isinstance(node, cst.Name) and module.imported.get(node.value, ("", None))[1] is not None:
        where, name = module.imported[node.value]
    elif isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) \
            and module.imported.get(node.value.value, (None, ""))[1] is None:
        where, name = module.imported[node.value.value][0], node.attr.value
    else:
        return None
    other = _load(where, module)
    return (other, other.functions[name]) if other is not None and name in other.functions else None


def _load(where: str, module: ModuleCode) -> ModuleCode | None:
    """The code of the module in file ``where`` (None: it cannot be read)."""
    if where not in module.loaded:
        try:
            text = in_run(where, module.run)
            if text is None:
                with open(where, encoding="utf-8") as file:
                    text = file.read()
            view = Tree({where: text}, exists=os.path.isfile).view(where)
        except (OSError, UnicodeDecodeError, cst.ParserSyntaxError):
            module.loaded[where] = None
        else:
            module.loaded[where] = replace(
                module_code(view.module, where), file=os.path.basename(where), api=view.api, position=view.position,
                module_level=[s for s in view.module.body if isinstance(s, cst.SimpleStatementLine)],
                loaded=module.loaded, run=module.run, path=where, view=view)
    return module.loaded[where]


def in_run(where: str, run: dict[str, str]) -> str | None:
    """The text of file ``where`` when it is migrated with the graph's (None: it is not)."""
    return next((text for path, text in run.items() if os.path.abspath(path) == os.path.abspath(where)), None)


def _check_other(node: cst.CSTNode, other: ModuleCode, function: cst.FunctionDef, used: str, seen: set,
                 refused) -> None:
    """A function of another module, called from there by the migrated step: neither it nor its module's code
    run on import may do what a step cannot. What stops it is found there and reported at ``node``."""
    try:
        for statement in other.module_level:
            for inner in in_order(statement):
                refuse(inner, other.api, f"{used}: its module, imported by the migrated program,", IMPORTED)
        _check(function, other, other.api, used, seen, refused)
        if refused is REFUSED:  # else the caller makes the module TF 2's (model_modules.py, input_functions.py)
            _refuse_tf1_only(function, other, used)
    except Unsupported as problem:
        where = "" if getattr(problem, "placed", False) else \
            f" (line {other.position(problem.node)[0]} of {other.file}: `{first_line(problem.node)}`)"
        placed = type(problem)(node, f"{problem}{where}")
        placed.placed = True  # by the innermost module's
        raise placed from None


def _refuse_tf1_only(function: cst.FunctionDef, other: ModuleCode, used: str) -> None:
    """The step calls ``function`` as its module has it, TF 2's `tf` bound there: neither it nor a function of the
    module it calls may name a TF1 API that TF 2 has not (`tf.to_int64`), which would raise at the first step."""
    if Spelling(other.view).rebinding.kind == "v1":  # tf is tf.compat.v1 there, which TF 2 has
        return
    pending, seen = [function], set()
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        for node in in_order(current):
            if isinstance(node, cst.Name) and node.value in other.functions:
                pending.append(other.functions[node.value])
            name = other.api(node) if isinstance(node, cst.Attribute) else None
            if name is not None and not name.startswith("contrib.") and not tf_api.exists_in_tf2(name):
                raise Unsupported(node, f"{used}: tf.{name}, which TF 2 has not, in {other.file}, which the migrated "
                                        "program imports as it is: spell it as TF 2 does (or as tf.compat.v1's) and "
                                        "migrate again")


def _check(function: cst.FunctionDef, module: ModuleCode, api, used: str, seen: set, refused) -> None:
    """``used``: how the graph uses the function (or the one leading to it, which ``seen`` starts with)."""
    called = used + (f" (through `{function.name.value}`)" if seen else "")
    seen.add(id(function))
    nodes = _Nodes(function.body)
    for node in nodes:
        if isinstance(node, (cst.Global, cst.Nonlocal)):
            raise Unsupported(node, f"{called} sets `{first_line(node)}`: run at every step now, its function must "
                                    "only compute tensors; migrate it by hand")
        _check_use(node, nodes, module, api, used, seen, refused)
        refuse(node, api, called, refused)


def refuse(node: cst.CSTNode, api, where: str, refused=REFUSED) -> None:
    """Unsupported if ``node`` calls TensorFlow to do what a step cannot do at every step (or ``refused``)."""
    name = api(node.func) if isinstance(node, cst.Call) else None
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in ITERATORS:
        name = f"data.Iterator.{node.func.attr.value}"
    why = next((why for test, why in refused if name and test(name)), None)
    if why is not None:
        raise (MakesVariables if why is MAKES_VARIABLES else Unsupported)(node, f"{where} calls tf.{name}, which {why}")


def in_order(node: cst.CSTNode):
    """``node`` and every node below it, in the order of the source."""
    stack = [node]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(children(node)))


def check_unpacked(value: cst.BaseExpression, module: ModuleCode, api: Callable[[cst.CSTNode], str | None],
                   in_graph: Collection[str] = ()) -> None:
    """`a, b = f(...)` in the graph: of TensorFlow, or of a function of the module, which check_calls reads.
    ``in_graph``: the functions the graph's block defines."""
    for node in in_order(value):
        refuse(node, api, f"`{first_line(value)}`, unpacked in the graph,")
    check_calls(value, module, api)
    if isinstance(value, cst.Call) and api(value.func) is None and not (
            isinstance(value.func, cst.Name) and value.func.value in module.functions) \
            and other_function(value.func, module) is None:
        raise Unsupported(value, f"`{first_line(value)}` in the graph: {_not_followed(value.func, module, in_graph)}")


def _not_followed(func: cst.BaseExpression, module: ModuleCode, in_graph: Collection[str]) -> str:
    """Why the migration cannot read a function the graph unpacks: defined in the graph's block, of no module it
    knows, or of one imported (`import model`) whose file is not found from the program's."""
    if isinstance(func, cst.Name) and func.value in in_graph:
        return ("a function defined in the graph's block, which the migration reads there only as one its tf.data "
                "pipeline maps; define it at the top of the module, where one that only computes tensors is called in "
                "the step, or migrate it by hand")
    while isinstance(func, cst.Attribute):
        func = func.value
    if isinstance(func, cst.Name) and func.value in module.unfound:
        return (f"a function of a module imported (`{module.unfound[func.value]}`) whose file is not found from this "
                "one's folder, where the migration reads the program's modules: migrate it with that file beside "
                "it, or by hand")
    return ("a function neither of TensorFlow nor of the program, which the migration does not follow; migrate it "
            "by hand")


def module_code(module: cst.Module, path: str) -> ModuleCode:
    """The functions at the top of the module at ``path`` (the last of those of one name), and its module-level
    imports of modules of the program (files found from it on disk), or of what they define."""
    found = ModuleCode({statement.name.value: statement for statement in module.body
                        if isinstance(statement, cst.FunctionDef)},
                       names=Counter(node.value for node in in_order(module) if isinstance(node, cst.Name)),
                       indent=module.default_indent, tree=module)
    for statement in module.body:
        for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
            for name, candidates in _imported(small):
                where, obj = next(((file, obj) for dotted, level, obj in candidates
                                   if (file := find_module(path, dotted, level, os.path.isfile))), (None, None))
                if where is not None:
                    found.program_modules[name] = os.path.relpath(where, os.path.dirname(path) or ".")
                    found.imported[name] = (where, obj)
                else:
                    found.unfound[name] = first_line(small)
    return found


def _imported(small: cst.BaseSmallStatement):
    """(name bound, [(dotted module, leading dots, the object of it bound or None) it may come from]) of an
    import statement."""
    if isinstance(small, cst.Import):
        for alias in small.names:
            dotted = alias.evaluated_name
            yield alias.evaluated_alias or dotted.split(".")[0], [
                (dotted if alias.asname else dotted.split(".")[0], 0, None)]
    elif isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
        base, level = cst.Module([]).code_for_node(small.module) if small.module else "", len(small.relative)
        for alias in small.names:  # a module of a package, or an object of a module
            yield (alias.evaluated_alias or alias.evaluated_name,
                   [(f"{base}.{alias.evaluated_name}".strip("."), level, None), (base, level, alias.evaluated_name)])
