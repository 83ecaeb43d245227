"""Feature columns in containers (part of the column reader, rewrites/estimator/column_reader.py).

Comprehensions over keys known before the program runs or over a dict's items (`{"d_{}".format(key):
bucketized_column(real[key], bounds) for key in KEYS}`, `{name: embedding_column(col, 10) for name, col in
sparse.items()}`): each round read with its names bound. Dicts the program builds up: `featcols = {...}` (written
out or a comprehension), then `featcols["lat"] = bucketized_column(...)`, `featcols.update({...})`, `del
featcols["x"]`, read by `featcols.values()` or `featcols["lat"]`, as the statements leave it where the columns are
read: each change a statement of its own, in the scope that made the dict (no `if`, loop or `try` around it, but
`featcols[key] = column` in loops over keys known before the program runs, read round by round as lists' appends
are, loops that no `break`, `continue`, `return` or `raise` leaves), before that read (a function reading the dict
may run after later changes: those must come before it too). Lists appended to (`columns.append(...)`), in loops
over keys known before the program runs read round by round, an `if` in them read in each round (`for name in
CATEGORICAL: columns.append(vocabulary_list(name, df[name].unique()))`)."""

from __future__ import annotations

import contextlib

import libcst as cst

from rewrites.program.constants import UNKNOWN
from rewrites.program.places import Value
from rewrites.program.values import Values
from rewrites.syntax import Unsupported, source

UNFOLLOWED = ("the feature columns must be a list the migration can follow (written out, a comprehension, appended to "
              "in a loop, or the values of a dict written out)")
CHANGED = "feature columns in a dict changed after it is made"
CHANGING_METHODS = ("update", "pop", "popitem", "setdefault", "clear")
BRANCHES = (cst.If, cst.For, cst.While, cst.Try, cst.With, cst.Lambda, cst.CompFor)
APPEND_WRAPPERS = (cst.IndentedBlock, cst.SimpleStatementLine, cst.Expr, cst.Call, cst.Arg, cst.SimpleStatementSuite)
SET_WRAPPERS = (cst.IndentedBlock, cst.SimpleStatementLine, cst.SimpleStatementSuite, cst.Subscript, cst.AssignTarget,
                cst.Assign)


class Unkeyed:
    """The key of a column in a dict comprehension whose keys the migration cannot read: equal to no other key."""


