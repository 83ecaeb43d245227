"""Following a program's values through assignments, parameters, return values and imports.

Real programs pass their pieces around: ``estimator = model.build_estimator(config, args.hidden)``
where ``build_estimator`` in another module returns ``tf.estimator.Estimator(model_fn=model_fn,
params={"hidden": hidden})``; ``max_steps=args.train_steps``. ``Values.resolve`` follows a value to
where it is made, keeping the place it is read in: the module, the function, and the call that
gave the function's parameters their values. ``Values.relocate`` writes a value as code that
computes it at another place: ``hidden`` read in ``build_estimator`` is ``args.hidden`` in the
caller; a name the other place cannot see is an ``Unsupported`` saying which.
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass

import libcst as cst
from libcst.metadata import Assignment, BuiltinAssignment, ImportAssignment, QualifiedNameProvider, ScopeProvider

from rewrites.program.modules import ModuleView
from rewrites.syntax import Unsupported, bind_arguments, source, subtree

# Calls whose value depends only on their arguments: they may be read where a value is used.
PURE_BUILTINS = frozenset({"int", "float", "str", "bool", "len", "min", "max", "abs", "round", "tuple", "list",
                           "dict", "sorted"})
MAX_DEPTH = 40
_COMPARISONS = {cst.Equal: lambda a, b: a == b, cst.NotEqual: lambda a, b: a != b, cst.Is: lambda a, b: a is b,
                cst.IsNot: lambda a, b: a is not b}


@dataclass(eq=False)
class Place:
    """Where code is read: a module, maybe a function in it, and maybe the call that gave its parameters."""

    view: ModuleView
    function: cst.FunctionDef | cst.Lambda | None = None
    call: CallSite | None = None
    outer: Place | None = None    # a nested function's enclosing place

    def __repr__(self) -> str:
        name = getattr(getattr(self.function, "name", None), "value", "lambda" if self.function else "module")
        return f"Place({self.view.path}: {name}{', called' if self.call else ''})"

    def same_scope(self, other: Place) -> bool:
        return self.view is other.view and self.function is other.function


@dataclass(eq=False)
class CallSite:
    node: cst.Call
    place: Place


@dataclass(eq=False)
class Value:
    """An expression at a place. ``module``: set when the expression names a module of the run."""

    node: cst.CSTNode
    place: Place
    module: ModuleView | None = None

    def __repr__(self) -> str:
        return f"Value({' '.join(source(self.node).split())[:60]!r} at {self.place!r})"

    @property
    def view(self) -> ModuleView:
        return self.place.view

    def api(self) -> str | None:
        """The TensorFlow API this value's node names (for a call: its function)."""
        node = self.node.func if isinstance(self.node, cst.Call) else self.node
        return self.view.api(node)

    def fail(self, message: str) -> Unsupported:
        return Unsupported(self.node, message, self.view.path)


@dataclass
class Binding:
    """What a name refers to at a place (see Values.binding)."""

    kind: str                      # "value", "parameter", "definition", "module", "import", "builtin", "unknown"
    value: Value | None = None     # value / definition / module / the parameter's default
    assignment: object = None      # libcst's Assignment, when there is one
    detail: str = ""
    outside: str | None = None     # an import of a module on disk that is not among the files of the run: its path


