"""What a trainer's graph holds in attributes of its object (cloudml-samples' Trainer: `self.saver =
tf.train.Saver()`, `self.summary_op = tf.summary.merge_all()` in the graph): only what serves TF1's session, read
as a name is (graph.py's ``session_only``), and read, in the whole class, only as the session's arguments
(`tf.train.Supervisor(..., saver=self.saver)`): it goes with the session. Used elsewhere (a method saving with it),
the program is left with a TFM104 naming that method.
"""

from __future__ import annotations

import libcst as cst

from rewrites.syntax import Unsupported, source, subtree


def session_only_attribute(statement, api, session_only: set[str]) -> str | None:
    """`self.saver` of `self.saver = tf.train.Saver()` (an API of ``session_only``), else None."""
    small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 else None
    if not (isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.value, cst.Call)):
        return None
    target = small.targets[0].target
    if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) \
            and api(small.value.func) in session_only:
        return source(target)
    return None


def only_for_the_session(module: cst.Module, scope: cst.CSTNode, held: dict[str, cst.BaseStatement],
                         reads: set[int]) -> dict[str, cst.BaseStatement]:
    """``held`` (`self.saver` -> its statement in the graph), each read in the class of ``scope`` (the method
    holding the session) only in the nodes of ``reads``; Unsupported at another use."""
    owner = next((node for node in subtree(module) if isinstance(node, cst.ClassDef)
                  and any(method is scope for method in node.body.body)), None)
    for key, statement in held.items():
        if owner is None:
            raise Unsupported(statement, f"`{key}` serves a TF1 session, held outside a class's method: the migrated "
                                         "program has none; migrate it by hand")
        target = {id(node) for node in subtree(statement.body[0].targets[0])}
        use = next((node for node in subtree(owner) if isinstance(node, cst.Attribute) and id(node) not in target
                    and id(node) not in reads and source(node) == key), None)
        if use is not None:
            method = next(m for m in owner.body.body if isinstance(m, cst.FunctionDef)
                          and any(inner is use for inner in subtree(m)))
            raise Unsupported(use, f"`{key}` serves a TF1 session, and `{method.name.value}` uses it besides the "
                                   "session's arguments: the migrated program has no TF1 session; migrate that use by "
                                   "hand")
    return dict(held)
