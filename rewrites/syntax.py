"""Small syntax helpers every rewrite family may import: reading calls, statements and literals.

No family imports another family's internals; what two families share lives here (or in
rewrites/base.py for TensorFlow names, rewrites/keras_equivalents.py and keras_optimizers.py for the Keras tables).
"""

from __future__ import annotations

import collections
from collections.abc import Collection, Iterator, Sequence

import libcst as cst


class Unsupported(Exception):
    """What a reader cannot migrate safely: the program is left as it is; ``node`` is where a person should look.

    ``path``: the file holding ``node`` when it is not the file being read (a program across modules).
    """

    def __init__(self, node: cst.CSTNode, message: str, path: str | None = None) -> None:
        super().__init__(message)
        self.node = node
        self.path = path
        self.more: list[Unsupported] = []  # the other things found that stop the same program

    @classmethod
    def of_all(cls, problems: list[Unsupported]) -> Unsupported:
        """One Unsupported standing for several: the first, the others in its ``more``."""
        first, *rest = problems
        first.more = [*first.more, *(more for problem in rest for more in (problem, *problem.more))]
        return first

    def every(self) -> list[Unsupported]:
        return [self, *self.more]


def source(node: cst.CSTNode) -> str:
    """The code of one node, as it is written."""
    return cst.Module([]).code_for_node(node)


def subtree(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """``node`` and every node below it."""
    stack = [node]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(children(node))


def children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """``node.children``, four times faster: libcst finds them by visiting the node; here they are read from
    its fields, in the order libcst visits them (learnt once for each kind of node)."""
    found = []
    for name in _visiting_order(node):
        value = getattr(node, name)
        if isinstance(value, cst.CSTNode):
            found.append(value)
        elif isinstance(value, (tuple, list)):
            found.extend(item for item in value if isinstance(item, cst.CSTNode))
    return found


def statements_mentioning(module: cst.Module, names: Collection[str], fragments: Collection[str] = ()
                          ) -> set[cst.BaseStatement]:
    """The statements (at any depth) whose code uses one of ``names``, as a name or an attribute, or under another
    name an import binds it to (`from m import Server as S`), or holds a string with one of ``fragments`` in it."""
    names = set(names)
    aliases: set[str] = set()
    found = _mentioning(module, names, fragments, aliases)
    if aliases - names:  # an import binds a name under another: look again for that one too
        found = _mentioning(module, names | aliases, fragments, set())
    return found


def _mentioning(module: cst.Module, names: set[str], fragments: Collection[str], aliases: set[str]
                ) -> set[cst.BaseStatement]:
    """statements_mentioning's walk; adds to ``aliases`` the names imports bind one of ``names`` under."""
    found: set[cst.BaseStatement] = set()

    def mentions(statement: cst.BaseStatement) -> bool:
        hit = False
        stack = children(statement)
        while stack:
            node = stack.pop()
            if isinstance(node, cst.BaseStatement):
                hit = mentions(node) or hit
            elif isinstance(node, cst.Name):
                hit = hit or node.value in names
            elif isinstance(node, (cst.SimpleString, cst.FormattedStringText)):
                hit = hit or any(fragment in node.value for fragment in fragments)
            else:
                if isinstance(node, cst.ImportAlias) and node.asname and node.evaluated_name.split(".")[-1] in names:
                    aliases.add(node.evaluated_alias)
                stack.extend(children(node))
        if hit:
            found.add(statement)
        return hit

    for statement in module.body:
        mentions(statement)
    return found


class VisitsWhatMentions:
    """A codemod (mixed in before its base class) whose work all starts at a use of one of ``MENTIONS`` (the last
    names of the APIs it handles) or at a string holding one of ``FRAGMENTS``: it visits only the statements that
    mention one (see statements_mentioning). Of the others only the statement's own visit_ and leave_ methods
    run, not those of the nodes inside."""

    MENTIONS: Collection[str] = ()
    FRAGMENTS: Collection[str] = ()
    _visited: set[cst.BaseStatement]

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.Module):
            self._visited = statements_mentioning(node, self.MENTIONS, self.FRAGMENTS)
        return super().on_visit(node) and (node in self._visited or not isinstance(node, cst.BaseStatement))


