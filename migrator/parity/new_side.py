"""The new side: a TF2 Keras program, run as it is on disk with ``Model.fit`` / ``evaluate`` patched.

    python -m migrator.parity.new_side WORKDIR PROGRAM [AS_PATH]

AS_PATH: run PROGRAM's code as if it were that file (``tf-migrate --verify`` runs temporary copies).
The program's arguments (sys.argv[1:]) and the stand-ins of its other files are in WORKDIR/job.json;
a module of a package runs as `python -m` would run it (migrator/parity/program.py).

Before the program runs, an in-process cluster (1 worker, K parameter servers) is
started and TF_CONFIG names this process its chief, so the program's own
ParameterServerStrategy trains on it; with ``--cluster none`` TF_CONFIG is removed.

- ``Model.fit`` (first call): waits for the old side's recorded batches and initial
  weights, loads those weights into the model (matched by creation order and shape,
  shards split or joined), then trains ``fit(epochs=N, steps_per_epoch=1)`` on the
  recorded batches: batch-level callbacks are refused under ParameterServerStrategy,
  and the epoch losses are the step losses. The program's callbacks are not run.
- ``Model.evaluate``: on the old side's recorded eval batches.
- Both pass the recorded batches through the maps the program's own dataset applies after
  its batches have their shape (features, labels): example weights mapped out of the
  features reach Keras as they do in the program.

A program driving a ``ClusterCoordinator`` itself (what between-graph TF1 programs become),
or running the steps of a ``MultiWorkerMirroredStrategy`` itself (what SyncReplicasOptimizer
programs become), trains on its own data and cluster; patched:
- variable creation: every variable is recorded, in creation order;
- ``ClusterCoordinator.schedule``, and calls of the program's ``tf.function`` that runs
  ``MultiWorkerMirroredStrategy.run``: before the first step the old initial weights are
  loaded into the trainable variables; each step's result (the loss) is kept, and after
  the harness's number of steps the weights are read as the final ones.
"""

from __future__ import annotations

import importlib.abc
import importlib.metadata
import importlib.util
import json
import os
import pathlib
import sys
import time

from migrator.parity.alignment import dropout_note, internal_dropout_classes, turn_off_dropout, turn_off_nn_dropout
from migrator.parity.exchange import Exchange, dataset_of, versions
from migrator.parity.export_capture import ExportCapture
from migrator.parity.isolation import Isolation
from migrator.parity.lifeline import end_with_parent
from migrator.parity.loopback import LoopbackUnavailable, listen_on_loopback_only
from migrator.parity.pairing import assign_full_value, full_value, group_variables, model_variables, pair_variables
from migrator.parity.program import KERAS_PACKAGES, patch_when_imported, run_program
from migrator.parity.resume import keras_slots, redirect_checkpoints, slot_mapping, step_mapping



