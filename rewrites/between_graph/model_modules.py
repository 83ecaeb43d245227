"""A function of the program building part of the graph with TF1's layers and `get_variable` (`logits =
model.inference(images, hidden1, hidden2)`, in trainer/model.py or in the graph's own module), which the migration
does not translate: kept as the user's TF1 code, run in a Keras layer of the function's name in CamelCase, whose
`call` is decorated with `tf.compat.v1.keras.utils.track_tf1_style_variables`. The layer is made and called once in
the strategy's scope, on Keras inputs of the tensors' specs, where TF1's code makes its variables (on the ps tasks,
named as TF1 named them); the step calls it with the graph's arguments, and the same code computes with those
variables. The function and what it calls stay as they are (their module made TF2's, TF1's APIs spelled
tf.compat.v1.X: another module is changed with the graph's, so it must be given with it), and so do its other calls,
in other TF1 graphs.

Read: the graph's `name = f(...)` or `a, b = f(...)`, where the first thing `f` (or a function it calls) does that a
step cannot is to make variables. It may make them only with `get_variable` (no partitioner), `variable_scope`,
TF1's `tf.layers` and tf.contrib's layers that tf-slim keeps (where all of tf.contrib its module uses lives on there,
which TFM005 moves it to): what the shim tracks by name. A `tf.Variable` (made again at every call), a Keras layer,
the rest of tf.contrib (gone in TF 2), an optimizer, the global step, TF1's metrics, a function of a third module,
and all a step cannot do otherwise leave the program, named. The call's first argument, and each naming the
graph's tensors, is a tensor of a known spec: the batch's, or a placeholder's of a shape and dtype.

A function of another module making tf.Variables as model_functions.py reads them becomes its tf.Module there
(OtherHome), the graph making it as `model.Inference(...)`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import libcst as cst

from rewrites.between_graph import graph_calls, input_functions, model_functions
from rewrites import tf_api
from rewrites.contrib_successors import successor
from rewrites.program.spelling import Spelling
from rewrites.syntax import Unsupported, bind_arguments, first_line, source, subtree

KEPT = "runs as TF1 code in a Keras layer (track_tf1_style_variables)"
KEPT_IN = "a function kept as TF1 code in a Keras layer (track_tf1_style_variables)"
# What a function kept as TF1 code may not do: (test of the TensorFlow API it calls, why).
REFUSED = (
    (lambda api: api in ("Variable", "get_local_variable", "make_template"), f"makes a variable that {KEPT_IN} "
     "would make again at every call: make it with tf.get_variable, or migrate the function by hand"),
    (lambda api: api.startswith("keras."), f"makes a Keras layer, which {KEPT_IN} does not track: migrate the "
     "function by hand"),
    (lambda api: api.startswith("contrib.") and not _in_tf_slim(api), "is tf.contrib's, gone in TF 2 (tf-slim has "
     "no successor of it): migrate the function by hand"),
    (lambda api: api.startswith("train.") and api.endswith("Optimizer"), "makes an optimizer: the migrated step "
     "applies the graph's; minimize the function's loss in the graph's own block, or migrate it by hand"),
    (lambda api: api.startswith("metrics."), "makes TF1's metric variables, which the migrated step does not run: "
     "migrate the function by hand"),
    *(rule for rule in graph_calls.REFUSED if rule[1] is not graph_calls.MAKES_VARIABLES),
)


def _in_tf_slim(api: str) -> bool:
    """tf.contrib's ``api`` lives on in tf-slim, the same code (TFM005 moves it there)."""
    return (successor(api) or "").startswith("tf_slim.")


# Arguments of a call making variables that the shim cannot carry (sharded variables fail in it).
PARTITIONED = {"get_variable": "partitioner", "variable_scope": "partitioner"}
# Parameters Keras reads itself in a layer's `call`.
KERAS_PARAMETERS = ("training", "mask")