_VISITING_ORDER: dict[type, tuple[str, ...]] = {}


def _visiting_order(node: cst.CSTNode) -> tuple[str, ...]:
    order = _VISITING_ORDER.get(type(node))
    if order is None:
        recorder = _AttributeOrder(node)
        node.visit(recorder)
        order = _VISITING_ORDER[type(node)] = tuple(dict.fromkeys(recorder.names))
    return order


class _AttributeOrder(cst.CSTVisitor):
    def __init__(self, node: cst.CSTNode) -> None:
        super().__init__()
        self.node = node
        self.names: list[str] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        return node is self.node

    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        if node is self.node:
            self.names.append(attribute)


def bind_arguments(call: cst.Call, params: Sequence[str]) -> dict[str, tuple[int | None, cst.Arg]] | None:
    """Map each argument of ``call`` to its parameter: name -> (position or None, Arg).

    None when the call cannot be mapped statically: *args, **kwargs, an unknown
    keyword, too many positional arguments, or a parameter given twice.
    """
    bound: dict[str, tuple[int | None, cst.Arg]] = {}
    for index, arg in enumerate(call.args):
        if arg.star:
            return None
        if arg.keyword is None:
            if index >= len(params):
                return None
            name, position = params[index], index
        else:
            name, position = arg.keyword.value, None
            if name not in params:
                return None
        if name in bound:
            return None
        bound[name] = (position, arg)
    return bound


def bound_values(call: cst.Call, params: Sequence[str]) -> dict[str, cst.BaseExpression]:
    """Parameter name -> argument value, or Unsupported when the call cannot be read statically."""
    bound = bind_arguments(call, params)
    if bound is None:
        raise Unsupported(call, "arguments that cannot be read statically (*args, **kwargs or unknown keywords)")
    return {name: arg.value for name, (_, arg) in bound.items()}


def keyword_arg(name: str, value: cst.BaseExpression, like: cst.Arg) -> cst.Arg:
    """A `name=value` argument keeping the comma (and so the layout) of ``like``."""
    return cst.Arg(
        value=value,
        keyword=cst.Name(name),
        equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")),
        comma=like.comma,
    )


def without_trailing_comma(args: list[cst.Arg], original: Sequence[cst.Arg]) -> list[cst.Arg]:
    """Give the new last argument the original last argument's comma (none, usually)."""
    if args and original:
        args[-1] = args[-1].with_changes(comma=original[-1].comma)
    return args


def statement_value(statement: cst.CSTNode) -> cst.BaseExpression | None:
    """The value of a simple statement `value`, `x = value` or `a, b = value`."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None
    small = statement.body[0]
    return small.value if isinstance(small, (cst.Expr, cst.Assign)) else None


def single_assign(statement: cst.CSTNode) -> tuple[str, cst.BaseExpression] | None:
    """(name, value) of `name = value`."""
    value = statement_value(statement)
    small = statement.body[0] if value is not None else None
    if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
        return small.targets[0].target.value, value
    return None


def holder(node: cst.CSTNode | None) -> str | None:
    """What a name or an attribute of a name spells (`sv`, `self.sv`): a place holding a value."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name):
        return f"{node.value.value}.{node.attr.value}"
    return None


def assigned(statement: cst.CSTNode) -> tuple[str, cst.BaseExpression] | None:
    """(holder, value) of `name = value` or `obj.attr = value`."""
    value = statement_value(statement)
    small = statement.body[0] if value is not None else None
    if isinstance(small, cst.Assign) and len(small.targets) == 1 and holder(small.targets[0].target) is not None:
        return holder(small.targets[0].target), value
    return None


def list_elements(node: cst.BaseExpression | None, what: str = "hooks") -> list[cst.BaseExpression]:
    """The items of a list or tuple literal (none for None); Unsupported for anything else."""
    if node is None or is_name(node, "None"):
        return []
    if not isinstance(node, (cst.List, cst.Tuple)) or any(isinstance(e, cst.StarredElement) for e in node.elements):
        raise Unsupported(node, f"{what} given as anything but a list written out")
    return [element.value for element in node.elements]


