"""Writing a value as code that computes it at another place of the program.

``hidden`` read in ``build_estimator(config, hidden)`` is ``args.hidden`` where ``main`` calls
``build_estimator(config, args.hidden)``; a module-level name of another module is read through
that module's import at the target (``model.FEATURES``); a name the target cannot see is an
``Unsupported`` saying which. A comprehension or a lambda keeps the names it binds itself (its fors' targets, its
parameters) and has the others relocated: ``{key: val for key, val in args.items()}`` reads ``args`` as any name;
its first iterable (and a lambda's defaults) are read around it, as Python evaluates them there.
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import ScopeProvider

from rewrites.program.modules import ModuleView
from rewrites.program.places import Binding, Place, Value
from rewrites.program.values import MAX_DEPTH, Values
from rewrites.syntax import Replace, children, source


def relocate(values: Values, value: Value, target: Place, spell=None) -> cst.BaseExpression:
    """Code computing ``value`` at ``target``. ``spell(view, node)``: a TF2 spelling of a TensorFlow reference
    (or None to keep it). Unsupported when a name it reads cannot be seen from there."""
    return _Relocation(values, target, spell).expression(value)


class _Relocation:
    """One relocation: replaces each name a value reads by what it means at the target place."""

    def __init__(self, values: Values, target: Place, spell) -> None:
        self.values, self.target, self.spell = values, target, spell

    def expression(self, value: Value, depth: int = 0) -> cst.BaseExpression:
        if depth > MAX_DEPTH:
            raise value.fail(f"`{source(value.node)}` is defined through too many steps to follow")
        replacements: dict[cst.CSTNode, cst.BaseExpression] = {}
        self._collect(value.node, value, replacements, depth, frozenset())
        if not replacements:
            return value.node
        return value.node.visit(Replace(replacements))

    def _collect(self, node: cst.CSTNode, value: Value, replacements: dict, depth: int, bound: frozenset) -> None:
        """``bound``: the names bound by the comprehensions and lambdas around ``node``, read as they are."""
        if isinstance(node, cst.Name) and node.value in bound:
            return
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
            self._collect(node.value, value, replacements, depth, bound)
            return
        if isinstance(node, cst.Lambda):  # its defaults read around it, its body its parameters too
            parameters = _parameters(node.params)
            for parameter in parameters:
                if parameter.default is not None:
                    self._collect(parameter.default, value, replacements, depth, bound)
            names = bound | {parameter.name.value for parameter in parameters}
            self._collect(node.body, value, replacements, depth, names)
            return
        if isinstance(node, (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)):
            self._comprehension(node, value, replacements, depth, bound)
            return
        for child in children(node):
            if isinstance(child, cst.Arg):
                self._collect(child.value, value, replacements, depth, bound)
            elif not isinstance(child, (cst.AssignEqual,)):
                self._collect(child, value, replacements, depth, bound)

    def _comprehension(self, node: cst.BaseComp, value: Value, replacements: dict, depth: int,
                       bound: frozenset) -> None:
        """Its first iterable is read around it; the rest (later iterables, conditions, element) sees the names
        its fors bind as well."""
        fors = [node.for_in]
        while fors[-1].inner_for_in is not None:
            fors.append(fors[-1].inner_for_in)
        names = [_target_names(comp.target) for comp in fors]
        if None in names:
            raise value.fail(f"`{source(node)}` is not migrated where it is used: bind it to a name first")
        own = bound.union(*names)
        self._collect(fors[0].iter, value, replacements, depth, bound)
        parts = [*(comp.iter for comp in fors[1:]), *(condition.test for comp in fors for condition in comp.ifs),
                 *((node.key, node.value) if isinstance(node, cst.DictComp) else (node.elt,))]
        for part in parts:
            self._collect(part, value, replacements, depth, own)

    def _name(self, name: cst.Name, value: Value, depth: int) -> cst.BaseExpression | None:
        place, target = value.place, self.target
        binding = self.values.binding(name, place)
        if binding.kind == "builtin":
            return None
        if place.same_scope(target) and binding.kind != "unknown":
            return None
        if _bound_in(binding, target):
            return None  # bound where the code goes (read from a lambda or a nested function there)
        if binding.kind == "value" and binding.value is not None and isinstance(
                getattr(binding.assignment, "node", None), cst.Param):
            return self._argument(name, binding, value, depth)  # a parameter of a call known: its argument
        owner = _scope_owner(binding)
        if binding.kind == "value" and binding.assignment is not None and owner is not None \
                and owner.view is target.view and owner.function is None and not _shadowed(target, name.value):
            return None  # a module-level name of the target's module
        if binding.kind in ("value", "parameter") and binding.value is not None and (
                binding.kind == "parameter" or not _is_module_level(binding)):
            return self._argument(name, binding, value, depth)
        if binding.kind in ("value", "definition") and _is_module_level(binding):
            return self._module_level(name, binding, value)
        if binding.kind in ("module", "import"):
            return self._import(name, value, binding)
        if binding.home is not None and binding.home.view is target.view and target.function is not None \
                and not _shadowed(target, name.value):
            return None  # set by another module before the functions of its own run, as the program reads it
        raise value.fail(f"`{name.value}` ({binding.detail or binding.kind}) cannot be read where the migrated code "
                         "runs")

    def _argument(self, name: cst.Name, binding: Binding, value: Value, depth: int) -> cst.BaseExpression:
        """The value a name is bound to (a parameter's argument or default, a local's value), as code at the
        target: computed there again only if that gives the same value."""
        if not self.values.is_pure(binding.value) and not binding.value.place.same_scope(self.target):
            raise value.fail(f"`{name.value}` is computed where it is defined ({source(binding.value.node)}): "
                             "bind it where the migrated code runs")
        return cst.ensure_type(self.expression(binding.value, depth + 1), cst.BaseExpression)

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


def _target_names(target: cst.BaseExpression) -> set[str] | None:
    """The names a for's target binds (``key, (a, *rest)``); None for another target (an attribute, an item)."""
    if isinstance(target, cst.Name):
        return {target.value}
    if isinstance(target, (cst.Tuple, cst.List)):
        names = [_target_names(element.value) for element in target.elements]
        return None if None in names else set().union(*names)
    return None


def _parameters(parameters: cst.Parameters) -> list:
    return [*parameters.posonly_params, *parameters.params, *parameters.kwonly_params,
            *([parameters.star_arg] if isinstance(parameters.star_arg, cst.Param) else []),
            *([parameters.star_kwarg] if parameters.star_kwarg else [])]