@dataclass
class KeptFunction:
    """A function of the program the graph calls, kept as TF1 code: its module (None: the graph's) and itself."""

    home: graph_calls.ModuleCode | None
    function: cst.FunctionDef

    @property
    def class_name(self) -> str:
        return "".join(part[:1].upper() + part[1:] for part in self.function.name.value.split("_"))


def kept_function(statement, value, module: graph_calls.ModuleCode, api) -> KeptFunction | None:
    """The function ``value`` (the graph's `name = f(...)` or `a, b = f(...)`) calls, when what first stops it from
    running in the step is that it makes variables; Unsupported when it does what a function kept as TF1 code may
    not."""
    if not isinstance(value, cst.Call) or not _bound_to_names(statement):
        return None
    if isinstance(value.func, cst.Name) and value.func.value in module.functions:
        found = None, module.functions[value.func.value]
    elif (found := graph_calls.other_function(value.func, module)) is None:
        return None
    try:
        graph_calls.check_calls(value, module, api)
    except graph_calls.MakesVariables:
        pass
    else:
        return None
    graph_calls.check_calls(value, module, api, REFUSED)
    kept = KeptFunction(*found)
    home = kept.home or module
    used = f"`{first_line(value)}` in the graph"
    if kept.home is not None and graph_calls.in_run(home.path, module.run) is None:
        raise Unsupported(value, f"{used} makes variables in {home.file}, which is not migrated with this file: the "
                                 f"function {KEPT} now, its module a TF2 module; give tf-migrate both files (or their "
                                 "folder)")
    _refuse_partitioners(kept, home, home.api or api, value, used)
    _refuse_other_modules(kept.function, home, value, used, set())
    _refuse_contrib_staying(home, home.api or api, value, used)
    if kept.home is not None:
        refuse_unspelled(kept.function, kept.home, Spelling(kept.home.view), value, used)
    params = kept.function.params
    if not isinstance(params.star_arg, cst.MaybeSentinel) or params.star_kwarg is not None or params.kwonly_params \
            or params.posonly_params:
        raise Unsupported(value, f"{used} makes variables in a function of other than plain parameters: migrate it "
                                 "by hand")
    taken = next((p.name.value for p in params.params if p.name.value in KERAS_PARAMETERS), None)
    if taken is not None:
        raise Unsupported(value, f"{used} makes variables in a function with a parameter `{taken}`, which a Keras "
                                 "layer's call reads itself: migrate it by hand")
    return kept


def _bound_to_names(statement) -> list[str]:
    """The names of `name = value` or `a, b = value` (none: not such a statement)."""
    small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 else None
    if not (isinstance(small, cst.Assign) and len(small.targets) == 1):
        return []
    target = small.targets[0].target
    elements = [e.value for e in target.elements] if isinstance(target, (cst.Tuple, cst.List)) else [target]
    return [e.value for e in elements] if all(isinstance(e, cst.Name) for e in elements) else []


def keep(graph, statement, call: cst.Call, kept: KeptFunction, module: graph_calls.ModuleCode, code) -> None:
    """`logits = model.inference(images, ...)` in the graph (graph.py's Graph): the Keras layer running the
    function's TF1 code, made and first called in the strategy's scope, called in the step."""
    name = f"{kept.function.name.value}_layer"
    if module.names[kept.class_name] or module.names[name]:
        raise Unsupported(call, f"`{first_line(call)}` in the graph makes variables: its function {KEPT} "
                                f"`{kept.class_name}`, made as `{name}`, names the module already has")
    placeholders = {p: (graph.shapes.get(p), graph.dtypes.get(p)) for p in graph.placeholders}
    step, built = build_inputs(call, kept, graph.tensors, graph.elements, placeholders, code)
    graph.variables += [f"{name} = {kept.class_name}()", "# Called once here, its TF1 code makes its variables.",
                        f"{name}({built})"]
    graph.variable_names.append(f"*{name}.trainable_variables")
    graph.tracked.append(name)
    graph.tf1_named.append(name)
    graph.computation.append(f"{code(statement.body[0].targets[0].target)} = {name}({step})")
    graph.computed += _bound_to_names(statement)
    graph.kept.append((layer_class(kept, call, code, module.indent), kept.home, call, kept.function))
    graph.notes.append(("TFM103", call, f"`{first_line(call)}` {KEPT}: `{kept.class_name}`, its variables made "
                                        "once in the strategy's scope, by TF1's names"))


