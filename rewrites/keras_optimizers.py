"""TF1 optimizers and learning-rate schedules -> Keras 2 source code (the legacy optimizers, as
ParameterServerStrategy training wants), by the tables below; rewrites/keras_translation.py binds
and writes the calls.

Before::

    tf.train.AdamOptimizer(0.01)
    tf.train.RMSPropOptimizer(learning_rate=0.01, decay=0.8)
    tf.train.exponential_decay(0.1, tf.train.get_global_step(), 100, 0.96)

After::

    TF1Adam(learning_rate=0.01, epsilon=1e-08)  # a legacy Adam keeping TF1's beta powers
    keras.optimizers.legacy.RMSprop(learning_rate=0.01, rho=0.8, epsilon=1e-10)
    # after model.compile(...), in the same strategy scope:
    for variable in model.trainable_variables:
        optimizer.add_slot(variable, "rms", initializer="ones")
    keras.optimizers.schedules.ExponentialDecay(initial_learning_rate=0.1, decay_steps=100, decay_rate=0.96)

A TF1 default that differs from Keras' is written out (Adam's ``epsilon=1e-08``). Numbers: MAPPING.md.
"""

from __future__ import annotations

import math

import libcst as cst

from migrator.findings import Safety
from rewrites.keras_translation import (KerasCode, NoKerasEquivalent, Translation, bind, is_number, keras_call, lookup,
                                        signature)
from rewrites.syntax import source

_LEGACY = "keras.optimizers.legacy."
_SCHEDULES = "keras.optimizers.schedules."

OPTIMIZERS = {
    "train.GradientDescentOptimizer": Translation(
        _LEGACY + "SGD", "learning_rate, use_locking=False, name='GradientDescent'", ("learning_rate", "name")),
    "train.MomentumOptimizer": Translation(
        _LEGACY + "SGD", "learning_rate, momentum, use_locking=False, name='Momentum', use_nesterov=False",
        ("learning_rate", "momentum", "use_nesterov", "name"), renames={"use_nesterov": "nesterov"}),
    # TF1's Adam: a Keras legacy Adam keeping TF1's beta powers (rewrites/program/helper_classes.py).
    "train.AdamOptimizer": Translation(
        "TF1Adam", "learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-08, use_locking=False, name='Adam'",
        ("learning_rate", "beta1", "beta2", "epsilon", "name"), renames={"beta1": "beta_1", "beta2": "beta_2"},
        explicit=("epsilon",)),
    # TF1 Adagrad has no epsilon; legacy Keras adds it to sqrt(accumulator) and turns 0 into 1e-7.
    "train.AdagradOptimizer": Translation(
        _LEGACY + "Adagrad", "learning_rate, initial_accumulator_value=0.1, use_locking=False, name='Adagrad'",
        ("learning_rate", "initial_accumulator_value", "epsilon=1e-30", "name"), explicit=("initial_accumulator_value",)),
    # l1 = l2 = 0 (checked below): plain Adagrad.
    "train.ProximalAdagradOptimizer": Translation(
        _LEGACY + "Adagrad", "learning_rate, initial_accumulator_value=0.1, l1_regularization_strength=0.0, "
        "l2_regularization_strength=0.0, use_locking=False, name='ProximalAdagrad'",
        ("learning_rate", "initial_accumulator_value", "epsilon=1e-30", "name"), explicit=("initial_accumulator_value",)),
    "train.RMSPropOptimizer": Translation(
        _LEGACY + "RMSprop", "learning_rate, decay=0.9, momentum=0.0, epsilon=1e-10, use_locking=False, "
        "centered=False, name='RMSProp'", ("learning_rate", "decay", "momentum", "epsilon", "centered", "name"),
        renames={"decay": "rho"}, explicit=("epsilon",)),
    "train.FtrlOptimizer": Translation(
        _LEGACY + "Ftrl", "learning_rate, learning_rate_power=-0.5, initial_accumulator_value=0.1, "
        "l1_regularization_strength=0.0, l2_regularization_strength=0.0, use_locking=False, name='Ftrl', "
        "accum_name=None, linear_name=None, l2_shrinkage_regularization_strength=0.0, beta=None",
        ("learning_rate", "learning_rate_power", "initial_accumulator_value", "l1_regularization_strength",
         "l2_regularization_strength", "name", "l2_shrinkage_regularization_strength", "beta")),
    "train.AdadeltaOptimizer": Translation(
        _LEGACY + "Adadelta", "learning_rate=0.001, rho=0.95, epsilon=1e-08, use_locking=False, name='Adadelta'",
        ("learning_rate", "rho", "epsilon", "name"), explicit=("epsilon",)),
}

# TF1 initialises RMSProp's mean-square slot to ones, Keras to zeros.
_RMS_SLOTS_TO_ONES = ('# TF1 started the mean-square slots at ones, Keras at zeros.\n'
                      'for variable in model.trainable_variables:\n    optimizer.add_slot(variable, "rms", initializer="ones")')

