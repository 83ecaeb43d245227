"""The old side of a between-graph program: the training runs of its own session, recorded.

A between-graph program builds its graph and drives a session itself, on its own data
and cluster: a ``MonitoredTrainingSession``, or a ``tf.train.Supervisor``'s
(``managed_session`` / ``prepare_or_wait_for_session``), and a loop of ``run`` calls,
fed batches or reading a ``tf.data`` iterator in the graph. Patched before it runs
(the program itself is not edited):

- ``Optimizer.compute_gradients`` (also what ``minimize`` calls): notes the loss it
  differentiates, so a hand-written loss (``tf.reduce_mean(...)``) is found too;
  ``minimize`` / ``apply_gradients``: note the train op.
- ``Supervisor.__init__``: a ``logdir`` given (checkpoints, summaries, the graph) is a
  fresh folder in the work folder, never the program's own; so is a ``MonitoredTrainingSession``'s
  ``checkpoint_dir``. In a resume run both phases share it: the first phase's last training run
  leaves a checkpoint there (a Supervisor's saved by the harness, whose own saves come on a timer),
  which the second resumes from, as the program would.
- ``Supervisor.prepare_or_wait_for_session`` (what ``managed_session`` calls too): the
  session it returns has its runs recorded, also as the default session (``with sess:``).
- ``MonitoredSession.run`` and the runs of a Supervisor's session: a training run (one
  whose fetches need a train op: the op itself, a ``tf.group`` of it, ...) also fetches
  the loss (the ``tf.losses`` one, else the one the optimizer differentiated) and then
  reads the weights (in a resume run, the last one also the optimizers' slots and the global
  step); the first one reads the initial weights before it runs, and writes them for the new
  side. Other runs (the global step, an init op) run as they are.
- Stopping after the harness's steps, even when the loop's own limit is higher (a lower
  one ends it sooner): ``StopAtStepHook``'s last step is the harness's; once that many
  training runs are done, ``MonitoredSession.should_stop()`` is true and a Supervisor's
  coordinator is asked to stop (its ``should_stop()`` is true, its services threads
  end); a loop that does not ask gets ``OutOfRangeError`` from its next training run, as
  when its input runs out (``managed_session`` and a ``MonitoredSession`` end cleanly on
  it, and so does the old side when it reaches the top of the program). The threads of
  every Supervisor are stopped and joined when the program ends.
"""

from __future__ import annotations

import inspect
import re
import time

from tensorflow.python.client.session import SessionInterface

from migrator.parity.resume import STEP, describe_slots

MINIMIZED = "tf_migrate_parity_minimized"  # what optimizers differentiate: the loss when tf.losses made none
TRAIN_OPS = "tf_migrate_parity_train_ops"


