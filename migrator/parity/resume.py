"""Continuation parity (``tf-migrate parity --resume N``): both sides carry on from one TF1 checkpoint.

Imported by the side processes (TensorFlow is there). The old program runs twice: its first phase
trains N steps and leaves its checkpoint in ``tf1/`` of the work folder (``keep_checkpoint``); its
second phase resumes from it, as the TF1 program would, for the harness's steps. The new program
starts once, its checkpoints redirected to the work folder, and finds the TF1 checkpoint where it
looks for one (``redirect_checkpoints``): what it restores is its own code's doing, and is checked.

Compared after the steps, besides the weights: every slot of the optimizers (TF1's, as its optimizer
named them; Keras', by the name this module pairs with TF1's, which the migration does not use) and
the step, so that a restore dropping or misplacing a slot, or restarting the count, is a mismatch.
"""

from __future__ import annotations

import os
import shutil

# TF1's (or a TF2 Estimator's Keras) optimizer class and slot -> the slot of its Keras counterpart.
SLOTS = {("AdamOptimizer", "m"): "m", ("AdamOptimizer", "v"): "v",
         ("AdagradOptimizer", "accumulator"): "accumulator", ("ProximalAdagradOptimizer", "accumulator"): "accumulator",
         ("MomentumOptimizer", "momentum"): "momentum",
         ("RMSPropOptimizer", "rms"): "rms", ("RMSPropOptimizer", "mg"): "mg", ("RMSPropOptimizer", "momentum"): "momentum",
         ("FtrlOptimizer", "accum"): "accumulator", ("FtrlOptimizer", "linear"): "linear",
         ("AdadeltaOptimizer", "accum"): "accum_grad", ("AdadeltaOptimizer", "accum_update"): "accum_var"}
STEP = "global_step"


# -- the old side --------------------------------------------------------------------------------

def describe_slots(optimizers: list, variables: list) -> list[dict]:
    """The slots the program's optimizers keep for these model variables: the variable's name, the Keras slot
    that stands for it, and its name in TF1's checkpoints. An RMSProp momentum slot at momentum 0 is left out:
    TF1 makes it, never reads it, and Keras has none."""
    found: dict[str, dict] = {}
    for optimizer in optimizers:
        kind = type(optimizer).__name__
        if kind == "RMSPropOptimizer" and _is_zero(optimizer._momentum):
            unused = {"momentum"}
        else:
            unused = set()
        for slot_name in optimizer.get_slot_names():
            for variable in variables:
                slot = _slot(optimizer, variable, slot_name)
                if slot is None or slot_name in unused:
                    continue
                key = full_name(slot)
                found[key] = {"variable": full_name(variable), "key": key,
                              "keras": SLOTS.get((kind, slot_name), slot_name)}
    return list(found.values())


def full_name(variable) -> str:
    """The name TF1's checkpoints give a variable: a partitioned one's, for each of its shards."""
    info = variable._save_slice_info
    return info.full_name if info else variable.op.name


def keep_checkpoint(model_dir: str, exchange) -> bool:
    """Copy the latest checkpoint of ``model_dir`` to the work folder's ``tf1/`` for the new side; False if none."""
    import tensorflow as tf

    prefix = tf.train.latest_checkpoint(model_dir) if model_dir else None
    if prefix is None:
        return False
    kept = exchange.path("tf1")
    kept.mkdir(exist_ok=True)
    for name in os.listdir(os.path.dirname(prefix)):
        if name.startswith(os.path.basename(prefix) + ".") and not name.endswith(".meta"):
            shutil.copy(os.path.join(os.path.dirname(prefix), name), kept / name)
    exchange.write_json("tf1.json", {"checkpoint": str(kept / os.path.basename(prefix))})
    exchange.mark("tf1.ready")
    return True


def _slot(optimizer, variable, name: str):
    try:
        return optimizer.get_slot(variable, name)
    except KeyError:  # a Keras optimizer's way of saying it has none
        return None


def _is_zero(value) -> bool:
    return isinstance(value, (int, float)) and value == 0


# -- the new side --------------------------------------------------------------------------------

def redirect_checkpoints(tf, exchange) -> None:
    """The program's CheckpointManagers write to the work folder; asked for the latest checkpoint of the folder
    above one of them (a migrated Estimator's model_dir, a session's logdir), it gets the TF1 checkpoint."""
    manager_class = tf.train.CheckpointManager
    original_init, original_latest = manager_class.__init__, tf.train.latest_checkpoint
    redirected: dict[str, str] = {}

    def __init__(manager, checkpoint, directory, *args, **kwargs):
        folder = os.path.abspath(str(directory))
        if folder not in redirected:
            redirected[folder] = str(exchange.path("new_checkpoints") / str(len(redirected)))
        original_init(manager, checkpoint, redirected[folder], *args, **kwargs)

    def latest_checkpoint(checkpoint_dir, latest_filename=None):
        folder = os.path.abspath(str(checkpoint_dir))
        if folder in redirected:
            return original_latest(redirected[folder], latest_filename)
        if any(os.path.dirname(managed) == folder for managed in redirected):
            if not exchange.wait_for("tf1.ready", unless="old.done"):
                return None
            return exchange.read_json("tf1.json")["checkpoint"]
        return original_latest(checkpoint_dir, latest_filename)

    manager_class.__init__, tf.train.latest_checkpoint = __init__, latest_checkpoint


def keras_slots(optimizers: list, parts: list, name: str) -> list[tuple[str, object]]:
    """(``name/<slot>``, full value) of the Keras slots of a variable held in ``parts`` (its shards), in TF1's
    terms: Keras' own SGD keeps -learning_rate times TF1's momentum accumulator (the generated TF1Momentum keeps
    TF1's)."""
    import numpy as np

    found = []
    for optimizer in optimizers:
        for slot_name in optimizer.get_slot_names():
            slots = [_slot(optimizer, part, slot_name) for part in parts]
            if any(slot is None for slot in slots):
                continue
            value = np.concatenate([slot.numpy() for slot in slots]) if len(slots) > 1 else slots[0].numpy()
            if slot_name == "momentum" and _keras_momentum(optimizer):
                rate = optimizer._get_hyper("learning_rate")
                value = value / -float(rate.numpy() if hasattr(rate, "numpy") else rate)
            found.append((f"{name}/{slot_name}", value))
    return found


def _keras_momentum(optimizer) -> bool:
    """Keras' SGD update (not a subclass applying TF1's, as the generated TF1Momentum does)."""
    return type(optimizer).__name__ == "SGD"


def slot_mapping(pairs: list[dict], slots: list[dict]) -> list[dict]:
    """Mapping entries pairing each old slot with the Keras slot of the new variable paired with its variable."""
    new_of = {pair["old"]: pair for pair in pairs}
    entries = []
    for slot in slots:
        pair = new_of.get(slot["variable"])
        if pair is not None:
            entries.append({"old": slot["key"], "new": f"{pair['new']}/{slot['keras']}", "shape": pair["shape"],
                            "old_shards": [], "new_shards": pair["new_shards"], "kind": "slot"})
    return entries


def step_mapping(count: int) -> list[dict]:
    """The global step against each optimizer's ``iterations`` (a combined model has two)."""
    return [{"old": STEP, "new": "iterations" if index == 0 else f"iterations_{index}", "shape": [], "old_shards": [],
             "new_shards": [], "kind": "step"} for index in range(count)]

