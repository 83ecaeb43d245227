"""The old side: a TF1 program (an Estimator's, or a between-graph one), run as it is on disk, patched.

    python -m migrator.parity.old_side WORKDIR PROGRAM [AS_PATH]

AS_PATH: run PROGRAM's code as if it were that file (``tf-migrate --verify`` runs temporary copies).
The program's arguments (sys.argv[1:]) and the stand-ins of its other files are in WORKDIR/job.json;
a module of a package runs as `python -m` would run it (migrator/parity/program.py).

TF_CONFIG is removed before the program runs. Patched for an Estimator program (the program
itself is not edited):
- ``Estimator.__init__``: a fresh model_dir in the work folder and a fixed ``tf_random_seed``.
- ``Estimator.train`` (also what ``train_and_evaluate`` calls): the first batches of the
  program's own input (or synthetic ones from its element spec) are recorded once and
  replayed; ``max_steps`` is the harness's; a hook saves the initial weights before the
  first step and fetches the loss of every step.
- ``Estimator.evaluate``: its input is recorded once and replayed; the eval loss is kept.
- ``Estimator._call_model_fn``: remembers the TRAIN loss tensor for that hook.
- ``train_and_evaluate``'s TrainSpec: its ``max_steps`` is the harness's, so that the end of training (a
  FinalExporter's export) comes after the harness's steps.

Subclasses go through the same patches, wherever the program builds its Estimator. A
``TPUEstimator`` with ``use_tpu=False`` too: its ``__init__``, ``train``, ``evaluate`` and
``_call_model_fn`` end in Estimator's, and on the CPU its model_fn's ``TPUEstimatorSpec``
becomes an ``EstimatorSpec`` with the same loss; it refuses an input_fn without a
``params`` argument (where it puts ``batch_size``), so the replaying input_fn takes one.

A between-graph program (a ``MonitoredTrainingSession`` or a ``Supervisor``'s session, and a
loop of ``run`` calls) runs on its own data and cluster, its training runs recorded and
stopped after the harness's steps: migrator/parity/old_session.py lists what it patches
(``MonitoredSession``, ``StopAtStepHook``, ``Supervisor``, the optimizers' ``minimize``,
``compute_gradients`` and ``apply_gradients``).
"""

from __future__ import annotations

import os
import sys
import time

from migrator.parity.alignment import (div_order, dropout_note, internal_dropout_classes, mod_lookup_notes,
                                        record_mod_lookups, turn_off_dropout, turn_off_nn_dropout)
from migrator.parity.era import give_python_keras, give_tf1_private_names, give_v1
from migrator.parity.exchange import Exchange, dataset_of, versions
from migrator.parity.export_capture import ExportCapture
from migrator.parity.isolation import Isolation
from migrator.parity.lifeline import end_with_parent
from migrator.parity.loopback import LoopbackUnavailable, listen_on_loopback_only
from migrator.parity.old_session import SessionRecorder, describe, model_variables
from migrator.parity.program import KERAS_PACKAGES, patch_when_imported, run_program
from migrator.parity.resume import STEP, describe_slots, keep_checkpoint
from migrator.parity.runner import PHASE

LOSS_COLLECTION = "tf_migrate_parity_loss"
MAX_EVAL_BATCHES = 1000


