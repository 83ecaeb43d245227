"""Tier 2: where a model_fn kept as written adds TF1's regularization losses, the generated step adds Keras'.

Inside ``track_tf1_style_variables`` TF1's REGULARIZATION_LOSSES collection holds some of the model's
regularizers and not others: those of ``tf.compat.v1.layers`` and slim layers once traced, not those of
``get_variable(regularizer=...)`` (and nothing in an eager call). The model's ``losses`` hold all of them.
So the model_fn's own reading goes, and the generated ``tf1_loss`` adds ``sum(self.losses)`` instead:

- ``loss += tf.losses.get_regularization_loss()`` goes;
- ``ce + tf.losses.get_regularization_loss()`` becomes ``ce``; ``tf.add_n([ce, reg])`` becomes ``tf.add_n([ce])``;
- the sum is also ``tf.add_n(tf.losses.get_regularization_losses())``, of the collection
  ``tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)``, or their ``sum(...)``, and a name bound to it that
  only such sums read (its binding goes too);
- ``tf.losses.get_total_loss()`` becomes ``tf.losses.get_total_loss(add_regularization_losses=False)``.

Read any other way (a scope's, the list itself, in a helper), the model_fn is not migrated: the step could add
them twice, or not at all.

Before::

    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    loss += tf.add_n(tf.losses.get_regularization_losses())

After::

    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from rewrites.syntax import Unsupported, first_line, name_reads, single_assign, subtree

SUM = "losses.get_regularization_loss"
LIST = "losses.get_regularization_losses"
TOTAL = "losses.get_total_loss"
COLLECTION_KEY = "GraphKeys.REGULARIZATION_LOSSES"
ADDS = {"add_n", "math.add_n"}  # TensorFlow's sums of a list; Python's `sum` too
READS = {SUM, LIST, TOTAL}


@dataclass
class Reading:
    """What changes where the model_fn adds TF1's regularization losses."""

    regularized: bool = False  # the model_fn added them: the step adds the model's losses
    removed: list[cst.BaseStatement] = field(default_factory=list)
    expressions: dict[cst.CSTNode, cst.CSTNode] = field(default_factory=dict)  # node -> its replacement
    problems: list[Unsupported] = field(default_factory=list)


def collection_scope(view, call) -> list[cst.Arg] | None:
    """The arguments past the key of `tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES, ...)`, or of
    `tf.losses.get_regularization_losses(...)`: a scope. None for any other node."""
    api = view.api(call.func) if isinstance(call, cst.Call) else None
    if api == LIST:
        return list(call.args)
    if api == "get_collection" and call.args and view.api(call.args[0].value) == COLLECTION_KEY:
        return list(call.args[1:])
    return None


def reads(view, call: cst.Call) -> bool:
    """Does the call read TF1's regularization losses?"""
    return view.api(call.func) in READS or collection_scope(view, call) is not None


def read_elsewhere(view, outside: cst.CSTNode | None = None) -> Unsupported | None:
    """A reading of TF1's regularization losses in the module of ``view`` (a helper's), outside the node
    ``outside`` (the model_fn kept as written, which reads them itself)."""
    inside = {id(node) for node in subtree(outside)} if outside is not None else set()
    for node in subtree(view.module):
        if isinstance(node, cst.Call) and id(node) not in inside and reads(view, node):
            return Unsupported(node, f"`{first_line(node)}` reads TF1's regularization losses outside the model_fn "
                                     "kept as written (tier 2): the Keras model adds its own, so only the model_fn's "
                                     "reading is migrated", view.path)
    return None


class RegularizationReader:
    def __init__(self, view, function: cst.FunctionDef) -> None:
        self.view, self.api, self.function = view, view.api, function

    def read(self) -> Reading:
        self.reading = Reading()
        calls = [node for node in subtree(self.function.body) if isinstance(node, cst.Call)]
        done: set[int] = set()
        for call in calls:
            if id(call) in done:
                continue
            if self._is_sum(call):
                done |= {id(node) for node in subtree(call)}
                self._sum_goes(call)
            elif self.api(call.func) == TOTAL:
                self._total(call)
            elif self._reads(call):
                self._refuse(call, "is read in a way not migrated yet (added to the loss, it goes: the Keras model "
                                   "adds its own)")
        return self.reading

    # -- forms ---------------------------------------------------------------------------------

    def _reads(self, call: cst.Call) -> bool:
        return reads(self.view, call)

    def _collection(self, call) -> list[cst.Arg] | None:
        return collection_scope(self.view, call)

    def _is_sum(self, call: cst.Call) -> bool:
        """`get_regularization_loss()`, or a sum of the list: `tf.add_n(list)`, `sum(list)`."""
        if self.api(call.func) == SUM:
            return not call.args
        adds = self.api(call.func) in ADDS or (isinstance(call.func, cst.Name) and call.func.value == "sum"
                                                and self.view.api(call.func) is None)
        return adds and len(call.args) == 1 and self._collection(call.args[0].value) == []

    def _total(self, call: cst.Call) -> None:
        if call.args:
            self._refuse(call, "with arguments is not migrated yet (Keras adds the model's regularization losses)")
            return
        self.reading.expressions[call] = call.with_changes(
            args=[cst.ensure_type(cst.parse_expression("f(add_regularization_losses=False)"), cst.Call).args[0]])
        self.reading.regularized = True

    def _sum_goes(self, call: cst.Call) -> None:
        """The sum of the regularization losses goes where it is added to the loss, or bound to a name only
        added to it."""
        statement = self.view.statement_of(call)
        assign = single_assign(statement)
        if assign is not None and assign[1] is call:
            target = statement.body[0].targets[0].target
            reads = [read for read in name_reads(self.function.body, assign[0]) if read is not target]
            if reads and all(self._summand_goes(read, check=True) for read in reads):
                for read in reads:
                    self._summand_goes(read)
                self.reading.removed.append(statement)
                self.reading.regularized = True
                return
        if self._summand_goes(call, check=True):
            self._summand_goes(call)
            self.reading.regularized = True
        else:
            self._refuse(call, "is not added to the loss as a term of its own: that is not migrated yet")

    def _summand_goes(self, node: cst.BaseExpression, check: bool = False) -> bool:
        """Take the term ``node`` out of the sum it is added to; ``check``: only say whether it can be."""
        parent = self.view.parent(node)
        if isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, cst.Add):
            if not check:
                self.reading.expressions[parent] = parent.right if parent.left is node else parent.left
            return True
        if isinstance(parent, cst.AugAssign) and isinstance(parent.operator, cst.AddAssign) and parent.value is node:
            if not check:
                self.reading.removed.append(self.view.statement_of(node))
            return True
        listed = self.view.parent(parent) if isinstance(parent, cst.Element) else None
        adds = self.view.parent(self.view.parent(listed)) if isinstance(listed, cst.List) else None
        if isinstance(adds, cst.Call) and self.api(adds.func) in ADDS and len(listed.elements) > 1:
            if not check:
                kept = [element.with_changes(comma=cst.MaybeSentinel.DEFAULT) for element in listed.elements
                        if element is not parent]
                self.reading.expressions[listed] = listed.with_changes(elements=kept)
            return True
        return False

    def _refuse(self, call: cst.Call, why: str) -> None:
        self.reading.problems.append(Unsupported(call, f"`{first_line(call)}`, TF1's regularization losses in a "
                                                       f"model_fn kept as written (tier 2), {why}"))