def is_name(node: cst.CSTNode | None, name: str) -> bool:
    return isinstance(node, cst.Name) and node.value == name


def is_literal_int(node: cst.BaseExpression, value: int) -> bool:
    return isinstance(node, cst.Integer) and node.evaluated_value == value


def is_none(node: cst.CSTNode | None) -> bool:
    return is_name(node, "None")


def root(node: cst.BaseExpression) -> cst.BaseExpression:
    """The start of an attribute chain (`tf` of `tf.contrib.lookup.HashTable`)."""
    while isinstance(node, cst.Attribute):
        node = node.value
    return node


def is_read_only(node: cst.BaseExpression) -> bool:
    """Names, attributes and literal subscripts of them, in literals: the same value however often it is read
    (`params["units"]`, `[WIDTH, HEIGHT]`)."""
    if isinstance(node, (cst.Name, cst.SimpleString, cst.Integer, cst.Float)):
        return True
    if isinstance(node, cst.Attribute):
        return is_read_only(node.value)
    if isinstance(node, cst.Subscript):
        return is_read_only(node.value) and all(
            isinstance(element.slice, cst.Index) and is_read_only(element.slice.value) for element in node.slice)
    if isinstance(node, (cst.Tuple, cst.List)):
        return all(is_read_only(element.value) for element in node.elements)
    if isinstance(node, cst.Dict):
        return all(isinstance(element, cst.DictElement) and is_read_only(element.key) and is_read_only(element.value)
                   for element in node.elements)
    return False


# Builtins that only read their argument: computing one again gives the same value.
PURE_BUILTINS = frozenset({"len", "int", "float", "abs", "round"})


def is_pure_read(node: cst.BaseExpression) -> bool:
    """A read-only value, or `len(frame)` / arithmetic of such values: the same value however often it is computed,
    with no effect."""
    if is_read_only(node):
        return True
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value in PURE_BUILTINS:
        return all(not arg.keyword and not arg.star and is_pure_read(arg.value) for arg in node.args)
    if isinstance(node, cst.BinaryOperation):
        return is_pure_read(node.left) and is_pure_read(node.right)
    if isinstance(node, cst.UnaryOperation):
        return is_pure_read(node.expression)
    return False


def is_docstring(statement: cst.CSTNode) -> bool:
    return (isinstance(statement, cst.SimpleStatementLine) and isinstance(statement.body[0], cst.Expr)
            and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString)))


def first_line(statement: cst.CSTNode) -> str:
    """The first line of a statement's code, shortened to 60 characters: for messages."""
    if hasattr(statement, "leading_lines"):
        statement = statement.with_changes(leading_lines=[])
    line = source(statement).strip().splitlines()[0]
    return line if len(line) <= 60 else line[:57] + "..."


def string_value(node: cst.CSTNode | None) -> str | None:
    """The value of a plain string literal, else None."""
    return node.evaluated_value if isinstance(node, cst.SimpleString) else None


def with_blank_lines(statement: cst.BaseStatement, count: int) -> cst.BaseStatement:
    """At least ``count`` empty lines before the statement (and before its comments)."""
    lines = list(statement.leading_lines)
    blank = 0
    while blank < len(lines) and not lines[blank].comment and not lines[blank].whitespace.value:
        blank += 1
    return statement.with_changes(leading_lines=[cst.EmptyLine(indent=False)] * max(count - blank, 0) + lines)


class _Indented(cst.CSTTransformer):
    def __init__(self, indent: str) -> None:
        super().__init__()
        self.indent = indent

    def leave_IndentedBlock(self, original: cst.IndentedBlock, updated: cst.IndentedBlock) -> cst.IndentedBlock:
        return updated if updated.indent is not None else updated.with_changes(indent=self.indent)


class _DefaultIndented(cst.CSTTransformer):
    def leave_IndentedBlock(self, original: cst.IndentedBlock, updated: cst.IndentedBlock) -> cst.IndentedBlock:
        return updated.with_changes(indent=None)


