"""The loss the migrated program reports, kept as TF1's Estimator computed it (part of the emitter).

TF1 reported the mean of the batches' losses; Keras weighs each batch's loss by its size. The two differ when
an eval batch is short: the last one of an input that ends. A program that evaluates on such an input gets its
Keras model compiled with the generated ``TF1EvalLoss`` metric (templates/tf1_eval_loss.py.j2), named ``loss``:
what fit and evaluate report as the loss, and what the program reads from evaluate's results.

A model_to_estimator model keeps the program's own compile: its finding says the loss may differ.
"""

from __future__ import annotations

import libcst as cst

from rewrites.estimator.program import Model
from rewrites.syntax import source

CLASS = "TF1EvalLoss"
TEMPLATE = "tf1_eval_loss.py.j2"


def needed(plans) -> bool:
    """Does the program evaluate on an input that may end (and so may have a short last batch)?"""
    return any(plan.evaluate is not None and plan.evaluate.input.repeats is not True for plan in plans)


def used(model: Model) -> bool:
    """Does the model compile a TF1EvalLoss metric (``tf.metrics.mean`` of the loss, migrated)?"""
    return any(metric.startswith(f"{CLASS}(") for metric in model.metrics)


def metric(model: Model, key: str | None = None) -> str:
    """``TF1EvalLoss(<the compiled loss, per example>, ...)``, reported under ``key`` (None: as `loss`)."""
    arguments = _arguments(model) + ([f'name="{key}"'] if key else [])
    return f"{CLASS}({', '.join(arguments)})"


def _arguments(model: Model) -> list[str]:
    """The compiled loss with reduction="none" (how it reduced over the batch: `summed`), and its weight."""
    call = cst.parse_expression(model.loss)
    if not isinstance(call, cst.Call):
        raise ValueError(f"a compiled loss that is not a loss object: {model.loss}")
    kept = [arg for arg in call.args if not (arg.keyword and arg.keyword.value == "reduction")]
    reduction = next((source(arg.value) for arg in call.args if arg.keyword and arg.keyword.value == "reduction"),
                     None)
    arguments = [*map(_argument, kept), 'reduction="none"']
    per_example = f"{source(call.func)}({', '.join(arguments)})"
    return [per_example, *(["summed=True"] if reduction == '"sum"' else []),
            *([f"weight={model.loss_weight}"] if model.loss_weight else [])]


def _argument(arg: cst.Arg) -> str:
    return f"{arg.keyword.value}={source(arg.value)}" if arg.keyword else source(arg.value)
