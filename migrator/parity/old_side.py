"""The old side: a TF1 Estimator program, run as it is on disk with its entry points patched.

    python -m migrator.parity.old_side WORKDIR PROGRAM [AS_PATH]

AS_PATH: run PROGRAM's code as if it were that file (``tf-migrate --verify`` runs temporary copies).
The program's arguments (sys.argv[1:]) and the stand-ins of its other files are in WORKDIR/job.json;
a module of a package runs as `python -m` would run it (migrator/parity/program.py).

Patched before the program runs (the program itself is not edited):
- TF_CONFIG is removed: local mode.
- ``Estimator.__init__``: a fresh model_dir in the work folder and a fixed ``tf_random_seed``.
- ``Estimator.train`` (also what ``train_and_evaluate`` calls): the first batches of the
  program's own input (or synthetic ones from its element spec) are recorded once and
  replayed; ``max_steps`` is the harness's; a hook saves the initial weights before the
  first step and fetches the loss of every step.
- ``Estimator.evaluate``: its input is recorded once and replayed; the eval loss is kept.
- ``Estimator._call_model_fn``: remembers the TRAIN loss tensor for that hook.

Subclasses go through the same patches, wherever the program builds its Estimator. A
``TPUEstimator`` with ``use_tpu=False`` too: its ``__init__``, ``train``, ``evaluate`` and
``_call_model_fn`` end in Estimator's, and on the CPU its model_fn's ``TPUEstimatorSpec``
becomes an ``EstimatorSpec`` with the same loss; it refuses an input_fn without a
``params`` argument (where it puts ``batch_size``), so the replaying input_fn takes one.

A between-graph program (a ``MonitoredTrainingSession`` or a ``Supervisor``'s session, and a
loop of ``run`` calls) runs on its own data and cluster; patched:
- ``StopAtStepHook``: its last step is the harness's; ``Supervisor.should_stop``: true once
  the harness's steps are done; ``Supervisor.__init__``: its ``logdir`` is in the work folder.
- ``Optimizer.minimize`` / ``apply_gradients``: note the loss minimized and the train op.
- ``MonitoredSession.run`` and the runs of a Supervisor's session: the first training run
  (one fetching a train op) records the initial weights; every training run also fetches
  the loss (the ``tf.losses`` one, else what the optimizer minimized), and then the weights.
"""

from __future__ import annotations

import os
import re
import sys
import time

from migrator.parity.alignment import div_order, dropout_note, mod_lookup_notes, record_mod_lookups, turn_off_dropout
from migrator.parity.exchange import Exchange, versions
from migrator.parity.program import run_program

LOSS_COLLECTION = "tf_migrate_parity_loss"
MINIMIZED = "tf_migrate_parity_minimized"  # what optimizers minimize: the loss when tf.losses made none
TRAIN_OPS = "tf_migrate_parity_train_ops"
MAX_EVAL_BATCHES = 1000


