"""A function of the module that builds part of the graph with variables of its own: the Deep-MNIST tutorials'
`y_conv, keep_prob = deepnn(x)`, whose variables `weight_variable(shape)` makes, or `x, y, y_, loss =
mnist_inference(hidden_units)`, which makes them with `tf.Variable` and its inputs with `tf.placeholder`.

Run in the step, such a function would make its variables again at every step. The migrated module has a tf.Module
in its place, of the function's name in CamelCase: its `__init__` makes the variables, as the function's own
statements made them (the same ops draw their initial values), once, in the strategy's scope (on the ps tasks); its
`__call__` runs the rest of the function's body with them, in the step. A placeholder the function makes and
returns becomes a parameter of `__call__`, fed as the graph's own placeholders are. A parameter of the function goes
to `__init__`, `__call__` or both, after what reads it.

Read: a function of the module, called once in the module, whose statements are assignments to names: a variable
(`tf.Variable(...)`, or a function of the module whose last statement is `return tf.Variable(...)`), a placeholder,
or ops of tensors (graph_calls.py), then one `return` of names. Statements may stand in `with tf.name_scope("s"):`
blocks, as in the TF1 tutorials' MNIST `inference`, each layer's `weights` and `biases` in a scope of its own: a
variable made there is the module's `s_weights` (TF1 named it `s/weights`), read as such by the statements after it
until the name is bound again. What does not fit is named (Unsupported).
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field

import libcst as cst

from rewrites.between_graph import graph_calls
from rewrites.syntax import Unsupported, bind_arguments, first_line, single_assign, source, string_value, subtree


# Builtins the step may call on what it computes.
BUILTINS = {"len", "int", "float", "bool", "abs", "min", "max", "sum", "range", "list", "tuple", "zip", "enumerate"}


@dataclass
class ModelFunction:
    """A function building a model, read: what goes to the tf.Module's `__init__` and to its `__call__`."""

    function: cst.FunctionDef
    variables: list[tuple[str, cst.SimpleStatementLine, cst.Call]] = field(default_factory=list)  # name, its
    # statement, the tf.Variable call making it (the helper's, for a helper's variable)
    placeholders: dict[str, cst.Call] = field(default_factory=dict)  # local name -> its tf.placeholder call
    computation: list[cst.BaseStatement] = field(default_factory=list)  # the rest, and the return, in order
    returned: list[str | None] = field(default_factory=list)  # the names returned (None: another expression)
    built_from: list[cst.Param] = field(default_factory=list)  # the parameters __init__ takes
    called_with: list[cst.Param] = field(default_factory=list)  # and __call__, before the placeholders
    scopes: dict[str, str] = field(default_factory=dict)  # a variable made in a name scope -> the scope
    reading: dict[int, dict[str, str]] = field(default_factory=dict)  # id of a statement -> the variables it may
    # read: the function's name -> the module's attribute holding the variable bound to it there

    @property
    def class_name(self) -> str:
        return "".join(part[:1].upper() + part[1:] for part in self.function.name.value.split("_"))


def model_function(call: cst.BaseExpression, module: graph_calls.ModuleCode,
                   api: Callable[[cst.CSTNode], str | None]) -> cst.FunctionDef | None:
    """The function of the module ``call`` calls, when it makes variables itself or through a helper."""
    if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value in module.functions):
        return None
    function = module.functions[call.func.value]
    return function if any(_variable_call(statement, module, api) is not None
                           for statement in _in_name_scopes(function.body.body, api)) else None


def _in_name_scopes(statements, api):
    """The statements, and those of the `with tf.name_scope(...):` blocks among them, however nested."""
    for statement in statements:
        items = statement.items if isinstance(statement, cst.With) else ()
        if len(items) == 1 and isinstance(items[0].item, cst.Call) and api(items[0].item.func) == "name_scope":
            yield from _in_name_scopes(statement.body.body, api)
        else:
            yield statement


