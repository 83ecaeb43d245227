"""Adding and removing the imports a rewrite scheduled, without libcst's metadata passes.

Rewrites schedule imports the libcst way (``AddImportsVisitor.add_needed_import``,
``RemoveImportsVisitor.remove_unused_import[_by_node]``); ``apply_scheduled`` carries them out.
libcst's own ``transform_module`` would copy the whole tree and resolve its scopes and
qualified names again only to learn which imports are still read: on a big module that
was half of the migration's time. Here an import is dropped only when its name occurs
nowhere else in the module: not as a name outside import statements, not as a word of a
string (``__all__``, string annotations). A name that is also a local variable somewhere
keeps the import: an unused import left is harmless, a used one removed is not.
"""

from __future__ import annotations

import re

import libcst as cst
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import AddImportsVisitor, RemoveImportsVisitor

from rewrites.syntax import children, is_name

_WORD = re.compile(r"[^\W\d]\w*")


def apply_scheduled(module: cst.Module, context: CodemodContext) -> cst.Module:
    """``module`` with the imports scheduled in ``context`` added, then the unread ones scheduled for removal
    removed."""
    if context.scratch.get(AddImportsVisitor.CONTEXT_KEY):
        module = _add(module, AddImportsVisitor(context))
    if context.scratch.get(RemoveImportsVisitor.CONTEXT_KEY):
        module = _remove(module, _RemoveUnreadImports(context))
    return module


def _add(module: cst.Module, adder: AddImportsVisitor) -> cst.Module:
    """What ``module.visit(adder)`` returns, without walking the module: AddImportsVisitor only reads and
    changes the import statements at the top of a module (after its docstring) and the module's body."""
    head = 1
    while head < len(module.body) and _is_import_line(module.body[head]):
        head += 1
    adder.visit_Module(module.with_changes(body=module.body[:head]))
    body = [statement.with_changes(body=[adder.leave_ImportFrom(small, small) if isinstance(small, cst.ImportFrom)
                                         else small for small in statement.body])
            if index < head and _is_import_line(statement) else statement
            for index, statement in enumerate(module.body)]
    return adder.leave_Module(module, module.with_changes(body=body))


def _remove(module: cst.Module, remover: _RemoveUnreadImports) -> cst.Module:
    """What ``module.visit(remover)`` returns, from a walk of the statements only."""
    remover.visit_Module(module)
    changed = {}
    for statement in remover.imports:
        new = (remover.leave_Import if isinstance(statement, cst.Import) else remover.leave_ImportFrom)(
            statement, statement)
        if new is not statement:
            changed[statement] = new
    return module.visit(_Replace(changed)) if changed else module


class _Replace(cst.CSTTransformer):
    """Replaces statements below statements; expressions, where they cannot be, are not walked."""

    def __init__(self, replacements: dict[cst.CSTNode, cst.CSTNode | cst.RemovalSentinel]) -> None:
        super().__init__()
        self.replacements = replacements

    def on_visit(self, node: cst.CSTNode) -> bool:
        return not isinstance(node, (cst.BaseExpression, cst.BaseSmallStatement))

    def on_leave(self, original_node, updated_node):
        return self.replacements.get(original_node, updated_node)


def _is_import_line(statement: cst.CSTNode) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and isinstance(statement.body[0], (cst.Import, cst.ImportFrom))


def names_read(module: cst.CSTNode) -> set[str]:
    """Every name the code may read: the names outside import statements (but for attributes and keywords of
    calls), and the words of the strings that name names: annotations and `__all__`."""
    return _names_and_imports(module)[0]


def _names_and_imports(module: cst.CSTNode) -> tuple[set[str], list[cst.Import | cst.ImportFrom]]:
    found: set[str] = set()
    imports = []
    stack = [(module, False)]
    while stack:
        node, naming = stack.pop()
        if isinstance(node, cst.Name):
            found.add(node.value)
        elif isinstance(node, (cst.SimpleString, cst.FormattedStringText)):
            if naming:
                found.update(_WORD.findall(node.value))
        elif isinstance(node, (cst.Import, cst.ImportFrom)):
            imports.append(node)
        elif isinstance(node, (cst.Attribute, cst.Arg)):  # `a.b` and `f(b=a)` read `a` only
            stack.append((node.value, naming))
        else:
            naming = naming or isinstance(node, cst.Annotation) or _assigns_all(node)
            stack.extend((child, naming) for child in children(node))
    return found, imports


def _assigns_all(node: cst.CSTNode) -> bool:
    """`__all__ = [...]`, `__all__ += [...]`, `__all__.extend([...])`."""
    if isinstance(node, cst.Assign):
        targets = [target.target for target in node.targets]
    elif isinstance(node, (cst.AugAssign, cst.AnnAssign)):
        targets = [node.target]
    elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        targets = [node.func.value]
    else:
        return False
    return any(is_name(target, "__all__") for target in targets)


def _bound_name(alias: cst.ImportAlias) -> str:
    """The name an import alias binds: `import a.b` binds `a`."""
    return alias.evaluated_alias or alias.evaluated_name.split(".")[0]


class _RemoveUnreadImports(RemoveImportsVisitor):
    """libcst's RemoveImportsVisitor (which keeps comments and commas right), deciding "unused" by names_read."""

    METADATA_DEPENDENCIES = ()

    def visit_Module(self, node: cst.Module) -> None:
        read, self.imports = _names_and_imports(node)
        self._unused_imports = {alias: statement for statement in self.imports
                                if not isinstance(statement.names, cst.ImportStar)
                                for alias in statement.names if _bound_name(alias) not in read}
