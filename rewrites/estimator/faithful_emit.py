"""Writing a model_fn kept as written (tier 2, rewrites/estimator/faithful.py): its edits in place, and after it
the generated Keras model that runs it (templates/tf1_model_fn_model.py.j2) and the function building that."""

from __future__ import annotations

import re

import libcst as cst

from rewrites.estimator.faithful_keras import KERAS_LAYER
from rewrites.estimator.faithful_rates import LEARNING_RATE
from rewrites.estimator.program import Program
from rewrites.syntax import Unsupported, names_read


TABLE_PARTITIONER = "TF1Partitioner"  # the strategy's variable_partitioner where the model_fn partitions tables


def class_name(function_name: str) -> str:
    """model_fn -> ModelFnModel, cnn_model_fn -> CnnModelFnModel: the Keras model running it."""
    return "".join(part.capitalize() for part in re.split(r"_+", function_name) if part) + "Model"


def arguments(parameters: list[str], predicts: bool = False, keywords: bool = False) -> list[str]:
    """What the generated call passes the model_fn, in its order (as Estimator passed them, by name); ``predicts``:
    the mode is chosen by the call (a call of features alone predicts); ``keywords``: functools.partial's too."""
    given = {"features": "features", "labels": "labels", "mode": "mode" if predicts else '"train" if training else "eval"',
             "params": "self.params"}
    return [given[name] for name in parameters] + (["**self.tf1_keywords"] if keywords else [])


def export_arguments(parameters: list[str], keywords: bool = False) -> list[str]:
    """What the generated export passes the model_fn: TF1's PREDICT mode, without labels."""
    given = {"features": "features", "labels": "None", "mode": '"infer"', "params": "self.params"}
    return [given[name] for name in parameters] + (["**self.tf1_keywords"] if keywords else [])


def build_function(emitter, program: Program, new_name: str, taken: set[str], predicts: bool = False,
                   exports: bool = False) -> tuple[cst.BaseStatement, str]:
    """The model_fn edited where it stands; the generated class and build function (their code), and the
    statement they go before: the one after the model_fn (None: they go after the model_fn, the block's last).
    ``predicts``: the model also predicts (predict(), an export), as the model_fn does in TF1's PREDICT mode;
    ``exports``: an export reads it, through TF1's graph where the model_fn makes lookup tables."""
    from templates import render, wrap

    model_fn, faithful = program.setup.model_fn, program.setup.model.faithful
    function, view = model_fn.function, model_fn.view
    block = view.parent(function)
    if block is not view.module and isinstance(view.parent(block), cst.ClassDef):
        raise Unsupported(function, "a model_fn method kept as written (tier 2) is not migrated yet: make it a "
                                    "function", view.path)
    name = class_name(function.name.value)
    if name in taken:
        raise Unsupported(function, f"the migrated program names the Keras model running the model_fn `{name}`, "
                                    "which this module already uses", view.path)
    if faithful.keras_layers and KERAS_LAYER in taken:
        raise Unsupported(function, f"the migrated program names the function making the model_fn's Keras layers "
                                    f"`{KERAS_LAYER}`, which this module already uses", view.path)
    if faithful.tables and TABLE_PARTITIONER in taken:
        raise Unsupported(function, f"the migrated program names the partitioner of the model_fn's tables "
                                    f"`{TABLE_PARTITIONER}`, which this module already uses", view.path)
    if faithful.tables and program.place.view is not view:
        raise Unsupported(function, "the tables of a model_fn kept as written (tier 2) in another module than the "
                                    "program's driver are not migrated yet: the strategy made there shards them",
                          view.path)
    rate_params = "params" in {name.value for name in names_read(cst.parse_expression(faithful.learning_rate or "0"))}
    if faithful.learning_rate and (LEARNING_RATE in taken or rate_params and "params" not in faithful.parameters):
        raise Unsupported(function, f"the migrated program computes the model_fn's learning rate in `{LEARNING_RATE}` "
                                    "(of params), which this module already names (or its model_fn takes no params)",
                          view.path)
    following = _next_statement(block, function)
    edits = emitter.module_edits(view)
    for statement in faithful.removed:
        edits.remove(statement)
    for node, code in faithful.expressions.items():
        edits.expressions[node] = cst.parse_expression(code)
    for statement, code in faithful.replaced.items():
        code = wrap(code, view.position(statement)[1])
        edits.replace(statement, [cst.parse_statement(code + "\n").with_changes(leading_lines=statement.leading_lines)])
    params, keywords = "params" in faithful.parameters, bool(model_fn.keywords)
    text = render("tf1_model_fn_model.py.j2", class_name=name, model_fn=function.name.value, params=params,
                  keywords=keywords, arguments=arguments(faithful.parameters, predicts, keywords), predicts=predicts,
                  export_arguments=export_arguments(faithful.parameters, keywords)
                  if exports and faithful.lookup_table else None,
                  regularization=faithful.regularization, check_numerics=faithful.check_numerics,
                  tables=faithful.tables, partitioner=TABLE_PARTITIONER,
                  collections=faithful.collections, float64=faithful.float64,
                  optimizer=faithful.optimizer, after_compile=faithful.after_compile, metrics=faithful.metrics,
                  function=dict(name=new_name, parameters=["dataset", *(["params"] if params else []),
                                                           *(["**keywords"] if keywords else [])]))
    for template in sorted(faithful.templates) + (["tf1_momentum.py.j2"] if faithful.tf1_momentum else []):
        text = render(template) + "\n\n" + text
    if faithful.keras_layers:
        text = render("tf1_keras_layer.py.j2", function=KERAS_LAYER) + "\n\n" + text
    if faithful.learning_rate:
        text = render("tf1_learning_rate.py.j2", class_name=LEARNING_RATE, rate=faithful.learning_rate,
                      params=rate_params) + "\n\n" + text
    return following, text


def finding(faithful) -> str:
    """TFM310's message: the tier, and the construct that kept the model_fn from tier 1."""
    return (f"model_fn kept as written and run in Keras (tier 2: track_tf1_style_variables, TF1's variable "
            f"names); tier 1 stopped at {faithful.why_at}: {faithful.why}")


def _next_statement(block, function):
    body = list(block.body)
    index = next(i for i, statement in enumerate(body) if statement is function)
    return body[index + 1] if index + 1 < len(body) else None
