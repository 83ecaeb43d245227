"""The child of `tf-migrate checkpoint`: a migrated program restores a TF1 checkpoint and saves it as its own.

    python -m migrator.parity.convert_side WORKDIR PROGRAM

The program runs as it is on disk (WORKDIR/job.json holds its arguments, the TF1 checkpoint
and the folder to write to), as the chief of an in-process cluster (as the parity harness's new
side), so that it restores into the shards it trains with (its checkpoint holds each variable
whole, which restores into any shards), with these patches:

- ``tf.train.CheckpointManager``: its folder is the one asked for (the ``tf2`` folder of
  ``--to``), which must hold no checkpoint yet (the program would restore it instead).
- ``tf.train.latest_checkpoint`` of the folder above a CheckpointManager's (a migrated
  Estimator's model_dir, a session's logdir): the TF1 checkpoint given. The program's own
  ``restore_tf1_checkpoint`` does the rest: what it assigns from the TF1 checkpoint is
  recorded (each value read carries its TF1 name), as the name map.
- the first step of training (``Model.fit``, ``ClusterCoordinator.schedule``, a
  MultiWorkerMirroredStrategy's ``run``) or of evaluation (``evaluate``, ``predict``: a TF1
  checkpoint past the program's steps), or else the program's end: the program's
  CheckpointManager saves, numbered with TF1's global step, and the program stops there,
  untrained. Before it saves, each optimizer is told of the shards it has slots of, which it
  does itself at its first step (else its checkpoint leaves their slots out: keras-team/tf-keras#838).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys

from migrator.parity.exchange import Exchange
from migrator.parity.lifeline import end_with_parent
from migrator.parity.new_side import start_in_process_cluster
from migrator.parity.program import KERAS_PACKAGES, run_program



class Converted(Exception):
    """The program restored the TF1 checkpoint and saved its own: it stops before training."""


class Conversion:
    def __init__(self, exchange: Exchange, job: dict) -> None:
        import numpy as np
        import tensorflow as tf

        self.tf, self.exchange, self.job = tf, exchange, job
        self.assigned: dict[str, list[str]] = {}  # TF1 name -> the variables its value went to
        self.shapes: dict[str, list[int]] = {}
        self.managers: list = []
        self.slotted: list[tuple] = []  # (a Keras optimizer, a variable it made a slot of)
        self.step = 0
        self.checkpoint, self.to = tf1_checkpoint(tf, job["checkpoint"], job["to"])

        class Named(np.ndarray):
            """A value read from the TF1 checkpoint, with its name (kept by slices, permutations, products)."""

            def __array_finalize__(self, source):
                self.tf1_name = getattr(source, "tf1_name", None)

        self.named = Named

    def install(self) -> None:
        tf, conversion = self.tf, self
        from tensorflow.python.ops import resource_variable_ops

        manager_class = tf.train.CheckpointManager
        original_init, original_latest = manager_class.__init__, tf.train.latest_checkpoint
        original_load = tf.train.load_checkpoint
        folders: list[str] = []

        def __init__(manager, checkpoint, directory, *args, **kwargs):
            folders.append(os.path.abspath(str(directory)))
            target = os.path.join(conversion.to, os.path.basename(folders[-1]))
            if original_latest(target) is not None:
                raise RuntimeError(f"{target} already holds the migrated program's checkpoints, which it would resume "
                                   "from instead: give another --to")
            original_init(manager, checkpoint, target, *args, **kwargs)
            conversion.managers.append(manager)

        def latest_checkpoint(checkpoint_dir, latest_filename=None):
            if any(os.path.dirname(folder) == os.path.abspath(str(checkpoint_dir)) for folder in folders):
                return conversion.checkpoint
            return original_latest(checkpoint_dir, latest_filename)

        def load_checkpoint(path):
            reader = original_load(path)
            return _NamedReader(reader, conversion) if path == conversion.checkpoint else reader

        def recorded(original_assign):
            def assign(variable, value, *args, **kwargs):
                name = getattr(value, "tf1_name", None)
                targets = conversion.assigned.setdefault(name, []) if name is not None else []
                if name is not None and variable.name not in targets:
                    targets.append(variable.name)
                    if variable.name.split(":")[0].endswith("iter"):  # an optimizer's step: the global step
                        conversion.step = int(value)
                return original_assign(variable, value, *args, **kwargs)
            return assign

        manager_class.__init__, tf.train.latest_checkpoint = __init__, latest_checkpoint
        tf.train.load_checkpoint = load_checkpoint
        for variable_class in (resource_variable_ops.BaseResourceVariable, resource_variable_ops.ResourceVariable):
            variable_class.assign = recorded(variable_class.assign)
        for package in KERAS_PACKAGES:
            if importlib.util.find_spec(package):
                keras = importlib.import_module(package)
                model_class = keras.Model
                keras.optimizers.legacy.Optimizer.add_slot = self.recording(keras.optimizers.legacy.Optimizer.add_slot)
                model_class.fit = model_class.evaluate = model_class.predict = lambda *args, **kwargs: conversion.save()
        tf.distribute.coordinator.ClusterCoordinator.schedule = lambda *args, **kwargs: conversion.save()
        tf.distribute.MultiWorkerMirroredStrategy.run = lambda *args, **kwargs: conversion.save()

    def recording(self, original_add_slot):
        def add_slot(optimizer, var, *args, **kwargs):
            if not any(optimizer is known and var is made for known, made in self.slotted):
                self.slotted.append((optimizer, var))
            return original_add_slot(optimizer, var, *args, **kwargs)
        return add_slot

    def save(self):
        """The first step: the program's checkpoint of what it restored, and the end of the program."""
        if not self.assigned:
            raise RuntimeError("the program restored nothing from the TF1 checkpoint: is it a program tf-migrate "
                               "made (with restore_tf1_checkpoint), run with the arguments it trains with?")
        if not self.managers:
            raise RuntimeError("the program keeps no checkpoints (no tf.train.CheckpointManager)")
        for optimizer in {id(optimizer): optimizer for optimizer, _ in self.slotted}.values():
            _keep_slots_of_shards(optimizer, [var for known, var in self.slotted if known is optimizer])
        path = self.managers[0].save(checkpoint_number=self.step)
        self.exchange.write_json("converted.json", {
            "tf1_checkpoint": self.checkpoint, "checkpoint": path, "step": self.step,
            "map": [{"tf1": name, "shape": self.shapes[name], "variables": variables}
                    for name, variables in self.assigned.items()]})
        raise Converted


