"""Feature columns held in a dict the program builds up: `featcols = {...}` (written out or a comprehension), then
`featcols["lat"] = bucketized_column(...)`, `featcols.update({...})`, `del featcols["x"]`, and `featcols.values()`
given to the Estimator. The dict is read as the statements leave it where the columns are used: each change a
statement of its own, in the scope that made the dict (no `if`, loop or `try` around it), before that use."""

from __future__ import annotations

from typing import Callable

import libcst as cst

from rewrites.program.constants import UNKNOWN
from rewrites.program.places import Value
from rewrites.program.values import Values
from rewrites.syntax import Unsupported

UNFOLLOWED = ("the feature columns must be a list the migration can follow (written out, a comprehension, appended to "
              "in a loop, or the values of a dict written out)")
CHANGED = "feature columns in a dict changed after it is made"
CHANGING_METHODS = ("update", "pop", "popitem", "setdefault", "clear")
BRANCHES = (cst.If, cst.For, cst.While, cst.Try, cst.With, cst.Lambda, cst.CompFor)


class Unkeyed(int):
    """The place of a column in a dict comprehension whose keys the migration cannot read."""


class ColumnDict:
    """The columns a dict holds where they are used. ``comprehended(node, element, value, key)``: (key, column) of
    each round of a dict comprehension (None for keys known at run time only), as ColumnReader reads them."""

    def __init__(self, values: Values, comprehended: Callable) -> None:
        self.values, self.comprehended = values, comprehended

    def entries(self, mapping: Value, used: Value) -> dict | None:
        """Key -> column (a Value, or a column read) of the dict ``mapping`` names, as it is where ``used`` reads
        it; None for keys known at run time only."""
        trail: list = []
        resolved = self.values.resolve(mapping, trail=trail)
        binding = next((step for step in reversed(trail) if getattr(step, "value", None) is not None
                        and step.value.node is resolved.node), None)
        view = resolved.view
        changes = [reference.node for reference in view.in_order(getattr(getattr(binding, "assignment", None),
                                                                         "references", ()))
                   if self._changes(view, reference.node)]
        entries = self._made(resolved, used)
        if changes and (entries is None or any(isinstance(key, Unkeyed) for key in entries)):
            raise Unsupported(changes[0], f"{CHANGED}, its keys not known before the program runs", view.path)
        scope = _scope(view, resolved.node)
        read_at_once = used.view is view and _scope(view, used.node) is scope  # not later, by a function
        for node in changes:
            if read_at_once and view.position(node) >= view.position(used.node):
                break  # changed after it is read
            self._check_order(view, node, scope, used)
            self._apply(entries, view, node)
        return entries

    @staticmethod
    def _changes(view, node: cst.Name) -> bool:
        parent = view.parent(node)
        stored = isinstance(parent, cst.Subscript) and parent.value is node and isinstance(
            view.parent(parent), (cst.AssignTarget, cst.AugAssign, cst.Del))
        return stored or isinstance(parent, cst.Attribute) and parent.value is node and \
            parent.attr.value in CHANGING_METHODS

    def _made(self, made: Value, used: Value) -> dict | None:
        node = made.node
        if isinstance(node, cst.DictComp):
            pairs = self.comprehended(node, node.value, made, node.key)
            if pairs is None:
                return None
            return {key if isinstance(key, (str, int)) else Unkeyed(index): column
                    for index, (key, column) in enumerate(pairs)}
        if isinstance(node, cst.Dict) and all(isinstance(e, cst.DictElement) for e in node.elements):
            return {self._key(Value(element.key, made.place)): Value(element.value, made.place)
                    for element in node.elements}
        raise used.fail(UNFOLLOWED)

    def _key(self, key: Value) -> str:
        constant = self.values.constant(key)
        if constant is UNKNOWN or not isinstance(constant, (str, int)):
            raise key.fail("a feature column's key in a dict must be a string the migration can read")
        return constant

    @staticmethod
    def _check_order(view, node: cst.Name, scope: cst.CSTNode, used: Value) -> None:
        """The change is a statement of the dict's own scope, unconditional, before the use in the same module (a
        function reading the dict may run after later changes)."""
        for ancestor in view.ancestors(node):
            if ancestor is scope:
                break
            if isinstance(ancestor, (*BRANCHES, cst.FunctionDef, cst.ClassDef)):
                raise Unsupported(node, f"{CHANGED} in a condition, loop, `try` or function: make the list where the "
                                        "columns are", view.path)
        if used.view is view and view.position(node) >= view.position(used.node) or \
                used.view is not view and scope is not view.module:
            raise Unsupported(node, f"{CHANGED} after the columns are used: make the list where the columns are",
                              view.path)

    def _apply(self, entries: dict, view, node: cst.Name) -> None:
        parent = view.parent(node)
        place = self.values.place_of(view, node)
        statement = view.parent(parent) if isinstance(parent, cst.Subscript) else None
        if isinstance(statement, cst.AssignTarget):
            assign = view.parent(statement)
            if len(assign.targets) == 1:
                entries[self._subscript_key(parent, place)] = Value(assign.value, place)
                return
        elif isinstance(statement, cst.Del):
            entries.pop(self._subscript_key(parent, place), None)
            return
        call = view.parent(parent)
        if statement is None and isinstance(call, cst.Call) and len(call.args) == 1 and not call.args[0].keyword \
                and not call.args[0].star and isinstance(view.parent(call), cst.Expr):
            argument = Value(call.args[0].value, place)
            if parent.attr.value == "update":
                given = self.values.resolve(argument)
                added = self.entries(argument, argument) if isinstance(argument.node, cst.Name) else \
                    self._made(given, argument)
                if added is None:
                    raise argument.fail(f"{CHANGED}, by keys known at run time only")
                entries.update(added)
                return
            if parent.attr.value == "pop":
                entries.pop(self._key(argument), None)
                return
        raise Unsupported(node, f"{CHANGED} otherwise than by `d[key] = column`, `d.update(...)` or `del d[key]`: "
                                "make the list where the columns are", view.path)

    def _subscript_key(self, subscript: cst.Subscript, place) -> str:
        element = subscript.slice[0]
        if len(subscript.slice) != 1 or not isinstance(element.slice, cst.Index):
            raise Unsupported(subscript, "a feature column's key in a dict must be a string the migration can read",
                              place.view.path)
        return self._key(Value(element.slice.value, place))


def _scope(view, node: cst.CSTNode) -> cst.CSTNode | None:
    """The function (or module) whose statements run ``node``: comprehensions run where they are written."""
    return next((a for a in view.ancestors(node) if isinstance(a, (cst.FunctionDef, cst.Module))), None)