def _variable_call(statement: cst.CSTNode, module: graph_calls.ModuleCode, api) -> cst.Call | None:
    """The `tf.Variable(...)` call of `name = tf.Variable(...)` or of `name = helper(...)` (a function of the
    module whose last statement returns one)."""
    assign = single_assign(statement)
    value = assign[1] if assign else None
    if not isinstance(value, cst.Call):
        return None
    if api(value.func) == "Variable":
        return value
    helper = module.functions.get(value.func.value) if isinstance(value.func, cst.Name) else None
    last = helper.body.body[-1] if helper is not None and helper.body.body else None
    returned = last.body[0].value if isinstance(last, cst.SimpleStatementLine) and isinstance(
        last.body[0], cst.Return) else None
    return returned if isinstance(returned, cst.Call) and api(returned.func) == "Variable" else None


def read(call: cst.Call, function: cst.FunctionDef, module: graph_calls.ModuleCode, api,
         uses: int) -> ModelFunction:
    """``function``, called by ``call`` in the graph (``uses``: how often the module names it), read."""
    used = f"`{first_line(call)}` in the graph"
    if uses != 1:
        raise Unsupported(call, f"{used} makes variables in a function the module names elsewhere too: the migrated "
                                f"module makes it a tf.Module; migrate the other uses by hand")
    params = function.params
    if not isinstance(params.star_arg, cst.MaybeSentinel) or params.star_kwarg is not None or params.kwonly_params \
            or params.posonly_params:
        raise Unsupported(function, f"{used} makes variables in a function of other than plain parameters")
    model = ModelFunction(function)
    body = list(function.body.body)
    if body and _is_docstring(body[0]):
        body = body[1:]
    *statements, last = body or [function]
    model.returned = _returned(last, used)
    bound: set[str] = set()
    current: dict[str, str] = {}  # the function's name -> the attribute of the variable it holds
    for statement, scope in _scoped(statements, api, used):
        model.reading[id(statement)] = dict(current)
        assign = single_assign(statement)
        if assign is None and _unpacked_names(statement):
            _check_computation(statement, module, api, used)
            model.computation.append(statement)
            bound |= set(_unpacked_names(statement))
            for name in _unpacked_names(statement):
                current.pop(name, None)
            continue
        if assign is None:
            raise Unsupported(statement, f"{used}: `{first_line(statement)}` in a function making variables: only "
                                         "assignments to names are migrated")
        name, value = assign
        made = _variable_call(statement, module, api)
        current.pop(name, None)
        if made is not None:
            attribute = f"{scope}_{name}" if scope is not None else name
            if (name in bound and scope is None) or attribute in {v for v, _, _ in model.variables}:
                raise Unsupported(statement, f"{used}: `{name}` is bound twice in a function making variables")
            _refuse_helper(value, module, api, used)
            model.variables.append((attribute, statement, made))
            current[name] = attribute
            if scope is not None:
                model.scopes[attribute] = scope
        elif isinstance(value, cst.Call) and api(value.func) == "placeholder":
            model.placeholders[name] = value
        else:
            _check_computation(statement, module, api, used)
            model.computation.append(statement)
        bound.add(name)
    model.reading[id(last)] = current
    model.computation.append(last)
    _check_order(model, used)
    _split_parameters(model, used)
    return model


def _scoped(statements: list[cst.BaseStatement], api, used: str, scope: str | None = None):
    """(statement, the name scope it is in) of the function's statements and of those of its `with
    tf.name_scope("s"):` blocks, in order: a scope names TF1's ops and variables, which the module's attributes
    keep."""
    for statement in statements:
        items = statement.items if isinstance(statement, cst.With) else ()
        if not (len(items) == 1 and isinstance(items[0].item, cst.Call) and items[0].asname is None
                and api(items[0].item.func) == "name_scope"):
            yield statement, scope
            continue
        args = items[0].item.args
        name = string_value(args[0].value) if args and args[0].keyword is None else None
        if name is None or not name.isidentifier() or scope is not None:
            raise Unsupported(statement, f"{used}: `{first_line(statement)}` in a function making variables: one "
                                         "name scope of a plain name is read")
        yield from _scoped(list(statement.body.body), api, used, name)


def _unpacked_names(statement: cst.CSTNode) -> list[str]:
    """The names of `a, b = value`."""
    small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 else None
    target = small.targets[0].target if isinstance(small, cst.Assign) and len(small.targets) == 1 else None
    elements = target.elements if isinstance(target, (cst.Tuple, cst.List)) else ()
    names = [element.value for element in elements]
    return [name.value for name in names] if names and all(isinstance(name, cst.Name) for name in names) else []


