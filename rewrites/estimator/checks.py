"""What must hold before a migrated Estimator program replaces the old one: nothing left refers to what went.

The statements that built the Estimator (RunConfig, specs, hooks, the Estimator itself) and the
drivers are replaced; a name they bound must not be read anywhere else (``print(config.model_dir)``,
``estimator.export_saved_model(...)``). A factory (``build_estimator``) goes when nothing else
calls it, and the model_fn, replaced by its Keras function, must not be used elsewhere either.
"""

from __future__ import annotations

import libcst as cst

from rewrites.estimator.config import RUN_CONFIG_NOT_NEEDED, RUN_CONFIGS, run_config_arguments
from rewrites.estimator.emit import Emitter
from rewrites.estimator.program import Program
from rewrites.program.modules import ModuleView, Tree
from rewrites.syntax import Unsupported, first_line, subtree


def check_program(tree: Tree, program: Program, plans, emitter: Emitter) -> None:
    model_fn = program.setup.model_fn
    wrapper = model_fn.wrapper  # a function only calling the model_fn with keywords goes too
    replaced = [(model_fn.view, model_fn.function), *([(wrapper.view, wrapper.node)] if wrapper else [])]
    going = _nodes([*(s for _, s in program.removed), *(p.driver.statement for p in plans if p.predict is None),
                    *(f for _, f in program.factories), *(f for _, f in replaced if f is not None)])
    going |= _nodes([p.driver.call.node for p in plans])
    going |= {id(p.driver.passed) for p in plans if p.driver.passed is not None}  # passes the Keras model instead
    going |= _nodes([node for _, node, _ in program.attributes])  # estimator.eval_dir(): its code instead
    if program.handoff is not None:  # `return estimator`: returns the Keras model instead
        going |= _nodes([program.handoff.returned])
    for view, statement in program.removed:
        for name in _bound_names(statement):
            for where, node in _local_references(view, statement, name):
                if id(node) not in going and not (where is view and _bound_again_before(view, statement, name, node)):
                    _used_elsewhere(name.value, where, node)
    for view, function in program.factories:
        references = tree.references_to(view, function.name.value) if view.parent(function) is view.module else []
        outside = [(where, node) for where, node in references if id(node) not in going]
        if outside:
            _used_elsewhere(function.name.value, *outside[0], factory=True)
        if not any(function is kept for kept in program.kept_factories):  # rewrites/estimator/factory_columns.py
            emitter.module_edits(view).remove(function)
        _drop_reexports(tree, emitter, view, function.name.value)
    for view, function in [*program.setup.model.helpers, *_called(tree, program.removed)]:
        if view.parent(function) is view.module and all(
                id(node) in going for _, node in tree.references_to(view, function.name.value)):
            emitter.module_edits(view).remove(function)
    for view, function in replaced:
        if function is not None and view.parent(function) is view.module:
            for where, node in tree.references_to(view, function.name.value):
                if id(node) not in going and not _is_import(where, node):
                    _used_elsewhere(function.name.value, where, node)
            _drop_reexports(tree, emitter, view, function.name.value)
    if wrapper is not None:
        emitter.module_edits(wrapper.view).remove(wrapper.node)


def _called(tree: Tree, removed) -> list[tuple[ModuleView, cst.FunctionDef]]:
    """The module's own functions that a RunConfig the migration removes calls for what the Keras program does not
    need (`RunConfig(session_config=_session_config())`): they go too where nothing else calls them."""
    found = []
    for view, statement in removed:
        for node in subtree(statement):
            api = view.api(node.func) if isinstance(node, cst.Call) else None
            if api not in RUN_CONFIGS:
                continue
            try:
                arguments = run_config_arguments(node, api)
            except Unsupported:  # its reading says why, where the program reads it
                continue
            for name, value in arguments.items():
                if name in RUN_CONFIG_NOT_NEEDED and isinstance(value, cst.Call) and isinstance(value.func, cst.Name):
                    function = next((s for s in view.module.body if isinstance(s, cst.FunctionDef)
                                     and s.name.value == value.func.value), None)
                    if function is not None and any(reference is value.func for _, reference in
                                                    tree.references_to(view, value.func.value)):
                        found.append((view, function))
    return found


def _drop_reexports(tree: Tree, emitter: Emitter, view: ModuleView, name: str) -> None:
    """A package's `from .model import build_estimator, input_fn` loses the name that went (the statement goes
    when nothing is left of it)."""
    for other, statement, alias in tree.reexports(view, name):
        kept = [a for a in statement.names if a is not alias]
        edits = emitter.module_edits(other)
        if kept:
            kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            edits.expressions[statement] = statement.with_changes(names=kept)
        else:
            edits.remove(other.statement_of(statement))


def _nodes(statements) -> set[int]:
    return {id(node) for statement in statements for node in subtree(statement)}


def _bound_names(statement: cst.CSTNode) -> list[cst.Name]:
    names = []
    for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
        if isinstance(small, cst.Assign):
            for target in small.targets:
                node = target.target
                names += [node] if isinstance(node, cst.Name) else [
                    element.value for element in getattr(node, "elements", ()) if isinstance(element.value, cst.Name)]
    return names


def _local_references(view: ModuleView, statement: cst.CSTNode, name: cst.Name):
    scope = view.scope(name)
    if scope is None or name.value not in scope:
        return []
    found = []
    for assignment in scope[name.value]:
        if getattr(assignment, "node", None) is name:
            found += [(view, reference.node) for reference in view.in_order(assignment.references)]
    if view.parent(statement) is view.module:
        found += [(where, node) for where, node in view.tree.references_to(view, name.value) if where is not view]
    return found


def _bound_again_before(view: ModuleView, statement: cst.CSTNode, name: cst.Name, node: cst.CSTNode) -> bool:
    """``node`` reads ``name`` in straight-line code after a later statement of the same block bound it again (a
    notebook's next cell making its own ``model``): it reads that value, not the one that went."""
    block, reading = view.parent(statement), view.statement_of(node)
    while reading is not None and view.parent(reading) is not block:
        if isinstance(reading, cst.FunctionDef) or view.parent(reading) in (None, view.module):
            return False
        reading = view.statement_of(view.parent(reading))
    if reading is None or any(isinstance(a, (cst.Lambda, cst.FunctionDef)) for a in view.ancestors(node)):
        return False
    body = list(block.body)
    between = body[body.index(statement) + 1:body.index(reading)] if statement in body and reading in body else []
    return any(bound.value == name.value for later in between for bound in _bound_names(later))


def _is_import(view: ModuleView, node: cst.CSTNode) -> bool:
    return any(isinstance(a, (cst.Import, cst.ImportFrom)) for a in view.ancestors(node))


def _used_elsewhere(name: str, view: ModuleView, node: cst.CSTNode, factory: bool = False) -> None:
    statement = view.statement_of(node)
    what = f"`{name}()`, which made a piece of the Estimator," if factory else f"`{name}`"
    raise Unsupported(node, f"{what} is also used here (`{first_line(statement)}`), which the migrated program no "
                            "longer has: migrate that use by hand", view.path)
