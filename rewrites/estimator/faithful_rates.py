"""Tier 2: what the optimizer's arguments read in a kept model_fn, carried to where the Keras model is built.

A model_fn often computes its learning rate before it makes the optimizer: an alias of a param
(``learning_rate = params["learning_rate"]``), arithmetic of params and the module's constants,
or a TF1 decay schedule of the global step. The Keras optimizer is made in the build function,
which has ``params`` and the module's names but not the model_fn's locals: each local the
optimizer reads is replaced by the expression bound to it, and a schedule of the global step by
the Keras schedule of tier 1's table (rewrites/keras_optimizers.py), which Keras evaluates at
``optimizer.iterations``, TF1's global step. The schedule's statement goes with the optimizer.
A rate computed of schedules (``params["lr1"] + tf.train.exponential_decay(...)``) becomes the generated
``LearningRate`` schedule computing it of the Keras ones at the optimizer's step; a function of the module of one
``return`` (``learn_rate(params, step)``) is read as its expression of the arguments given.

Before::

    global_step = tf.train.get_global_step()
    learning_rate = tf.train.exponential_decay(params["learning_rate"], global_step, 100, 0.9)
    optimizer = tf.train.AdamOptimizer(learning_rate)

After (compiled in the build function)::

    TF1Adam(learning_rate=keras.optimizers.schedules.ExponentialDecay(
        initial_learning_rate=params["learning_rate"], decay_steps=100, decay_rate=0.9), epsilon=1e-08)
"""

from __future__ import annotations

import libcst as cst

from rewrites import keras_optimizers
from rewrites.estimator.training import GLOBAL_STEP
from rewrites.syntax import Unsupported, bound_values, children, first_line, names_read, single_assign, source, subtree

STEP_CASTS = {"cast", "to_int32", "to_int64", "dtypes.cast"}
BINDINGS = (cst.AugAssign, cst.For, cst.NamedExpr, cst.AnnAssign)
PLAIN = {"int", "float", "min", "max", "abs", "round", "pow", "len", "sum", "list", "tuple"}
LEARNING_RATE = "LearningRate"  # the generated schedule of a rate computed of decay schedules
STEP = "step"  # its __call__'s parameter


