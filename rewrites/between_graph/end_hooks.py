"""A chief-only hook of the module's own evaluating the trained graph when the session ends.

``class LogAtEndHook(tf.train.SessionRunHook)`` whose one method is ``end(self, session)``, doing nothing but
``value = session.run(tensor, feed_dict)`` (a tensor of the graph, fed its placeholders) and printing or logging,
made without arguments in ``chief_only_hooks`` (or ``hooks``): TF1 ran it once on the chief, with the trained
variables, just before the session closed. The migrated program runs its body after the loop, on the chief (its
coordinator), each run an evaluation of the graph (runs.py); the class goes.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import libcst as cst

from rewrites.between_graph.runs import Evaluation, evaluation, is_run
from rewrites.syntax import Unsupported, is_name, statement_value, subtree

HOOK_BASES = {"train.SessionRunHook"}
LOGS = {"logging.info", "logging.warning", "compat.v1.logging.info"}
ENDED = ("`{name}`, a chief-only hook TF1 ran when the session ended: what its `end` did runs on the chief after "
         "the loop, its runs evaluating the trained model; the class goes")
SHAPE = ("its one method `end(self, session)`, doing nothing but `value = session.run(tensor, feed_dict)` and "
         "printing")


@dataclass(frozen=True)
class EndHook:
    """The hook's class and its `end` method."""

    definition: cst.ClassDef
    end: cst.FunctionDef


def hook_class(names, hook) -> cst.ClassDef | None:
    """The class of the module a hook `LogAtEndHook()` makes, when it subclasses tf.train.SessionRunHook."""
    if not (isinstance(hook, cst.Call) and not hook.args and isinstance(hook.func, cst.Name)):
        return None
    tree = names.module.tree
    found = [node for node in subtree(tree) if isinstance(node, cst.ClassDef)
             and node.name.value == hook.func.value] if tree is not None else []
    if len(found) != 1 or not (len(found[0].bases) == 1 and names.api(found[0].bases[0].value) in HOOK_BASES):
        return None
    return found[0]


def read(names, hook: cst.Call, definition: cst.ClassDef) -> EndHook:
    """The hook made once, of the shape the migrated program evaluates when its loop ends; or Unsupported."""
    name = definition.name.value
    methods = definition.body.body
    end = methods[0] if len(methods) == 1 else None
    params = end.params if isinstance(end, cst.FunctionDef) else None
    if not (params and end.name.value == "end" and not definition.decorators and not end.decorators
            and len(params.params) == 2 and not isinstance(params.star_arg, (cst.Param, cst.ParamStar))
            and not (params.kwonly_params or params.star_kwarg or params.posonly_params)
            and all(param.default is None for param in params.params) and names.module.names[name] == 2):
        raise Unsupported(hook, f"`{name}`: a hook of the module is migrated (run on the chief after the loop) with "
                                f"{SHAPE}, made once; migrate it by hand")
    own, session = (param.name.value for param in params.params)
    for statement in end.body.body:
        value = statement_value(statement) if isinstance(statement, cst.SimpleStatementLine) else None
        used = [node for node in subtree(statement) if is_name(node, own) or is_name(node, session)]
        logs = isinstance(value, cst.Call) and (is_name(value.func, "print") or names.api(value.func) in LOGS)
        if not (is_run(value, session) and used == [value.func.value] or logs and not used):
            raise Unsupported(statement, f"`{name}.end`: a hook of the module is migrated (run on the chief after "
                                         f"the loop) with {SHAPE}; migrate it by hand")
    return EndHook(definition, end)


def evaluations(hook: EndHook, session, graph, names) -> list[Evaluation]:
    """The hook's runs: evaluations of the trained graph (runs.py)."""
    body = list(hook.end.body.body)
    ran = replace(session, name=hook.end.params.params[1].name.value)
    return [evaluation(statement, ran, graph, names, body, [], f"in `{hook.definition.name.value}.end`")
            for statement in body if is_run(statement_value(statement), ran.name)]


def after_the_loop(hook: EndHook, evaluated: list[Evaluation], spelled) -> list[cst.BaseStatement]:
    """The hook's body, its runs evaluations, run after the loop."""
    replaced = {e.run: e.replacement for e in evaluated}
    return [spelled(replaced.get(statement, statement)).with_changes(leading_lines=[])
            for statement in hook.end.body.body]