def _refuse_partitioners(kept: KeptFunction, home: graph_calls.ModuleCode, api, call: cst.Call, used: str) -> None:
    """The function's own variables may not be partitioned: the shim cannot make sharded variables."""
    for node in subtree(kept.function):
        name = api(node.func) if isinstance(node, cst.Call) else None
        if name in PARTITIONED and any(arg.keyword and arg.keyword.value == PARTITIONED[name] for arg in node.args):
            where = f" (line {home.position(node)[0]} of {home.file})" if kept.home is not None else ""
            raise Unsupported(call if kept.home is not None else node,
                              f"{used}: tf.{name}(partitioner=...) makes sharded variables, which {KEPT_IN} "
                              f"cannot make{where}; migrate the function by hand")


def _refuse_other_modules(function: cst.FunctionDef, home: graph_calls.ModuleCode, call: cst.Call, used: str,
                          seen: set[int]) -> None:
    """The function, and those of its module it calls, call no function of a third module: only the function's
    own module is made TF2's with the graph's."""
    seen.add(id(function))
    for node in subtree(function.body):
        if not isinstance(node, cst.Call):
            continue
        if isinstance(node.func, cst.Name) and node.func.value in home.functions:
            if id(home.functions[node.func.value]) not in seen:
                _refuse_other_modules(home.functions[node.func.value], home, call, used, seen)
        elif (found := graph_calls.other_function(node.func, home)) is not None:
            raise Unsupported(call, f"{used} makes variables in a function calling `{first_line(node)}` of "
                                    f"{found[0].file}, another module: only the function's own is made a TF2 module "
                                    f"with the graph's; migrate it by hand")


def _refuse_contrib_staying(home: graph_calls.ModuleCode, api, call: cst.Call, used: str) -> None:
    """Where the function's module uses tf.contrib, all of it lives on in tf-slim: TFM005 moves every use of a name
    an import binds, or none, and the migrated program imports the module."""
    names = [node for node in subtree(home.tree) if isinstance(node, (cst.Attribute, cst.Name))
             and (api(node) or "").startswith("contrib.")]
    if not any(_in_tf_slim(api(node)) for node in names):
        return
    staying = next((node for node in names if not _in_tf_slim(api(node)) and (api(node) or "").count(".") > 1), None)
    if staying is not None:
        where = f" (line {home.position(staying)[0]} of {home.file})" if home.position is not None else ""
        raise Unsupported(call if home.position is not None else staying,
                          f"{used} makes variables with tf.contrib's layers, which tf-slim keeps, in a module that "
                          f"also uses tf.{api(staying)}, which TF 2 has not{where}: migrate it by hand")


