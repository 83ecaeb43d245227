"""An optimizer a model_fn kept as written (tier 2) chooses at run time, by a flag or a parameter.

Real recommenders pick their optimizer from a flag::

    if FLAGS.optimizer == "Adam":
        optimizer = tf.train.AdamOptimizer(learning_rate=learning_rate, epsilon=1e-8)
    elif FLAGS.optimizer == "Adagrad":
        optimizer = tf.train.AdagradOptimizer(learning_rate=learning_rate)
    train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())

The chain goes with minimize, and the build function compiles the Keras model with the one the same value picks,
from the same table of tier 1, each made from what its TF1 optimizer read::

    model.compile({"Adam": TF1Adam(learning_rate=params["learning_rate"], epsilon=1e-8),
                   "Adagrad": keras.optimizers.legacy.Adagrad(learning_rate=params["learning_rate"], ...)}[
        FLAGS.optimizer])

A value no branch names stops the program where the model is built (a KeyError naming it), as TF1 stopped at the
model_fn's `optimizer.minimize` of an unbound name; an `else:` branch is the dict's default. A TF1 checkpoint's
slots are restored by the class of the optimizer chosen (rewrites/tf1_checkpoints.py, ``Slots.chosen``).
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from rewrites import keras_optimizers
from rewrites.estimator.faithful_rates import Rates
from rewrites.program.spelling import Spelling
from rewrites.syntax import Unsupported, single_assign, source
from rewrites.tf1_checkpoints import Slots, tf1_slots


@dataclass
class Choice:
    """The optimizers of a chain, as the Keras optimizer (code) of the build function and their slots."""

    name: str          # the name each branch binds
    optimizer: str     # `{value: Keras optimizer, ...}[value read]`, or `.get(value read, the else's)`
    slots: Slots
    statements: list[cst.BaseStatement]  # the branches' assignments, read as a whole
    whys: list[tuple[cst.Call, str]]  # what may differ in each (TFM401)


def read_choice(statement: cst.If, api, rates: Rates, spelling: Spelling) -> Choice | None:
    """The chain ``statement`` starts, if each branch binds one name to a tf.train optimizer and each test compares
    one value read with a string (None: not such a chain). Unsupported where a branch's optimizer is not migrated."""
    branches, otherwise = _branches(statement)
    if branches is None:
        return None
    read = {source(test.left) for test, _ in branches}
    assigns = [single_assign(body.body[0]) if isinstance(body, cst.IndentedBlock) and len(body.body) == 1 else None
               for body in [*(body for _, body in branches), *([otherwise] if otherwise else [])]]
    if len(read) != 1 or None in assigns or len({name for name, _ in assigns}) != 1 or not all(
            isinstance(value, cst.Call) and is_optimizer(api(value.func)) for _, value in assigns):
        return None
    codes, slots, whys = [], {}, []
    for _, call in assigns:
        optimizer = api(call.func)
        code = keras_optimizers.optimizer(optimizer, spelling.spelled(rates.carried(call)))
        if code.after_compile:
            raise Unsupported(call, "an optimizer chosen at run time that Keras sets up after compile, in a model_fn "
                                    "kept as written (tier 2), is not migrated yet")
        made = spelling.code(cst.parse_expression(code.code))
        keras_class = source(cst.ensure_type(cst.parse_expression(made), cst.Call).func).rpartition(".")[2]
        kept = tf1_slots(optimizer, call, keras_momentum=True)
        if slots.setdefault(keras_class, kept) != kept:
            raise Unsupported(call, f"two optimizers chosen at run time become Keras' {keras_class} with slots TF1 "
                                    "named otherwise: a TF1 checkpoint could not say which it was")
        codes.append(made)
        if code.why:
            whys.append((call, code.why))
    value = source(rates.carried(branches[0][0].left))
    table = "{" + ", ".join(f"{source(test.comparisons[0].comparator)}: {code}"
                            for (test, _), code in zip(branches, codes)) + "}"
    chosen = f"{table}[{value}]" if otherwise is None else f"{table}.get({value}, {codes[-1]})"
    return Choice(assigns[0][0], spelling.code(cst.parse_expression(chosen)), Slots((), chosen=tuple(slots.items())),
                  [body.body[0] for _, body in branches] + ([otherwise.body[0]] if otherwise else []), whys)


def _branches(statement: cst.If) -> tuple[list | None, cst.IndentedBlock | None]:
    """The (test, block) of each `if` / `elif` whose test is `value == "string"`, and the `else:` block."""
    branches: list = []
    node: cst.If | cst.Else | None = statement
    while isinstance(node, cst.If):
        test = node.test
        if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and isinstance(
                test.comparisons[0].operator, cst.Equal) and isinstance(test.comparisons[0].comparator,
                                                                        cst.SimpleString)):
            return None, None
        branches.append((test, node.body))
        node = node.orelse
    return branches, node.body if isinstance(node, cst.Else) else None


def is_optimizer(api: str | None) -> bool:
    return bool(api) and api.startswith("train.") and api.endswith("Optimizer")
