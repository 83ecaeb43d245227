"""Following a program's values through assignments, parameters, return values and imports.

Real programs pass their pieces around: ``estimator = model.build_estimator(config, args.hidden)``
where ``build_estimator`` in another module returns ``tf.estimator.Estimator(model_fn=model_fn,
params={"hidden": hidden})``; ``max_steps=args.train_steps``. ``Values.resolve`` follows a value to
where it is made, keeping the place it is read in: the module, the function, and the call that
gave the function's parameters their values (``relocation.py`` writes a value as code computing it
at another place).
"""

from __future__ import annotations

import builtins
import os
import re

import libcst as cst
from libcst.metadata import Assignment, BuiltinAssignment, ImportAssignment

from rewrites.base import module_level_statements

from rewrites.program.constants import UNKNOWN, ConstantReading
from rewrites.program.modules import ModuleView
from rewrites.program.places import Binding, CallSite, Place, Value
from rewrites.syntax import bind_arguments, children, subtree

# Calls whose value depends only on their arguments: they may be read where a value is used.
PURE_BUILTINS = frozenset({"int", "float", "str", "bool", "len", "min", "max", "abs", "round", "tuple", "list",
                           "dict", "sorted"})
MAX_DEPTH = 40


class Values(ConstantReading):
    """Where the values of the modules of a Tree come from (and, from ConstantReading, which are known)."""

    def __init__(self, called_at_once: frozenset[str] = frozenset()) -> None:
        """``called_at_once``: methods that call a lambda given to them before they return (Estimator's train and
        evaluate call their input_fn): a name that lambda reads is the one bound where the method is called."""
        self.called_at_once = called_at_once
        self._place_of_function: dict[int, Place] = {}
        self._deciding: set[int] = set()  # the ifs whose tests are being read (ruled_out)
        self._elsewhere: dict[tuple[str, str], str | None] = {}  # (module, name) -> another module assigning it
        self._folders: dict[str, dict[str, str]] = {}  # a module's folder -> its Python files' texts

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
            referents = {a for a in referents if not self.ruled_out(view, a, place)}
        if len(referents) != 1:
            referents = {self._last_before(view, name, referents)} - {None}
        if len(referents) != 1:
            return Binding("unknown", detail=f"`{name.value}` is assigned more than once")
        (assignment,) = referents
        return self._binding_of(assignment, name, place)

    def ruled_out(self, view, assignment, place: Place) -> bool:
        """Is ``assignment`` in a branch of an `if` whose test is known to skip it (`if metadata.TASK_TYPE ==
        "classification": ... else: ...` of a module's constant)?"""
        if not isinstance(assignment, Assignment) or not isinstance(assignment.node, cst.CSTNode):
            return False
        held = assignment.node
        for ancestor in view.ancestors(held):
            if isinstance(ancestor, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
                return False
            if isinstance(ancestor, cst.If) and held is not ancestor.test and id(ancestor) not in self._deciding:
                self._deciding.add(id(ancestor))  # a test reading the name it decides (`if x: x = ...`) is unknown
                try:
                    test = self.constant(Value(ancestor.test, place))
                finally:
                    self._deciding.discard(id(ancestor))
                if test is not UNKNOWN and bool(test) != (held is ancestor.body):
                    return True
            held = ancestor
        return False

    def _last_before(self, view, name: cst.Name, assignments) -> Assignment | None:
        """Of several assignments, the one a read sees in straight-line code (`config = config.replace(...)`, a
        function defined again in a later notebook cell): each a statement `name = ...` or `def name` of the block
        holding the read's statement, the last before it. A read in a lambda or function defined there
        (`input_fn=lambda: input_fn(train_data)`) runs later, so only when every assignment comes before the
        definition: it sees the last one, whenever it runs (or when it is given to a method of ``called_at_once``:
        the last before that call)."""
        assignments, scope = list(assignments), view.scope(name)
        if scope is None or not all(isinstance(a, Assignment) and a.scope in (scope, scope.parent) for a in assignments):
            return None
        later = any(a.scope is not scope for a in assignments)
        statements = [view.statement_of(a.node) for a in assignments]
        if len({id(view.parent(statement)) for statement in statements}) != 1 or not all(
                isinstance(s, cst.FunctionDef) or isinstance(s, cst.SimpleStatementLine)
                and isinstance(s.body[0], cst.Assign) for s in statements):
            return None
        block = view.parent(statements[0])
        body = list(block.body)
        reading = view.statement_of(name)
        while view.parent(reading) is not block:
            if view.parent(reading) in (None, view.module):
                return None
            reading = view.statement_of(view.parent(reading))
        before = [(body.index(s), a) for s, a in zip(statements, assignments) if body.index(s) < body.index(reading)]
        if later and len(before) != len(assignments) and not self._run_at_once(view, name):
            return None  # an assignment after the definition: what the read sees depends on when it runs
        return max(before, key=lambda pair: pair[0])[1] if before else None

    def _run_at_once(self, view, name: cst.Name) -> bool:
        """Is ``name`` read in a lambda given to a method of ``called_at_once`` (`train(input_fn=lambda: ...)`)?"""
        lambdas = [a for a in view.ancestors(name) if isinstance(a, (cst.Lambda, cst.FunctionDef))]
        if len(lambdas) != 1 or not isinstance(lambdas[0], cst.Lambda):
            return False
        argument, call = view.parent(lambdas[0]), view.parent(view.parent(lambdas[0]))
        return isinstance(argument, cst.Arg) and isinstance(call, cst.Call) and \
            isinstance(call.func, cst.Attribute) and call.func.attr.value in self.called_at_once

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
            default = Value(node.default, self._owner_place(view, function, place)) if node.default else None
            if call is not None and isinstance(function, cst.FunctionDef):
                argument = _argument(call.node, function, node.name.value)
                if argument is not None:
                    return Binding("value", Value(argument, call.place), assignment)
                if default is not None and _not_passed(call.node, function, node.name.value):
                    return Binding("value", default, assignment)  # the call leaves it at its default
            return Binding("parameter", default, assignment, detail=node.name.value)
        parent = view.parent(node)
        if isinstance(parent, cst.AssignTarget):
            statement = view.parent(parent)
            elsewhere = self._assigned_elsewhere(view, name.value) if owner.function is None else None
            if elsewhere is not None:
                return Binding("unknown", assignment=assignment, detail=elsewhere,
                               home=Value(statement.value, owner))
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

    def _definition_in(self, view: ModuleView, obj: str, assignment=None, name: cst.Name | None = None,
                       depth: int = 0) -> Binding:
        """The module-level binding ``obj`` of ``view``: a definition or value there, or what a module-level
        `from .model import obj` (a package's `__init__` re-exporting it) binds."""
        nodes = view.top_level.get(obj, [])
        if not nodes and depth < MAX_DEPTH:
            reexported = self._reexported(view, obj, assignment, depth)
            if reexported is not None:
                return reexported
        if len(nodes) != 1:
            detail = f"`{obj}` is not defined at module level in {view.path}" if not nodes else \
                f"`{obj}` is bound more than once in {view.path}"
            return Binding("unknown", assignment=assignment, detail=detail)
        (node,) = nodes
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            return Binding("definition", Value(node, Place(view)), assignment)
        elsewhere = self._assigned_elsewhere(view, obj)
        if elsewhere is not None:
            return Binding("unknown", assignment=assignment, detail=elsewhere, home=Value(node.value, Place(view)))
        return Binding("value", Value(node.value, Place(view)), assignment)

    def _assigned_elsewhere(self, view: ModuleView, name: str) -> str | None:
        """Why a module-level ``name`` of ``view`` is not the value it is bound to there: another module of the run
        assigns or changes it (`model.NNSIZE = args.nnsize` in task.py, `metadata.NUMERIC[key] = None`), before the
        code reading it may run; None when none does."""
        key = (view.path, name)
        if key not in self._elsewhere:
            self._elsewhere[key] = None
            assigned = re.compile(rf"\.\s*{re.escape(name)}\s*{_CHANGED}")
            folder = os.path.dirname(os.path.abspath(view.path))
            if folder not in self._folders:  # read once a run
                self._folders[folder] = _folder_texts(folder)
            known = {os.path.abspath(path) for path in view.tree.sources}
            for path, code in self._folders[folder].items():  # outside this run's group (task.py): by their text
                if path not in known and _sets_module_attribute(code, view.path, name):
                    shown = os.path.relpath(path) if not os.path.relpath(path).startswith("..") else path
                    self._elsewhere[key] = f"`{name}` of {view.path} is also assigned in {shown}"
                    return self._elsewhere[key]
            for path, code in view.tree.sources.items():
                if path == view.path or not assigned.search(code):
                    continue
                other = view.tree.view(path)
                for node in subtree(other.module):
                    target = _changed(node)
                    if isinstance(target, cst.Attribute) and target.attr.value == name and isinstance(
                            target.value, cst.Name) and self._names_module(other, target.value, view):
                        line = other.position(target)[0]
                        self._elsewhere[key] = f"`{name}` of {view.path} is also assigned in {path}:{line}"
                        return self._elsewhere[key]
        return self._elsewhere[key]

    def _names_module(self, view: ModuleView, name: cst.Name, module: ModuleView) -> bool:
        binding = self.binding(name, self.place_of(view, name))
        return binding.kind == "module" and binding.value is not None and binding.value.module is module

    def _reexported(self, view: ModuleView, obj: str, assignment, depth: int) -> Binding | None:
        for statement in module_level_statements(view.module):
            for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
                if not isinstance(small, cst.ImportFrom) or isinstance(small.names, cst.ImportStar):
                    continue
                alias = next((a for a in small.names if (a.evaluated_alias or a.evaluated_name) == obj), None)
                if alias is None:
                    continue
                found, target = view.tree.import_target(view, small, alias)
                if found.view is None:
                    return None
                if target is None:
                    return Binding("module", Value(small, Place(view), module=found.view), assignment)
                return self._definition_in(found.view, target, assignment, depth=depth + 1)
        return None

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
        returns = [node for node in own_nodes(function.node) if isinstance(node, cst.Return)]
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


def _argument(call: cst.Call, function: cst.FunctionDef, name: str) -> cst.BaseExpression | None:
    params = [p.name.value for p in (*function.params.posonly_params, *function.params.params)]
    params += [p.name.value for p in function.params.kwonly_params]
    bound = bind_arguments(call, params)
    if bound is None or name not in bound:
        return None
    return bound[name][1].value


def _not_passed(call: cst.Call, function: cst.FunctionDef, name: str) -> bool:
    """Does ``call`` certainly pass nothing for the parameter ``name`` (no `*args` / `**kwargs` that might)?"""
    params = [p.name.value for p in (*function.params.posonly_params, *function.params.params)]
    params += [p.name.value for p in function.params.kwonly_params]
    bound = bind_arguments(call, params)
    return bound is not None and name not in bound and not any(arg.star for arg in call.args)


def calls_in(trail: list, apis: set[str]) -> list[Value]:
    """The calls of ``apis`` a value passed through on its way (a trail of Values.resolve), each once, in order."""
    found: dict[int, Value] = {}
    for step in trail:
        if isinstance(step, Value) and isinstance(step.node, cst.Call) and step.api() in apis:
            found.setdefault(id(step.node), step)
    return list(found.values())


def own_nodes(function: cst.FunctionDef):
    """The nodes of a function's body, not those of functions (or classes) nested in it."""
    stack = list(children(function.body))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            stack.extend(children(node))


# What changes a module's value from another module: `model.X = `, `model.X += `, and for a list or dict
# `model.X[key] = ` or a method that changes it in place (`model.X.append(...)`).
_MUTATORS = ("append", "extend", "insert", "remove", "pop", "popitem", "clear", "update", "setdefault", "sort",
             "reverse")
_CHANGED = rf"(=(?!=)|[-+*/]=|\[[^\]\n]*\]\s*(=(?!=)|[-+*/]=)|\.\s*({'|'.join(_MUTATORS)})\s*\()"


def _changed(node: cst.CSTNode) -> cst.BaseExpression | None:
    """The `model.X` that ``node`` sets or changes in place (see _CHANGED), or None."""
    target = node.target if isinstance(node, (cst.AssignTarget, cst.AugAssign)) else None
    if isinstance(target, cst.Subscript):
        return target.value
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in _MUTATORS:
        return node.func.value
    return target


def _folder_texts(folder: str) -> dict[str, str]:
    """The text of each Python file in ``folder`` that can be read, by its absolute path."""
    found = {}
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return found
    for name in names:
        if name.endswith(".py"):
            path = os.path.join(folder, name)
            try:
                with open(path, encoding="utf-8") as file:
                    found[path] = file.read()
            except (OSError, UnicodeDecodeError):
                continue
    return found


def _sets_module_attribute(code: str, module_path: str, name: str) -> bool:
    """Does ``code`` import the module at ``module_path`` by its name and assign its ``name`` (`model.NNSIZE =`)?"""
    module = os.path.splitext(os.path.basename(module_path))[0]
    imports = re.search(rf"^\s*(from\s+[\w.]+\s+)?import\s+[^\n]*\b{re.escape(module)}\b", code, re.M)
    return imports is not None and any(
        match.group(1) != "self" for match in re.finditer(rf"^\s*(\w+)\.{re.escape(name)}\s*{_CHANGED}", code, re.M))