class OldSide:
    def __init__(self, exchange: Exchange, job: dict) -> None:
        import tensorflow as tf

        self.tf = tf
        self.exchange = exchange
        self.job = job
        self.capture = ExportCapture(exchange, "old")  # the exports compared
        self.losses: list[float] = []
        self.eval_loss: float | None = None
        self.variables: list[dict] = []
        self.model_dir: str | None = None
        self.train_seconds = 0.0
        self.trained = False
        self.dropout: set[str] = set()
        turn_off_dropout(tf, [tf.compat.v1.layers.Dropout, *internal_dropout_classes()], self.dropout)
        turn_off_nn_dropout(tf, self.dropout)
        self.mod_tables = record_mod_lookups(tf)
        self.final_weights: list | None = None  # between-graph programs: (name, value) after the last step
        self.estimator = None  # the Estimator the harness trains: MonitoredSession.run is its business
        # A resume run (--resume N): "first" trains N steps for the checkpoint both sides resume from, "resume"
        # carries on from it for the harness's steps.
        self.phase = os.environ.get(PHASE)
        self.skipped = job["resume"] if self.phase == "resume" else 0  # batches the first phase trained on
        self.steps = job["resume"] if self.phase == "first" else job["steps"]  # training steps of this run
        self.optimizers: list = []  # what the program's train ops apply (their slots are compared when resuming)
        self.slots: list[dict] = []

    # -- patches -------------------------------------------------------------

    def install_train_spec(self, training) -> None:
        """train_and_evaluate: the TrainSpec's max_steps is the harness's, so that what TF1 did when training ended
        (a FinalExporter's export) happens after the harness's steps, as the new program does after its fit."""
        side, original = self, training._TrainingExecutor.__init__

        def __init__(executor, estimator, train_spec, eval_spec, *args, **kwargs):
            if train_spec.max_steps is not None:
                train_spec = train_spec._replace(max_steps=side.skipped + side.steps)
            original(executor, estimator, train_spec, eval_spec, *args, **kwargs)

        training._TrainingExecutor.__init__ = __init__

    def install(self, estimator_class: type) -> None:
        side = self
        original_init, original_train = estimator_class.__init__, estimator_class.train
        original_evaluate, original_call_model_fn = estimator_class.evaluate, estimator_class._call_model_fn

        def __init__(self, model_fn, model_dir=None, config=None, params=None, warm_start_from=None):
            config = side.local_config(config)
            original_init(self, model_fn, model_dir=None, config=config, params=params, warm_start_from=warm_start_from)

        def train(self, input_fn, hooks=None, steps=None, max_steps=None, saving_listeners=None):
            if side.trained:  # the harness trains once, for its own number of steps
                side.moved_on(self)
                return self
            side.trained, side.estimator = True, self
            side.model_dir = self.model_dir
            count = (side.job["resume"] or 0) + side.job["steps"]  # the first phase records the second's too
            replay = side.record("data/train.npz", self, input_fn, "train", count, skip=side.skipped)
            if side.phase != "first":
                hooks = [*(hooks or []), side.hook()]
            return original_train(self, replay, hooks=hooks, max_steps=side.skipped + side.steps,
                                  saving_listeners=saving_listeners)

        def evaluate(self, input_fn, steps=None, hooks=None, checkpoint_path=None, name=None):
            if side.capture.stopped or side.trained and self is not side.estimator:  # not the model compared
                return original_evaluate(self, input_fn, steps=steps, hooks=hooks, checkpoint_path=checkpoint_path,
                                         name=name)
            replay = side.record("data/eval.npz", self, input_fn, "eval", steps or MAX_EVAL_BATCHES)
            side.exchange.mark("eval.ready")
            result = original_evaluate(self, replay, steps=None, hooks=hooks, checkpoint_path=checkpoint_path, name=name)
            side.eval_loss = float(result["loss"])
            return result

        def _call_model_fn(self, features, labels, mode, config):
            spec = original_call_model_fn(self, features, labels, mode, config)
            if mode == side.tf.estimator.ModeKeys.TRAIN:
                side.tf.compat.v1.add_to_collection(LOSS_COLLECTION, spec.loss)
            return spec

        estimator_class.__init__, estimator_class.train = __init__, train
        estimator_class.evaluate, estimator_class._call_model_fn = evaluate, _call_model_fn

    def moved_on(self, estimator) -> None:
        """The program trains another Estimator (a notebook training again): the harness compares the first one,
        and nothing the program does after this."""
        if estimator is not self.estimator:
            self.capture.stopped = True

    def local_config(self, config):
        config = config or self.tf.estimator.RunConfig()
        model_dir = self.exchange.folder / "old_model"
        return config.replace(model_dir=str(model_dir), tf_random_seed=self.job["seed"])

    # -- data ----------------------------------------------------------------

    def record(self, name: str, estimator, input_fn, mode: str, count: int, skip: int = 0):
        """Record ``count`` batches of ``input_fn`` once (or make synthetic ones); an input_fn replaying them, but
        the first ``skip``."""
        if not self.exchange.path(name).exists():
            batches = self._batches(estimator, input_fn, mode, count)
            if not batches:
                raise RuntimeError(f"the {mode} input_fn produced no batches")
            self.exchange.write_batches(name, batches)
        batches, _ = self.exchange.read_batches(name)

        def replay(params=None):  # TPUEstimator passes every input_fn its params (and refuses one without)
            return dataset_of(self.tf, batches).skip(skip)

        return replay

    def _batches(self, estimator, input_fn, mode: str, count: int) -> list:
        tf = self.tf
        keys = {"train": tf.estimator.ModeKeys.TRAIN, "eval": tf.estimator.ModeKeys.EVAL}
        with tf.Graph().as_default():
            # As Estimator.train seeds its graph: an input_fn that shuffles without a seed repeats run to run.
            seed = estimator.config.tf_random_seed
            tf.compat.v1.set_random_seed(self.job["seed"] if seed is None else seed)
            features, labels, input_hooks = estimator._get_features_and_labels_from_input_fn(input_fn, keys[mode])
            if self.job["data"] == "synthetic":
                from migrator.parity.synthetic import synthetic_batches

                return synthetic_batches((features, labels), count, self.job["seed"] + (mode == "eval"))
            batches = []
            with tf.compat.v1.train.MonitoredSession(hooks=input_hooks) as session:
                while len(batches) < count:
                    try:
                        batches.append(session.run((features, labels)))
                    except tf.errors.OutOfRangeError:
                        break
            return batches

    # -- per-step losses and weights ------------------------------------------

    def hook(self):
        tf, side = self.tf, self

        class ParityHook(tf.compat.v1.train.SessionRunHook):
            def begin(self):
                self.loss = tf.compat.v1.get_collection(LOSS_COLLECTION)[-1]
                variables = model_variables(tf)
                side.variables = describe(variables)
                side.slots = describe_slots(side.optimizers, variables)
                self.saver = tf.compat.v1.train.Saver(var_list=variables)

            def after_create_session(self, session, coord):
                path = self.saver.save(session, str(side.exchange.path("initial/model.ckpt")),
                                       write_meta_graph=False, write_state=False)
                side.save_weights("initial.npz", path)
                side.ready()
                self.started = time.perf_counter()

            def before_run(self, run_context):
                return tf.compat.v1.train.SessionRunArgs(self.loss)

            def after_run(self, run_context, run_values):
                side.losses.append(float(run_values.results))

            def end(self, session):
                side.train_seconds = time.perf_counter() - self.started

        return ParityHook()

    def ready(self) -> None:
        """The old model's variables (and, resuming, its optimizers' slots) are described: the new side may start."""
        self.exchange.write_json("initial.json", self.variables)
        self.exchange.write_json("slots.json", self.slots)
        self.exchange.mark("train.ready")

    def save_weights(self, name: str, checkpoint: str, extras: bool = False) -> None:
        """Full tensors from a checkpoint (partitioned variables come back whole), tables in TF2's row order;
        ``extras``: the slots and the step too."""
        reader = self.tf.train.load_checkpoint(checkpoint)
        named = [(v["name"], v["name"]) for v in self.variables]
        if extras:
            named += [(slot["key"], slot["variable"]) for slot in self.slots] + [(STEP, STEP)]
        self.exchange.write_arrays(name, [(key, self.in_tf2_order(variable, reader.get_tensor(key)))
                                          for key, variable in named])

    def in_tf2_order(self, name: str, value):
        """A table looked up "mod", or a slot of one, in TF2's row order."""
        return div_order(value, self.mod_tables[name]) if name in self.mod_tables else value

    def finish(self, wall_started: float, program: str) -> None:
        if self.phase == "first":
            if keep_checkpoint(self.model_dir, self.exchange):
                return
            raise RuntimeError("the old program wrote no checkpoint to resume from")
        if self.final_weights is not None:
            self.exchange.write_arrays("old_final.npz", self.final_weights)
        elif self.model_dir and self.variables:
            self.save_weights("old_final.npz", self.tf.train.latest_checkpoint(self.model_dir),
                              extras=self.phase == "resume")
        self.exchange.write_json("old.json", {
            "side": "old", "program": program, "python": sys.executable, "versions": versions(),
            "losses": self.losses, "eval_loss": self.eval_loss, "variables": self.variables,
            "wall_seconds": time.perf_counter() - wall_started, "train_seconds": self.train_seconds,
            "adjustments": dropout_note(self.dropout) + mod_lookup_notes(self.mod_tables),
        })