class Values:
    """Resolution and relocation of values in the modules of a Tree."""

    def __init__(self) -> None:
        self._place_of_function: dict[int, Place] = {}

    # -- what a name refers to -------------------------------------------------------------

    def place_of(self, view: ModuleView, node: cst.CSTNode) -> Place:
        """The place a node is read in: its module and enclosing function (parameters not bound)."""
        function = next((a for a in view.ancestors(node) if isinstance(a, (cst.FunctionDef, cst.Lambda))), None)
        if function is None:
            return Place(view)
        return Place(view, function, outer=self.place_of(view, function))

    def binding(self, name: cst.Name, place: Place) -> Binding:
        """What ``name`` means where it is read: exactly one assignment, or why not."""
        view = place.view
        scope = view.scope(name)
        referents = set()
        if scope is not None:
            for access in scope.accesses[name]:
                referents |= set(access.referents)
        if not referents:
            if scope is not None and name.value in scope:  # a parameter or a definition the access misses
                referents = set(scope[name.value])
            elif hasattr(builtins, name.value):
                return Binding("builtin")
            else:
                return Binding("unknown", detail=f"`{name.value}` is not defined here")
        if len(referents) != 1:
            return Binding("unknown", detail=f"`{name.value}` is assigned more than once")
        (assignment,) = referents
        return self._binding_of(assignment, name, place)

    def _binding_of(self, assignment, name: cst.Name, place: Place) -> Binding:
        if isinstance(assignment, BuiltinAssignment):
            return Binding("builtin")
        view, node = place.view, assignment.node
        if isinstance(assignment, ImportAssignment):
            return self._imported(view, assignment, name)
        if not isinstance(assignment, Assignment):
            return Binding("unknown", detail=f"`{name.value}` is not a plain assignment")
        owner = self._owner_place(view, node, place)
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            return Binding("definition", Value(node, owner), assignment)
        if isinstance(node, cst.Param):
            call = owner.call
            function = owner.function
            if call is not None and isinstance(function, cst.FunctionDef):
                argument = _argument(call.node, function, node.name.value)
                if argument is not None:
                    return Binding("value", Value(argument, call.place), assignment)
            default = Value(node.default, self._owner_place(view, function, place)) if node.default else None
            return Binding("parameter", default, assignment, detail=node.name.value)
        parent = view.parent(node)
        if isinstance(parent, cst.AssignTarget):
            statement = view.parent(parent)
            return Binding("value", Value(statement.value, owner), assignment)
        if isinstance(parent, cst.Element):  # `a, b = value`: a's value is the first of value's
            target = view.parent(parent)
            holder = view.parent(target)
            if isinstance(target, (cst.Tuple, cst.List)) and isinstance(holder, cst.AssignTarget):
                index = next(i for i, element in enumerate(target.elements) if element is parent)
                return Binding("value", Value(view.parent(holder).value, owner), assignment, detail=str(index))
        if isinstance(parent, cst.AnnAssign) and parent.value is not None:
            return Binding("value", Value(parent.value, owner), assignment)
        return Binding("unknown", Value(node, owner), assignment,
                       detail=f"`{name.value}` is bound by a {type(parent).__name__.lower()}, not an assignment")

    def _owner_place(self, view: ModuleView, node: cst.CSTNode, reading: Place) -> Place:
        """The place of the function that holds ``node``, with the call binding ``reading`` knows of it."""
        function = next((a for a in view.ancestors(node) if isinstance(a, (cst.FunctionDef, cst.Lambda))), None)
        place: Place | None = reading
        while place is not None:
            if place.view is view and place.function is function:
                return place
            place = place.outer
        return self.place_of(view, node) if function is not None else Place(view)

    def _imported(self, view: ModuleView, assignment: ImportAssignment, name: cst.Name) -> Binding:
        statement = assignment.node
        alias = next((a for a in (statement.names if not isinstance(statement.names, cst.ImportStar) else ())
                      if (a.evaluated_alias or a.evaluated_name.split(".")[0]) == name.value), None)
        if alias is None:
            return Binding("import", detail=name.value)
        found, obj = view.tree.import_target(view, statement, alias)
        if found.view is None:
            return Binding("import", assignment=assignment, detail=found.path or found.name, outside=found.path)
        if obj is None:
            if isinstance(statement, cst.Import) and alias.asname is None and "." in alias.evaluated_name:
                return Binding("import", assignment=assignment, detail=found.name)  # `import a.b` binds `a`
            return Binding("module", Value(statement, Place(view), module=found.view), assignment)
        return self._definition_in(found.view, obj, assignment, name)

    def _definition_in(self, view: ModuleView, obj: str, assignment=None, name: cst.Name | None = None) -> Binding:
        """The module-level binding ``obj`` of ``view``."""
        nodes = view.top_level.get(obj, [])
        if len(nodes) != 1:
            detail = f"`{obj}` is not defined at module level in {view.path}" if not nodes else \
                f"`{obj}` is bound more than once in {view.path}"
            return Binding("unknown", assignment=assignment, detail=detail)
        (node,) = nodes
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            return Binding("definition", Value(node, Place(view)), assignment)
        return Binding("value", Value(node.value, Place(view)), assignment)

    # -- following a value ------------------------------------------------------------------

    def resolve(self, value: Value, depth: int = 0, trail: list | None = None) -> Value:
        """Follow ``value`` through names, module attributes, calls of the program's own functions and literal
        subscripts, as far as that goes; the last value reached (maybe ``value`` itself).

        ``trail``: gets the Binding of each name and the definition of each function passed through."""
        if depth > MAX_DEPTH:
            return value
        node = value.node
        if isinstance(node, cst.Name):
            binding = self.binding(node, value.place)
            target = binding.value if binding.kind in ("value", "definition", "module") else None
            if target is None:
                if binding.outside and trail is not None:
                    trail.append(binding)
                return value
            if trail is not None:
                trail.append(binding)
            target = self.resolve(target, depth + 1, trail)
            if binding.detail.isdigit():  # one element of a tuple
                return self._element(target, int(binding.detail), value, depth, trail)
            return target
        if isinstance(node, cst.Attribute):
            base = self.resolve(Value(node.value, value.place), depth + 1, trail)
            if base.module is not None:
                binding = self._definition_in(base.module, node.attr.value)
                if binding.value is not None:
                    return self.resolve(binding.value, depth + 1, trail)
            method = self.method(base, node.attr.value)
            return method if method is not None else value
        if isinstance(node, cst.Call):
            returned = self.returned(value, depth, trail)
            return self.resolve(returned, depth + 1, trail) if returned is not None else value
        if isinstance(node, cst.Subscript):
            return self._subscript(value, depth, trail)
        return value

    @staticmethod
    def outside(trail: list) -> str | None:
        """The path of a module outside the run that a resolution ran into (see ``resolve``'s trail), if any."""
        return next((step.outside for step in trail if isinstance(step, Binding) and step.outside), None)

    def method(self, instance: Value, name: str) -> Value | None:
        """The method ``name`` of an object the program makes from one of its classes (`Model().model_fn`)."""
        if not isinstance(instance.node, cst.Call):
            return None
        cls = self.resolve(Value(instance.node.func, instance.place))
        if not isinstance(cls.node, cst.ClassDef):
            return None
        for statement in cls.node.body.body:
            if isinstance(statement, cst.FunctionDef) and statement.name.value == name:
                return Value(statement, cls.place)
        return None

    def returned(self, call: Value, depth: int = 0, trail: list | None = None) -> Value | None:
        """What a call of one of the program's functions returns: its one `return` expression, read with the
        call's arguments (None for other calls)."""
        function = self.resolve(Value(call.node.func, call.place), depth + 1, trail)
        if not isinstance(function.node, cst.FunctionDef):
            return None
        returns = [node for node in _own_nodes(function.node) if isinstance(node, cst.Return)]
        if len(returns) != 1 or returns[0].value is None:
            return None
        if trail is not None:
            trail.append(function)
        inner = Place(function.view, function.node, CallSite(call.node, call.place), outer=function.place)
        return Value(returns[0].value, inner)

    def _element(self, target: Value, index: int, value: Value, depth: int, trail=None) -> Value:
        if isinstance(target.node, (cst.Tuple, cst.List)) and index < len(target.node.elements):
            return self.resolve(Value(target.node.elements[index].value, target.place), depth + 1, trail)
        return value

    def _subscript(self, value: Value, depth: int, trail=None) -> Value:
        node = value.node
        key = node.slice[0].slice.value if len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index) else None
        if not isinstance(key, (cst.SimpleString, cst.Integer)):
            return value
        container = self.resolve(Value(node.value, value.place), depth + 1)
        if isinstance(container.node, cst.Dict) and isinstance(key, cst.SimpleString):
            found = self._entry(container, key.evaluated_value, depth)
            if found is not None:
                return self.resolve(found, depth + 1, trail)
        if isinstance(container.node, cst.Call) and container.view.api(container.node.func) is None \
                and isinstance(container.node.func, cst.Name) and container.node.func.value == "dict" \
                and isinstance(key, cst.SimpleString):
            for arg in container.node.args:
                if arg.keyword is not None and arg.keyword.value == key.evaluated_value:
                    return self.resolve(Value(arg.value, container.place), depth + 1)
        if isinstance(container.node, (cst.List, cst.Tuple)) and isinstance(key, cst.Integer):
            return self._element(container, key.evaluated_value, value, depth, trail)
        return value

    def constant(self, value: Value, constants: dict[str, object] | None = None, flags: bool = False) -> object:
        """The Python value of ``value`` when it is known before the program runs (literals, names bound to them,
        comparisons and boolean logic of them), else UNKNOWN. ``constants``: TensorFlow APIs with a known value
        (e.g. "estimator.ModeKeys.TRAIN": "train"); ``flags``: a command-line flag counts as its default."""
        constants = constants or {}
        resolved = self.resolve(value)
        node = resolved.node
        if flags and (default := self.flag_default(resolved)) is not UNKNOWN:
            return default
        api = resolved.view.api(node) if isinstance(node, (cst.Name, cst.Attribute)) else None
        if api is not None:
            return constants.get(api, UNKNOWN)
        if isinstance(node, (cst.Integer, cst.Float, cst.SimpleString)):
            return node.evaluated_value
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
            inner = self.constant(Value(node.expression, resolved.place), constants, flags)
            return -inner if isinstance(inner, (int, float)) and not isinstance(inner, bool) else UNKNOWN
        if isinstance(node, cst.Name) and node.value in ("True", "False", "None"):
            return {"True": True, "False": False, "None": None}[node.value]
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
            inner = self.constant(Value(node.expression, resolved.place), constants, flags)
            return UNKNOWN if inner is UNKNOWN else not inner
        if isinstance(node, cst.BooleanOperation):
            left = self.constant(Value(node.left, resolved.place), constants, flags)
            right = self.constant(Value(node.right, resolved.place), constants, flags)
            if isinstance(node.operator, cst.And):
                return False if left is False or right is False else UNKNOWN if UNKNOWN in (left, right) else \
                    bool(left and right)
            return True if left is True or right is True else UNKNOWN if UNKNOWN in (left, right) else \
                bool(left or right)
        if isinstance(node, (cst.List, cst.Tuple)) and not any(isinstance(e, cst.StarredElement) for e in node.elements):
            items = [self.constant(Value(element.value, resolved.place), constants, flags) for element in node.elements]
            return UNKNOWN if UNKNOWN in items else items
        if isinstance(node, cst.Subscript) and len(node.slice) == 1:
            return self._constant_subscript(resolved, constants, flags)
        if isinstance(node, cst.Comparison) and len(node.comparisons) == 1:
            left = self.constant(Value(node.left, resolved.place), constants, flags)
            right = self.constant(Value(node.comparisons[0].comparator, resolved.place), constants, flags)
            operator = type(node.comparisons[0].operator)
            if UNKNOWN in (left, right) or operator not in _COMPARISONS:
                return UNKNOWN
            return _COMPARISONS[operator](left, right)
        return UNKNOWN

    def _constant_subscript(self, value: Value, constants, flags: bool) -> object:
        """`LIST[1:]`, `LIST[0]` of a constant list."""
        node, place = value.node, value.place
        container = self.constant(Value(node.value, place), constants, flags)
        part = node.slice[0].slice
        if not isinstance(container, list):
            return UNKNOWN
        if isinstance(part, cst.Index):
            index = self.constant(Value(part.value, place), constants, flags)
            return container[index] if isinstance(index, int) and -len(container) <= index < len(container) else UNKNOWN
        bounds = [None if bound is None else self.constant(Value(bound, place), constants, flags)
                  for bound in (part.lower, part.upper, part.step)]
        if any(bound is UNKNOWN or not (bound is None or isinstance(bound, int)) for bound in bounds):
            return UNKNOWN
        return container[slice(*bounds)]

    def flag_default(self, value: Value) -> object:
        """For `FLAGS.name` (tf.flags, tf.app.flags, absl.flags): the default its DEFINE_* call gives, else UNKNOWN."""
        node = value.node
        if not isinstance(node, cst.Attribute):
            return UNKNOWN
        holder = self.resolve(Value(node.value, value.place)).node
        names = value.view.get_metadata(QualifiedNameProvider, node.value, set()) | (
            value.view.get_metadata(QualifiedNameProvider, holder, set()) if holder is not node.value else set())
        if not any(name.name.endswith("flags.FLAGS") for name in names):
            return UNKNOWN
        for view in value.view.tree.views:
            for call in (n for n in subtree(view.module) if isinstance(n, cst.Call)):
                func = call.func.attr.value if isinstance(call.func, cst.Attribute) else \
                    call.func.value if isinstance(call.func, cst.Name) else ""
                if not func.startswith("DEFINE_") or not call.args:
                    continue
                bound = bind_arguments(call, ("name", "default", "help"))
                flag = bound and bound.get("name")
                if flag and isinstance(flag[1].value, cst.SimpleString) and \
                        flag[1].value.evaluated_value == node.attr.value and "default" in bound:
                    return self.constant(Value(bound["default"][1].value, self.place_of(view, call)))
        return UNKNOWN

    def _entry(self, container: Value, key: str, depth: int) -> Value | None:
        """The value of ``key`` in a dict literal: its last entry of that key, or one of a `**` it unpacks."""
        for element in reversed(container.node.elements):
            if isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString) \
                    and element.key.evaluated_value == key:
                return Value(element.value, container.place)
            if isinstance(element, cst.StarredDictElement):
                inner = self.resolve(Value(element.value, container.place), depth + 1)
                if isinstance(inner.node, cst.Dict):
                    found = self._entry(inner, key, depth + 1)
                    if found is not None:
                        return found
        return None

    def call_of(self, value: Value, apis: set[str] | frozenset[str]) -> Value | None:
        """The call of one of ``apis`` that ``value`` resolves to, or None."""
        resolved = self.resolve(value)
        if isinstance(resolved.node, cst.Call) and resolved.api() in apis:
            return resolved
        return None

    # -- writing a value somewhere else ------------------------------------------------------

    def relocate(self, value: Value, target: Place, spell=None) -> cst.BaseExpression:
        """Code computing ``value`` at ``target``. ``spell(view, node)``: a TF2 spelling of a TensorFlow reference
        (or None to keep it). Unsupported when a name it reads cannot be seen from there."""
        return _Relocation(self, target, spell).expression(value)

    def is_pure(self, value: Value) -> bool:
        """Is reading ``value`` free of effects (names, attributes, literals, arithmetic, pure builtins)?"""
        for node in subtree(value.node):
            if isinstance(node, cst.Call):
                if not (isinstance(node.func, cst.Name) and node.func.value in PURE_BUILTINS
                        and self.binding(node.func, value.place).kind == "builtin"):
                    return False
            elif isinstance(node, (cst.Lambda, cst.Await, cst.Yield, cst.NamedExpr)):
                return False
        return True


