"""Keras layers that compute otherwise in training (batch normalization, dropout, noise) in a model_fn kept as
written (tier 2, rewrites/estimator/faithful_keras.py makes them once).

TF1 ran such a layer in the mode its call's `training=` said, and without one in inference mode (Keras' learning
phase, 0 in an Estimator's graph); the Keras model running the model_fn would run it in the model's mode, so a call
without `training=` (or one the migration cannot see) keeps the program out of tier 2.

A Keras batch normalization TF1 trained kept its moving mean and variance as they were made: its updates went to
the layer's `updates`, never to UPDATE_OPS, and no train_op ran them, so the program evaluated and predicted with
those statistics. Keras training runs them; made with momentum=1.0 the layer keeps its statistics, bit for bit
(the update is `(moving - batch) * (1 - momentum)`, or the fused kernel's `exponential_avg_factor = 1 - momentum`):

Before:  bn = tf.keras.layers.BatchNormalization(momentum=0.90)
         net = bn(net, training=mode == tf.estimator.ModeKeys.TRAIN)
After:   bn = tf1_keras_layer(lambda: tf.compat.v1.keras.layers.BatchNormalization(momentum=1.0))
         net = bn(net, training=mode == "train")
"""

from __future__ import annotations

import libcst as cst

from rewrites.program.modules import ModuleView
from rewrites.syntax import first_line, is_name, is_none, keyword_arg, name_reads, subtree

BY_MODE = {"BatchNormalization", "SyncBatchNormalization", "Dropout", "SpatialDropout1D", "SpatialDropout2D",
           "SpatialDropout3D", "AlphaDropout", "GaussianDropout", "GaussianNoise"}
DROPOUTS = ("dropout", "recurrent_dropout")  # LSTM(dropout=0.2), Attention(dropout=0.1)
UPDATES = ("updates", "get_updates_for")  # what runs a Keras layer's updates by hand


def _layer(view: ModuleView, call: cst.Call) -> str:
    return (view.api(call.func) or "").rpartition(".")[2]


def _by_mode(view: ModuleView, call: cst.Call) -> bool:
    """Does the Keras layer ``call`` makes compute otherwise in training?"""
    return _layer(view, call) in BY_MODE or any(
        arg.keyword is not None and arg.keyword.value in DROPOUTS
        and not (isinstance(arg.value, (cst.Integer, cst.Float)) and arg.value.evaluated_value == 0)
        for arg in call.args)


def _batch_norms(view: ModuleView, made: cst.Call) -> list[cst.Call]:
    return [node for node in subtree(made) if isinstance(node, cst.Call) and _layer(view, node).endswith(
        "BatchNormalization")]


def problem(view: ModuleView, made: list[cst.Call]) -> tuple[cst.CSTNode, str] | None:
    """The first layer of ``made`` (the outermost Keras calls, keras_made) whose mode or statistics tier 2 cannot
    keep as TF1 had them, and why."""
    norms = [norm for call in made for norm in _batch_norms(view, call)]
    read = next((node for node in subtree(view.module) if isinstance(node, cst.Attribute)
                 and node.attr.value in UPDATES), None) if norms else None
    if read is not None:
        return read, "the program reads a Keras layer's updates (its moving statistics), which TF1 ran only where " \
                     "the program did: in a model_fn kept as written (tier 2) that is not migrated yet"
    for norm in norms:
        if any(arg.star for arg in norm.args):
            return norm, "a Keras batch normalization of arguments the migration cannot read (`*args`, " \
                         "`**kwargs`): it keeps the moving statistics as TF1 left them by its momentum"
        if any(arg.keyword is not None and arg.keyword.value == "renorm" and not is_name(arg.value, "False")
               for arg in norm.args):
            return norm, "a Keras batch renormalization: its renorm statistics, which TF1 never updated either, " \
                         "shape its training outputs; in a model_fn kept as written (tier 2) that is not migrated yet"
    return next(filter(None, (_mode_unseen(view, call) for call in made)), None)


