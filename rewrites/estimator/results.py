"""What a program reads of an evaluation's results, so the migrated evaluate gives it the same keys.

TF1's ``evaluate`` (and the first result of ``train_and_evaluate``) is a dict of ``loss``, ``global_step`` and
each eval_metric_ops key. Keras' ``evaluate(return_dict=True)`` has the loss and the compiled metrics, named by
their TF1 keys; the step is added where the program reads it. A key the migrated model does not report
(a canned estimator's metric Keras has no counterpart of, say) stops the migration at the line reading it:
the migrated program would fail there with a KeyError.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import Assignment

from rewrites.program.modules import ModuleView
from rewrites.syntax import Unsupported

STEP = "global_step"


@dataclass
class Reads:
    """The keys read by subscript, and whether the dict is also used whole (printed, passed on, iterated)."""

    keys: dict[str, cst.CSTNode] = field(default_factory=dict)  # key -> the first subscript reading it
    whole: bool = False

    @property
    def step(self) -> bool:
        """The program may read the step: TF1's results held it, so the migrated ones do."""
        return self.whole or STEP in self.keys


def reported(model) -> set[str]:
    """The keys the migrated evaluate gives: the loss, the step, and the compiled metrics by their TF1 keys (a
    metric compiled by name, `"accuracy"`, reports under it)."""
    named = [metric[1:-1] for metric in model.metrics if re.fullmatch(r'"\w+"', metric)]
    return {"loss", STEP, *named, *re.findall(r'name="(\w+)"', " ".join(model.metrics))}


def of_name(view: ModuleView, target: cst.Name) -> Reads:
    """What the code reads of the dict bound by ``target``."""
    reads = Reads()
    scope = view.scope(target)
    assignments = [a for a in (scope[target.value] if scope is not None and target.value in scope else ())
                   if isinstance(a, Assignment) and a.node is target]
    for assignment in assignments:
        for reference in view.in_order(assignment.references):
            _read(view, reference.node, reads)
    return reads


def of_expression(view: ModuleView, call: cst.Call) -> Reads:
    """What the code reads of the dict ``call`` gives, where it stands inside a larger expression."""
    reads = Reads()
    _read(view, call, reads)
    return reads


def check(reads: Reads, model, path: str | None, what: str) -> None:
    """Stop where the program reads a key the migrated evaluate does not give."""
    missing = [key for key in reads.keys if key not in reported(model)]
    if missing:
        key = missing[0]
        known = ", ".join(sorted(reported(model)))
        raise Unsupported(reads.keys[key], f"the program reads `{key}` from {what}'s results, which the migrated "
                                           f"evaluate does not report (it gives {known}): read another key, or "
                                           "compute this one by hand", path)


def _read(view: ModuleView, node: cst.CSTNode, reads: Reads) -> None:
    parent = view.parent(node)
    if isinstance(parent, cst.Subscript) and parent.value is node and len(parent.slice) == 1:
        index = parent.slice[0].slice
        if isinstance(index, cst.Index) and isinstance(index.value, cst.SimpleString):
            reads.keys.setdefault(index.value.evaluated_value, parent)
            return
    if isinstance(parent, cst.Attribute) and parent.value is node and parent.attr.value == "get":
        call = view.parent(parent)
        if isinstance(call, cst.Call) and call.args and isinstance(call.args[0].value, cst.SimpleString):
            reads.whole = reads.whole or call.args[0].value.evaluated_value == STEP
            return
    reads.whole = True