class OldSide:
    def __init__(self, exchange: Exchange, job: dict) -> None:
        import tensorflow as tf

        self.tf = tf
        self.exchange = exchange
        self.job = job
        self.losses: list[float] = []
        self.eval_loss: float | None = None
        self.variables: list[dict] = []
        self.model_dir: str | None = None
        self.train_seconds = 0.0
        self.trained = False
        self.dropout: set[str] = set()
        turn_off_dropout(tf, [tf.compat.v1.layers.Dropout], self.dropout)
        self.mod_tables = record_mod_lookups(tf)
        self.final_weights: list | None = None  # between-graph programs: (name, value) after the last step
        self.estimator = False  # an Estimator trains: MonitoredSession.run is its business

    # -- patches -------------------------------------------------------------

    def install(self, estimator_class: type) -> None:
        side = self
        original_init, original_train = estimator_class.__init__, estimator_class.train
        original_evaluate, original_call_model_fn = estimator_class.evaluate, estimator_class._call_model_fn

        def __init__(self, model_fn, model_dir=None, config=None, params=None, warm_start_from=None):
            config = side.local_config(config)
            original_init(self, model_fn, model_dir=None, config=config, params=params, warm_start_from=warm_start_from)

        def train(self, input_fn, hooks=None, steps=None, max_steps=None, saving_listeners=None):
            if side.trained:  # the harness trains once, for its own number of steps
                return self
            side.trained = side.estimator = True
            side.model_dir = self.model_dir
            replay = side.record("data/train.npz", self, input_fn, "train", side.job["steps"])
            hooks = [*(hooks or []), side.hook()]
            return original_train(self, replay, hooks=hooks, max_steps=side.job["steps"], saving_listeners=saving_listeners)

        def evaluate(self, input_fn, steps=None, hooks=None, checkpoint_path=None, name=None):
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

    def install_session(self) -> None:
        """Patch MonitoredSession.run, StopAtStepHook and Supervisor for between-graph programs; note what each
        optimizer minimizes."""
        from tensorflow.python.training import monitored_session

        tf, side = self.tf, self
        original_run, original_stop = monitored_session._MonitoredSession.run, tf.compat.v1.train.StopAtStepHook.__init__
        supervisor = tf.compat.v1.train.Supervisor
        original_supervisor, original_prepare = supervisor.__init__, supervisor.prepare_or_wait_for_session
        original_should_stop = supervisor.should_stop
        optimizer = tf.compat.v1.train.Optimizer
        original_minimize, original_apply = optimizer.minimize, optimizer.apply_gradients

        def stop_at_step(hook, num_steps=None, last_step=None):
            original_stop(hook, last_step=side.job["steps"])

        def run(session, fetches, feed_dict=None, options=None, run_metadata=None):
            return side.session_run(session, lambda *args: original_run(session, *args), session._tf_sess().run,
                                    fetches, feed_dict, options, run_metadata)

        def supervisor_init(sv, *args, **kwargs):
            kwargs["logdir"] = str(side.exchange.folder / "old_logdir")  # never the program's own
            original_supervisor(sv, *args, **kwargs)

        def prepare(sv, *args, **kwargs):  # managed_session's session too
            return _Recorded(original_prepare(sv, *args, **kwargs), side)

        def should_stop(sv):
            return original_should_stop(sv) or len(side.losses) >= side.job["steps"]

        def minimize(opt, loss, *args, **kwargs):
            tf.compat.v1.add_to_collection(MINIMIZED, loss)
            train_op = original_minimize(opt, loss, *args, **kwargs)
            tf.compat.v1.add_to_collection(TRAIN_OPS, train_op)
            return train_op

        def apply_gradients(opt, *args, **kwargs):
            train_op = original_apply(opt, *args, **kwargs)
            tf.compat.v1.add_to_collection(TRAIN_OPS, train_op)
            return train_op

        monitored_session._MonitoredSession.run = run
        tf.compat.v1.train.StopAtStepHook.__init__ = stop_at_step
        supervisor.__init__, supervisor.prepare_or_wait_for_session = supervisor_init, prepare
        supervisor.should_stop = should_stop
        optimizer.minimize, optimizer.apply_gradients = minimize, apply_gradients

    def session_run(self, session, run, raw_run, fetches, feed_dict, options, run_metadata):
        """A between-graph program's run: a training step (it fetches an optimizer's train op) also fetches the
        loss, and then the weights; the first one records the initial weights."""
        tf = self.tf
        with session.graph.as_default():
            losses = tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.LOSSES) or \
                tf.compat.v1.get_collection(MINIMIZED)
            train_ops = tf.compat.v1.get_collection(TRAIN_OPS)
            variables = model_variables(tf)
        fetched = tf.nest.flatten(fetches, expand_composites=False)
        training = any(any(fetch is op for op in train_ops) for fetch in fetched) or not train_ops
        if self.estimator or not losses or not variables or not training:
            return run(fetches, feed_dict, options, run_metadata)
        if not self.trained:  # the raw session reads values without running the hooks
            self.start_session_training(variables, raw_run(variables))
        results, loss = run((fetches, losses[-1]), feed_dict, options, run_metadata)
        self.losses.append(float(loss))
        self.final_weights = full_values(variables, raw_run(variables))
        self.train_seconds = time.perf_counter() - self.started
        return results

    def start_session_training(self, variables: list, values: list) -> None:
        self.trained = True
        self.variables = describe(variables)
        self.exchange.write_arrays("initial.npz", full_values(variables, values))
        self.exchange.write_json("initial.json", self.variables)
        self.exchange.mark("train.ready")
        self.started = time.perf_counter()

    def local_config(self, config):
        config = config or self.tf.estimator.RunConfig()
        model_dir = self.exchange.folder / "old_model"
        return config.replace(model_dir=str(model_dir), tf_random_seed=self.job["seed"])

    # -- data ----------------------------------------------------------------

    def record(self, name: str, estimator, input_fn, mode: str, count: int):
        """Record ``count`` batches of ``input_fn`` once (or make synthetic ones); an input_fn replaying them."""
        if not self.exchange.path(name).exists():
            batches = self._batches(estimator, input_fn, mode, count)
            if not batches:
                raise RuntimeError(f"the {mode} input_fn produced no batches")
            self.exchange.write_batches(name, batches)
        stacked, _ = self.exchange.read_batches(name)

        def replay(params=None):  # TPUEstimator passes every input_fn its params (and refuses one without)
            return self.tf.data.Dataset.from_tensor_slices(stacked)

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
                self.saver = tf.compat.v1.train.Saver(var_list=variables)

            def after_create_session(self, session, coord):
                path = self.saver.save(session, str(side.exchange.path("initial/model.ckpt")),
                                       write_meta_graph=False, write_state=False)
                side.save_weights("initial.npz", path)
                side.exchange.write_json("initial.json", side.variables)
                side.exchange.mark("train.ready")
                self.started = time.perf_counter()

            def before_run(self, run_context):
                return tf.compat.v1.train.SessionRunArgs(self.loss)

            def after_run(self, run_context, run_values):
                side.losses.append(float(run_values.results))

            def end(self, session):
                side.train_seconds = time.perf_counter() - self.started

        return ParityHook()

    def save_weights(self, name: str, checkpoint: str) -> None:
        """Full tensors from a checkpoint (partitioned variables come back whole), tables in TF2's row order."""
        reader = self.tf.train.load_checkpoint(checkpoint)
        self.exchange.write_arrays(name, [(v["name"], self.in_tf2_order(v["name"], reader.get_tensor(v["name"])))
                                          for v in self.variables])

    def in_tf2_order(self, name: str, value):
        return div_order(value, self.mod_tables[name]) if name in self.mod_tables else value

    def finish(self, wall_started: float, program: str) -> None:
        if self.final_weights is not None:
            self.exchange.write_arrays("old_final.npz", self.final_weights)
        elif self.model_dir and self.variables:
            self.save_weights("old_final.npz", self.tf.train.latest_checkpoint(self.model_dir))
        self.exchange.write_json("old.json", {
            "side": "old", "program": program, "python": sys.executable, "versions": versions(),
            "losses": self.losses, "eval_loss": self.eval_loss, "variables": self.variables,
            "wall_seconds": time.perf_counter() - wall_started, "train_seconds": self.train_seconds,
            "adjustments": dropout_note(self.dropout) + mod_lookup_notes(self.mod_tables),
        })