class NewSide:
    def __init__(self, exchange: Exchange, job: dict) -> None:
        import tensorflow as tf

        self.tf = tf
        self.exchange = exchange
        self.job = job
        self.capture = ExportCapture(exchange, "new")  # the exports compared
        self.losses: list[float] = []
        self.eval_loss: float | None = None
        self.model = None
        self.history = None
        self.mapping: list[dict] = []
        self.mapping_error: str | None = None
        self.train_seconds = 0.0
        self.dropout: set[str] = set()
        self.created: list = []  # every variable the program made, in order
        self.keras = False  # a Keras fit or evaluate has run: the program trains through Keras
        self.scheduled: list = []  # what each step returned: ClusterCoordinator.schedule's RemoteValues, tensors
        self.started: float | None = None  # when the first step started
        self.replica_runs = 0  # strategy.run calls of MultiWorkerMirroredStrategy programs
        self.final: list[dict] | None = None
        self.resume = job["resume"] or 0  # a resume run: the program restores the old side's checkpoint itself
        self.optimizers: list = []  # the Keras optimizers the program made

    def install(self, keras) -> None:
        """Patch this Keras package: ``Model.fit`` and ``evaluate``, and Dropout off; its optimizers noted."""
        side, model_class = self, keras.Model
        original_fit, original_evaluate = model_class.fit, model_class.evaluate
        turn_off_dropout(self.tf, [keras.layers.Dropout, *internal_dropout_classes()], self.dropout)
        turn_off_nn_dropout(self.tf, self.dropout)
        optimizer_class = keras.optimizers.legacy.Optimizer
        original_optimizer = optimizer_class.__init__

        def optimizer_init(optimizer, *args, **kwargs):
            original_optimizer(optimizer, *args, **kwargs)
            side.optimizers.append(optimizer)

        optimizer_class.__init__ = optimizer_init

        def fit(self, *args, **kwargs):
            side.keras = True
            if side.model is not None:  # the harness trains once, for its own number of steps
                side.capture.stopped |= self is not side.model  # another model: nothing after this is compared
                return side.history
            side.model = self
            dataset, count = side.recorded("train.ready", "data/train.npz")
            dataset = replay_program_maps(side.tf, dataset.skip(side.resume), args[0] if args else kwargs.get("x"))
            steps = min(count - side.resume, side.job["steps"])
            side.load_initial_weights(self, dataset)
            started = time.perf_counter()
            side.history = original_fit(self, dataset.repeat(), epochs=steps, steps_per_epoch=1, verbose=0, callbacks=[])
            side.train_seconds = time.perf_counter() - started
            side.losses = [float(loss) for loss in side.history.history["loss"]]
            return side.history

        def evaluate(self, *args, **kwargs):
            side.keras = True
            if side.capture.stopped or side.model is not None and self is not side.model:  # not the model compared
                return original_evaluate(self, *args, **kwargs)
            if not side.exchange.wait_for("eval.ready", unless="old.done"):
                return original_evaluate(self, *args, **kwargs)  # the old program never evaluated: nothing to compare
            dataset, count = side.recorded("eval.ready", "data/eval.npz")
            dataset = replay_program_maps(side.tf, dataset, args[0] if args else kwargs.get("x"))
            result = original_evaluate(self, dataset.repeat(), steps=count, verbose=0,
                                       return_dict=kwargs.get("return_dict", False))
            side.eval_loss = float(result["loss"] if isinstance(result, dict) else
                                   result[0] if isinstance(result, list) else result)
            return result

        model_class.fit, model_class.evaluate = fit, evaluate

    def install_coordinator(self) -> None:
        """Record the variables the program creates; patch ClusterCoordinator.schedule, and the steps of
        MultiWorkerMirroredStrategy programs."""
        tf, side = self.tf, self
        coordinator_class = tf.distribute.coordinator.ClusterCoordinator
        original_schedule = coordinator_class.schedule

        def record(next_creator, **kwargs):
            variable = next_creator(**kwargs)
            side.created.append(variable)
            return variable

        def schedule(coordinator, fn, args=None, kwargs=None):
            if side.keras:  # Keras' fit and evaluate schedule their own steps
                return original_schedule(coordinator, fn, args=args, kwargs=kwargs)
            if not side.scheduled:
                side.start_steps()
            value = original_schedule(coordinator, fn, args=args, kwargs=kwargs)
            side.stepped(value, coordinator.join)
            return value

        self.creator_scope = tf.variable_creator_scope(record)
        self.creator_scope.__enter__()  # for the whole program: left when the process ends
        coordinator_class.schedule = schedule
        self.install_mirrored()

    def install_mirrored(self) -> None:
        """A step of a MultiWorkerMirroredStrategy program is a call of a tf.function whose tracing ran
        ``strategy.run``: the old initial weights are loaded as it is first traced (lifted out of the function)."""
        from tensorflow.python.eager.polymorphic_function.polymorphic_function import Function

        tf, side = self.tf, self
        strategy_class = tf.distribute.MultiWorkerMirroredStrategy
        original_run, original_call = strategy_class.run, Function.__call__

        def run(strategy, fn, args=(), kwargs=None, options=None):
            side.replica_runs += 1
            if not side.keras and not side.started:
                with tf.init_scope():
                    side.start_steps()
            return original_run(strategy, fn, args=args, kwargs=kwargs, options=options)

        def call(function, *args, **kwargs):
            runs = side.replica_runs
            result = original_call(function, *args, **kwargs)
            if side.replica_runs > runs:
                function._tf_migrate_parity_step = True
            if getattr(function, "_tf_migrate_parity_step", False) and not side.keras:
                side.stepped(result, lambda: None)
            return result

        strategy_class.run, Function.__call__ = run, call

    def start_steps(self) -> None:
        """Before the program's first step: the old initial weights in its trainable variables (unless it resumed
        from the old side's checkpoint)."""
        self.load_initial_into(group_variables([(True, [v for v in self.created if v.trainable])]))
        self.started = time.perf_counter()

    def stepped(self, value, join) -> None:
        """A step ran (or was scheduled: ``join`` waits for it); after the harness's steps, the final weights."""
        self.scheduled.append(value)
        if len(self.scheduled) == self.job["steps"]:
            join()
            self.train_seconds = time.perf_counter() - self.started
            self.final = group_variables([(True, [v for v in self.created if v.trainable])])
            self.final_values = [(v["name"], full_value(v["parts"])) for v in self.final]
            if self.resume:
                self.final_values += self.slots_and_steps(self.final)

    def recorded(self, marker: str, name: str):
        if not self.exchange.wait_for(marker, unless="old.done"):
            raise RuntimeError("the old program finished without training: no batches to replay")
        batches, count = self.exchange.read_batches(name)
        return dataset_of(self.tf, batches), count

    # -- weights ---------------------------------------------------------------

    def load_initial_weights(self, model, dataset) -> None:
        """Copy the old initial weights in, pairing variables by creation order and shape."""
        with model.distribute_strategy.scope():
            if not model.built:
                features = self.tf.nest.map_structure(lambda spec: spec.shape, dataset.element_spec[0])
                model.build(features)
        self.load_initial_into(model_variables(model))

    def load_initial_into(self, new: list[dict]) -> None:
        """Copy the old initial weights into these variables (grouped as model_variables does); in a resume run,
        only pair them with the old ones."""
        if not self.exchange.wait_for("train.ready", unless="old.done"):
            raise RuntimeError("the old program finished without training: no initial weights to start from")
        old = self.exchange.read_json("initial.json")
        pairs, problem = pair_variables(old, new)
        self.mapping = [{"old": o["name"], "new": n["name"], "shape": o["shape"], "old_shards": o["shards"],
                         "new_shards": n["shards"]} for o, n in pairs]
        if problem:
            self.mapping_error = problem
            return
        if self.resume:
            return
        values = dict(self.exchange.read_arrays("initial.npz"))
        for old_variable, new_variable in pairs:
            assign_full_value(new_variable["parts"], values[old_variable["name"]])

    def finish(self, wall_started: float, program: str) -> None:
        final = model_variables(self.model) if self.model is not None else self.final or []
        if self.model is not None:
            self.final_values = [(v["name"], full_value(v["parts"])) for v in final]
            if self.resume:
                self.final_values += self.slots_and_steps(final)
        elif self.final is not None:
            self.losses = [float(value.fetch() if hasattr(value, "fetch") else value)
                           for value in self.scheduled[:self.job["steps"]]]
        if self.model is not None or self.final is not None:
            self.exchange.write_arrays("new_final.npz", self.final_values)
        variables = [{"name": v["name"], "shape": v["shape"], "shards": v["shards"]} for v in final]
        self.exchange.write_json("new.json", {
            "side": "new", "program": program, "python": sys.executable, "versions": versions(),
            "losses": self.losses, "eval_loss": self.eval_loss, "variables": variables,
            "wall_seconds": time.perf_counter() - wall_started, "train_seconds": self.train_seconds,
            "mapping": self.mapping, "mapping_error": self.mapping_error,
            "adjustments": dropout_note(self.dropout),
        })


    def slots_and_steps(self, final: list[dict]) -> list[tuple[str, object]]:
        """The optimizers' slots of the final variables (in TF1's terms) and their steps; what they pair with."""
        optimizers = self.model.optimizer if self.model is not None else self.optimizers
        optimizers = list(optimizers) if isinstance(optimizers, (list, tuple)) else [optimizers]
        values = [value for variable in final for value in keras_slots(optimizers, variable["parts"],
                                                                       variable["name"])]
        self.mapping += slot_mapping(self.mapping, self.exchange.read_json("slots.json")) + step_mapping(
            len(optimizers))
        return values + [("iterations" if index == 0 else f"iterations_{index}", optimizer.iterations.numpy())
                         for index, optimizer in enumerate(optimizers)]


