"""Classes and functions the generated code uses that TensorFlow does not have, written into the module that uses
them.

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
    for name, template in HELPERS.items():
        module = with_helper(module, name, template)
    return module


def with_helper(module: cst.Module, name: str, template: str, **context) -> cst.Module:
    """``module`` with the class or function ``name`` (its template rendered with ``context``) before the first
    top-level statement that uses it, if it uses it and does not define it."""
    from templates import render

    defined = any(isinstance(statement, (cst.ClassDef, cst.FunctionDef)) and statement.name.value == name
                  for statement in module.body)
    first = next((index for index, statement in enumerate(module.body) if _uses(statement, name)), None)
    if defined or first is None:
        return module
    helper = [with_blank_lines(statement, 2) for statement in cst.parse_module(render(template, **context)).body]
    body = list(module.body)
    return module.with_changes(body=[*body[:first], *helper, with_blank_lines(body[first], 2), *body[first + 1:]])


def _uses(statement: cst.CSTNode, name: str) -> bool:
    return any(isinstance(node, cst.Name) and node.value == name for node in subtree(statement))

