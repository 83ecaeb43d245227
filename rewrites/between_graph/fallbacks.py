"""A graph statement tried with TF1's newer API, the older one its fallback, as programs written for TF 0.11 and
0.12 alike wrote them::

    try:
      init_op = tf.global_variables_initializer()
    except AttributeError:
      init_op = tf.initialize_all_variables()

The graph is read with the `try:` body: the newer API, TF1's own.
"""

from __future__ import annotations

import libcst as cst

from rewrites.syntax import is_name, subtree


def newer_api(statement) -> list[cst.BaseStatement] | None:
    """The `try:` body of `try: x = tf.global_variables_initializer()` `except AttributeError: x =
    tf.initialize_all_variables()`, each side assigning the same targets in turn: the newer of two TF1 APIs tried
    first, the older where TF1 lacked it (the cloudml-samples trainers: "Remove this if once Tensorflow 0.12 is
    standard"). The newer is TF1's own, which the graph is read with."""
    if not (isinstance(statement, cst.Try) and len(statement.handlers) == 1 and statement.orelse is None
            and statement.finalbody is None):
        return None
    handler = statement.handlers[0]
    if not (handler.name is None and is_name(handler.type, "AttributeError")):
        return None
    tried, fallback = statement.body.body, handler.body.body
    targets = [_assigned_target(s) for s in (*tried, *fallback)]
    if None in targets or len(tried) != len(fallback) or not all(
            first.deep_equals(second) for first, second in zip(targets[:len(tried)], targets[len(tried):])):
        return None
    return list(tried)


def _assigned_target(statement) -> cst.BaseExpression | None:
    """The one target of `target = value`."""
    small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 else None
    return small.targets[0].target if isinstance(small, cst.Assign) and len(small.targets) == 1 else None


def fallbacks(block: cst.CSTNode) -> list[cst.ExceptHandler]:
    """The `except AttributeError:` handlers of ``block``'s newer_api statements: they go with the graph."""
    return [node.handlers[0] for node in subtree(block) if isinstance(node, cst.Try) and newer_api(node) is not None]