class _Relocation:
    """One relocation: replaces each name a value reads by what it means at the target place."""

    def __init__(self, values: Values, target: Place, spell) -> None:
        self.values, self.target, self.spell = values, target, spell

    def expression(self, value: Value, depth: int = 0) -> cst.BaseExpression:
        if depth > MAX_DEPTH:
            raise value.fail(f"`{source(value.node)}` is defined through too many steps to follow")
        replacements: dict[cst.CSTNode, cst.BaseExpression] = {}
        self._collect(value.node, value, replacements, depth)
        if not replacements:
            return value.node
        return value.node.visit(_Replace(replacements))

    def _collect(self, node: cst.CSTNode, value: Value, replacements: dict, depth: int) -> None:
        if self.spell is not None and isinstance(node, (cst.Attribute, cst.Name)):
            spelled = self.spell(value.view, node)
            if spelled is not None:
                replacements[node] = spelled
                return
        if isinstance(node, cst.Name):
            new = self._name(node, value, depth)
            if new is not None:
                replacements[node] = new
            return
        if isinstance(node, cst.Attribute):
            self._collect(node.value, value, replacements, depth)
            return
        if isinstance(node, (cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)):
            raise value.fail(f"`{source(node)}` is not migrated where it is used: bind it to a name first")
        for child in node.children:
            if isinstance(child, cst.Arg):
                self._collect(child.value, value, replacements, depth)
            elif not isinstance(child, (cst.AssignEqual,)):
                self._collect(child, value, replacements, depth)

    def _name(self, name: cst.Name, value: Value, depth: int) -> cst.BaseExpression | None:
        place, target = value.place, self.target
        binding = self.values.binding(name, place)
        if binding.kind == "builtin":
            return None
        if place.same_scope(target) and binding.kind != "unknown":
            return None
        if _bound_in(binding, target):
            return None  # bound where the code goes (read from a lambda or a nested function there)
        owner = _scope_owner(binding)
        if binding.kind == "value" and binding.assignment is not None and owner is not None \
                and owner.view is target.view and owner.function is None and not _shadowed(target, name.value):
            return None  # a module-level name of the target's module
        if binding.kind in ("value", "parameter") and binding.value is not None and (
                binding.kind == "parameter" or not _is_module_level(binding)):
            if not self.values.is_pure(binding.value) and not binding.value.place.same_scope(target):
                raise value.fail(f"`{name.value}` is computed where it is defined ({source(binding.value.node)}): "
                                 "bind it where the migrated code runs")
            return cst.ensure_type(self.expression(binding.value, depth + 1), cst.BaseExpression)
        if binding.kind in ("value", "definition") and _is_module_level(binding):
            return self._module_level(name, binding, value)
        if binding.kind in ("module", "import"):
            return self._import(name, value, binding)
        raise value.fail(f"`{name.value}` ({binding.detail or binding.kind}) cannot be read where the migrated code "
                         "runs")

    def _module_level(self, name: cst.Name, binding: Binding, value: Value) -> cst.BaseExpression:
        """A module-level name of another module: through an import of that module at the target."""
        home = binding.value.view
        if home is self.target.view and not _shadowed(self.target, name.value):
            return None
        alias = module_alias(self.target, home)
        if alias is not None:
            return cst.Attribute(cst.parse_expression(alias), cst.Name(name.value))
        raise value.fail(f"`{name.value}` of {home.path} is not imported where the migrated code runs "
                         f"({self.target.view.path})")

    def _import(self, name: cst.Name, value: Value, binding: Binding) -> cst.BaseExpression | None:
        """An imported name: the same import must bind the same name at the target."""
        if not _shadowed(self.target, name.value) and (
                value.view is self.target.view
                or value.view.imported(name.value) == self.target.view.imported(name.value) is not None):
            return None
        raise value.fail(f"`{name.value}` is imported in {value.view.path} but not where the migrated code runs "
                         f"({self.target.view.path})")


