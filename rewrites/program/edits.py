"""The changes a program rewrite makes to one module, applied in one pass.

Edits name the user's statements and expressions by identity (the nodes of the module as
parsed, see modules.Tree): a statement replaced by others (none: removed), statements
inserted before one, an expression replaced. Imports are added where generated code needs
them, and an import that only removed code used goes with it.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

import libcst as cst
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import AddImportsVisitor, RemoveImportsVisitor
from libcst.metadata import ImportAssignment

from rewrites.base import KERAS_3_FALLBACK, KERAS_IMPORTS, LEGACY_KERAS, module_level_statements
from rewrites.import_passes import apply_scheduled
from rewrites.program.helper_classes import with_helper_classes
from rewrites.program.modules import ModuleView
from rewrites.syntax import Unsupported, subtree, with_blank_lines


TENSORFLOW_KERAS = ("tensorflow:keras", "tensorflow.keras")  # `keras` bound to TensorFlow's, as imported() spells it


@dataclass
class ModuleEdits:
    view: ModuleView
    statements: dict[cst.CSTNode, list[cst.BaseStatement]] = field(default_factory=dict)  # [] removes it
    before: dict[cst.CSTNode, list[cst.BaseStatement]] = field(default_factory=dict)
    after: dict[cst.CSTNode, list[cst.BaseStatement]] = field(default_factory=dict)
    expressions: dict[cst.CSTNode, cst.CSTNode] = field(default_factory=dict)
    blank_lines: dict[cst.CSTNode, int] = field(default_factory=dict)  # statements kept with blank lines before
    unwrapped: set[cst.CSTNode] = field(default_factory=set)  # compound statements giving way to their edited body
    imports: list[tuple[str, str | None, str | None, int]] = field(default_factory=list)  # (module, obj, asname, dots)
    legacy_keras: bool = False  # LEGACY_KERAS before TensorFlow's import

    def replace(self, statement: cst.CSTNode, new: list[cst.BaseStatement]) -> None:
        if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) > 1:
            raise Unsupported(statement, "several statements on one line where the migration changes one: put "
                                         "them on lines of their own first", self.view.path)
        self._changes_alike(statement, new)
        self.statements[statement] = new

    def _changes_alike(self, statement: cst.CSTNode, new: list[cst.BaseStatement]) -> None:
        """Two programs may change a statement they share (a function evaluating each program's model) alike."""
        old = self.statements.get(statement)
        if old and not (len(old) == len(new) and all(a.deep_equals(b) for a, b in zip(old, new))):
            raise Unsupported(statement, "two parts of the migration change this statement", self.view.path)

    def remove(self, statement: cst.CSTNode) -> None:
        if statement not in self.statements:
            self.replace(statement, [])

    def unwrap(self, statement: cst.BaseCompoundStatement) -> None:
        """``statement`` (a `with`) gives way to its body, with the body's own edits, one level out (its own leading
        lines go with it: what is inserted before it may take them)."""
        self.unwrapped.add(statement)

    def insert_before(self, statement: cst.CSTNode, new: list[cst.BaseStatement]) -> None:
        self.before.setdefault(statement, []).extend(new)

    def insert_after(self, statement: cst.CSTNode, new: list[cst.BaseStatement]) -> None:
        self.after.setdefault(statement, []).extend(new)

    def add_import(self, module: str, obj: str | None = None, asname: str | None = None, relative: int = 0) -> None:
        if (module, obj, asname, relative) not in self.imports:
            self.imports.append((module, obj, asname, relative))

    def import_keras(self, choice: str) -> None:
        """Keras 2 as `keras`, imported as ``--keras choice`` says (KERAS_IMPORTS), unless the module binds it
        already: to the same, or, with "auto", to tf_keras (Keras 2 on every TensorFlow), or, with any, to
        TensorFlow's in a module that sets TF_USE_LEGACY_KERAS first (``legacy_keras``: Keras 2 there too). A
        module that binds `keras` to something else is left as it is."""
        view = self.view
        bound = view.imported("keras") or ("something else" if "keras" in view.top_level else None)
        module, obj = KERAS_IMPORTS[choice]
        if choice == "auto" and bound == "tf_keras" or self.legacy_keras and bound in TENSORFLOW_KERAS:
            return
        if bound is not None and bound != (f"{module}:{obj}" if obj else module):
            where = _import_statement_of(view.module, "keras") or view.top_level.get("keras", [view.module])[0]
            raise Unsupported(where, f"the migrated program needs `keras` for {module}{'.' + obj if obj else ''} "
                                     f"(--keras {choice}), which this module binds to {bound}", view.path)
        self.add_import(module, obj, None if "keras" in (module, obj) else "keras")

    def merge(self, other: ModuleEdits) -> None:
        """Add another program's edits of the same module (none, when one of them conflicts)."""
        for statement, new in other.statements.items():
            self._changes_alike(statement, new)
        for statement, new in other.statements.items():
            self.replace(statement, new)
        for statement, new in other.before.items():
            self.insert_before(statement, new)
        for statement, new in other.after.items():
            self.insert_after(statement, new)
        self.expressions.update(other.expressions)
        self.blank_lines.update(other.blank_lines)
        self.unwrapped |= other.unwrapped
        for imported in other.imports:
            self.add_import(*imported)
        self.legacy_keras |= other.legacy_keras

    def __bool__(self) -> bool:
        return bool(self.statements or self.before or self.after or self.expressions or self.imports or self.blank_lines or
                    self.legacy_keras or self.unwrapped)

    def apply(self) -> str:
        """The module's new code."""
        # The helper classes first: what they use (TF1Adam: keras) is imported too.
        module = with_helper_classes(self.view.module.visit(_Apply(self)))
        context = CodemodContext(filename=self.view.path, full_module_name=self.view.module_name,
                                 full_package_name=self.view.package_name)
        for imported in self._imports_of_removed_code():
            RemoveImportsVisitor.remove_unused_import(context, *imported)
        used = {node.value for node in subtree(module) if isinstance(node, cst.Name)}
        if self.legacy_keras:  # what LEGACY_KERAS, written below, reads
            used |= {"importlib", "os"}
        needed = [imported for imported in self.imports if (imported[2] or imported[1] or imported[0].split(".")[0])
                  in used]
        module, needed = _beside_tensorflow(module, needed)
        module, needed = _before_tensorflow(module, needed)
        for module_name, obj, asname, relative in needed:
            AddImportsVisitor.add_needed_import(context, module_name, obj, asname=asname, relative=relative)
        module = apply_scheduled(module, context)
        if any(imported[:3] == ("keras", None, None) for imported in self.imports) and "keras" in used:
            module = with_keras_3_fallback(module)
        if self.legacy_keras:
            module = _with_legacy_keras(module)
        return module.code

    def _imports_of_removed_code(self) -> set[tuple[str, str | None, str | None]]:
        """The imports the removed or replaced code read from (removed later only if nothing uses them)."""
        found = set()
        gone = [*(s for s in self.statements), *self.expressions]
        for node in (n for statement in gone for n in subtree(statement)):
            if not isinstance(node, cst.Name):
                continue
            scope = self.view.scope(node)
            for access in scope.accesses[node] if scope is not None else ():
                for assignment in access.referents:
                    if isinstance(assignment, ImportAssignment):
                        found |= _imported_names(assignment.node, node.value, self.view)
        return found


def _beside_tensorflow(module: cst.Module, imports: list) -> tuple[cst.Module, list]:
    """TensorFlow's and Keras' imports go right after the module's last top-level import of TensorFlow, where a
    person would put them (AddImportsVisitor would append them to the last import, of whatever package);
    the other imports are left to AddImportsVisitor."""
    body = list(module.body)
    tensorflow = [index for index, statement in enumerate(body) if _imports_from(statement, "tensorflow")]
    ours = [i for i in imports if not i[3] and i[0].split(".")[0] in ("tensorflow", "tf_keras", "keras")]
    if not tensorflow or not ours:
        return module, imports
    bound = {name for statement in body for name in _bound_by_import(statement)}
    lines = [cst.parse_statement(f"from {name} import {obj}" + (f" as {asname}" if asname else "") if obj else
                                 f"import {name}" + (f" as {asname}" if asname else ""))
             for name, obj, asname, _ in ours if (asname or obj or name) not in bound]
    before = [line for line in lines if _imported_modules(line) == ["keras"]]  # `import keras`: as isort sorts it
    after = [line for line in lines if line not in before]
    body[tensorflow[-1] + 1:tensorflow[-1] + 1] = after
    if before:  # taking the place of the first import of TensorFlow, with its blank lines and comments
        first = tensorflow[0]
        before[0] = before[0].with_changes(leading_lines=body[first].leading_lines)
        body[first] = body[first].with_changes(leading_lines=[])
        body[first:first] = before
    return module.with_changes(body=body), [i for i in imports if i not in ours]


def with_keras_3_fallback(module: cst.Module) -> cst.Module:
    """`import keras` (--keras auto) with KERAS_3_FALLBACK after the imports it stands among: Keras 2 as
    `keras` on every TensorFlow. Once: a module that has it keeps it."""
    body = list(module.body)
    if any(isinstance(statement, cst.If) and any(
            "tf_keras" in _imported_modules(inner) and "keras" in _bound_by_import(inner)
            for inner in statement.body.body) for statement in body):
        return module
    at = next((index for index, statement in enumerate(body) if "keras" in _imported_modules(statement)
               and "keras" in _bound_by_import(statement)), None)
    if at is None:
        return module
    while at + 1 < len(body) and _bound_by_import(body[at + 1]) and all(
            isinstance(small, (cst.Import, cst.ImportFrom)) for small in body[at + 1].body):
        at += 1
    comment, code = KERAS_3_FALLBACK.split("\n", 1)
    fallback = cst.parse_statement(code, config=module.config_for_parsing)
    body.insert(at + 1, fallback.with_changes(
        leading_lines=[cst.EmptyLine(), cst.EmptyLine(comment=cst.Comment(comment))]))
    if at + 2 < len(body) and not body[at + 2].leading_lines:
        body[at + 2] = body[at + 2].with_changes(leading_lines=[cst.EmptyLine()])
    return module.with_changes(body=body)


def _with_legacy_keras(module: cst.Module) -> cst.Module:
    """LEGACY_KERAS before the module's first import of TensorFlow or Keras (after `import os`). Once."""
    body = list(module.body)
    lines = LEGACY_KERAS.strip().split("\n")
    comments, code = [line for line in lines if line.startswith("#")], "\n".join(
        line for line in lines if not line.startswith("#"))
    if any(isinstance(statement, cst.SimpleStatementLine) and "TF_USE_LEGACY_KERAS" in cst.Module([statement]).code
           for statement in body):
        return module
    at = next((index for index, statement in enumerate(body) if any(
        name.split(".")[0] in ("tensorflow", "keras", "tf_keras") for name in _imported_modules(statement))), None)
    if at is None:
        return module
    # What the block reads is imported before it (the imports a migration adds may come after the first of TF's).
    readers = [index for index in range(at, len(body)) if isinstance(body[index], cst.SimpleStatementLine)
               and all(isinstance(small, (cst.Import, cst.ImportFrom)) for small in body[index].body)
               and {name.split(".")[0] for name in _bound_by_import(body[index])} & {"importlib", "os"}]
    if readers:
        moved = [body[index].with_changes(leading_lines=[]) for index in readers]
        moved[0] = moved[0].with_changes(leading_lines=body[at].leading_lines)
        body[at] = body[at].with_changes(leading_lines=[])
        body = [statement for index, statement in enumerate(body) if index not in readers]
        body[at:at] = moved
        at += len(moved)
    line = cst.parse_statement(code + "\n", config=module.config_for_parsing)
    comments = [cst.EmptyLine(comment=cst.Comment(text)) for text in comments]
    body.insert(at, line.with_changes(leading_lines=[*body[at].leading_lines, cst.EmptyLine(), *comments]))
    body[at + 1] = body[at + 1].with_changes(leading_lines=[cst.EmptyLine()])
    return module.with_changes(body=body)


def _before_tensorflow(module: cst.Module, imports: list) -> tuple[cst.Module, list]:
    """Standard library imports go with the module's others of the standard library, in name order, as isort
    would place them (before its first top-level import of TensorFlow when it has none)."""
    body = list(module.body)
    first = next((index for index, statement in enumerate(body) if _imports_from(statement, "tensorflow")), None)
    ours = [i for i in imports if not i[1] and not i[2] and not i[3] and i[0].split(".")[0] in sys.stdlib_module_names]
    if first is None or not ours:
        return module, imports
    bound = {name for statement in body for name in _bound_by_import(statement)}
    for name in sorted({name for name, _, _, _ in ours if name not in bound}, reverse=True):
        line = cst.parse_statement(f"import {name}")
        standard = [index for index, statement in enumerate(body) if _imports_standard_library(statement)
                    and isinstance(statement, cst.SimpleStatementLine) and isinstance(statement.body[0], cst.Import)]
        after = [index for index in standard if _imported_modules(body[index])[0] > name]
        at = after[0] if after else standard[-1] + 1 if standard else first
        if at == first and not standard and not (first and _bound_by_import(body[first - 1])):  # the first
            line = line.with_changes(leading_lines=body[first].leading_lines)  # import: its blank lines are ours
            body[first] = body[first].with_changes(leading_lines=[])
        elif after and at == after[0]:  # taking the place of the next one, with its blank lines and comments
            line = line.with_changes(leading_lines=body[at].leading_lines)
            body[at] = body[at].with_changes(leading_lines=[])
        body[at:at] = [line]
    return module.with_changes(body=body), [i for i in imports if i not in ours]


def _import_statement_of(module: cst.Module, name: str) -> cst.CSTNode | None:
    """The module-level import statement that binds ``name``."""
    for statement in module_level_statements(module):
        if name in (bound.split(".")[0] for bound in _bound_by_import(statement)):
            return statement
    return None


def _imports_standard_library(statement: cst.CSTNode) -> bool:
    names = [name.split(".")[0] for name in _imported_modules(statement)]
    return bool(names) and all(name in sys.stdlib_module_names for name in names)


def _imported_modules(statement: cst.CSTNode) -> list[str]:
    found = []
    for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
        if isinstance(small, cst.Import):
            found += [alias.evaluated_name for alias in small.names]
        elif isinstance(small, cst.ImportFrom) and small.module is not None and not small.relative:
            found.append(cst.Module([]).code_for_node(small.module))
    return found


def _imports_from(statement: cst.CSTNode, package: str) -> bool:
    for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
        if isinstance(small, cst.Import) and any(
                alias.evaluated_name.split(".")[0] == package for alias in small.names):
            return True
        if isinstance(small, cst.ImportFrom) and small.module is not None and not small.relative and \
                cst.Module([]).code_for_node(small.module).split(".")[0] == package:
            return True
    return False


def _bound_by_import(statement: cst.CSTNode) -> list[str]:
    return [alias.evaluated_alias or alias.evaluated_name
            for small in (statement.body if isinstance(statement, cst.SimpleStatementLine) else ())
            if isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(small.names, cst.ImportStar)
            for alias in small.names]


def _imported_names(statement, name: str, view: ModuleView) -> set[tuple[str, str | None, str | None]]:
    if isinstance(statement.names, cst.ImportStar):
        return set()
    found = set()
    for alias in statement.names:
        bound = alias.evaluated_alias or alias.evaluated_name.split(".")[0]
        if bound != name:
            continue
        if isinstance(statement, cst.Import):
            found.add((alias.evaluated_name, None, alias.evaluated_alias))
        elif statement.module is not None and not statement.relative:
            found.add((cst.Module([]).code_for_node(statement.module), alias.evaluated_name, alias.evaluated_alias))
        elif view.package_name is not None:
            module = ".".join(view.package_name.split(".")[:len(view.package_name.split(".")) -
                                                             (len(statement.relative) - 1)])
            if statement.module is not None:
                module = f"{module}.{cst.Module([]).code_for_node(statement.module)}" if module else \
                    cst.Module([]).code_for_node(statement.module)
            if module:
                found.add((module, alias.evaluated_name, alias.evaluated_alias))
    return found


class _Apply(cst.CSTTransformer):
    def __init__(self, edits: ModuleEdits) -> None:
        super().__init__()
        self.edits = edits

    def on_leave(self, original_node, updated_node):
        edits = self.edits
        if original_node in edits.expressions:
            return edits.expressions[original_node]
        if original_node in edits.blank_lines:
            updated_node = with_blank_lines(updated_node, edits.blank_lines[original_node])
        new = edits.statements.get(original_node)
        if new is None and original_node in edits.unwrapped:
            new = list(updated_node.body.body)
        before, after = edits.before.get(original_node, []), edits.after.get(original_node, [])
        if new is None and not before and not after:
            return updated_node
        statements = [*before, *(new if new is not None else [updated_node]), *after]
        return cst.FlattenSentinel(statements) if statements else cst.RemoveFromParent()

    def leave_IndentedBlock(self, original_node, updated_node):
        if not updated_node.body:
            return updated_node.with_changes(body=[cst.SimpleStatementLine([cst.Pass()])])
        return updated_node