# The compat.v1 decay functions evaluate these Keras classes at the global step, which Keras drops.
SCHEDULES = {
    "train.exponential_decay": Translation(
        _SCHEDULES + "ExponentialDecay", "learning_rate, global_step, decay_steps, decay_rate, staircase=False, name=None",
        ("learning_rate", "decay_steps", "decay_rate", "staircase", "name"), renames={"learning_rate": "initial_learning_rate"}),
    "train.piecewise_constant": Translation(
        _SCHEDULES + "PiecewiseConstantDecay", "x, boundaries, values, name=None", ("boundaries", "values", "name")),
    "train.polynomial_decay": Translation(
        _SCHEDULES + "PolynomialDecay",
        "learning_rate, global_step, decay_steps, end_learning_rate=0.0001, power=1.0, cycle=False, name=None",
        ("learning_rate", "decay_steps", "end_learning_rate", "power", "cycle", "name"),
        renames={"learning_rate": "initial_learning_rate"}),
    "train.inverse_time_decay": Translation(
        _SCHEDULES + "InverseTimeDecay", "learning_rate, global_step, decay_steps, decay_rate, staircase=False, name=None",
        ("learning_rate", "decay_steps", "decay_rate", "staircase", "name"), renames={"learning_rate": "initial_learning_rate"}),
    # TF1 builds it as ExponentialDecay with decay_rate exp(-decay_rate): written out for a literal rate.
    "train.natural_exp_decay": Translation(
        _SCHEDULES + "ExponentialDecay", "learning_rate, global_step, decay_steps, decay_rate, staircase=False, name=None",
        ("learning_rate", "decay_steps", "decay_rate", "staircase", "name"), renames={"learning_rate": "initial_learning_rate"}),
    "train.cosine_decay": Translation(
        _SCHEDULES + "CosineDecay", "learning_rate, global_step, decay_steps, alpha=0.0, name=None",
        ("learning_rate", "decay_steps", "alpha", "name"), renames={"learning_rate": "initial_learning_rate"}),
    "train.cosine_decay_restarts": Translation(
        _SCHEDULES + "CosineDecayRestarts",
        "learning_rate, global_step, first_decay_steps, t_mul=2.0, m_mul=1.0, alpha=0.0, name=None",
        ("learning_rate", "first_decay_steps", "t_mul", "m_mul", "alpha", "name"),
        renames={"learning_rate": "initial_learning_rate"}),
}

# Optimizers that are not translated, and why.
_REFUSED = {
    "train.SyncReplicasOptimizer": "Keras training under ParameterServerStrategy is asynchronous and has no "
    "synchronous-replicas optimizer; keep the wrapped optimizer and accept asynchronous updates, or train with "
    "MultiWorkerMirroredStrategy instead",
}


def optimizer(api: str, call: cst.Call) -> KerasCode:
    """A ``tf.compat.v1.train.*Optimizer(...)`` call -> a legacy Keras optimizer."""
    translation = lookup(OPTIMIZERS, api, "optimizer", _REFUSED)
    bound = bind(api, call, translation)
    if api == "train.ProximalAdagradOptimizer":
        for strength in ("l1_regularization_strength", "l2_regularization_strength"):
            if strength in bound and not is_number(bound[strength], 0):
                raise NoKerasEquivalent(f"{api} with {strength} other than 0: Keras has no proximal Adagrad; keep "
                                        "this optimizer out of the migration or write a legacy-Adagrad subclass "
                                        "that calls tf.raw_ops.ResourceApplyProximalAdagrad")
    code = keras_call(translation, bound)
    if api == "train.MomentumOptimizer":
        return _momentum(api, code, bound["learning_rate"])
    if api == "train.RMSPropOptimizer":
        return KerasCode(code, Safety.EXACT, after_compile=(_RMS_SLOTS_TO_ONES,))
    return KerasCode(code, Safety.EXACT)


def learning_rate_schedule(api: str, call: cst.Call) -> KerasCode:
    """A ``tf.compat.v1.train.*_decay(..., global_step, ...)`` call -> a Keras schedule.

    The global step argument is dropped: the caller checks that it is the global step.
    """
    translation = lookup(SCHEDULES, api, "learning-rate schedule")
    bound = bind(api, call, translation)
    if api == "train.natural_exp_decay":
        rate = bound["decay_rate"]
        if not isinstance(rate, (cst.Integer, cst.Float)):
            raise NoKerasEquivalent(f"{api} with decay_rate={source(rate)}: write keras.optimizers.schedules."
                                    "ExponentialDecay(..., decay_rate=math.exp(-decay_rate)) by hand")
        bound["decay_rate"] = cst.Float(repr(math.exp(-rate.evaluated_value)))
    return KerasCode(keras_call(translation, bound), Safety.EXACT)


def optimizer_arguments(api: str, call: cst.Call) -> dict[str, cst.BaseExpression]:
    """The arguments of a ``tf.compat.v1.train.*Optimizer`` call by TF1 parameter name (defaults left out)."""
    return bind(api, call, lookup(OPTIMIZERS, api, "optimizer", _REFUSED))


def optimizer_default_name(api: str) -> str:
    """The ``name`` of a TF1 optimizer not given one: its slots are named after it."""
    return signature(lookup(OPTIMIZERS, api, "optimizer", _REFUSED).tf1)["name"].evaluated_value


def _momentum(api: str, code: str, learning_rate: cst.BaseExpression) -> KerasCode:
    """TF1 applies the current learning rate to the whole accumulator, Keras folds each step's rate into it."""
    if isinstance(learning_rate, (cst.Integer, cst.Float)):
        return KerasCode(code, Safety.EXACT)
    if isinstance(learning_rate, cst.Call):
        raise NoKerasEquivalent(f"{api} with learning_rate={source(learning_rate)}: with a changing learning rate "
                                "Keras' momentum differs from TF1's (measured 2x); write a legacy-SGD subclass whose "
                                "dense update calls tf.raw_ops.ResourceApplyMomentum, or keep the rate constant")
    return KerasCode(code, Safety.NUMERIC, f"momentum: same as TF1 only while learning_rate={source(learning_rate)} "
                                          "stays constant (TF1 scales the whole accumulator by the current rate)")