class SessionRecorder:
    """The patches above, and what they record into ``side`` (an OldSide): losses, weights, timings."""

    def __init__(self, side) -> None:
        self.side, self.tf = side, side.tf
        self.supervisors: list = []
        self.stopped_program = False  # a training run past the harness's steps raised OutOfRangeError
        self._trains: dict[tuple, bool] = {}  # (graph, op name, train op count) -> does running the op train

    @property
    def steps_done(self) -> bool:
        return len(self.side.losses) >= self.side.steps

    def install(self) -> None:
        from tensorflow.python.training import monitored_session

        tf, recorder, side = self.tf, self, self.side
        monitored = monitored_session._MonitoredSession
        original_run, original_should_stop = monitored.run, monitored.should_stop
        original_stop_at_step = tf.compat.v1.train.StopAtStepHook.__init__
        supervisor = tf.compat.v1.train.Supervisor
        original_supervisor, original_prepare = supervisor.__init__, supervisor.prepare_or_wait_for_session
        optimizer = tf.compat.v1.train.Optimizer
        original_minimize, original_apply = optimizer.minimize, optimizer.apply_gradients
        original_gradients = optimizer.compute_gradients
        original_session = tf.compat.v1.train.MonitoredTrainingSession
        keras_optimizer = getattr(getattr(tf.keras.optimizers, "legacy", None), "Optimizer", None)
        original_keras_apply = keras_optimizer and keras_optimizer.apply_gradients

        def run(session, fetches, feed_dict=None, options=None, run_metadata=None):
            return recorder.run(session, lambda *args: original_run(session, *args), session._tf_sess().run,
                                fetches, feed_dict, options, run_metadata)

        def should_stop(session):
            return original_should_stop(session) or (not side.estimator and recorder.steps_done)

        def stop_at_step(hook, num_steps=None, last_step=None):
            original_stop_at_step(hook, last_step=side.skipped + side.steps)

        def monitored_training_session(*args, **kwargs):
            arguments = inspect.signature(original_session).bind(*args, **kwargs).arguments
            if arguments.get("checkpoint_dir"):  # a folder of the run's own, which a resume run's phases share
                arguments["checkpoint_dir"] = side.model_dir = str(side.exchange.folder / "old_checkpoints")
            return original_session(**arguments)

        def supervisor_init(sv, *args, **kwargs):
            if kwargs.get("logdir"):
                logdir = side.exchange.folder / f"old_logdir{len(recorder.supervisors) or ''}"
                kwargs["logdir"] = side.model_dir = str(logdir)
            original_supervisor(sv, *args, **kwargs)
            recorder.supervisors.append(sv)

        def prepare(sv, *args, **kwargs):
            return _Recorded(original_prepare(sv, *args, **kwargs), recorder, sv)

        def compute_gradients(opt, loss, *args, **kwargs):
            graph = getattr(loss, "graph", None)  # a tensor; TF1's eager mode passes a callable
            if graph is not None and not any(noted is loss for noted in graph.get_collection(MINIMIZED)):
                graph.add_to_collection(MINIMIZED, loss)
            return original_gradients(opt, loss, *args, **kwargs)

        def minimize(opt, *args, **kwargs):
            return noted_train_op(original_minimize(opt, *args, **kwargs))

        def apply_gradients(opt, *args, **kwargs):
            noted_optimizer(opt)
            return noted_train_op(original_apply(opt, *args, **kwargs))

        def keras_apply_gradients(opt, *args, **kwargs):  # a TF2 canned Estimator's
            noted_optimizer(opt)
            return original_keras_apply(opt, *args, **kwargs)

        def noted_optimizer(opt):
            if not any(noted is opt for noted in side.optimizers):
                side.optimizers.append(opt)

        def noted_train_op(train_op):
            if train_op is not None and not tf.executing_eagerly():
                tf.compat.v1.add_to_collection(TRAIN_OPS, train_op)
            return train_op

        monitored.run, monitored.should_stop = run, should_stop
        tf.compat.v1.train.StopAtStepHook.__init__ = stop_at_step
        tf.compat.v1.train.MonitoredTrainingSession = monitored_training_session
        if keras_optimizer is not None:
            keras_optimizer.apply_gradients = keras_apply_gradients
        supervisor.__init__, supervisor.prepare_or_wait_for_session = supervisor_init, prepare
        optimizer.compute_gradients, optimizer.minimize, optimizer.apply_gradients = (
            compute_gradients, minimize, apply_gradients)

    def run(self, session, run, raw_run, fetches, feed_dict, options, run_metadata, supervisor=None):
        """One run of the program's session: a training run also fetches the loss, and then the weights; the first
        one records the initial weights; one past the harness's steps raises OutOfRangeError."""
        tf, side = self.tf, self.side
        with session.graph.as_default():
            losses = tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.LOSSES) or \
                tf.compat.v1.get_collection(MINIMIZED)
            train_ops = tf.compat.v1.get_collection(TRAIN_OPS)
            variables = model_variables(tf)
        if side.estimator or not losses or not variables or not self.training(session.graph, fetches, train_ops):
            return run(fetches, feed_dict, options, run_metadata)
        if self.steps_done:
            self.stopped_program = True
            raise tf.errors.OutOfRangeError(None, None, f"the parity harness's {side.job['steps']} steps are done")
        if not side.trained:  # the raw session reads values without running the hooks
            self.start(variables, raw_run(variables))
        results, loss = run((fetches, losses[-1]), feed_dict, options, run_metadata)
        side.losses.append(float(loss))
        side.final_weights = full_values(variables, raw_run(variables))
        if side.phase == "resume" and self.steps_done:  # compared too: the optimizers' slots and the step
            slots = [slot for optimizer in side.optimizers for slot in _slots_of(optimizer, variables)]
            step = tf.compat.v1.train.get_global_step(session.graph)
            side.final_weights += full_values(slots, raw_run(slots)) + [(STEP, raw_run(step))]
        side.train_seconds = time.perf_counter() - self.started
        if self.steps_done and supervisor is not None:
            if side.phase == "first" and supervisor.saver is not None:  # its own saves come on a timer only
                supervisor.saver.save(session, supervisor.save_path, global_step=supervisor.global_step)
            supervisor.request_stop()  # its should_stop() is true, its services threads end
        return results

    def start(self, variables: list, values: list) -> None:
        side = self.side
        side.trained = True
        side.variables = describe(variables)
        side.slots = describe_slots(side.optimizers, variables)
        side.exchange.write_arrays("initial.npz", full_values(variables, values))
        side.ready()
        self.started = time.perf_counter()

    def training(self, graph, fetches, train_ops: list) -> bool:
        """Does running ``fetches`` run a train op (one the optimizers made, or anything needing it)?"""
        if not train_ops:
            return True
        names = {getattr(op, "op", op).name for op in train_ops}  # SyncReplicasOptimizer's is a tensor
        for fetch in self.tf.nest.flatten(fetches):
            op = as_operation(self.tf, graph, fetch)
            if op is None:
                continue
            key = (graph, op.name, len(train_ops))
            if key not in self._trains:
                self._trains[key] = needs_any(op, names)
            if self._trains[key]:
                return True
        return False

    def stop_supervisors(self) -> None:
        """Stop the threads of every Supervisor and wait for them: a program that never called its stop() (nor used
        managed_session) leaves them running."""
        for sv in self.supervisors:
            sv.coord.request_stop()
            try:
                sv.coord.join(stop_grace_period_secs=10, ignore_live_threads=True)
            except Exception:  # what a thread reported: a program that never joined its threads does not see it
                pass


