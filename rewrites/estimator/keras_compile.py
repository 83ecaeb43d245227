"""What a Keras model given to model_to_estimator compiles with: the optimizer it trained with, the metric keys.

model_to_estimator trained a Keras optimizer as its legacy class (tensorflow_estimator's
keras_lib converts a new one), and a TF1 optimizer as it is, wrapped by Keras. The migrated
compile names what trained: ``"adam"`` -> ``keras.optimizers.legacy.Adam()``,
``tf.keras.optimizers.SGD(0.1, momentum=0.9)`` -> ``keras.optimizers.legacy.SGD(0.1,
momentum=0.9)``, ``tf.keras.optimizers.Nadam(lr=0.001)`` ->
``keras.optimizers.legacy.Nadam(lr=0.001)`` (TF 1's Keras Nadam: the schedule, its decay
0.004 and epsilon 1e-7 alike; its rate must be written, as TF 1.12 and 1.13 defaulted it
differently), a TF1 optimizer its Keras counterpart with TF1's numbers
(rewrites/keras_optimizers.py: ``tf.train.RMSPropOptimizer(0.01)`` -> ``keras.optimizers.legacy.RMSprop(learning_rate=0.01, epsilon=1e-10)``, its slots started at
ones after compile). Each comes with the names TF1's checkpoints gave its slots, so the
migrated program carries on from them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import libcst as cst

from migrator.findings import Safety
from rewrites import keras_optimizers
from rewrites.keras_translation import NoKerasEquivalent
from rewrites.program.places import Value
from rewrites.program.values import Values
from rewrites.syntax import bind_arguments, is_name, source, string_value, subtree
from rewrites.tf1_checkpoints import Slots, keras_slots, tf1_slots

COMPILE = ("optimizer", "loss", "metrics", "loss_weights", "weighted_metrics", "run_eagerly", "steps_per_execution",
           "jit_compile", "pss_evaluation_shards")
# Keras optimizers by the name compile takes, and the arguments their legacy classes take as the new ones do.
LEGACY = {"adam": "Adam", "sgd": "SGD", "rmsprop": "RMSprop", "adagrad": "Adagrad", "ftrl": "Ftrl"}
LEGACY_ARGUMENTS = {"Adam": ("learning_rate", "beta_1", "beta_2", "epsilon", "amsgrad"),
                    "SGD": ("learning_rate", "momentum", "nesterov"),
                    "RMSprop": ("learning_rate", "rho", "momentum", "epsilon", "centered"),
                    "Adagrad": ("learning_rate", "initial_accumulator_value", "epsilon"),
                    "Ftrl": ("learning_rate", "learning_rate_power", "initial_accumulator_value",
                             "l1_regularization_strength", "l2_regularization_strength"),
                    "Nadam": ("learning_rate", "beta_1", "beta_2", "epsilon")}
LEGACY_KEYWORDS = ("lr", "decay", "name", "clipnorm", "clipvalue", "global_clipnorm")
LEGACY_OWN_KEYWORDS = {"Nadam": ("schedule_decay",)}  # TF 1's Keras Nadam's, which the legacy class takes too
# Keras optimizers whose default rate TF 1's Keras changed: the migration needs the rate written.
RATE_DEFAULTS = {"Nadam": "0.002 up to TF 1.12, 0.001 from TF 1.13"}
BUILT = {"input_shape", "input_dim", "batch_input_shape", "InputLayer", "Input"}  # the model is built as it is made


@dataclass
class Optimizer:
    """compile's optimizer: the expression replaced where it stands by ``code``, what model_to_estimator trained."""

    node: cst.CSTNode
    code: str
    slots: Slots
    after_compile: tuple[str, ...] = ()
    why: str = ""  # what differs from TF1 (a TFM401 note)


def optimizer(values: Values, spelling, compile: Value, made: list[cst.CSTNode]) -> Optimizer:
    """The optimizer of ``compile`` (given there, or bound beside it); ``made``: the code making the model."""
    bound = bind_arguments(compile.node, COMPILE)
    if bound is None or "optimizer" not in bound:
        raise compile.fail("compile(...) with arguments the migration cannot read, or without an optimizer: name "
                           "the optimizer")
    given = Value(bound["optimizer"][1].value, compile.place)
    if isinstance(given.node, cst.Name):
        binding = values.binding(given.node, compile.place)
        if binding.kind != "value" or not binding.value.place.same_scope(compile.place):
            raise given.fail("compile's optimizer is migrated when it is made beside the compile")
        given = binding.value
    try:
        found = _translate(given, spelling(given.view))
    except NoKerasEquivalent as problem:
        raise given.fail(str(problem)) from None
    if found.after_compile and not _built(values, compile, made):
        raise given.fail("a TF1 RMSProp optimizer starts its slots at ones, which the migrated program sets on the "
                         "model's variables right after compile: give the model's input shape where it is made "
                         "(input_shape=, an Input layer) so that they exist then")
    return found


