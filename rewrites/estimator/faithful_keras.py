"""Keras layers in a model_fn kept as written (tier 2, rewrites/estimator/faithful.py).

TF1 made a Keras layer of the model_fn's code once, in its graph; the Keras model running that code calls it at
each step, so each layer is made through a generated ``tf1_keras_layer`` (get_or_create_layer): once, at the first
call. A layer that computes otherwise in training is made and called as TF1 ran it (rewrites/estimator/
faithful_modes.py: a batch normalization with momentum=1.0, its moving statistics as TF1 left them). What TF1's
graph gave another meaning keeps the program out of tier 2: a layer made outside the model_fn's code (at module
level: not tracked; in an input_fn: not in the model), a model built on the graph's tensors (`input_tensor=`,
`.output`), a Keras application or loaded model (which may hold batch normalizations the migration cannot see), a
Keras regularizer where the model_fn adds TF1's regularization losses (which held none of them).
"""

from __future__ import annotations

import libcst as cst

from rewrites.estimator import faithful_modes
from rewrites.program.modules import ModuleView
from rewrites.program.spelling import Spelling
from rewrites.syntax import Unsupported, first_line, subtree

KERAS_MADE = ("keras.layers.", "keras.applications.")  # their classes make Keras layers or models (not functions:
# `keras.layers.concatenate(...)` makes a layer without weights and calls it)
KERAS_MODELS = {"keras.Model", "keras.Sequential", "keras.models.Model", "keras.models.Sequential",
                "keras.models.load_model", "keras.models.clone_model", "keras.models.model_from_json",
                "keras.models.model_from_config", "keras.models.model_from_yaml"}
TENSOR_ARGUMENTS = ("input_tensor", "tensor", "input_tensors")  # a Keras model built on tensors
GRAPH_TENSORS = ("output", "outputs", "_graph")  # a Keras model's graph tensors, read
KERAS_LAYER = "tf1_keras_layer"  # the generated function making a Keras layer of the model_fn's code once


def keras_made(view: ModuleView) -> list[cst.Call]:
    """The calls of ``view`` that make Keras layers or models, outermost only (a Sequential's layers go with it)."""
    found, inside = [], set()
    for node in subtree(view.module):
        if id(node) in inside or not isinstance(node, cst.Call):
            continue
        api = view.api(node.func)
        if api and (api.startswith(KERAS_MADE) and api.rsplit(".", 1)[1][:1].isupper() or api in KERAS_MODELS):
            found.append(node)
            inside |= {id(n) for n in subtree(node)}
    return found


def _on_graph_tensors(view: ModuleView, calls: list[cst.Call]):
    """What builds a Keras model on TF1's graph tensors, or reads a model's graph tensors: `input_tensor=` /
    `tensor=` arguments, `Input` / `InputLayer`, a functional `keras.Model(inputs, outputs)`, `.output`."""
    for call in calls:
        api = view.api(call.func) or ""
        if api.rsplit(".", 1)[-1] in ("Input", "InputLayer") or api in ("keras.Model", "keras.models.Model") and (
                call.args) or any(arg.keyword is not None and arg.keyword.value in TENSOR_ARGUMENTS
                                  for node in subtree(call) if isinstance(node, cst.Call) for arg in node.args):
            yield call
    if calls:
        yield from (node for node in subtree(view.module) if isinstance(node, cst.Attribute)
                    and node.attr.value in GRAPH_TENSORS)


def _made_elsewhere(api: str) -> bool:
    """Is a Keras model of ``api`` an application or loaded model, whose layers the program's code does not show?"""
    return api.startswith("keras.applications.") or api in KERAS_MODELS - {
        "keras.Model", "keras.Sequential", "keras.models.Model", "keras.models.Sequential"}


def keras_made_elsewhere(view: ModuleView) -> Unsupported | None:
    """A Keras layer or model made in a helper module of a model_fn kept as written."""
    made = keras_made(view)
    if not made:
        return None
    return Unsupported(made[0], f"`{first_line(made[0])}`: a Keras layer or model made in a module of helpers of a "
                                "model_fn kept as written (tier 2) is not migrated yet (made anew at each call of the "
                                "Keras model, it would train new weights each time)", view.path)


def problem(view: ModuleView, calls: list[cst.Call], model_fn: cst.FunctionDef,
            regularization: bool) -> Unsupported | None:
    """The first Keras layer of ``calls`` (the module's, keras_made) tier 2 cannot make once as TF1 did, and why;
    ``regularization``: the model_fn adds TF1's regularization losses."""
    code = model_code(view, model_fn)
    for found, why in (
            (next((call for call in calls if id(call) not in code), None),
             "a Keras layer or model made outside the model_fn's code (at module level, in an input_fn, a serving "
             "function, ...) in the module of a model_fn kept as written (tier 2): only the model_fn's code runs "
             "where its layers can be made once"),
            (next(_on_graph_tensors(view, calls), None),
             "a Keras model built on the model_fn's tensors (`input_tensor=`, `Input`, `.output`), in a model_fn "
             "kept as written (tier 2): TF1 built it in its graph; in Keras the model_fn runs at each call, on new "
             "tensors: build the model on an input shape and call it"),
            (next((node for node in _calls_in(calls) if _made_elsewhere(view.api(node.func) or "")), None),
             "a Keras application or loaded model, in a model_fn kept as written (tier 2), may hold batch "
             "normalizations, whose moving statistics TF1 never updated (UPDATE_OPS held none of their updates) and "
             "Keras training updates: the evaluations would differ"),
            faithful_modes.problem(view, calls) or (None, ""),
            (next((arg for node in _calls_in(calls) for arg in node.args if arg.keyword is not None
                   and arg.keyword.value.endswith("_regularizer")), None) if regularization else None,
             "TF1's regularization losses held no Keras layer's, and the Keras model running a model_fn kept as "
             "written (tier 2) adds all it tracks")):
        if found is not None:
            return Unsupported(found, f"`{first_line(found)}`: {why}", view.path)
    return None


def made_once(view: ModuleView, spelling: Spelling, call: cst.Call) -> tuple[str, list[tuple[cst.CSTNode, str]]]:
    """The code making the Keras layer or model of ``call`` once (KERAS_LAYER), and notes on what it changed."""
    made, notes = faithful_modes.frozen(view, call)
    return f"{KERAS_LAYER}(lambda: {spelling.code(made)})", notes


def _calls_in(calls: list[cst.Call]):
    return (node for call in calls for node in subtree(call) if isinstance(node, cst.Call))


def model_code(view: ModuleView, model_fn: cst.FunctionDef) -> set[int]:
    """The nodes of the model_fn and of the module's functions and classes it names, followed by name, also through
    the values of module-level names (a dict of model functions picked by params), which are not model code: they
    run once, at import."""
    nodes: set[int] = set()
    read: set[int] = set()
    todo: list[cst.CSTNode] = [model_fn]
    while todo:
        node = todo.pop()
        if id(node) in read:
            continue
        code = isinstance(node, (cst.FunctionDef, cst.ClassDef))
        for inner in subtree(node):
            read.add(id(inner))
            if code:
                nodes.add(id(inner))
            if isinstance(inner, cst.Name):
                for bound in view.top_level.get(inner.value, []):
                    value = bound if isinstance(bound, (cst.FunctionDef, cst.ClassDef)) else \
                        getattr(bound, "value", None)
                    if value is not None and id(value) not in read:
                        todo.append(value)
    return nodes