class _Recorded(SessionInterface):
    """A Supervisor's session whose runs the old side records (see SessionRecorder.run); a SessionInterface, as
    ``Saver.save`` and ``start_queue_runners`` want, its other attributes the session's."""

    def __init__(self, session, recorder: SessionRecorder, supervisor) -> None:
        self._session, self._recorder, self._supervisor = session, recorder, supervisor
        self._default = None

    @property
    def graph(self):
        return self._session.graph

    @property
    def sess_str(self):
        return self._session.sess_str

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        session = self._session
        return self._recorder.run(session, session.run, session.run, fetches, feed_dict, options, run_metadata,
                                  self._supervisor)

    def partial_run_setup(self, fetches, feeds=None):
        return self._session.partial_run_setup(fetches, feeds)

    def partial_run(self, handle, fetches, feed_dict=None):
        return self._session.partial_run(handle, fetches, feed_dict)

    def as_default(self):
        """This session, not the one inside, as the default: ``op.run()`` and ``tensor.eval()`` are recorded too."""
        try:
            from tensorflow.python.framework.stack import default_session
        except ImportError:  # before TensorFlow 2.13
            from tensorflow.python.framework.ops import default_session
        return default_session(self)

    def __getattr__(self, name: str):
        return getattr(self._session, name)

    def __enter__(self):
        self._session.__enter__()  # the graph and the session as defaults, as Session's own `with`
        self._default = self.as_default()
        self._default.__enter__()
        return self

    def __exit__(self, *exc_info):
        self._default.__exit__(*exc_info)
        return self._session.__exit__(*exc_info)


def _slots_of(optimizer, variables: list) -> list:
    return [slot for name in optimizer.get_slot_names() for variable in variables
            if (slot := optimizer.get_slot(variable, name)) is not None]


def as_operation(tf, graph, fetch):
    """The operation running ``fetch`` does (a tensor's op, an op, a name), or None."""
    if isinstance(fetch, str):
        try:
            fetch = graph.as_graph_element(fetch)
        except (KeyError, ValueError, TypeError):
            return None
    op = getattr(fetch, "op", fetch)
    return op if isinstance(op, tf.Operation) else None


def needs_any(op, names: set[str]) -> bool:
    """Is an op named in ``names`` among ``op`` and what it runs first (its inputs and control inputs)?"""
    seen, pending = set(), [op]
    while pending:
        current = pending.pop()
        if current.name in names:
            return True
        if current.name in seen:
            continue
        seen.add(current.name)
        pending.extend(tensor.op for tensor in current.inputs)
        pending.extend(current.control_inputs)
    return False


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
