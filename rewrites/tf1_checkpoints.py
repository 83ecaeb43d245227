"""Resuming from the TF1 program's checkpoints: what the generated ``restore_tf1_checkpoint`` is told.

Shared by the Estimator and between-graph families. The function itself is
templates/tf1_checkpoint.py.j2; each family says which variables each optimizer trains (by
their TF1 names), how its optimizer's slots were named in TF1's checkpoints
(``tf1_slots``), and which tables TF1 looked up "mod".

Before (TF1 wrote ``model_dir/model.ckpt-300``)::

    estimator.train(input_fn, max_steps=500)

After (the migrated program, started on that model_dir, trains steps 301 to 500)::

    tf1_checkpoint = tf.train.latest_checkpoint(model_dir)
    if checkpoints.latest_checkpoint or not tf1_checkpoint:
        checkpoints.restore_or_initialize()
    else:
        with strategy.scope():
            restore_tf1_checkpoint(tf1_checkpoint, model)
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from rewrites.keras_optimizers import optimizer_arguments, optimizer_default_name
from rewrites.keras_translation import NoKerasEquivalent
from rewrites.syntax import is_name

# What each TF1 optimizer keeps beside a variable, in the order it makes them, and the Keras slot that keeps it.
TF1_SLOTS = {"train.GradientDescentOptimizer": (), "train.MomentumOptimizer": (("momentum", "momentum"),),
             "train.AdamOptimizer": (("m", "m"), ("v", "v")), "train.AdagradOptimizer": (("accumulator", "accumulator"),),
             "train.ProximalAdagradOptimizer": (("accumulator", "accumulator"),),
             "train.RMSPropOptimizer": (("rms", "rms"), ("mg", "mg"), ("momentum", "momentum")),
             "train.FtrlOptimizer": (("accum", "accumulator"), ("linear", "linear")),
             "train.AdadeltaOptimizer": (("accum", "accum_grad"), ("accum_update", "accum_var"))}
# A Keras optimizer made by a v2 canned Estimator (by name, with its defaults): its slots, and the
# hyperparameters the Estimator's checkpoint holds beside them.
KERAS_SLOTS = {"Adagrad": ("accumulator",), "Adam": ("m", "v"), "Ftrl": ("accumulator", "linear"), "RMSprop": ("rms",),
               "SGD": (), "Nadam": ("m", "v")}
KERAS_SETTINGS = {"Adagrad": (), "Adam": ("beta_1", "beta_2"), "RMSprop": ("rho", "momentum"), "SGD": ("momentum",),
                  "Ftrl": ("learning_rate_power", "l1_regularization_strength", "l2_regularization_strength", "beta",
                           "l2_shrinkage_regularization_strength"), "Nadam": ("beta_1", "beta_2")}
# What a Keras optimizer keeps beside its slots that the next step reads: its name in the checkpoint, the attribute
# holding it (made with the slots). Nadam's is the product of its momentum schedule so far.
KERAS_WEIGHTS = {"Nadam": (("momentum_cache", "_m_cache"),)}


@dataclass(frozen=True)
class Slots:
    """Where a TF1 checkpoint keeps an optimizer's state beside a variable, and where Keras keeps it.

    names: (TF1's checkpoint name of the slot, ``{}`` standing for the variable's, the Keras slot or None for
        one TF1 kept but never read), in order.
    powers: TF1's Adam kept beta1_power and beta2_power, which the generated TF1Adam keeps too.
    negated_rate: Keras' SGD keeps -learning_rate times TF1's momentum accumulator (the same while the rate
        is constant, which the migration checks).
    settings: checkpoint names of a Keras optimizer's hyperparameters, which the migrated program sets itself (and
        its step count, which is the global step).
    """

    names: tuple[tuple[str, str | None], ...]
    powers: bool = False
    negated_rate: bool = False
    settings: tuple[str, ...] = ()
    scope: str = ""     # the variable scope TF1 made the optimizer's variables in (optimize_loss's), with its "/"
    power_scope: str | None = None  # where TF1 kept the powers, if not in ``scope`` (Keras' compile: "training/")
    # An optimizer chosen at run time (rewrites/estimator/faithful_choice.py): each Keras class it may be, and the
    # slots of the TF1 optimizer it stands for (``names`` is empty).
    chosen: tuple[tuple[str, Slots], ...] = ()
    # TF1's checkpoint names of what the optimizer keeps beside its slots, and its Keras attributes (KERAS_WEIGHTS).
    weights: tuple[tuple[str, str], ...] = ()

    def each(self) -> tuple[Slots, ...]:
        """These slots, or each of a choice."""
        return tuple(slots for _, slots in self.chosen) or (self,)


def tf1_slots(api: str, call: cst.Call, keras_momentum: bool = False) -> Slots:
    """The slots of a ``tf.compat.v1.train.*Optimizer(...)`` call; ``keras_momentum``: it became Keras' own SGD
    with momentum (not the generated TF1Momentum, which keeps TF1's accumulator)."""
    bound = optimizer_arguments(api, call)
    names = {"accum": bound.get("accum_name"), "linear": bound.get("linear_name")}
    if not all(value is None or is_name(value, "None") or isinstance(value, cst.SimpleString)
               for value in (bound.get("name"), *names.values())):
        raise NoKerasEquivalent(f"{api} with a name that is not a string: TF1's checkpoints name its slots after it, "
                                "so the migration must know it; write it out")
    default = _literal(bound.get("name"), optimizer_default_name(api))
    made: dict[str, int] = {}
    found = []
    for tf1_slot, keras_slot in TF1_SLOTS[api]:
        if tf1_slot == "mg" and not is_name(bound.get("centered"), "True"):
            continue
        if api == "train.RMSPropOptimizer" and tf1_slot == "momentum" and \
                _is_zero(bound.get("momentum", cst.Integer("0"))):
            keras_slot = None  # TF1 makes it whatever the momentum; at 0 its value is never read, and Keras has none
        given = names.get(tf1_slot)
        base = _literal(given, default) if given is not None and not is_name(given, "None") else default
        count = made.get(base, 0)  # TF1 makes the slot `<variable>/<base>`, unique within the variable's scope
        made[base] = count + 1
        found.append((f"{{}}/{base}_{count}" if count else f"{{}}/{base}", keras_slot))
    return Slots(tuple(found), powers=api == "train.AdamOptimizer",
                 negated_rate=keras_momentum and api == "train.MomentumOptimizer")


def scoped(slots: Slots, scope: str) -> Slots:
    """``slots`` of an optimizer TF1 made in the variable scope ``scope`` (contrib.layers.optimize_loss's), which
    kept a learning rate given as a number in the variable ``<scope>/learning_rate`` (not needed here, if saved)."""
    return Slots(tuple((f"{scope}/{name}", keras) for name, keras in slots.names), powers=slots.powers,
                 negated_rate=slots.negated_rate, settings=(*slots.settings, f"{scope}/learning_rate"),
                 scope=f"{scope}/")


def keras_slots(keras_class: str) -> Slots:
    """The slots of the Keras optimizer a v2 canned Estimator made by name (``"Adagrad"``): TF1's Estimator saved
    them as ``training/<class>/<variable>/<slot>``."""
    prefix = f"training/{keras_class}"
    return Slots(tuple((f"{prefix}/{{}}/{slot}", slot) for slot in KERAS_SLOTS[keras_class]),
                 settings=tuple(f"{prefix}/{name}" for name in ("learning_rate", "decay", "iter",
                                                                  *KERAS_SETTINGS[keras_class])),
                 weights=tuple((f"{prefix}/{name}", attribute)
                               for name, attribute in KERAS_WEIGHTS.get(keras_class, ())))


@dataclass
class Part:
    """What one optimizer trains (code: the model or part of it whose variables, or the table of them by TF1
    name), the optimizer (code), and its slots."""

    variables: str
    optimizer: str
    slots: Slots


def restore_context(parts: list[Part], mod_tables: list[str] = (), step: str = '"global_step"') -> dict:
    """What templates/tf1_checkpoint.py.j2 needs beside the names it defines and the model's renames; ``step``:
    TF1's name of the global step (code)."""
    adam = next(((part, slots) for part in parts for slots in part.slots.each() if slots.powers), None)
    unused = sorted({name for part in parts for slots in part.slots.each() for name in slots.settings})
    factors = {template: f"-float({part.optimizer}.learning_rate)" for part in parts for slots in part.slots.each()
               if slots.negated_rate for template, slot in slots.names if slot == "momentum"}
    return dict(
        parts=[dict(variables=part.variables, optimizer=part.optimizer, slots=_slots(part.slots, part.optimizer))
               for part in parts],
        unused=[_string(name) for name in unused],
        powers=adam and adam[0].optimizer, powers_chosen=bool(adam and adam[0].slots.chosen),
        power_scope=(adam[1].scope if adam[1].power_scope is None else adam[1].power_scope) if adam else "",
        factors="{" + ", ".join(f"{_string(t)}: {f}" for t, f in factors.items()) + "}" if factors else None,
        mod_tables="[" + ", ".join(mod_tables) + "]" if mod_tables else None, step=step,
        weights=[dict(model=part.variables, optimizer=part.optimizer, names=[(_string(name), attribute)
                                                                             for name, attribute in part.slots.weights])
                 for part in parts if part.slots.weights])


def restores_shard_slots(partitioner: str | None, slots: Slots | None) -> bool:
    """Must the program restore its optimizer's slots of sharded variables itself from its own checkpoints
    (templates/restore_shard_slots.py.j2)? When a partitioner shards them and the optimizer keeps slots."""
    return bool(partitioner and slots and any(keras for each in slots.each() for _, keras in each.names))


def _slots(slots: Slots, optimizer: str) -> str:
    """The table of TF1's slot names to Keras' (code); of a choice, the table of the class ``optimizer`` is."""
    if slots.chosen:
        tables = ", ".join(f"{_string(keras_class)}: {_slots(each, optimizer)}" for keras_class, each in slots.chosen)
        return f"{{{tables}}}[type({optimizer}).__name__]"
    return "{" + ", ".join(f"{_string(tf1)}: {_string(keras) if keras else 'None'}" for tf1, keras in slots.names) + "}"


def _string(text: str) -> str:
    return '"' + text + '"'


def _literal(node: cst.BaseExpression | None, default: str) -> str:
    return node.evaluated_value if isinstance(node, cst.SimpleString) else default


def _is_zero(node: cst.BaseExpression) -> bool:
    return isinstance(node, (cst.Integer, cst.Float)) and node.evaluated_value == 0