class _Replace(cst.CSTTransformer):
    def __init__(self, replacements: dict) -> None:
        super().__init__()
        self.replacements = replacements

    def on_leave(self, original_node, updated_node):
        return self.replacements.get(original_node, updated_node)


def _argument(call: cst.Call, function: cst.FunctionDef, name: str) -> cst.BaseExpression | None:
    params = [p.name.value for p in (*function.params.posonly_params, *function.params.params)]
    params += [p.name.value for p in function.params.kwonly_params]
    bound = bind_arguments(call, params)
    if bound is None or name not in bound:
        return None
    return bound[name][1].value


def _own_nodes(function: cst.FunctionDef):
    """The nodes of a function's body, not those of functions (or classes) nested in it."""
    stack = list(function.body.children)
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            stack.extend(node.children)


def _scope_owner(binding: Binding) -> Place | None:
    return binding.value.place if binding.value is not None else None


def _is_module_level(binding: Binding) -> bool:
    return binding.value is not None and binding.value.place.function is None


def _bound_in(binding: Binding, target: Place) -> bool:
    """Is the name bound in the target's own scope (its function, or the module at module level)?"""
    scope = getattr(binding.assignment, "scope", None)
    if scope is None:
        return False
    wanted = function_scope(target.view, target.function) if target.function is not None else \
        target.view.get_metadata(ScopeProvider, target.view.module, None)
    return scope is wanted


def _shadowed(place: Place, name: str) -> bool:
    """Is ``name`` bound in the place's function (or an enclosing one), hiding a module-level name?"""
    while place is not None and place.function is not None:
        scope = function_scope(place.view, place.function)
        if scope is not None and name in scope.assignments:
            return True
        place = place.outer
    return False


def function_scope(view: ModuleView, function: cst.FunctionDef | cst.Lambda):
    """The scope of a function's parameters and locals."""
    return view.scope(function.body)


def module_alias(target: Place, home: ModuleView) -> str | None:
    """A name the target's module binds to the module ``home`` (by import), not shadowed at the target."""
    view = target.view
    for statement in view.module.body:
        for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
            if isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(small.names, cst.ImportStar):
                for alias in small.names:
                    found, obj = view.tree.import_target(view, small, alias)
                    if found.view is home and obj is None:
                        bound = alias.evaluated_alias or alias.evaluated_name
                        if "." not in bound and not _shadowed(target, bound):
                            return bound
                        if isinstance(small, cst.Import) and alias.asname is None:
                            return bound  # `import a.b` reads as a.b
    return None


UNKNOWN = object()
"""What ``Values.constant`` gives for a value it cannot know before the program runs."""