def _mode_unseen(view: ModuleView, made: cst.Call) -> tuple[cst.CSTNode, str] | None:
    """Where the layer or model ``made`` makes computes otherwise in training and is called in a mode other than
    TF1's, or where the migration cannot see in which, and why."""
    if not any(_by_mode(view, node) for node in subtree(made) if isinstance(node, cst.Call)):
        return None
    calls = _calls_of(view, made)
    if calls is None:
        return made, "a Keras layer that computes otherwise in training (dropout, batch normalization), made where " \
                     "the migration cannot see it called: TF1 ran it in the mode its call's `training=` said; call " \
                     "it where it is made or through the name it is bound to"
    without = next((call for call in calls if not _training_given(call)), None)
    if without is None:
        return None
    return without, "TF1 ran a Keras layer called without `training=` in inference mode (Keras' learning phase, 0 " \
                    "in an Estimator's graph), and the Keras model running a model_fn kept as written (tier 2) runs " \
                    "it in its own mode: pass `training=False`, as TF1 ran it, or `training=mode == " \
                    "tf.estimator.ModeKeys.TRAIN`"


def _calls_of(view: ModuleView, made: cst.Call) -> list[cst.Call] | None:
    """The calls of the layer ``made`` makes: `Layer(...)(x)`, or those of the name `layer = Layer(...)` binds in
    its function, if that name is only called; None when the migration cannot see them all."""
    parent = view.parent(made)
    if isinstance(parent, cst.Call) and parent.func is made:
        return [parent]
    if not (isinstance(parent, cst.Assign) and len(parent.targets) == 1
            and isinstance(parent.targets[0].target, cst.Name)):
        return None
    bound = parent.targets[0].target
    reads = [node for node in name_reads(view.enclosing_function(made) or view.module, bound.value)
             if node is not bound]
    calls = [view.parent(node) for node in reads]
    if not reads or not all(isinstance(call, cst.Call) and call.func is read for call, read in zip(calls, reads)):
        return None
    return calls


def _training_given(call: cst.Call) -> bool:
    return any(arg.keyword is not None and arg.keyword.value == "training" and not is_none(arg.value)
               for arg in call.args)


def frozen(view: ModuleView, made: cst.Call) -> tuple[cst.Call, list[tuple[cst.CSTNode, str]]]:
    """``made`` with each Keras batch normalization in it made with momentum=1.0 (the nodes but those around the
    changed ones kept themselves, for the spelling), and a note on each."""
    norms = _batch_norms(view, made)
    if not norms:
        return made, []
    swaps = {norm: norm.with_changes(args=_momentum_one(norm.args)) for norm in norms}
    around = {id(node) for norm in norms for node in (norm, *view.ancestors(norm))}
    notes = [(norm, f"`{first_line(norm)}` is made with momentum=1.0, which keeps its moving mean and variance as "
                    "they were made: TF1 never ran a Keras layer's updates (UPDATE_OPS held none), and the program "
                    "evaluated and predicted with those statistics; set its momentum back to train them")
             for norm in norms]
    return made.visit(_Swap(swaps, around)), notes


def _momentum_one(args: tuple[cst.Arg, ...]) -> list[cst.Arg]:
    """`BatchNormalization(axis, momentum, ...)`'s arguments with the momentum 1.0."""
    one = cst.Float("1.0")
    positional = [index for index, arg in enumerate(args) if arg.keyword is None]
    at = next((index for index, arg in enumerate(args) if arg.keyword is not None and arg.keyword.value == "momentum"),
              positional[1] if len(positional) > 1 else None)
    if at is not None:
        return [*args[:at], args[at].with_changes(value=one), *args[at + 1:]]
    comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    return [*args[:-1], *(arg if isinstance(arg.comma, cst.Comma) else arg.with_changes(comma=comma)
                          for arg in args[-1:]),
            keyword_arg("momentum", one, args[-1] if args else cst.Arg(one))]


class _Swap(cst.CSTTransformer):
    """Each node of ``swaps`` becomes its swap; only the nodes ``around`` them (by id) are visited and copied."""

    def __init__(self, swaps: dict[cst.CSTNode, cst.CSTNode], around: set[int]) -> None:
        super().__init__()
        self.swaps, self.around = swaps, around

    def on_visit(self, node: cst.CSTNode) -> bool:
        return id(node) in self.around and node not in self.swaps

    def on_leave(self, original_node, updated_node):
        return self.swaps.get(original_node, updated_node)
