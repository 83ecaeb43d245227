"""Tier 2: ``create_train_op(total_loss, optimizer)`` -> its optimizer, compiled with the Keras model.

``tf.contrib.training.create_train_op`` (and slim's, ``tf.contrib.slim.learning.create_train_op``, now tf-slim's
``tf_slim.learning`` and ``tf_slim.training``: the same code) ran the ``UPDATE_OPS``, computed the gradients of the
loss with the optimizer, applied them to the trainable variables advancing the global step, and returned the loss:
``optimizer.minimize(loss, global_step)``, which tier 2 reads (rewrites/estimator/faithful.py). Its optimizer's
variables are minimize's, by the same names in TF1's checkpoints (``<variable>/Adam``, ``beta1_power``: only the
loss's check is in the name scope ``train_op``). With ``check_numerics`` (its default) the training stopped at a NaN
or infinite loss: the generated train_step checks the loss too. ``summarize_gradients`` wrote histograms of the
gradients to model_dir's events, which the Keras model does not (a note). How the gradients are aggregated and
placed does not change them, nor gating them by op or by graph; ``GATE_NONE`` does (TF1 applied some before it
computed others). Not migrated: ``transform_grads_fn``, ``clip_gradient_norm``, ``gradient_multipliers``,
``variables_to_train``, ``global_step=None`` (TF1 did not advance the step), ``update_ops`` other than the
collection, ``GATE_NONE``.

Before::

    optimizer = tf.train.AdamOptimizer(learning_rate=0.01)
    train_op = tf.contrib.training.create_train_op(loss, optimizer)

After: both statements go, and the build function compiles ``TF1Adam(learning_rate=0.01, epsilon=1e-08)``.
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import QualifiedNameProvider

from rewrites.estimator.faithful_choice import is_optimizer
from rewrites.estimator.optimize_loss import TrainCall
from rewrites.syntax import Unsupported, bound_values, is_literal_int, is_name, is_none

# contrib/training/python/training/training.py's parameters, and slim.learning's, which made transform_grads_fn of
# clip_gradient_norm and gradient_multipliers.
TRAINING = ("total_loss", "optimizer", "global_step", "update_ops", "variables_to_train", "transform_grads_fn",
            "summarize_gradients", "gate_gradients", "aggregation_method", "colocate_gradients_with_ops",
            "check_numerics")
LEARNING = ("total_loss", "optimizer", "global_step", "update_ops", "variables_to_train", "clip_gradient_norm",
            "summarize_gradients", "gate_gradients", "aggregation_method", "colocate_gradients_with_ops",
            "gradient_multipliers", "check_numerics")
# TF APIs (self.api's names) and tf-slim's qualified names -> the parameters.
CREATE_TRAIN_OP = {
    "contrib.training.create_train_op": TRAINING,
    "contrib.training.python.training.training.create_train_op": TRAINING,
    "tf_slim.training.create_train_op": TRAINING,
    "tf_slim.training.training.create_train_op": TRAINING,
    "contrib.slim.learning.create_train_op": LEARNING,
    "contrib.slim.python.slim.learning.create_train_op": LEARNING,
    "tf_slim.learning.create_train_op": LEARNING,
}
CHANGE_TRAINING = ("variables_to_train", "transform_grads_fn", "gradient_multipliers")
GATES = ("GATE_OP", "GATE_GRAPH")  # TF1's Optimizer.GATE_OP (1, the default) and GATE_GRAPH (2)


def parameters(view, func: cst.BaseExpression) -> tuple[str, ...] | None:
    """The parameters of the create_train_op ``func`` names in the module ``view`` (a ModuleView), or None."""
    names = {view.api(func), *(name.name for name in view.get_metadata(QualifiedNameProvider, func, set()))}
    return next((CREATE_TRAIN_OP[name] for name in names if name in CREATE_TRAIN_OP), None)


def read(call: cst.Call, params: tuple[str, ...], api_of) -> TrainCall:
    """A create_train_op call of these ``params``; ``api_of(node)``: the TF API a node names."""
    args = bound_values(call, params)
    for name in CHANGE_TRAINING:
        if name in args and not is_none(args[name]):
            raise Unsupported(args[name], f"create_train_op({name}=...) changes how it trains: not migrated yet")
    clip = args.get("clip_gradient_norm")
    if clip is not None and not (is_literal_int(clip, 0) or isinstance(clip, cst.Float) and float(clip.value) == 0):
        raise Unsupported(clip, "create_train_op(clip_gradient_norm=...) changes how it trains: not migrated yet")
    gate = args.get("gate_gradients")
    if gate is not None and not (isinstance(gate, cst.Attribute) and gate.attr.value in GATES or any(
            is_literal_int(gate, value) for value in (1, 2))):
        raise Unsupported(gate, "create_train_op(gate_gradients=...) other than GATE_OP or GATE_GRAPH: TF1 applied "
                                "some gradients before it computed others (GATE_NONE), which Keras' step does not")
    step = args.get("global_step")
    if is_none(step):
        raise Unsupported(step, "create_train_op(global_step=None) did not advance the global step, which the Keras "
                                "optimizer's iterations do: not migrated")
    found = TrainCall(args["total_loss"], step, args.get("update_ops"),
                      check_numerics=not is_name(args.get("check_numerics"), "False"))
    optimizer = args["optimizer"]
    if isinstance(optimizer, cst.Call) and is_optimizer(api := api_of(optimizer.func)):
        found.api, found.call = api, optimizer
    elif isinstance(optimizer, cst.Name) and api_of(optimizer) is None:
        found.instance = optimizer
    else:
        raise Unsupported(optimizer, "create_train_op's optimizer must be a tf.train optimizer made in the model_fn")
    summarized = args.get("summarize_gradients")
    if summarized is not None and not is_name(summarized, "False"):
        found.notes.append((summarized, "create_train_op(summarize_gradients=...): TF1 wrote histograms of the "
                                        "gradients to model_dir's events, which the Keras model does not (a "
                                        "keras.callbacks.TensorBoard(histogram_freq=...) writes the weights')"))
    return found