def _check_computation(statement: cst.CSTNode, module: graph_calls.ModuleCode, api, used: str) -> None:
    """What the step runs: ops of tensors, functions of the program that only compute them, or a few builtins;
    a call of anything else (a class the function was given, `algo_cls(...)`) may make variables unseen."""
    value = statement.body[0].value
    for node in graph_calls.in_order(value):
        graph_calls.refuse(node, api, used)
        if isinstance(node, cst.Call) and api(node.func) is None and not _program_or_builtin(node.func, module):
            raise Unsupported(node, f"{used}: `{first_line(node)}` in a function making variables calls what is "
                                    "neither TensorFlow nor a function of the program, which may make variables at "
                                    "every step; migrate it by hand")
    graph_calls.check_calls(value, module, api)


def _program_or_builtin(func: cst.BaseExpression, module: graph_calls.ModuleCode) -> bool:
    if isinstance(func, cst.Name):
        return func.value in module.functions or func.value in BUILTINS \
            or graph_calls.other_function(func, module) is not None
    return graph_calls.other_function(func, module) is not None


def _is_docstring(statement: cst.CSTNode) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and isinstance(statement.body[0], cst.Expr) \
        and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))


def _returned(last: cst.CSTNode, used: str) -> list[str]:
    value = last.body[0].value if isinstance(last, cst.SimpleStatementLine) and isinstance(
        last.body[0], cst.Return) else None
    if value is None:
        raise Unsupported(last, f"{used}: a function making variables must end with its `return`")
    values = [element.value for element in value.elements] if isinstance(value, cst.Tuple) else [value]
    return [value.value if isinstance(value, cst.Name) else None for value in values]


def _refuse_helper(value: cst.Call, module: graph_calls.ModuleCode, api, used: str) -> None:
    """A helper making a variable may not make placeholders or read queues: it runs once, where the model is
    built."""
    helper = module.functions.get(value.func.value) if isinstance(value.func, cst.Name) else None
    for statement in helper.body.body[:-1] if helper is not None else ():
        for node in graph_calls.in_order(statement):
            graph_calls.refuse(node, api, f"{used} (through `{helper.name.value}`)")


def _names_in(node: cst.CSTNode) -> set[str]:
    """The names read in ``node`` (not attributes' or keywords')."""
    nodes = list(subtree(node))
    not_names = {id(n.attr) for n in nodes if isinstance(n, cst.Attribute)} | {
        id(n.keyword) for n in nodes if isinstance(n, cst.Arg) and n.keyword}
    return {n.value for n in nodes if isinstance(n, cst.Name) and id(n) not in not_names}


def _check_order(model: ModelFunction, used: str) -> None:
    """The variables are made before the step: of the function's own names, they may read only other variables;
    the placeholders' shapes are read where the step is defined, and must be returned to be fed."""
    locals_ = {*model.placeholders, *(single_assign(s)[0] for s in model.computation[:-1])}
    params = {param.name.value for param in model.function.params.params}
    for _, statement, _ in model.variables:
        if _names_in(single_assign(statement)[1]) & locals_:
            raise Unsupported(statement, f"{used}: a variable made from the function's tensors: migrate it by hand")
    for name, call in model.placeholders.items():
        if _names_in(call) & (locals_ | params | {v for v, _, _ in model.variables}):
            raise Unsupported(call, f"{used}: a placeholder shaped by the function's own names: migrate it by hand")
        if name not in model.returned:
            raise Unsupported(call, f"{used}: a placeholder the function does not return, which nothing can feed")


def _split_parameters(model: ModelFunction, used: str) -> None:
    building = set().union(*(_names_in(single_assign(s)[1]) for _, s, _ in model.variables))
    computing = set().union(*(_names_in(s) for s in model.computation))
    for param in model.function.params.params:
        name = param.name.value
        if name in building:
            model.built_from.append(param)
        if name in computing or name not in building:
            model.called_with.append(param)
        if name in model.placeholders or name in {single_assign(s)[0] for _, s, _ in model.variables}:
            raise Unsupported(param, f"{used}: a parameter of a function making variables is rebound in it")