def replay_program_maps(tf, recorded, program):
    """The recorded batches as the program's dataset gives them to Keras: the maps it applies after its batches
    have the recorded structure and dtypes (features, labels), e.g. example weights taken out of the features or
    labels looked up in a vocabulary, applied to the recorded batches too."""
    maps, current = [], program
    while isinstance(current, tf.data.Dataset):
        if _same_kind(tf, current.element_spec, recorded.element_spec):
            break
        if hasattr(current, "_map_func"):
            maps.append((current._map_func.function, current.element_spec))
        current = getattr(current, "_input_dataset", None)
    if not isinstance(current, tf.data.Dataset):
        return recorded
    for function, structure in reversed(maps):
        def apply(*batch, function=function, structure=structure):
            return tf.nest.pack_sequence_as(structure, tf.nest.flatten(function(*tf.nest.flatten(batch))))
        recorded = recorded.map(tf.autograph.experimental.do_not_convert(apply))
    return recorded


def _same_kind(tf, spec, other) -> bool:
    """The same structure and dtypes (a label lookup keeps the structure, not the dtype)."""
    try:
        tf.nest.assert_same_structure(spec, other)
    except (ValueError, TypeError):
        return False
    return all(a.dtype == b.dtype for a, b in zip(tf.nest.flatten(spec), tf.nest.flatten(other)))