class Rates:
    """The locals of one model_fn an optimizer call may read, and how each is carried out of it."""

    def __init__(self, api, spelled, function: cst.FunctionDef, statements, steps: dict[str, cst.BaseStatement],
                 parameters: list[str], functions=lambda name: None) -> None:
        """``api``, ``spelled``: the module's API names and respelling; ``statements``: the model_fn's, nested
        ones too; ``steps``: the names bound to the global step; ``functions(name)``: the module's function of that
        name, or None."""
        self.api, self.spelled, self.function, self.steps = api, spelled, function, steps
        self.functions = functions
        self.learning_rate = ""  # the code of LearningRate.__call__'s value, where the rate is computed of schedules
        self.arguments: dict | None = None  # reading a function's `return` in place: its parameters' arguments
        self.parameters = set(parameters) - {"params"}
        self.bound: dict[str, list[cst.BaseStatement]] = {}
        for statement in statements:
            if (assign := single_assign(statement)) is not None:
                self.bound.setdefault(assign[0], []).append(statement)
        self.elsewhere = {n.value for node in subtree(function.body) for n in _targets(node)}  # every local
        self.schedules: dict[int, cst.BaseStatement] = {}  # the schedule statements carried out (they go)
        self.inlined: dict[str, cst.BaseStatement] = {}  # the other locals carried out (they go if nothing else reads them)

    def carried(self, call: cst.BaseExpression) -> cst.BaseExpression:
        """``call`` (or any expression) with each local it reads replaced by what the build function computes instead."""
        return self._replaced(call, [])

    def _replaced(self, node: cst.CSTNode, trail: list[str], skip: tuple[cst.CSTNode, ...] = ()):
        """``node`` with the locals it reads replaced (not those in ``skip``)."""
        replacements = self._replacements(node, trail, skip)
        return node.visit(_Replace(replacements)) if replacements else node

    def _replacements(self, node: cst.CSTNode, trail: list[str], skip: tuple[cst.CSTNode, ...]) -> dict:
        """The id of each local ``node`` reads (not in ``skip``) -> what replaces it."""
        inner = _comprehension_names(node)
        skipped = {id(n) for kept in skip for n in subtree(kept)}
        replacements = {}
        for name in names_read(node):
            if name.value in inner or id(name) in skipped:
                continue
            if self.arguments is not None:  # in a function's `return` read in place: its parameters, or globals
                if name.value in self.arguments:
                    arguments, self.arguments = self.arguments, None
                    try:
                        replacements[id(name)] = _enclosed(self._replaced(arguments[name.value], trail))
                    finally:
                        self.arguments = arguments
                continue
            if name.value == "params":
                continue
            if name.value in self.parameters:
                raise Unsupported(name, f"the optimizer's arguments read `{name.value}`, a model_fn argument: the "
                                        "Keras optimizer is made where the model is built, from params")
            if name.value in self.elsewhere and name.value not in self.bound:
                raise Unsupported(name, f"the optimizer's arguments read `{name.value}`, which the model_fn binds "
                                        "otherwise than by `name = ...`: the Keras optimizer is made where the model "
                                        "is built, from params")
            if name.value in self.bound:
                value = self._value_of(name, trail)
                whole = isinstance(node, cst.Call) and any(arg.value is name for arg in node.args)
                replacements[id(name)] = value if whole else _enclosed(value)
        return replacements

    def _value_of(self, name: cst.Name, trail: list[str]) -> cst.BaseExpression:
        if name.value in trail:
            raise Unsupported(name, f"`{name.value}` is computed from itself")
        statements = self.bound[name.value]
        if len(statements) != 1 or self._rebound(name.value, statements[0]):
            raise Unsupported(name, f"the optimizer's arguments read `{name.value}`, which the model_fn binds more "
                                    "than once: the Keras optimizer is made where the model is built, from params")
        statement = statements[0]
        value = single_assign(statement)[1]
        api = self.api(value.func) if isinstance(value, cst.Call) else None
        if api in keras_optimizers.SCHEDULES:
            return self._schedule(api, value, statement, [*trail, name.value])
        if isinstance(value, cst.Call) and (returned := returned_by(value, self.functions)) is not None:
            self.arguments = returned[1]
            try:
                return self._composite(returned[0], statement, [*trail, name.value])
            except Unsupported as problem:
                raise Unsupported(value, f"`{first_line(value)}`: {problem}") from None
            finally:
                self.arguments = None
        if any(self.api(node.func) in keras_optimizers.SCHEDULES for node in subtree(value)
               if isinstance(node, cst.Call)):
            return self._composite(value, statement, [*trail, name.value])
        for call in (node for node in subtree(value) if isinstance(node, cst.Call)):
            if not _plain(call.func):  # TensorFlow, or a function that may read the graph (the global step)
                raise Unsupported(call, f"the optimizer's arguments read `{name.value}`, computed by "
                                        f"`{first_line(call)}` in the model_fn: not carried to the Keras optimizer "
                                        "yet (numbers, params, the module's names and a decay schedule of the global "
                                        "step are)")
        self.inlined[name.value] = statement
        return self._replaced(value, [*trail, name.value])

    def _composite(self, value: cst.BaseExpression, statement, trail: list[str]) -> cst.BaseExpression:
        """A rate computed of decay schedules (`params["floor"] + tf.train.exponential_decay(...)`): the generated
        LearningRate, whose __call__ computes it of the Keras schedules at the optimizer's step."""
        if self.learning_rate and any(self.api(node.func) in keras_optimizers.SCHEDULES for node in subtree(value)
                                      if isinstance(node, cst.Call)):
            raise Unsupported(value, "a second learning rate computed of decay schedules: one Keras optimizer trains "
                                     "the model")
        schedules = {id(node): cst.Call(self._schedule(api, node, statement, trail), [cst.Arg(cst.Name(STEP))])
                     for node in _outermost_calls(value) if (api := self.api(node.func)) in keras_optimizers.SCHEDULES}
        inside = {id(inner) for node in _outermost_calls(value) if id(node) in schedules for inner in subtree(node)}
        for node in subtree(value):
            if isinstance(node, cst.Call) and id(node) not in inside and not _plain(node.func):
                raise Unsupported(node, f"the optimizer's learning rate is computed by `{first_line(node)}`: not "
                                        "carried to the Keras optimizer yet (numbers, params, the module's names and "
                                        "decay schedules of the global step are)")
        if any(name.value == STEP and id(name) not in inside for name in names_read(value)):
            raise Unsupported(value, f"the optimizer's learning rate reads `{STEP}`, the name the generated schedule "
                                     "gives the optimizer's step: rename it")
        calls = tuple(node for node in _outermost_calls(value) if id(node) in schedules)
        computed = value.visit(_Replace({**schedules, **self._replacements(value, trail, skip=calls)}))
        if not schedules:  # a function's `return` of numbers and params
            self.inlined[trail[-1]] = statement
            return computed
        self.schedules[id(statement)] = statement
        self.learning_rate = source(self.spelled(computed))
        reads = any(name.value == "params" for name in names_read(computed))
        return cst.parse_expression(f"{LEARNING_RATE}({'params' if reads else ''})")

    def _schedule(self, api: str, call: cst.Call, statement, trail: list[str]) -> cst.BaseExpression:
        """A TF1 decay of the global step -> the Keras schedule; its statement goes."""
        position, keyword = (0, "x") if api == "train.piecewise_constant" else (1, "global_step")
        step = next((arg.value for index, arg in enumerate(call.args)
                     if (arg.keyword is None and index == position) or (arg.keyword and arg.keyword.value == keyword)),
                    None)
        if not self.is_step(step):
            raise Unsupported(call, f"tf.{api} of something other than the global step: Keras schedules follow "
                                    "optimizer.iterations")
        carried = self._replaced(call, trail, skip=(step,))
        code = keras_optimizers.learning_rate_schedule(api, self.spelled(carried)).code
        self.schedules[id(statement)] = statement
        return cst.parse_expression(code)

    def is_step(self, node) -> bool:
        if isinstance(node, cst.Name) and self.arguments is not None:
            return node.value in self.arguments and self.is_step(self.arguments[node.value])
        if isinstance(node, cst.Name):
            return node.value in self.steps
        if not isinstance(node, cst.Call):
            return False
        api = self.api(node.func)
        if api in GLOBAL_STEP:
            return True
        return api in STEP_CASTS and bool(node.args) and self.is_step(node.args[0].value) and all(
            (self.api(arg.value) or "").endswith(("int32", "int64")) for arg in node.args[1:2])

    def _rebound(self, name: str, statement: cst.BaseStatement) -> bool:
        """``name`` bound otherwise than by ``statement`` (`lr *= 2`, a loop, `with ... as lr`, a tuple)."""
        own = statement.body[0].targets[0].target
        return any(n.value == name and n is not own for node in subtree(self.function.body) for n in _targets(node))