def main(argv: list[str]) -> int:
    end_with_parent()
    workdir, program, *rest = argv
    as_path = rest[0] if rest else program  # run PROGRAM's code as if it were the file AS_PATH
    started = time.perf_counter()
    os.environ.pop("TF_CONFIG", None)
    exchange = Exchange(workdir)
    job = exchange.read_json("job.json")
    side = OldSide(exchange, job)
    try:  # the servers of a between-graph program's own cluster too
        listen_on_loopback_only(os.path.dirname(side.tf.__file__))
    except LoopbackUnavailable as error:
        print(f"tf-migrate parity: the old program's servers listen where TensorFlow puts them: {error}",
              file=sys.stderr)
    from tensorflow_estimator.python.estimator import estimator as estimator_lib
    from tensorflow_estimator.python.estimator import training

    side.install(estimator_lib.Estimator)
    side.install_train_spec(training)
    side.capture.install_estimator(estimator_lib.Estimator)
    isolation = Isolation(exchange.path("old_files"), exchange.folder)
    isolation.install(side.tf)
    isolation.install_estimator(estimator_lib.Estimator)
    patch_when_imported(KERAS_PACKAGES, isolation.install_keras)  # model_to_estimator saves the Keras model's weights
    recorder = SessionRecorder(side)
    recorder.install()
    give_v1(job["tf1_era"])
    give_python_keras()
    give_tf1_private_names(job["tf1_renamed"])
    try:
        run_program(program, as_path, job["argv"], job["stand_ins"]["old"])
    except side.tf.errors.OutOfRangeError:
        if not recorder.stopped_program:  # the program's own, not the end of the harness's steps
            raise
    recorder.stop_supervisors()
    side.finish(started, as_path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