def default_indented(statement: cst.BaseStatement) -> cst.BaseStatement:
    """``statement``, its blocks printed with the indentation of the module it goes into."""
    return statement.visit(_DefaultIndented())


def parsed_statement(code: str, indent: str) -> cst.BaseStatement:
    """The statement ``code``, its blocks indented by ``indent`` (the module's it goes into), whatever that module's
    default indentation: libcst prints a block of no indentation of its own with its module's."""
    return cst.parse_module(code + "\n").body[0].visit(_Indented(indent))


class Rename(cst.CSTTransformer):
    """Every use of a name in ``renames`` becomes its new name (attributes and keywords are not uses)."""

    def __init__(self, renames: dict[str, str]) -> None:
        super().__init__()
        self.renames = renames

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.Name:
        new = self.renames.get(updated_node.value)
        return updated_node.with_changes(value=new) if new else updated_node

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.Attribute:
        return updated_node.with_changes(attr=original_node.attr)  # `x.self` is no use of the name

    def leave_Arg(self, original_node: cst.Arg, updated_node: cst.Arg) -> cst.Arg:
        return updated_node.with_changes(keyword=original_node.keyword)  # nor is `f(self=...)`


def renamed(code: str, renames: dict[str, str]) -> str:
    """``code`` with the names in ``renames`` renamed (see Rename)."""
    if not code or not renames:
        return code
    return cst.parse_module(code).visit(Rename(renames)).code


class Replace(cst.CSTTransformer):
    """Each node of ``replacements`` (by identity, in the tree visited) becomes its replacement."""

    def __init__(self, replacements: dict[cst.CSTNode, cst.CSTNode]) -> None:
        super().__init__()
        self.replacements = replacements

    def on_leave(self, original_node, updated_node):
        return self.replacements.get(original_node, updated_node)


def names_read(node: cst.CSTNode) -> list[cst.Name]:
    """The names in ``node`` (not an attribute's or a keyword argument's name)."""
    not_names = {id(n.attr) for n in subtree(node) if isinstance(n, cst.Attribute)} | {
        id(n.keyword) for n in subtree(node) if isinstance(n, cst.Arg) and n.keyword is not None}
    return [n for n in subtree(node) if isinstance(n, cst.Name) and id(n) not in not_names]


def name_reads(body: cst.CSTNode, name: str) -> list[cst.Name]:
    """The names ``name`` in ``body`` (not an attribute or a keyword so named)."""
    return [node for node in names_read(body) if node.value == name]


class Bindings(cst.CSTVisitor):
    """How often each name is bound anywhere in a module (`counts`, imports too), the names that may be changed in
    place (`changed`: `names.append(...)`, `names[0] = ...`, `global names`), and every name written (`written`:
    a new name the migration binds must be none of them)."""

    def __init__(self) -> None:
        self.counts: collections.Counter[str] = collections.Counter()
        self.changed: set[str] = set()
        self.written: set[str] = set()

    def visit_Name(self, node: cst.Name) -> None:
        self.written.add(node.value)

    def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
        if node.asname is None:  # `import a.b` binds a; `from m import name` binds name (an `as` is an AsName)
            self.counts[node.evaluated_name.split(".")[0]] += 1

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._bound(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._bound(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._bound(node.target)

    def visit_For(self, node: cst.For) -> None:
        self._bound(node.target)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._bound(node.target)

    def visit_AsName(self, node: cst.AsName) -> None:
        self._bound(node.name)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bound(node.target)

    def visit_Param(self, node: cst.Param) -> None:
        self._bound(node.name)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._bound(node.name)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._bound(node.name)

    def visit_Global(self, node: cst.Global) -> None:
        self.changed.update(item.name.value for item in node.names)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if isinstance(node.value, cst.Name):  # a method may change a list in place
            self.changed.add(node.value.value)

    def _bound(self, target: cst.BaseExpression) -> None:
        if isinstance(target, cst.Name):
            self.counts[target.value] += 1
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._bound(element.value)
        elif isinstance(target, cst.StarredElement):
            self._bound(target.value)
        elif isinstance(target, (cst.Subscript, cst.Attribute)):
            self.changed.add(getattr(root(target.value), "value", ""))
