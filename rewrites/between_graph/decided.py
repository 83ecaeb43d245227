"""An `if` in the session's loop that the loop's own code decides: wucng's trainer, ``while not sess.should_stop():
step = 0; if step < 2000: <the step's runs>``. The name the test reads was bound to an integer literal earlier in
the same pass of the loop, untouched since, and the test compares it with integer literals: each pass takes the
same branch. When that is the `if`'s body (it has no `else`), the body is the step, as if written in the loop; any
other `if` stays what it was (session.py's ``migrated_loop`` says why one choosing the runs is left).
"""

from __future__ import annotations

import operator

import libcst as cst

from rewrites.syntax import single_assign, subtree

COMPARED = {cst.LessThan: operator.lt, cst.LessThanEqual: operator.le, cst.GreaterThan: operator.gt,
            cst.GreaterThanEqual: operator.ge, cst.Equal: operator.eq, cst.NotEqual: operator.ne}


def always_taken(statement: cst.CSTNode, before: list[cst.CSTNode]) -> bool:
    """``statement`` is `if name <op> <int>:` (no `else`) with `name = <int>` in ``before`` (the loop's statements
    ahead of it in the same pass), no later one of them naming `name`, and the test holds."""
    if not (isinstance(statement, cst.If) and statement.orelse is None and isinstance(statement.body, cst.IndentedBlock)
            and isinstance(test := statement.test, cst.Comparison) and isinstance(test.left, cst.Name)
            and len(test.comparisons) == 1 and type(test.comparisons[0].operator) in COMPARED
            and isinstance(test.comparisons[0].comparator, cst.Integer)):
        return False
    name = test.left.value
    for index in range(len(before) - 1, -1, -1):
        assign = single_assign(before[index])
        if assign is not None and assign[0] == name and isinstance(assign[1], cst.Integer):
            later = before[index + 1:]
            if any(isinstance(node, cst.Name) and node.value == name for s in later for node in subtree(s)):
                return False
            compare = COMPARED[type(test.comparisons[0].operator)]
            return compare(assign[1].evaluated_value, test.comparisons[0].comparator.evaluated_value)
    return False