def build_inputs(call: cst.Call, kept: KeptFunction, tensors: set[str], elements: list[str],
                 placeholders: dict[str, tuple[str | None, str | None]], code) -> tuple[str, str]:
    """(the call's arguments as the step gives them, and as the layer is first called in the strategy's scope: a
    Keras input of each tensor's spec). ``placeholders``: name -> (code of its shape, of its dtype)."""
    bound = bind_arguments(call, [p.name.value for p in kept.function.params.params])
    used = f"`{first_line(call)}` in the graph"
    if bound is None or not call.args or call.args[0].keyword is not None:
        raise Unsupported(call, f"{used} makes variables: its arguments cannot be read (the Keras layer running "
                                "its TF1 code takes the first one, a tensor, by position)")
    step, built = [], []
    for index, arg in enumerate(call.args):
        names = {n.value for n in subtree(arg.value) if isinstance(n, cst.Name)} & tensors
        spec = _spec(arg.value, elements, placeholders) if names or index == 0 else None
        if (names or index == 0) and spec is None:
            raise Unsupported(arg.value, f"{used} makes variables: its argument `{code(arg.value)}` is not a tensor "
                                         f"the migration knows the spec of (the batch's, or a placeholder's of a shape "
                                         f"and dtype), on which the Keras layer running its TF1 code is built in the "
                                         "strategy's scope; migrate it by hand")
        keyword = f"{arg.keyword.value}=" if arg.keyword is not None else ""
        step.append(keyword + code(arg.value))
        built.append(keyword + (f"keras.Input(type_spec={spec})" if spec is not None else code(arg.value)))
    return ", ".join(step), ", ".join(built)


def _spec(value, elements: list[str], placeholders: dict[str, tuple[str | None, str | None]]) -> str | None:
    if not isinstance(value, cst.Name):
        return None
    if value.value in elements:
        return f"{value.value}_spec"
    shape, dtype = placeholders.get(value.value, (None, None))
    return f"tf.TensorSpec({shape}, {dtype})" if shape is not None and dtype is not None else None


def layer_class(kept: KeptFunction, call: cst.Call, code, indent: str) -> cst.ClassDef:
    """The Keras layer running the function's TF1 code: its call takes the parameters the graph's ``call`` gives,
    and passes them on."""
    function = kept.function
    given = set(bind_arguments(call, [p.name.value for p in function.params.params]))
    params = [p.name.value for p in function.params.params if p.name.value in given]
    prefix = _prefix(function, given)
    passed = [name if index < prefix else f"{name}={name}" for index, name in enumerate(params)]
    callee = code(call.func)
    text = (f"class {kept.class_name}(keras.layers.Layer):\n"
            f"{indent}\"\"\"`{callee}` of the TF1 program, run as its TF1 code: the variables it makes are made once,"
            f"\n{indent}in the strategy's scope, named as TF1 named them.\"\"\"\n\n"
            f"{indent}@tf.compat.v1.keras.utils.track_tf1_style_variables\n"
            f"{indent}def call(self, {', '.join(params)}):\n"
            f"{indent * 2}# Entered again at each call, TF1's scope names unnamed layers as the first call did\n"
            f"{indent * 2}# (`dense`, not `dense_1`): as TF1 named them, once, in its graph.\n"
            f"{indent * 2}with tf.compat.v1.variable_scope(tf.compat.v1.get_variable_scope()):\n"
            f"{indent * 3}return {callee}({', '.join(passed)})\n")
    return cst.parse_module(text).body[0].with_changes(
        leading_lines=[cst.EmptyLine(indent=False), cst.EmptyLine(indent=False)])


def _prefix(function: cst.FunctionDef, given: set[str]) -> int:
    """How many of the function's first parameters the call gives: those passed on by position."""
    count = 0
    for param in function.params.params:
        if param.name.value not in given:
            break
        count += 1
    return count


def module_note(function: cst.FunctionDef, layer: cst.ClassDef, path: str) -> str:
    """The TFM103 of the function, in its module."""
    return (f"`{function.name.value}` runs as its TF1 code in the Keras layer `{layer.name.value}` of the "
            f"between-graph program of {path} now (track_tf1_style_variables): its variables made once, in the "
            "strategy's scope, named as TF1 named them; this module is a TF2 module, its TF1 calls spelled "
            "tf.compat.v1.X")