def arguments(model: ModelFunction, call: cst.Call, params: list[cst.Param],
              code: Callable[[cst.CSTNode], str], fed: list[str] = ()) -> str:
    """The arguments of ``call`` (the graph's) for ``params``, then ``fed`` (the placeholders'): a parameter
    with a default by keyword, after them (where the signature has it)."""
    bound = bind_arguments(call, [param.name.value for param in model.function.params.params])
    if bound is None:
        raise Unsupported(call, f"`{first_line(call)}` in the graph: its arguments cannot be read")
    given = [code(bound[p.name.value][1].value) for p in params if p.default is None and p.name.value in bound]
    return ", ".join([*given, *fed, *(f"{p.name.value}={code(bound[p.name.value][1].value)}" for p in params
                                      if p.default is not None and p.name.value in bound)])


def module_class(model: ModelFunction, spelled: Callable[[cst.CSTNode], cst.CSTNode], indent: str
                 ) -> cst.ClassDef:
    """The tf.Module replacing the function: variables made in `__init__`, the rest computed in `__call__`."""
    def body(statements: list[cst.CSTNode]) -> str:
        lines = []
        for statement in statements:
            reading = model.reading.get(id(statement), {})
            lines += source(spelled(statement).visit(_OnSelf(reading))).rstrip("\n").splitlines()
        return "".join(f"{indent * 2}{line}\n" if line.strip() else "\n" for line in lines)

    def signature(params: list[cst.Param], placeholders: list[str] = ()) -> str:
        written = [source(spelled(p.with_changes(comma=cst.MaybeSentinel.DEFAULT))) for p in params]
        return ", ".join(["self", *(w for w, p in zip(written, params) if p.default is None), *placeholders,
                          *(w for w, p in zip(written, params) if p.default is not None)])

    name = model.function.name.value
    docstring = model.function.body.body[0] if _is_docstring(model.function.body.body[0]) else None
    init = [statement.with_changes(body=[statement.body[0].with_changes(
        targets=[cst.AssignTarget(cst.Attribute(cst.Name("self"), cst.Name(variable)))])])
        for variable, statement, _ in model.variables]
    model.reading |= {id(new): model.reading[id(old)] for new, (_, old, _) in zip(init, model.variables)}
    computation = _with_comments_of(model)
    said = (f"`{name}` of the TF1 program: its variables made once, in the strategy's scope; a call computes with",
            f"them what `{name}` computed.")
    if len(indent) + 3 + len(said[0]) > 100:  # a long name: wrapped to the generated code's lines
        said = tuple(textwrap.wrap(" ".join(said), 100 - len(indent) - 3))
    described = f"\n{indent}".join(said)
    text = (f"class {model.class_name}(tf.Module):\n"
            f"{indent}\"\"\"{described}\"\"\"\n\n"
            f"{indent}def __init__({signature(model.built_from)}):\n"
            f"{indent * 2}super().__init__()\n{body(init)}\n"
            f"{indent}def __call__({signature(model.called_with, list(model.placeholders))}):\n"
            f"{body([docstring] if docstring is not None else [])}{body(computation)}")
    statement = cst.parse_module(text).body[0]
    return statement.with_changes(leading_lines=model.function.leading_lines)


def _with_comments_of(model: ModelFunction) -> list[cst.BaseStatement]:
    """The computation, a comment above a placeholder (which goes) kept above the statement after it."""
    comments = {}
    statements = list(model.function.body.body)
    for index, statement in enumerate(statements):
        assign = single_assign(statement)
        if assign and assign[0] in model.placeholders and index + 1 < len(statements):
            comments[id(statements[index + 1])] = [*comments.pop(id(statement), []), *statement.leading_lines]
    found = [statement.with_changes(leading_lines=[*comments[id(statement)], *statement.leading_lines])
             if id(statement) in comments else statement for statement in model.computation]
    model.reading |= {id(new): model.reading.get(id(old), {}) for new, old in zip(found, model.computation)}
    return found


class _OnSelf(cst.CSTTransformer):
    """The function's variables read as the module's attributes: `self.W_conv1` (``variables``: the function's
    name -> the attribute)."""

    def __init__(self, variables: dict[str, str]) -> None:
        self.variables = variables
        self.not_names: set[int] = set()

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self.not_names.add(id(node.attr))

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self.not_names.add(id(node.keyword))

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.BaseExpression:
        if original_node.value in self.variables and id(original_node) not in self.not_names:
            return cst.Attribute(cst.Name("self"), cst.Name(self.variables[original_node.value]))
        return updated_node
