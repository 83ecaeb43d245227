"""Reading what surrounds the model_fn: RunConfig, warm starts, hooks, and the steps to train.

RunConfig(model_dir, tf_random_seed, save_checkpoints_steps / secs, keep_checkpoint_max)
becomes ``keras.utils.set_random_seed`` and a ``tf.train.CheckpointManager`` the program resumes
from; its logging settings (Keras logs every epoch) and what only TF1's session used
(``session_config``, TPU placement with ``use_tpu=False``) need nothing; a ``train_distribute``
strategy over the machine's own devices (MirroredStrategy, ...) is the one the migrated program
trains under when it runs on its own, as TF1 did (in a TF_CONFIG cluster: ParameterServerStrategy,
as every migrated program). The steps to train
become a fit plan: ``max_steps`` counts the steps of earlier runs as in TF1, ``steps`` counts
from where a run resumed, no steps trains one pass over an input that ends; one Keras epoch per
checkpoint TF1 saved every N steps. Values stay the program's own expressions
(``max_steps=args.train_steps`` -> ``steps_per_epoch=args.train_steps - steps_done``); ``steps`` of
a flag that is None unless given (argparse's default) train one pass then, as TF1 did, and so do
evaluation steps (the whole input).
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from rewrites import hooks as hooks_code
from rewrites.estimator.program import Checkpoints, FitPlan, Model, WarmStart
from rewrites.keras_translation import NoKerasEquivalent
from rewrites.program.constants import UNKNOWN
from rewrites.program.places import Value
from rewrites.program.values import Values
from rewrites.syntax import bound_values, is_none, list_elements, string_value

RUN_CONFIG = ("model_dir", "tf_random_seed", "save_summary_steps", "save_checkpoints_steps", "save_checkpoints_secs",
              "session_config", "keep_checkpoint_max", "keep_checkpoint_every_n_hours", "log_step_count_steps",
              "train_distribute", "device_fn", "protocol", "eval_distribute", "experimental_distribute",
              "experimental_max_worker_delay_secs", "session_creation_timeout_secs", "checkpoint_save_graph_def")
TPU_RUN_CONFIG = ("tpu_config", "evaluation_master", "master", "cluster", *RUN_CONFIG)
RUN_CONFIG_KEPT = {"model_dir", "tf_random_seed", "save_checkpoints_steps", "save_checkpoints_secs", "keep_checkpoint_max",
                   "keep_checkpoint_every_n_hours"}
# What needs nothing in the migrated program: logging (fit(verbose=2) logs every epoch), and what only served
# TF1's session (soft placement, device counts, thread pools: TF2's defaults run the same maths).
RUN_CONFIG_NOT_NEEDED = {"log_step_count_steps", "save_summary_steps", "session_config"}
# train_distribute strategies over one machine's devices: the migrated program trains under the same one there.
LOCAL_STRATEGIES = {"distribute.MirroredStrategy", "distribute.OneDeviceStrategy",
                    "distribute.experimental.CentralStorageStrategy"}
TPU_ONLY = {"tpu_config", "evaluation_master", "master", "cluster"}  # with use_tpu=False, TPUEstimator ignores them
TF1_KEEP_CHECKPOINT_MAX = "5"
TF1_EVERY_N_HOURS = 10000  # RunConfig's keep_checkpoint_every_n_hours: in effect, never
WARM_START_SETTINGS = ("ckpt_to_initialize_from", "vars_to_warm_start", "var_name_to_vocab_info",
                       "var_name_to_prev_var_name")
RUN_CONFIGS = {"estimator.RunConfig", "estimator.tpu.RunConfig"}


def run_config_arguments(call: cst.Call, api: str) -> dict[str, cst.BaseExpression]:
    """The arguments of the RunConfig call ``call`` (``api``: which RunConfig), by parameter name."""
    return bound_values(call, TPU_RUN_CONFIG if api == "estimator.tpu.RunConfig" else RUN_CONFIG)


@dataclass
class Steps:
    """The steps to train: the value (None: one pass over an input that ends), and whether they count earlier runs."""

    value: Value | None
    absolute: bool


class ConfigReader:
    """Reads RunConfig and the pieces around the model_fn, as code at the driver (``code(value)``)."""

    def __init__(self, values: Values, code, trail: list) -> None:
        """``code(value)``: the value as code at the driver; ``trail``: gets what the pieces read passed through."""
        self.values, self.code, self.trail = values, code, trail

    def run_config(self, node: Value | None) -> dict[str, Value]:
        """RunConfig's arguments the migrated program keeps; Unsupported for one it cannot."""
        if node is None or is_none(node.node):
            return {}
        kept = {}
        for name, value in self._config_arguments(node).items():
            if name in RUN_CONFIG_KEPT:
                kept[name] = value
            elif name in ("train_distribute", "eval_distribute"):
                if not is_none(self.values.resolve(value).node):
                    kept[name] = self._local_strategy(name, value)
            elif name not in RUN_CONFIG_NOT_NEEDED and name not in TPU_ONLY:
                raise value.fail(f"RunConfig({name}=...) is not migrated yet: set it on the Keras side by hand "
                                 "(checkpoint callback, tf.config, ...)")
        evaluated = kept.pop("eval_distribute", None)
        if evaluated is not None and ("train_distribute" not in kept or self.values.resolve(evaluated).node
                                      is not self.values.resolve(kept["train_distribute"]).node):
            raise evaluated.fail("RunConfig(eval_distribute=...) other than the train_distribute strategy: Keras "
                                 "evaluates under the strategy it trains under; choose one by hand")
        return kept

    def _local_strategy(self, name: str, value: Value) -> Value:
        """train_distribute / eval_distribute: a strategy over this machine's devices, which the migrated program
        trains under when it runs on its own (in a TF_CONFIG cluster: ParameterServerStrategy)."""
        made = self.values.resolve(value)
        if not (isinstance(made.node, cst.Call) and made.api() in LOCAL_STRATEGIES):
            raise value.fail(f"RunConfig({name}=...) is migrated when it is a strategy over this machine's devices "
                             f"({', '.join(sorted(LOCAL_STRATEGIES))}) made in the files given: choose the migrated "
                             "program's strategy by hand")
        return value

    def _config_arguments(self, node: Value) -> dict[str, Value]:
        """The arguments of the RunConfig(...) call ``node`` is, or of one it is made from by `.replace(...)`."""
        config = self.values.resolve(node, trail=self.trail)
        call = config.node
        if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value == "replace" \
                and config.api() is None:
            arguments = self._config_arguments(Value(call.func.value, config.place))
            if any(arg.keyword is None for arg in call.args):
                raise config.fail("RunConfig.replace(...) takes its settings by keyword")
            return {**arguments, **{arg.keyword.value: Value(arg.value, config.place) for arg in call.args}}
        if not (isinstance(call, cst.Call) and config.api() in RUN_CONFIGS):
            raise node.fail("Estimator(config=...) is migrated when it is a RunConfig(...) call the migration can "
                            "follow (made in the files given)")
        return {name: Value(value, config.place) for name, value in run_config_arguments(call, config.api()).items()}

    def checkpoints(self, config: dict[str, Value]) -> Checkpoints | None:
        """RunConfig's checkpoint settings; None when both intervals are None (TF1 then saved no checkpoints)."""
        steps, secs = config.get("save_checkpoints_steps"), config.get("save_checkpoints_secs")
        steps_none = steps is None or self.values.constant(steps) is None
        secs_none = secs is not None and self.values.constant(secs) is None
        if steps_none and secs_none:
            return None
        keep, hours = config.get("keep_checkpoint_max"), config.get("keep_checkpoint_every_n_hours")
        checkpoints = Checkpoints(self.code(keep) if keep is not None else TF1_KEEP_CHECKPOINT_MAX,
                                  None if steps_none else self.code(steps))
        if steps_none and secs is not None:
            checkpoints.every_secs = self.code(secs)
        if hours is not None and self.values.constant(hours) not in (None, TF1_EVERY_N_HOURS):
            checkpoints.every_hours = self.code(hours)
        return checkpoints

    def warm_start(self, node: Value | None, model: Model) -> WarmStart | None:
        """`warm_start_from=PATH` or `WarmStartSettings(PATH)`: every trainable variable, by its TF1 name (the Keras
        layers are named after TF1's variable scopes)."""
        if node is None or is_none(node.node):
            return None
        path = node
        settings = self.values.resolve(node, trail=self.trail)
        if isinstance(settings.node, cst.Call) and settings.api() == "estimator.WarmStartSettings":
            args = bound_values(settings.node, WARM_START_SETTINGS)
            pattern = args.get("vars_to_warm_start")
            if set(args) - {"ckpt_to_initialize_from", "vars_to_warm_start"} or not (
                    pattern is None or string_value(pattern) == ".*"):
                raise settings.fail("WarmStartSettings other than a checkpoint for every trainable variable "
                                    "(vars_to_warm_start='.*'): load the chosen variables by hand")
            path = Value(args["ckpt_to_initialize_from"], settings.place)
        if model.mod_tables:
            raise node.fail("warm_start_from for a table TF1 looked up \"mod\": its rows are in another order in "
                            "TF2; restore it with restore_tf1_checkpoint's permutation, by hand")
        if not model.tf1_names_known:
            raise node.fail("warm_start_from where the TF1 variable names cannot be read from the code (a computed "
                            "scope or layer name, layers in a loop in a loop): load the checkpoint by hand")
        return WarmStart(self.code(path))

    def hooks(self, node: Value | None, hooks: hooks_code.Hooks, model_dir: Value | None) -> None:
        """Training hooks into ``hooks`` (as Values at their places)."""
        if node is None:
            return
        resolved = self.values.resolve(node, trail=self.trail)
        for hook in list_elements(resolved.node, "hooks") if not is_none(resolved.node) else []:
            call = self.values.resolve(Value(hook, resolved.place), trail=self.trail)
            if not isinstance(call.node, cst.Call):
                raise call.fail("a hook that is not constructed in the files given: " + hooks_code.CUSTOM)
            try:
                found = hooks_code.Hooks()
                hooks_code.read_hook(call.api(), call.node, found,
                                     lambda directory: self._same(Value(directory, call.place), model_dir))
            except NoKerasEquivalent as problem:
                raise call.fail(str(problem)) from None
            if found.last_step is not None:
                hooks.last_step = Value(found.last_step, call.place)
            if found.checkpoint_steps is not None:
                hooks.checkpoint_steps = Value(found.checkpoint_steps, call.place)

    def _same(self, value: Value, other: Value | None) -> bool:
        return other is not None and self.code(value) == self.code(other)

    # -- the steps to train -------------------------------------------------------------------

    def fit_plan(self, steps: Steps, hooks: hooks_code.Hooks, checkpoints: Checkpoints | None,
                 ends: bool | None = False, none_at_run_time: bool = False) -> FitPlan:
        """The training steps as one Keras epoch (checkpoints are saved as TF1 saved them, by a callback); ``ends``:
        the input ends, so TF1 trained the steps or one pass of it, whichever was shorter (None: whether it ends is
        known when the program runs); ``none_at_run_time``: the steps may be None then (one pass, as TF1)."""
        count = steps.value
        if hooks.last_step is not None:
            count = self._earlier_stop(count, hooks.last_step, steps.absolute)
        code = self.code(count) if count is not None else None
        absolute = steps.absolute and count is not None
        if checkpoints is not None and hooks.checkpoint_steps is not None:  # the Estimator then adds no saver
            checkpoints.every_steps = self.code(hooks.checkpoint_steps)
        at_most = ends is not False and count is not None
        return FitPlan("1", code, absolute, repeat=count is None or at_most,
                       last_step=code if absolute and not at_most and not none_at_run_time else None, at_most=at_most,
                       ends_at_run_time=at_most and ends is None, none_at_run_time=none_at_run_time,
                       endless_at_run_time=ends is None and (count is None or none_at_run_time))

    def _earlier_stop(self, steps: Value | None, last_step: Value, absolute: bool) -> Value:
        """max_steps and a StopAtStepHook(last_step=...): training stops at whichever comes first."""
        total = self.values.constant(steps) if steps is not None else UNKNOWN
        last = self.values.constant(last_step)
        if not (absolute and isinstance(total, int) and isinstance(last, int)):
            raise last_step.fail("StopAtStepHook(last_step=...) is migrated beside max_steps, both whole numbers "
                                 "known before the program runs: fold the smaller into max_steps by hand")
        return steps if total <= last else last_step