@dataclass
class OtherHome:
    """A function of another module making tf.Variables as model_functions.py reads them (the TF tutorials'
    `model.inference(images, hidden1)` of name scopes): the tf.Module replacing it is written in its module, made
    TF2's with the graph's, and the graph makes it as `model.Inference(...)`."""

    module: graph_calls.ModuleCode
    call: cst.Call
    prefix: str  # how the graph names the module: `model.`
    uses: int  # 1: called nowhere else in the program
    spelled: Callable[[cst.CSTNode], cst.CSTNode]  # the module's TensorFlow references respelled

    def check(self, model: model_functions.ModelFunction) -> None:
        if model.placeholders:
            raise Unsupported(self.call, f"`{first_line(self.call)}` in the graph makes a placeholder in "
                                         f"{self.module.file}, which the step would take: migrate it by hand")

    def note(self, module: cst.ClassDef, path: str) -> str:
        """The TFM103 of the function, in its module."""
        return (f"`{module.name.value}` (a tf.Module) replaces the function making variables that the between-graph "
                f"program of {path} calls: its variables made once, in the strategy's scope, its call computing "
                "with them in the step; this module is a TF2 module, its TF1 calls spelled tf.compat.v1.X")


def other_model_function(value, module: graph_calls.ModuleCode
                         ) -> tuple[graph_calls.ModuleCode, cst.FunctionDef] | None:
    """(its module, the function) when ``value`` calls a function of another module of the program that makes
    tf.Variables as model_functions.py reads them."""
    found = graph_calls.other_function(value.func, module) if isinstance(value, cst.Call) else None
    if found is None or found[0].api is None:
        return None
    other, function = found
    called = cst.Call(cst.Name(function.name.value))
    return found if model_functions.model_function(called, other, other.api) is not None else None


def other_home(call: cst.Call, other: graph_calls.ModuleCode, function: cst.FunctionDef,
               module: graph_calls.ModuleCode) -> OtherHome:
    """Where the tf.Module replacing ``function`` goes; Unsupported when the graph cannot make it from there."""
    used = f"`{first_line(call)}` in the graph makes variables in {other.file}"
    class_name = "".join(part[:1].upper() + part[1:] for part in function.name.value.split("_"))
    if graph_calls.in_run(other.path, module.run) is None:
        raise Unsupported(call, f"{used}, which is not migrated with this file: the function becomes the tf.Module "
                                f"`{class_name}` there; give tf-migrate both files (or their folder)")
    if not isinstance(call.func, cst.Attribute):
        raise Unsupported(call, f"{used}, imported by its name: the function becomes the tf.Module `{class_name}` "
                                "there, which this module does not import; call it through its module (`import "
                                "model`, `model.inference(...)`) or migrate it by hand")
    if module.names[function.name.value] != 1:
        raise Unsupported(call, f"{used}: the graph's module names `{function.name.value}` otherwise, which the "
                                "migrated program binds to the function's tf.Module")
    spelling = Spelling(other.view)
    refuse_unspelled(function, other, spelling, call, f"`{first_line(call)}` in the graph")
    elsewhere = input_functions.called_elsewhere(call, function, module, other)
    return OtherHome(other, call, f"{source(call.func.value)}.", 1 if elsewhere == [] else 2, spelling.spelled)


def refuse_unspelled(function: cst.FunctionDef, home: graph_calls.ModuleCode, spelling: Spelling, call: cst.Call,
                     used: str) -> None:
    """The function names no TF1 API that TF 2 has not, where its module keeps it as it is (a module whose only TF1
    names are renamed ones reads as TF 2's): the migrated program would not find it."""
    if spelling.rebinding.kind not in ("tf2", "none"):
        return
    for node in graph_calls.in_order(function):
        name = home.api(node) if isinstance(node, cst.Attribute) else None
        if name is not None and not name.startswith("contrib.") and not tf_api.exists_in_tf2(name):
            raise Unsupported(call, f"{used}: tf.{name} (line {home.position(node)[0]} of {home.file}), which TF 2 "
                                    "has not, in a module read as TF 2's: spell it as TF 2 does (or "
                                    "tf.compat.v1's) and migrate again")
