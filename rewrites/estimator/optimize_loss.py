"""Tier 2: ``tf.contrib.layers.optimize_loss`` -> the optimizer it made, compiled with the Keras model.

``optimize_loss(loss, global_step, learning_rate, optimizer="Adam")`` made the optimizer its
``optimizer`` names (a name of ``OPTIMIZER_CLS_NAMES``, a tf.train optimizer class, or an optimizer
made above) on the learning rate, ran the ``UPDATE_OPS``, and minimized the loss: the same as
``AdamOptimizer(learning_rate).minimize(loss, global_step)``, plus summaries, under the variable
scope ``OptimizeLoss`` (or ``name``). So its optimizer's slots and Adam's powers are in TF1's
checkpoints as ``OptimizeLoss/<variable>/Adam`` and ``OptimizeLoss/beta1_power``, and a learning
rate given as a number is the variable ``OptimizeLoss/learning_rate``. Gradient clipping, noise,
multipliers, a decay function or a subset of the variables change the training: not migrated yet.

Before::

    train_op = tf.contrib.layers.optimize_loss(loss, tf.train.get_global_step(),
                                               learning_rate=params["learning_rate"], optimizer="Adam")

After: the statement goes, and the build function compiles
``TF1Adam(learning_rate=params["learning_rate"], epsilon=1e-08)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from rewrites.syntax import Unsupported, bound_values, is_none

OPTIMIZE_LOSS = {"contrib.layers.optimize_loss", "layers.optimize_loss"}
PARAMETERS = ("loss", "global_step", "learning_rate", "optimizer", "gradient_noise_scale", "gradient_multipliers",
              "clip_gradients", "learning_rate_decay_fn", "update_ops", "variables", "name", "summaries",
              "colocate_gradients_with_ops", "increment_global_step")
CHANGE_TRAINING = ("gradient_noise_scale", "gradient_multipliers", "clip_gradients", "learning_rate_decay_fn",
                   "variables")
# contrib.layers' OPTIMIZER_CLS_NAMES: the optimizer each name made, and the arguments it gave it beside the rate.
NAMED = {"Adagrad": ("train.AdagradOptimizer", ()), "Adam": ("train.AdamOptimizer", ()),
         "Ftrl": ("train.FtrlOptimizer", ()), "Momentum": ("train.MomentumOptimizer", (("momentum", "0.9"),)),
         "RMSProp": ("train.RMSPropOptimizer", ()), "SGD": ("train.GradientDescentOptimizer", ())}


@dataclass
class TrainCall:
    """A call making the train_op (optimize_loss, rewrites/estimator/create_train_op.py's create_train_op): what it
    trains with."""

    loss: cst.BaseExpression
    global_step: cst.BaseExpression | None  # None: not given (optimize_loss reads `None` given as not given)
    update_ops: cst.BaseExpression | None
    scope: str = ""                     # the variable scope its optimizer's variables are in ("": none)
    api: str | None = None              # the optimizer it makes (None: `optimizer` names one made above)
    call: cst.Call | None = None        # ... as the call TF1 made: Optimizer(learning_rate=..., ...)
    instance: cst.Name | None = None    # the optimizer made above
    check_numerics: bool = False        # TF1 stopped the training at a NaN or infinite loss
    notes: list[tuple[cst.CSTNode, str]] = field(default_factory=list)  # what it did that the Keras model does not


def read(call: cst.Call, api_of) -> TrainCall:
    """An optimize_loss call; ``api_of(node)``: the TF API a node names."""
    args = bound_values(call, PARAMETERS)
    for name in CHANGE_TRAINING:
        if name in args and not is_none(args[name]):
            raise Unsupported(args[name], f"optimize_loss({name}=...) changes how it trains: not migrated yet")
    if "increment_global_step" in args and not (isinstance(args["increment_global_step"], cst.Name)
                                                and args["increment_global_step"].value == "True"):
        raise Unsupported(args["increment_global_step"], "optimize_loss(increment_global_step=...) is not migrated")
    scope = args.get("name")
    if scope is not None and not is_none(scope) and not isinstance(scope, cst.SimpleString):
        raise Unsupported(scope, "optimize_loss(name=...) must be a string: TF1's checkpoints name the optimizer's "
                                 "variables after it")
    found = TrainCall(args["loss"], args.get("global_step"), args.get("update_ops"),
                      scope.evaluated_value if isinstance(scope, cst.SimpleString) else "OptimizeLoss")
    optimizer, rate = args.get("optimizer"), args.get("learning_rate")
    if isinstance(optimizer, cst.Name) and api_of(optimizer) is None:
        found.instance = optimizer
        return found
    if isinstance(optimizer, cst.SimpleString) and optimizer.evaluated_value in NAMED:
        found.api, extra = NAMED[optimizer.evaluated_value]
    elif (api := api_of(optimizer) or "").startswith("train.") and api.endswith("Optimizer"):
        found.api, extra = api, ()
    else:
        raise Unsupported(optimizer or call, "optimize_loss's optimizer must be the name of one "
                                             f"({', '.join(NAMED)}), a tf.train optimizer class or an optimizer made "
                                             "above")
    if rate is None or is_none(rate):
        raise Unsupported(call, "optimize_loss without a learning rate")
    found.call = cst.Call(func=cst.Name("Optimizer"), args=[
        cst.Arg(rate, keyword=cst.Name("learning_rate")),
        *(cst.Arg(cst.parse_expression(value), keyword=cst.Name(key)) for key, value in extra)])
    return found
