"""A session opened again after an AbortedError, as the cloudml-samples trainers open theirs::

    should_retry = True
    while should_retry:
      try:
        should_retry = False
        with sv.managed_session(server.target) as sess:
          ...
      except tf.errors.AbortedError:
        should_retry = True

TF1 aborted the session when a task of the cluster restarted, and the program opened it again (resuming from the
Supervisor's checkpoint). A ClusterCoordinator runs a step whose worker failed again on another worker; a parameter
server failing ends the program, which resumes from its checkpoint when started again. The `while`, the `try` and the
flag go, the session's code standing where the `while` stood; so does a step's own `try:` setting the flag in an
`except tf.errors.AbortedError:` (the loop's body holds its body: session.migrated_loop).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from rewrites.syntax import Unsupported, is_name, single_assign, subtree

ABORTED = "errors.AbortedError"
RETRIED = ("TF1 opened the session again when it aborted (a task of the cluster restarted): the ClusterCoordinator "
           "runs a step whose worker failed again on another worker; a parameter server failing ends the program, "
           "which resumes from its checkpoint when started again")


@dataclass
class Retry:
    """The `while flag: try: ... except AbortedError: ...` around the session, and the flag's assignments."""

    loop: cst.While
    attempt: cst.Try
    block: list[cst.BaseStatement]            # the statements of the block holding the `while`
    flag: str
    dropped: list[cst.BaseStatement] = field(default_factory=list)  # `flag = True` before it, `flag = False` in it


def retried(opening: cst.BaseStatement, view, api) -> Retry | None:
    """The retry loop around the session ``opening`` (a `with`), if it stands in one; a TFM104 where the loop is
    not read."""
    attempt = view.parent(view.parent(opening))
    if not isinstance(attempt, cst.Try):
        return None
    loop = view.parent(view.parent(attempt))
    if not (isinstance(loop, cst.While) and isinstance(loop.test, cst.Name)):
        return None
    flag = loop.test.value
    holder = view.parent(loop)
    if not isinstance(holder, cst.IndentedBlock | cst.Module):
        return None
    block = list(holder.body)
    unread = Unsupported(loop, f"the session opens in `while {flag}: try: ...`, read only as `{flag} = True` before "
                               f"it, `{flag} = False` then the session in the `try`, and `except "
                               f"tf.errors.AbortedError: {flag} = True`: migrate the retries by hand")
    body = attempt.body.body
    if len(loop.body.body) != 1 or loop.orelse is not None or attempt.orelse is not None \
            or attempt.finalbody is not None or len(body) != 2 or body[1] is not opening \
            or not _sets(body[0], flag, "False") or not attempt.handlers \
            or not all(_catches_aborted(handler, api) and _sets_only(handler, flag) for handler in attempt.handlers):
        raise unread
    before = [s for s in block[:block.index(loop)] if (single_assign(s) or ("",))[0] == flag]
    if not before or not _sets(before[-1], flag, "True"):
        raise unread
    retry = Retry(loop, attempt, block, flag, [before[-1], body[0]])
    own = {id(node) for statement in [before[-1], body[0]] for node in subtree(statement)} | {id(loop.test)}
    own |= {id(node) for handler in attempt.handlers for node in subtree(handler)}
    for step in (node for node in subtree(opening) if aborts(node, flag, api)):
        own |= {id(node) for handler in step.handlers for node in subtree(handler)}
    scope = view.parent(loop)
    while scope is not None and not isinstance(scope, cst.FunctionDef | cst.Module):
        scope = view.parent(scope)
    use = next((node for node in subtree(scope) if is_name(node, flag) and id(node) not in own
                and not _keyword(node, scope)), None)
    if use is not None:
        raise Unsupported(use, f"`{flag}`, the flag opening the session again, is used besides: migrate the retries "
                               "by hand")
    return retry


def aborts(statement, flag: str | None, api) -> bool:
    """`try: ... except tf.errors.AbortedError: flag = True` (no `else` or `finally`): the session is to be opened
    again once its loop ends, TF1's step having aborted."""
    return (flag is not None and isinstance(statement, cst.Try) and statement.orelse is None
            and statement.finalbody is None and bool(statement.handlers)
            and all(_catches_aborted(handler, api) and _sets_only(handler, flag) for handler in statement.handlers))


def _sets(statement, flag: str, value: str) -> bool:
    assign = single_assign(statement)
    return assign is not None and assign[0] == flag and is_name(assign[1], value)


def _sets_only(handler: cst.ExceptHandler, flag: str) -> bool:
    return len(handler.body.body) == 1 and _sets(handler.body.body[0], flag, "True")


def _catches_aborted(handler: cst.ExceptHandler, api) -> bool:
    return handler.type is not None and api(handler.type) == ABORTED


def _keyword(node: cst.Name, scope: cst.CSTNode) -> bool:
    return any(isinstance(arg, cst.Arg) and arg.keyword is node for arg in subtree(scope))