class _Replace(cst.CSTTransformer):
    def __init__(self, replacements: dict[int, cst.BaseExpression]) -> None:
        super().__init__()
        self.replacements = replacements

    def on_leave(self, original_node, updated_node):
        return self.replacements.get(id(original_node), updated_node)


def returned_by(call: cst.Call, functions) -> tuple[cst.BaseExpression, dict[str, cst.BaseExpression]] | None:
    """What the module's function ``call`` calls returns (``functions(name)``: the function), and the arguments
    given its parameters: a function of one `return` statement (after a docstring), or None."""
    function = functions(call.func.value) if isinstance(call.func, cst.Name) else None
    body = [statement for statement in function.body.body if not is_docstring(statement)] \
        if function is not None and isinstance(function.body, cst.IndentedBlock) else []
    small = body[0].body[0] if len(body) == 1 and isinstance(body[0], cst.SimpleStatementLine) else None
    if not isinstance(small, cst.Return) or small.value is None or function.params.star_arg not in (
            None, cst.MaybeSentinel.DEFAULT) or function.params.star_kwarg or function.params.kwonly_params:
        return None
    names = [param.name.value for param in function.params.params]
    try:
        given = bound_values(call, tuple(names))
    except Unsupported:
        return None
    if set(given) != set(names):
        return None
    return small.value, given


def _enclosed(value: cst.BaseExpression) -> cst.BaseExpression:
    return value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()]) if _needs_parentheses(value) else value


def is_docstring(statement) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and isinstance(statement.body[0], cst.Expr) and isinstance(
        statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))


def _outermost_calls(node: cst.CSTNode) -> list[cst.Call]:
    """The calls in ``node`` that no other call in it holds."""
    found, stack = [], [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Call):
            found.append(current)
        else:
            stack.extend(children(current))
    return found


def _targets(node: cst.CSTNode) -> list[cst.Name]:
    """The names ``node`` binds, if it is an assignment's target, a loop's, a `with ... as`, `:=` or `+=`."""
    if isinstance(node, cst.AssignTarget):
        target = node.target
    elif isinstance(node, cst.WithItem):
        target = node.asname.name if node.asname else None
    else:
        target = node.target if isinstance(node, BINDINGS) else None
    return [n for n in subtree(target) if isinstance(n, cst.Name)] if target is not None else []


def _plain(func: cst.BaseExpression) -> bool:
    """A builtin of numbers (`int(...)`, `min(...)`) or a method of params (`params.get(...)`)."""
    if isinstance(func, cst.Name):
        return func.value in PLAIN
    return isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "params"


def _comprehension_names(node: cst.CSTNode) -> set[str]:
    return {n.value for comp in subtree(node) if isinstance(comp, cst.CompFor)
            for n in subtree(comp.target) if isinstance(n, cst.Name)}


def _needs_parentheses(value: cst.BaseExpression) -> bool:
    return isinstance(value, (cst.BinaryOperation, cst.BooleanOperation, cst.IfExp, cst.Comparison,
                              cst.UnaryOperation, cst.Lambda)) and not value.lpar
