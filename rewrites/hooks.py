"""TF1 SessionRunHooks -> what the Keras program does instead, or why a person must.

Used by the Estimator rewrite for ``TrainSpec(hooks=...)``, ``Estimator.train(hooks=...)``
and ``EstimatorSpec(training_hooks=...)``. A hook with a Keras counterpart becomes part
of the fit plan; any other hook raises ``NoKerasEquivalent`` saying what
to write instead. Batch-level custom callbacks are refused under
ParameterServerStrategy, so advice points at epoch-level ones.

Before::

    hooks = [tf1.train.StopAtStepHook(last_step=500),
             tf1.train.CheckpointSaverHook(model_dir, save_steps=100)]

After::

    # fit stops at step 500, one epoch of 100 steps per checkpoint
    model.fit(dataset, epochs=5, steps_per_epoch=100, initial_epoch=..., callbacks=[save_checkpoint], verbose=2)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import libcst as cst

from rewrites.syntax import bind_arguments
from rewrites.keras_translation import NoKerasEquivalent

STOP_AT_STEP = ("num_steps", "last_step")
CHECKPOINT_SAVER = ("checkpoint_dir", "save_secs", "save_steps", "saver", "checkpoint_basename", "scaffold",
                    "listeners", "save_graph_def")

ADVICE = {
    "train.NanTensorHook": "stops on a NaN loss: keras.callbacks.TerminateOnNaN does that in local training but "
    "fails under ParameterServerStrategy (its batch logs are RemoteValues); check the loss after fit, or in an "
    "epoch-level callback",
    "train.LoggingTensorHook": "logs tensors every few steps: Keras fit(verbose=2) logs the loss and metrics every "
    "epoch; log other values from an epoch-level keras.callbacks.Callback",
    "train.SummarySaverHook": "writes summaries: use keras.callbacks.TensorBoard(log_dir=...) and tf.summary calls",
    "train.StepCounterHook": "writes steps per second: keras.callbacks.TensorBoard(log_dir=...) records epoch times",
    "train.ProfilerHook": "profiles steps: keras.callbacks.TensorBoard(log_dir=..., profile_batch=...)",
    "train.FeedFnHook": "feeds placeholders: feed the data through the tf.data input instead",
    "train.FinalOpsHook": "runs ops at the end: run them after model.fit returns",
    "train.GlobalStepWaiterHook": "delays workers: ParameterServerStrategy schedules steps itself; drop it",
    "estimator.experimental.stop_if_no_decrease_hook": "stops on eval metrics: keras.callbacks.EarlyStopping("
    "monitor=..., patience=...) with validation data given to fit",
    "estimator.experimental.stop_if_no_increase_hook": "stops on eval metrics: keras.callbacks.EarlyStopping("
    "monitor=..., patience=..., mode='max') with validation data given to fit",
}
CUSTOM = ("a SessionRunHook runs in TF1's session loop: rewrite it as a Keras callback by hand (epoch-level: "
          "ParameterServerStrategy refuses batch-level custom callbacks)")


@dataclass
class Hooks:
    """What the hooks ask of the Keras program."""

    last_step: object = None         # StopAtStepHook(last_step=...): the expression (or where it is read)
    checkpoint_steps: object = None  # CheckpointSaverHook(model_dir, save_steps=...)


def read_hook(api: str | None, call: cst.Call, hooks: Hooks,
              is_model_dir: Callable[[cst.BaseExpression], bool] = lambda directory: False) -> None:
    """Add what one ``hook(...)`` call asks to ``hooks``, or raise NoKerasEquivalent.

    ``is_model_dir``: whether a directory expression is the Estimator's model_dir.
    """
    if api == "train.StopAtStepHook":
        args = _bound(call, STOP_AT_STEP)
        if set(args) != {"last_step"}:
            raise NoKerasEquivalent("StopAtStepHook(num_steps=...) counts from wherever a run resumed: give "
                                    "last_step, or fold the steps into max_steps")
        hooks.last_step = args["last_step"]
    elif api == "train.CheckpointSaverHook":
        args = _bound(call, CHECKPOINT_SAVER)
        if set(args) != {"checkpoint_dir", "save_steps"} or not is_model_dir(args["checkpoint_dir"]):
            raise NoKerasEquivalent("CheckpointSaverHook is migrated as checkpoints every save_steps steps into the "
                                    "Estimator's model_dir; set RunConfig(save_checkpoints_steps=...) instead")
        hooks.checkpoint_steps = args["save_steps"]
    else:
        raise NoKerasEquivalent(f"{api.rpartition('.')[2]} {ADVICE[api]}" if api in ADVICE else CUSTOM)


def _bound(call: cst.Call, params: tuple[str, ...]) -> dict[str, cst.BaseExpression]:
    bound = bind_arguments(call, params)
    if bound is None:
        raise NoKerasEquivalent("hook arguments that cannot be read statically (*args, **kwargs, unknown keywords)")
    return {name: arg.value for name, (_, arg) in bound.items()}