def _built(values: Values, compile: Value, made: list[cst.CSTNode]) -> bool:
    """Does the code making the model (or a function it calls) give its input shape, so that it is built?"""
    called = [values.resolve(Value(node.func, compile.place)).node for statement in made for node in subtree(statement)
              if isinstance(node, cst.Call)]
    code = [*made, *(function for function in called if isinstance(function, cst.FunctionDef))]
    return any(is_name(node, name) or (isinstance(node, cst.Arg) and node.keyword is not None and
                                       node.keyword.value == name)
               for statement in code for node in subtree(statement) for name in BUILT)


def metrics(compile: Value) -> list[str]:
    """What evaluate reports besides the loss, as code naming each key: "accuracy", or a metric's name=."""
    given = (bind_arguments(compile.node, COMPILE) or {}).get("metrics")
    found = []
    for element in given[1].value.elements if given and isinstance(given[1].value, cst.List) else ():
        value = element.value
        if string_value(value) is not None or isinstance(value, cst.Name):  # "mae", or a function: its name
            found.append(f'"{string_value(value) or value.value}"')
        else:
            found.append(source(value))
    return found


def _translate(given: Value, spelling) -> Optimizer:
    node = given.node
    name = string_value(node)
    if name is not None:
        if name.lower() not in LEGACY:
            raise NoKerasEquivalent(f"compile(optimizer={name!r}): only {', '.join(LEGACY)} are migrated yet; "
                                    "migrate by hand")
        keras_class = LEGACY[name.lower()]
        return Optimizer(node, f"keras.optimizers.legacy.{keras_class}()", keras_slots(keras_class))
    api = given.api() if isinstance(node, cst.Call) else None
    if api in keras_optimizers.OPTIMIZERS:
        if any(isinstance(inner, cst.Call) and given.view.api(inner.func) for arg in node.args
               for inner in subtree(arg)):
            raise NoKerasEquivalent(f"tf.{api} on a rate TensorFlow computes (a decay schedule): migrate by hand")
        code = keras_optimizers.optimizer(api, spelling.spelled(node))
        slots = tf1_slots(api, node, keras_momentum=True)
        if slots.powers:  # a TF1 Adam in Keras' compile kept them in `training/`
            slots = Slots(slots.names, powers=True, power_scope="training/")
        return Optimizer(node, code.code, slots, code.after_compile, code.why if code.safety is Safety.NUMERIC else "")
    keras_class = (api or "").rpartition(".")[2]
    if re.fullmatch(r"keras\.optimizers\.(legacy\.|experimental\.)?\w+", api or "") and keras_class in LEGACY_ARGUMENTS:
        return _legacy(node, keras_class, spelling)
    raise NoKerasEquivalent(f"compile's optimizer `{source(node)}`: migrated when it is a name (\"adam\"), a tf.keras "
                            f"optimizer ({', '.join(LEGACY_ARGUMENTS)}) or a TF1 one; migrate by hand")


def _legacy(call: cst.Call, keras_class: str, spelling) -> Optimizer:
    """A Keras optimizer as its legacy class, which model_to_estimator trained."""
    bound = bind_arguments(call, (*LEGACY_ARGUMENTS[keras_class], *LEGACY_KEYWORDS,
                                  *LEGACY_OWN_KEYWORDS.get(keras_class, ())))
    if bound is None:
        raise NoKerasEquivalent(f"{keras_class} with arguments its legacy class does not take: migrate by hand")
    if keras_class in RATE_DEFAULTS and not {"learning_rate", "lr"} & set(bound):
        raise NoKerasEquivalent(f"{keras_class} without a learning rate: TF 1's Keras gave it "
                                f"{RATE_DEFAULTS[keras_class]}; write the rate the program trained with")
    for flag in ("amsgrad", "centered"):
        if flag in bound and not is_name(bound[flag][1].value, "False"):
            raise NoKerasEquivalent(f"{keras_class}({flag}=...): its slots are not migrated yet; migrate by hand")
    slots = keras_slots(keras_class)
    if "momentum" in bound:
        momentum = bound["momentum"][1].value
        if not isinstance(momentum, (cst.Integer, cst.Float)):
            raise NoKerasEquivalent(f"{keras_class}(momentum={source(momentum)}): whether it keeps a momentum slot is "
                                    "known only when the program runs; write the number")
        if momentum.evaluated_value:
            momentum_slot = (f"training/{keras_class}/{{}}/momentum", "momentum")
            slots = Slots((*slots.names, momentum_slot), settings=slots.settings)
    legacy = spelling.spelled(call).with_changes(func=cst.parse_expression(f"keras.optimizers.legacy.{keras_class}"))
    return Optimizer(call, source(legacy), slots)
