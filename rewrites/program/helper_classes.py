"""Classes the generated code uses that Keras does not have, written into the module that uses them.

A migrated module that names ``TF1Adam`` (rewrites/keras_optimizers.py: TF1's Adam, whose beta powers Keras
computes otherwise) gets the class from its template, once, before the first top-level statement that uses it, as
a person would put a helper before its use.
"""

from __future__ import annotations

import libcst as cst

from rewrites.syntax import subtree, with_blank_lines

# Class name -> its template (templates/).
HELPERS = {"TF1Adam": "tf1_adam.py.j2"}


def with_helper_classes(module: cst.Module) -> cst.Module:
    """``module`` with each HELPERS class it uses and does not define."""
    from templates import render

    for name, template in HELPERS.items():
        defined = any(isinstance(statement, cst.ClassDef) and statement.name.value == name for statement in module.body)
        first = next((index for index, statement in enumerate(module.body) if _uses(statement, name)), None)
        if defined or first is None:
            continue
        helper = [with_blank_lines(statement, 2) for statement in cst.parse_module(render(template)).body]
        body = list(module.body)
        module = module.with_changes(body=[*body[:first], *helper, with_blank_lines(body[first], 2), *body[first + 1:]])
    return module


def _uses(statement: cst.CSTNode, name: str) -> bool:
    return any(isinstance(node, cst.Name) and node.value == name for node in subtree(statement))