class ColumnContainers:
    """The columns comprehensions make and dicts hold where they are used; ``reader``: the ColumnReader, which
    reads each column."""

    def __init__(self, values: Values, reader) -> None:
        self.values, self.reader = values, reader

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
        scope = scope_of(view, resolved.node)
        read_at_once = used.view is view and scope_of(view, used.node) is scope  # not later, by a function
        for node in changes:
            if read_at_once and view.position(node) >= view.position(used.node):
                break  # changed after it is read
            rounds = self._rounds_around(view, node, scope, resolved, SET_WRAPPERS)
            if isinstance(rounds, cst.For):
                raise Unsupported(rounds, f"{CHANGED} in a loop over keys not known before the program runs "
                                          f"(`{source(rounds.iter)}`): make the list where the columns are", view.path)
            if rounds is None or rounds == [{}] or _leaves(view, node, scope):
                self._check_order(view, node, scope, used)
                self._apply(entries, view, node)
            else:
                self._check_order(view, node, scope, used, looped=True)
                self._set_round_by_round(entries, view, node, scope, rounds)
        return entries

    def _set_round_by_round(self, entries: dict, view, node: cst.Name, scope, rounds: list[dict]) -> None:
        """`d[key] = column` in loops over keys known before the program runs, each round read with the loops'
        names bound (an `if` around it read in each round)."""
        for bound in rounds:
            with self._bound(bound):
                taken = self._taken(view, node, scope)
                if taken is None:
                    raise Unsupported(node, f"{CHANGED} in a condition not known before the program runs: make the "
                                            "list where the columns are", view.path)
                if taken:
                    subscript = view.parent(node)
                    place = self.values.place_of(view, node)
                    entries[self._subscript_key(subscript, place)] = self.reader.column(
                        Value(view.parent(view.parent(subscript)).value, place))

    def comprehended(self, comprehension: cst.ListComp | cst.DictComp, element: cst.BaseExpression,
                      columns: Value, key: cst.BaseExpression | None = None) -> list[tuple] | None:
        """(key, column) of each round of a comprehension of one `for` over keys known before the program runs or
        over a dict's items (``key``: a dict comprehension's, read in each round; else None); None for numeric
        columns of keys known at run time only."""
        for_in = comprehension.for_in
        if for_in.inner_for_in is not None or for_in.ifs:
            raise columns.fail("feature columns made in a comprehension of one `for` and no `if` are migrated")
        place = self.values.place_of(columns.view, element)
        rounds = self._rounds(for_in, columns)
        if rounds is None:
            made = self.values.resolve(Value(element, place))
            if (made.api() if isinstance(made.node, cst.Call) else None) != "feature_column.numeric_column":
                raise made.fail("feature columns made in a comprehension over keys known at run time only: numeric "
                                "columns are migrated")
            self.reader.numeric_key(made)
            return None
        made = []
        for bound in rounds:
            with self.values.looping(comprehension, bound):
                column = self.reader.column(Value(element, place))
                name = self.values.constant(Value(key, place)) if key is not None else None
            made.append((name, column))
        return made

    def _rounds(self, for_in: cst.CompFor, columns: Value) -> list[dict] | None:
        """The names a comprehension's `for` binds, round by round: over keys known before the program runs, or a
        dict of columns' items; None for keys known at run time only."""
        target, iterated = for_in.target, for_in.iter
        if isinstance(target, cst.Name):
            keys = self.values.constant(Value(iterated, columns.place))
            if not (isinstance(keys, (list, tuple)) and all(isinstance(key, (str, int)) for key in keys)):
                return None
            return [{target.value: key} for key in keys]
        if isinstance(target, cst.Tuple) and len(target.elements) == 2 and all(
                isinstance(e.value, cst.Name) for e in target.elements) and isinstance(iterated, cst.Call) \
                and isinstance(iterated.func, cst.Attribute) and iterated.func.attr.value == "items" \
                and not iterated.args:
            entries = self.entries(
                Value(iterated.func.value, columns.place), Value(iterated, columns.place))
            if entries is None:
                raise columns.fail("feature columns made in a comprehension over a dict of columns made at run time")
            names = [e.value.value for e in target.elements]
            return [{names[0]: key, names[1]: self.reader.column(made) if isinstance(made, Value) else made}
                    for key, made in entries.items()]
        raise columns.fail("feature columns made in a comprehension over keys or a dict's items are migrated")

    def appended(self, trail: list, columns: Value) -> list:
        """The items `columns.append(item)` adds to an empty list (in a loop, typically): Values, or the columns
        read round by round where the loops around an append go over keys known before the program runs."""
        binding = next((step for step in reversed(trail) if _binds(step, columns.node)), None)
        assignment = getattr(binding, "assignment", None)
        items, view = [], columns.view
        for reference in view.in_order(getattr(assignment, "references", ())):
            node = reference.node
            attribute, call = view.parent(node), view.parent(view.parent(node))
            if isinstance(attribute, cst.Attribute) and attribute.attr.value == "append" and \
                    isinstance(call, cst.Call) and len(call.args) == 1:
                item = Value(call.args[0].value, self.values.place_of(view, call))
                unrolled = self._unrolled(item, columns)
                items += [item] if unrolled is None else unrolled
            elif isinstance(attribute, (cst.Attribute, cst.AugAssign)) or isinstance(view.parent(node), cst.AugAssign):
                raise Unsupported(node, "feature columns added to a list otherwise than by append", view.path)
        return items

    def _unrolled(self, item: Value, columns: Value) -> list | None:
        """The columns an append in loops over keys known before the program runs adds, round by round (an `if`
        in them read in each round); None where there is no such loop, or one the migration cannot read so."""
        view, scope = item.view, scope_of(item.view, columns.node)
        rounds = self._rounds_around(view, item.node, scope, columns, APPEND_WRAPPERS)
        if not isinstance(rounds, list) or rounds in ([], [{}]):
            return None
        if _leaves(view, item.node, scope):
            raise Unsupported(item.node, "feature columns appended in a loop that a `break`, `continue`, `return` or "
                                         "`raise` may leave: make the list where the columns are", view.path)
        made = []
        for bound in rounds:
            with self._bound(bound):
                taken = self._taken(view, item.node, scope)
                if taken is None:
                    return None
                if taken:
                    made.append(self.reader.column(item))
        return made

    def _rounds_around(self, view, node: cst.CSTNode, scope, columns: Value,
                       wrappers: tuple) -> list[dict] | cst.For | None:
        """The names the loops around ``node`` (below ``scope``) bind, round by round (loop -> {name: key}): [{}]
        where there is none; a loop going over keys not known before the program runs; None where something else
        than loops over one name, `if`s and ``wrappers`` holds it."""
        rounds: list[dict] = [{}]
        for ancestor in reversed(list(_between(view, node, scope))):
            if isinstance(ancestor, cst.For) and ancestor.orelse is None:
                keys = [self._keys(Value(ancestor.iter, columns.place), bound) for bound in rounds]
                if None in keys:
                    return ancestor
                if not isinstance(ancestor.target, cst.Name):
                    return None
                rounds = [{**bound, ancestor: {ancestor.target.value: key}} for bound, known in zip(rounds, keys)
                          for key in known]
            elif not isinstance(ancestor, (cst.If, cst.Else, *wrappers)):  # an `if` is read in each round
                return None
        return rounds

    def _keys(self, iterated: Value, bound: dict) -> list | None:
        with self._bound(bound):
            keys = self.values.constant(iterated)
        return keys if isinstance(keys, (list, tuple)) and all(isinstance(k, (str, int)) for k in keys) else None

    def _bound(self, bound: dict):
        """Reading with each loop's name bound to its round's key (``bound``: loop -> {name: key})."""
        stack = contextlib.ExitStack()
        for loop, names in bound.items():
            stack.enter_context(self.values.looping(loop, names))
        return stack

    def _taken(self, view, node: cst.CSTNode, scope) -> bool | None:
        """Whether the `if`s around ``node`` take it, read with the loops' names bound; None where one is not
        known before the program runs."""
        for ancestor in _between(view, node, scope):
            if not isinstance(ancestor, cst.If):
                continue
            test = self.values.constant(Value(ancestor.test, self.values.place_of(view, ancestor)))
            if not isinstance(test, bool):
                return None
            inside_body = any(a is ancestor.body for a in view.ancestors(node)) or node is ancestor.body
            if test != inside_body:
                return False
        return True

    def looked_up(self, given: Value):
        """`by_name["lat"]` of a dict of columns, as the program's changes leave it there; None for another
        node."""
        node = given.node
        if not (isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice,
                                                                                       cst.Index)):
            return None
        container = self.values.resolve(Value(node.value, given.place))
        if not isinstance(container.node, (cst.Dict, cst.DictComp)):
            return None
        entries = self.entries(Value(node.value, given.place), given)
        key = self.values.constant(Value(node.slice[0].slice.value, given.place))
        if entries is None or key not in entries:
            raise given.fail(f"`{source(node)}` is not a column the migration finds in its dict")
        found = entries[key]
        return self.reader.column(found) if isinstance(found, Value) else found

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
            return {key if isinstance(key, (str, int)) else Unkeyed(): column for key, column in pairs}
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
    def _check_order(view, node: cst.Name, scope: cst.CSTNode, used: Value, looped: bool = False) -> None:
        """The change is a statement of the dict's own scope, unconditional (but for ``looped``: in loops read round
        by round), before the use in the same module (a function reading the dict may run after later changes)."""
        for ancestor in () if looped else view.ancestors(node):
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
                if added is None or any(isinstance(key, Unkeyed) for key in added):  # which would it replace?
                    raise argument.fail(f"{CHANGED}, by keys not known before the program runs")
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