class _Recorded:
    """A Supervisor's session whose runs the old side records (see OldSide.session_run)."""

    def __init__(self, session, side: OldSide) -> None:
        self._session, self._side = session, side

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        session = self._session
        return self._side.session_run(session, session.run, session.run, fetches, feed_dict, options, run_metadata)

    def __getattr__(self, name: str):
        return getattr(self._session, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        return self._session.__exit__(*exc_info)


def model_variables(tf) -> list:
    """The variables a Keras model would hold: trainable ones, then batch-norm moving statistics."""
    trainable = tf.compat.v1.trainable_variables()
    moving = [v for v in tf.compat.v1.global_variables()
              if v not in trainable and re.search(r"moving_(mean|variance)$", v.op.name)]
    return trainable + moving


def full_values(variables: list, values: list) -> list[tuple[str, object]]:
    """(name, full value) per model variable in creation order, a partitioned one's shards joined along axis 0."""
    import numpy as np

    shards: dict[str, list] = {}
    for variable, value in zip(variables, values):
        info = variable._save_slice_info
        shards.setdefault(info.full_name if info else variable.op.name, []).append(
            (info.var_offset[0] if info else 0, value))
    return [(name, parts[0][1] if len(parts) == 1 else
             np.concatenate([value for _, value in sorted(parts, key=lambda part: part[0])]))
            for name, parts in shards.items()]


def describe(variables: list) -> list[dict]:
    """One entry per model variable in creation order, shards of a partitioned variable grouped."""
    described: dict[str, dict] = {}
    for variable in variables:
        info = variable._save_slice_info
        name = info.full_name if info else variable.op.name
        entry = described.setdefault(name, {
            "name": name, "shape": list(info.full_shape) if info else variable.shape.as_list(),
            "shards": [], "trainable": variable.trainable,
        })
        if info:
            entry["shards"].append(variable.shape.as_list())
    return list(described.values())


def main(argv: list[str]) -> int:
    workdir, program, *rest = argv
    as_path = rest[0] if rest else program  # run PROGRAM's code as if it were the file AS_PATH
    started = time.perf_counter()
    os.environ.pop("TF_CONFIG", None)
    exchange = Exchange(workdir)
    job = exchange.read_json("job.json")
    side = OldSide(exchange, job)
    from tensorflow_estimator.python.estimator import estimator as estimator_lib

    side.install(estimator_lib.Estimator)
    side.install_session()
    run_program(program, as_path, job["argv"], job["stand_ins"]["old"])
    side.finish(started, as_path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