def _keep_slots_of_shards(optimizer, variables: list) -> None:
    """Have a Keras optimizer save its slots of the shards among ``variables`` in their sharded variables'
    places, as its first step would."""
    shards = [var for var in variables if getattr(var, "_sharded_container", None) is not None]
    if shards:
        optimizer._create_slots_for_sharded_variables(shards)


def tf1_checkpoint(tf, given: str, to: str | None) -> tuple[str, str]:
    """The TF1 checkpoint's prefix (a model_dir's latest, or the prefix given), and the folder whose tf2 folder gets
    the converted checkpoint (by default, that model_dir)."""
    if tf.io.gfile.isdir(given):
        prefix = tf.train.latest_checkpoint(given)
        if prefix is None:
            raise RuntimeError(f"{given}: no TF1 checkpoint there")
        return prefix, to or given
    if not tf.io.gfile.exists(given + ".index"):
        raise RuntimeError(f"{given}: neither a model_dir with checkpoints nor a checkpoint ({given}.index)")
    return given, to or os.path.dirname(given)


class _NamedReader:
    """A TF1 CheckpointReader whose tensors carry their names."""

    def __init__(self, reader, conversion: Conversion) -> None:
        self._reader, self._conversion = reader, conversion

    def get_tensor(self, name: str):
        import numpy as np

        value = np.asarray(self._reader.get_tensor(name)).view(self._conversion.named)
        value.tf1_name = name
        self._conversion.shapes[name] = list(value.shape)
        return value

    def __getattr__(self, name: str):
        return getattr(self._reader, name)


def main(argv: list[str]) -> int:
    end_with_parent()
    workdir, program = argv[:2]
    exchange = Exchange(workdir)
    job = exchange.read_json("job.json")
    os.environ.pop("TF_CONFIG", None)
    conversion = Conversion(exchange, job)
    servers = start_in_process_cluster(conversion.tf, 2)  # noqa: F841 (they serve until the process ends)
    conversion.install()
    try:
        run_program(program, program, job["argv"])
        conversion.save()
    except Converted:
        return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