def scope_of(view, node: cst.CSTNode) -> cst.CSTNode | None:
    """The function (or module) whose statements run ``node``: comprehensions run where they are written."""
    return next((a for a in view.ancestors(node) if isinstance(a, (cst.FunctionDef, cst.Module))), None)


def _binds(step, node: cst.CSTNode) -> bool:
    """A step of a resolution's trail binds a name to ``node``: its value, or one element of it (`a, b = [], []`)."""
    value, detail = getattr(step, "value", None), getattr(step, "detail", "")
    if value is None or value.node is node:
        return value is not None
    elements = getattr(value.node, "elements", ())
    return detail.isdigit() and int(detail) < len(elements) and elements[int(detail)].value is node


def _leaves(view, node: cst.CSTNode, scope: cst.CSTNode | None) -> bool:
    """A loop around ``node`` holds a `break`, `continue`, `return` or `raise`: its rounds may not all run whole."""
    leaving = []

    class Leaving(cst.CSTVisitor):
        def on_visit(self, visited: cst.CSTNode) -> bool:
            if isinstance(visited, (cst.Break, cst.Continue, cst.Return, cst.Raise)):
                leaving.append(visited)
            return not isinstance(visited, (cst.FunctionDef, cst.ClassDef, cst.Lambda))

    for ancestor in _between(view, node, scope):
        if isinstance(ancestor, cst.For):
            ancestor.body.visit(Leaving())
    return bool(leaving)


def _between(view, node: cst.CSTNode, scope: cst.CSTNode | None):
    """The ancestors of ``node`` below ``scope``, innermost first."""
    for ancestor in view.ancestors(node):
        if ancestor is scope:
            return
        yield ancestor