def let_autograph_skip_tf_keras() -> None:
    """TF 2.15's autograph knows `keras` but not `tf_keras`, and converts all of tf_keras' internals

    when fit / evaluate are traced (about 20 s each here). Converted or not, it is the
    same graph: mark tf_keras as not to be converted, as later TensorFlow releases do.
    """
    from tensorflow.python.autograph.core import config

    if not any(getattr(rule, "_prefix", None) == "tf_keras" for rule in config.CONVERSION_RULES):
        config.CONVERSION_RULES = (config.DoNotConvert("tf_keras"), *config.CONVERSION_RULES)


def start_in_process_cluster(tf, ps_count: int) -> list:
    """One worker and ``ps_count`` parameter servers in this process, listening on 127.0.0.1 only; TF_CONFIG names
    it the chief."""
    import portpicker

    listen_on_loopback_only(os.path.dirname(tf.__file__))
    ports = [portpicker.pick_unused_port() for _ in range(2 + ps_count)]
    cluster = {"chief": [f"127.0.0.1:{ports[0]}"], "worker": [f"127.0.0.1:{ports[1]}"],
               "ps": [f"127.0.0.1:{port}" for port in ports[2:]]}
    os.environ["TF_CONFIG"] = json.dumps({"cluster": cluster, "task": {"type": "chief", "index": 0}})
    spec = tf.train.ClusterSpec(cluster)
    worker_config = tf.compat.v1.ConfigProto(inter_op_parallelism_threads=4)  # as the TF guide's in-process cluster
    servers = [tf.distribute.Server(spec, job_name="worker", task_index=0, config=worker_config, protocol="grpc")]
    servers += [tf.distribute.Server(spec, job_name="ps", task_index=i, protocol="grpc") for i in range(ps_count)]
    return servers


def main(argv: list[str]) -> int:
    end_with_parent()
    workdir, program, *rest = argv
    as_path = rest[0] if rest else program  # run PROGRAM's code as if it were the file AS_PATH
    started = time.perf_counter()
    exchange = Exchange(workdir)
    job = exchange.read_json("job.json")
    os.environ.pop("TF_CONFIG", None)
    if "TF_USE_LEGACY_KERAS" in pathlib.Path(program).read_text(errors="replace") and \
            importlib.metadata.version("keras").startswith("3."):
        # The program sets it where Keras is 3, before importing TensorFlow (a model_fn kept as written needs
        # Keras 2 behind tf.keras); the harness imports TensorFlow first.
        os.environ["TF_USE_LEGACY_KERAS"] = "1"
    import tensorflow as tf

    let_autograph_skip_tf_keras()
    try:
        servers = start_in_process_cluster(tf, job["ps"]) if job["cluster"] == "in-process" else []
    except LoopbackUnavailable as error:
        raise RuntimeError(f"the in-process cluster would listen on every interface ({error}): run with "
                           "--cluster none") from None
    side = NewSide(exchange, job)
    side.capture.install_tf(tf)
    isolation = Isolation(exchange.path("new_files"), exchange.folder)
    isolation.install(tf)
    if side.resume:
        redirect_checkpoints(tf, exchange)
    patch_when_imported(KERAS_PACKAGES, lambda keras: (side.install(keras), isolation.install_keras(keras)))
    side.install_coordinator()
    run_program(program, as_path, job["argv"], job["stand_ins"]["new"])
    side.finish(started, as_path)
    del servers
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
