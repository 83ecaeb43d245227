"""The modules of one run that a program may span: each parsed once, with its names resolved.

A program's pieces live where people put them: the model_fn in ``trainer/model.py``, the
driver in ``trainer/task.py``, which imports it as ``from trainer import model``,
``from . import model``, ``import model`` (run as a script) or ``from .model import
model_fn``. ``Tree`` finds the module an import means, as Python would when the program
runs as a script or with ``python -m``: the importer's folder, then the folders above it
as long as they are packages, then the folder above the topmost package. A module found
on disk but not among the files of the run is reported, not read.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from functools import cached_property

import libcst as cst
from libcst.metadata import MetadataWrapper, ParentNodeProvider, PositionProvider, QualifiedNameProvider, ScopeProvider

from rewrites.base import TFNameReader, module_level_statements
from rewrites.metadata import Parsed, lazily_resolved
from rewrites.program.imports import find_module
from rewrites.tf_api import V1_ONLY_DATASET_MEMBERS
from rewrites.syntax import subtree


@dataclass(frozen=True)
class Found:
    """Where an import leads: a module of the run (``view``), or a file outside it (``path``), or nowhere."""

    name: str                       # the dotted module name as imported
    view: ModuleView | None = None
    path: str | None = None         # on disk but not among the paths given


class ModuleView(TFNameReader, cst.MetadataDependent):
    """One module of the run: its syntax tree (node identity kept), positions, scopes and TensorFlow names."""

    METADATA_DEPENDENCIES = (PositionProvider, QualifiedNameProvider, ScopeProvider, ParentNodeProvider)

    def __init__(self, path: str, wrapper: MetadataWrapper, tree: Tree) -> None:
        super().__init__()
        self.path, self.module, self.tree = path, wrapper.module, tree
        self.metadata = lazily_resolved(wrapper, self.get_inherited_dependencies())
        self.read_aliases(self.module)

    def __repr__(self) -> str:
        return f"ModuleView({self.path!r})"

    @cached_property
    def module_name(self) -> str | None:
        return package_of(self.path, self.tree._is_file)[0]

    @cached_property
    def package_name(self) -> str | None:
        return package_of(self.path, self.tree._is_file)[1]

    def position(self, node: cst.CSTNode) -> tuple[int, int]:
        """(line, column from 1) where ``node`` starts."""
        start = self.get_metadata(PositionProvider, node).start
        return start.line, start.column + 1

    def in_order(self, accesses) -> list:
        """Assignments or references (libcst keeps them in sets) in the order of the source: a finding that
        names the first of them names the same one on every run."""
        return sorted(accesses, key=lambda access: self.position(access.node))

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self.get_metadata(ParentNodeProvider, node, None)

    def scope(self, node: cst.CSTNode):
        return self.get_metadata(ScopeProvider, node, None)

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        while (node := self.parent(node)) is not None:
            yield node

    def enclosing_function(self, node: cst.CSTNode) -> cst.FunctionDef | None:
        return next((a for a in self.ancestors(node) if isinstance(a, cst.FunctionDef)), None)

    def statement_of(self, node: cst.CSTNode) -> cst.BaseStatement:
        """The statement that holds ``node`` (``node`` itself if it is one)."""
        while not isinstance(node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            node = self.parent(node)
        return node

    def module_statement_of(self, node: cst.CSTNode) -> cst.BaseStatement:
        """The module-level statement that holds ``node``."""
        top = node
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, cst.Module):
                return top
            if isinstance(ancestor, cst.BaseStatement):
                top = ancestor
        return top

    @cached_property
    def top_level(self) -> dict[str, list[cst.CSTNode]]:
        """Module-level bindings (also in module-level if / try blocks): name -> the def, class, or Assign nodes."""
        found: dict[str, list[cst.CSTNode]] = {}
        for statement in module_level_statements(self.module):
            if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
                found.setdefault(statement.name.value, []).append(statement)
            for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
                if isinstance(small, (cst.Assign, cst.AnnAssign)):
                    targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
                    for target in targets:
                        if isinstance(target, cst.Name):
                            found.setdefault(target.value, []).append(small)
        return found

    @cached_property
    def imports(self) -> dict[str, str]:
        """Module-level imports: the name bound -> what it is, e.g. "tf" -> "tensorflow.compat.v1",
        "model" -> the path of the module of the run, "Estimator" -> "tensorflow.estimator:Estimator"."""
        found = {}
        for statement in module_level_statements(self.module):
            for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
                if not isinstance(small, (cst.Import, cst.ImportFrom)) or isinstance(small.names, cst.ImportStar):
                    continue
                for alias in small.names:
                    if isinstance(small, cst.Import) and alias.asname is None:
                        name = alias.evaluated_name.split(".")[0]
                        found[name] = name
                        continue
                    target, obj = self.tree.import_target(self, small, alias)
                    where = target.view.path if target.view else (target.path or target.name)
                    found[alias.evaluated_alias or alias.evaluated_name] = f"{where}:{obj}" if obj else where
        return found

    def imported(self, name: str) -> str | None:
        return self.imports.get(name)

    def uses_v1_dataset_methods(self, removed: Collection[cst.CSTNode] = ()) -> bool:
        """Does the module call a method only TF1's datasets have (make_one_shot_iterator, ...), outside the
        ``removed`` code?"""
        skipped = {id(node) for code in removed for node in subtree(code)}
        return any(isinstance(node, cst.Attribute) and node.attr.value in V1_ONLY_DATASET_MEMBERS
                   and id(node) not in skipped for node in subtree(self.module))


class Tree:
    """The modules a run may read for one program: parsed on demand, each once.

    ``sources``: path -> code of the files of the run (after the per-file rewrites);
    ``exists``: whether a path is a file on disk (for modules outside the run);
    ``parsed``: the modules already parsed, with the metadata already resolved on them (kept, not redone);
    ``woken``: the modules whose code names what the family handles (default: all), where programs start;
    ``parse``: (path, code) -> the wrapper of a module not parsed yet; its errors end the family's run;
    ``originals``: path -> the user's code, where the per-file rewrites changed it.
    """

    def __init__(self, sources: dict[str, str], exists: Callable[[str], bool] = os.path.isfile,
                 parsed: dict[str, MetadataWrapper] | None = None, woken: Collection[str] | None = None,
                 parse: Callable[[str, str], MetadataWrapper] | None = None,
                 originals: dict[str, str] | None = None) -> None:
        self.sources = {os.path.normpath(path): text for path, text in sources.items()}
        self.woken = [os.path.normpath(path) for path in woken] if woken is not None else list(self.sources)
        self.exists = exists
        self._parsed = {os.path.normpath(path): wrapper for path, wrapper in (parsed or {}).items()}
        self._parse = parse or (lambda path, code: Parsed(cst.parse_module(code)))
        self._views: dict[str, ModuleView] = {}
        self.originals = {os.path.normpath(path): text for path, text in (originals or {}).items()}

    def with_source(self, path: str, code: str) -> Tree:
        """This tree with the module at ``path`` holding ``code`` (parsed anew); the others as they are."""
        path = os.path.normpath(path)
        return Tree({**self.sources, path: code}, self.exists,
                    {key: wrapper for key, wrapper in self._parsed.items() if key != path}, self.woken, self._parse,
                    self.originals)

    def original(self, path: str) -> ModuleView:
        """The module at ``path`` as the user wrote it (the per-file rewrites may have changed what it reads)."""
        path = os.path.normpath(path)
        if path not in self.originals:
            return self.view(path)
        return Tree({path: self.originals[path]}, self.exists).view(path)

    def view(self, path: str) -> ModuleView:
        path = os.path.normpath(path)
        if path not in self._views:
            wrapper = self._parsed.get(path) or self._parse(path, self.sources[path])
            self._views[path] = ModuleView(path, wrapper, self)
        return self._views[path]

    @property
    def views(self) -> list[ModuleView]:
        return [self.view(path) for path in self.sources]

    @property
    def entries(self) -> list[ModuleView]:
        """The modules a program may start in; the others are parsed when something leads to them."""
        return [self.view(path) for path in self.woken]

    def loaded(self) -> list[ModuleView]:
        return list(self._views.values())

    def _is_file(self, path: str) -> bool:
        return os.path.normpath(path) in self.sources or self.exists(path)

    def find(self, importer: str, dotted: str, level: int = 0) -> Found:
        """The module ``dotted`` as ``importer`` imports it (``level`` leading dots for a relative import)."""
        path = find_module(importer, dotted, level, self._is_file)
        if path is None:
            return Found(dotted)
        if path in self.sources:
            return Found(dotted, view=self.view(path))
        return Found(dotted, path=path)

    def reexports(self, view: ModuleView, name: str) -> list[tuple[ModuleView, cst.ImportFrom, cst.ImportAlias]]:
        """The module-level `from .model import name` of the other modules (a package's `__init__`) binding the
        module-level ``name`` of ``view`` for their importers."""
        found = []
        for other in self.views:
            if other is view:
                continue
            for statement in module_level_statements(other.module):
                for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
                    if isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
                        found += [(other, small, alias) for alias in small.names
                                  if _imports(self.import_target(other, small, alias), view, name)]
        return found

    def references_to(self, view: ModuleView, name: str, seen: frozenset = frozenset()) -> list[
            tuple[ModuleView, cst.CSTNode]]:
        """Where the module-level ``name`` of ``view`` is used: in its module, through imports in the others, and
        through the modules that re-export it (``reexports``)."""
        found = []
        for other, _, alias in self.reexports(view, name):
            key = (other.path, alias.evaluated_alias or alias.evaluated_name)
            if key not in seen:
                found += self.references_to(other, key[1], seen | {key})
        scope = view.get_metadata(ScopeProvider, view.module, None)
        for assignment in view.in_order(scope[name]) if scope is not None and name in scope else ():
            found += [(view, reference.node) for reference in view.in_order(assignment.references)]
        for other in self.views:
            if other is view:
                continue
            for statement in module_level_statements(other.module):
                for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
                    if isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(small.names, cst.ImportStar):
                        for alias in small.names:
                            found += self._through_import(other, small, alias, view, name)
        return found

    def _through_import(self, other: ModuleView, statement, alias: cst.ImportAlias, view: ModuleView,
                        name: str) -> list[tuple[ModuleView, cst.CSTNode]]:
        target, obj = self.import_target(other, statement, alias)
        if target.view is not view or obj not in (None, name):
            return []
        bound = alias.evaluated_alias or alias.evaluated_name
        scope = other.get_metadata(ScopeProvider, other.module, None)
        if scope is None or bound.split(".")[0] not in scope:
            return []
        found = []
        for assignment in scope[bound.split(".")[0]]:
            if getattr(assignment, "node", None) is not statement:
                continue
            for reference in other.in_order(assignment.references):
                node = reference.node
                if obj == name:
                    found.append((other, node))
                else:  # the module: its attribute `alias.name`
                    parent = other.parent(node)
                    while isinstance(parent, cst.Attribute) and parent.value is node:
                        if _dotted(parent) == f"{bound}.{name}":
                            found.append((other, parent))
                            break
                        node, parent = parent, other.parent(parent)
        return found

    def import_target(self, view: ModuleView, statement: cst.Import | cst.ImportFrom, alias: cst.ImportAlias
                      ) -> tuple[Found, str | None]:
        """What one name of an import statement binds: (the module, the object in it or None for the module)."""
        name = _dotted(alias.name)
        if isinstance(statement, cst.Import):
            return self.find(view.path, name), None
        module = _dotted(statement.module) if statement.module is not None else ""
        level = len(statement.relative)
        as_module = self.find(view.path, f"{module}.{name}" if module else name, level)
        if as_module.view is not None or as_module.path is not None:
            return as_module, None  # `from trainer import model`: a module
        return self.find(view.path, module, level), name


def _imports(target: tuple, view: ModuleView, name: str) -> bool:
    """Is ``target`` (an import_target) the object ``name`` of ``view``?"""
    found, obj = target
    return found.view is view and obj == name


def _dotted(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{_dotted(node.value)}.{node.attr.value}"
    return ""


def package_of(path: str, is_file: Callable[[str], bool]) -> tuple[str | None, str | None]:
    """(module name, package name) of a file as `python -m` imports it from above its topmost package."""
    folder, name = os.path.split(os.path.normpath(path))
    parts = [] if name == "__init__.py" else [os.path.splitext(name)[0]]
    package: list[str] = []
    while folder and is_file(os.path.join(folder, "__init__.py")):
        package.insert(0, os.path.basename(folder))
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    return ".".join(package + parts) or None, ".".join(package) or None
