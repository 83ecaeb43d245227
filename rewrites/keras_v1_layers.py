"""TF1's Keras recurrent layers written as TF 2's: the defaults that changed, written out.

In TF 1.x (and through ``tf.compat.v1.keras``) ``GRU``, ``LSTM`` and their cells are Keras' v1 classes; TF 2's are
the v2 ones, whose defaults differ: ``recurrent_activation`` was ``"hard_sigmoid"`` (v2: ``"sigmoid"``) and a GRU's
``reset_after`` was False (v2: True, which also gives its bias another shape, [2, 3 * units]). Respelled as they
are, the migrated model computes something else; with those defaults written out, the same::

    tf.keras.layers.GRU(300, return_state=True)   # a module written for TF 1.x
    keras.layers.GRU(300, return_state=True, recurrent_activation="hard_sigmoid", reset_after=False)

A module whose plain ``tf`` is TF 2's (``Spelling.rebinding.kind`` "tf2" on the user's code, before the per-file
rewrites renamed what made it TF 1.x's) made v2 layers already: left as it is.
"""

from __future__ import annotations

import libcst as cst

from rewrites.program.spelling import Spelling
from rewrites.syntax import Replace, Unsupported, subtree

RECURRENT_ACTIVATION = 2  # its position: GRU(units, activation, recurrent_activation, ...), LSTM alike
HARD_SIGMOID = {"recurrent_activation": '"hard_sigmoid"'}
# Keras' class -> what TF1 defaulted that TF 2 does not.
CHANGED_DEFAULTS = {
    "keras.layers.GRU": {**HARD_SIGMOID, "reset_after": "False"},
    "keras.layers.GRUCell": {**HARD_SIGMOID, "reset_after": "False"},
    "keras.layers.LSTM": HARD_SIGMOID,
    "keras.layers.LSTMCell": HARD_SIGMOID,
}


def recurrent_layers(view) -> tuple[list[tuple[cst.Call, str]], list[tuple[cst.Call, str]]]:
    """The calls of the module making Keras' recurrent layers whose defaults changed, with their API: those making
    TF1's v1 classes, and those read as TF 2's (the module reads as TF 2 code, kind "tf2")."""
    tf1_era = Spelling(view.tree.original(view.path)).rebinding.kind in ("v1", "tf1-era")
    v1, v2 = [], []
    for node in subtree(view.module):
        if isinstance(node, cst.Call) and (api := view.api(node.func) or "") in CHANGED_DEFAULTS:
            name = view.tf_name(node.func)
            (v1 if tf1_era or (name is not None and name.via == "v1") else v2).append((node, api))
    return v1, v2


def tf2_layer_notes(view) -> list[tuple[cst.Call, str]]:
    """A numeric note for each recurrent layer the module makes as TF 2's: TF 1.x's had other defaults."""
    return [(node, f"`{api.rpartition('.')[2]}(...)` keeps TF 2's defaults (recurrent_activation=\"sigmoid\""
                   f"{', reset_after=True' if 'reset_after' in CHANGED_DEFAULTS[api] else ''}): this module reads "
                   "as TF 2 code; TF 1.x's made it with " + ", ".join(
                       f"{key}={value}" for key, value in CHANGED_DEFAULTS[api].items())
             + ": if the program trained on TF 1.x, give those")
            for node, api in recurrent_layers(view)[1] if _defaulted(node, api)]


def _defaulted(call: cst.Call, api: str) -> list[str]:
    """The parameters whose default changed that ``call`` does not give (all of them, given **kwargs)."""
    given = {arg.keyword.value for arg in call.args if arg.keyword is not None and not arg.star}
    if sum(arg.keyword is None and not arg.star for arg in call.args) > RECURRENT_ACTIVATION:
        given.add("recurrent_activation")
    return [key for key in CHANGED_DEFAULTS[api] if key not in given]


def v1_layer_calls(view, spelled: dict[cst.CSTNode, cst.BaseExpression]) -> dict[cst.CSTNode, cst.BaseExpression]:
    """Each call of the module making one of TF1's v1 recurrent layers, with TF1's defaults written out; its own
    code respelled as ``spelled`` says (the call's replacement takes the place of those inside it)."""
    calls = {}
    for node, api in recurrent_layers(view)[0]:
        if any(arg.star for arg in node.args):
            raise Unsupported(node, f"`{api.rpartition('.')[2]}(...)` is TF1's, whose defaults TF 2 changed "
                                    "(recurrent_activation, reset_after): given *args or **kwargs, the migration "
                                    "cannot write them out; give them by name", view.path)
        missing = [cst.Arg(cst.parse_expression(CHANGED_DEFAULTS[api][key]), keyword=cst.Name(key),
                           equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))
                   for key in _defaulted(node, api)]
        if missing:
            respelled = node.visit(Replace(spelled))
            comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
            args = list(respelled.args)
            if args and args[-1].comma is cst.MaybeSentinel.DEFAULT:
                args[-1] = args[-1].with_changes(comma=comma)
            calls[node] = respelled.with_changes(
                args=[*args, *(arg.with_changes(comma=comma) for arg in missing[:-1]), missing[-1]])
    return calls
