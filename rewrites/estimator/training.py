"""The loss, the optimizer (and its learning-rate schedule) and minimize -> compile (part of the model_fn reader)."""

from __future__ import annotations

import libcst as cst

from rewrites import keras_equivalents as keras_code
from rewrites import keras_optimizers
from rewrites.syntax import Unsupported, bound_values, is_name, single_assign, source

GLOBAL_STEP = {"train.get_global_step", "train.get_or_create_global_step"}


class TrainingReading:
    """Mixed into ModelFnReader: tf.losses, optimizers, decay schedules of the global step, minimize, UPDATE_OPS."""

    def _total_loss(self, api: str, call: cst.Call, target: str) -> None:
        """`get_total_loss()` after one tf.losses loss and no regularizers (which are not migrated) is that loss."""
        bound_values(call, ("add_regularization_losses", "name", "scope"))
        if self.losses_made != 1:
            raise Unsupported(call, f"get_total_loss() of {self.losses_made} tf.losses losses: Keras compiles one loss "
                                    "per output; combine them by hand (compile's loss_weights, or a custom loss)")
        self.loss_name = target

    def _cross_shard(self, api: str, call: cst.Call, target: str) -> None:
        """`optimizer = CrossShardOptimizer(optimizer)` with use_tpu=False: TF1 ran the optimizer it wraps."""
        wrapped = call.args[0].value if call.args and not call.args[0].keyword else None
        if not is_name(wrapped, self.optimizer_name or ""):
            raise Unsupported(call, "CrossShardOptimizer of an optimizer not made above in the model_fn")
        self.optimizer_name = target

    def _loss(self, api: str, call: cst.Call, target: str) -> None:
        self.losses_made += 1
        weight = next((arg.value for arg in call.args if arg.keyword is not None and arg.keyword.value == "weights"),
                      call.args[2].value if len(call.args) > 2 and call.args[2].keyword is None else None)
        known = self.constant(weight) if weight is not None else 1
        scalar = isinstance(known, (int, float)) and not isinstance(known, bool)
        code, labels, predictions = keras_code.loss(api, self.spelled(call), scalar_weight=scalar)
        if scalar and known != 1:
            self.model.loss_weight = self.code(weight)  # TF1's loss is weight times the mean: compile's loss_weights
        if not (is_name(labels, "labels") and isinstance(predictions, cst.Name)):
            raise Unsupported(call, "the loss must compare `labels` with a tensor the model computes")
        self.model.loss = self._piece(code, call)
        self.model.output = predictions.value
        self.loss_name = target

    def _check_global_step(self, api: str, call: cst.Call) -> None:
        """A TF1 decay function must be evaluated at the global step, as Keras evaluates a schedule."""
        name, position = ("x", 0) if api == "train.piecewise_constant" else ("global_step", 1)
        for index, arg in enumerate(call.args):
            if (arg.keyword is None and index == position) or (arg.keyword and arg.keyword.value == name):
                if self._is_global_step(arg.value):
                    return
                break
        raise Unsupported(call, f"{api} on something other than the global step: Keras schedules follow "
                                "optimizer.iterations; migrate it by hand")

    def _is_global_step(self, step: cst.BaseExpression | None) -> bool:
        """`tf.train.get_global_step()`, in place or bound to a name above (`step = tf.train.get_global_step()`)."""
        if isinstance(step, cst.Name):
            step = self.pure.get(step.value, step)
        return isinstance(step, cst.Call) and self.api(step.func) in GLOBAL_STEP

    def _with_schedule(self, call: cst.Call) -> cst.Call:
        """The optimizer call with a learning rate that names a schedule replaced by the Keras schedule."""
        args = [arg.with_changes(value=cst.parse_expression(self.schedules[arg.value.value]))
                if self._is_scheduled_rate(arg, index) else arg for index, arg in enumerate(call.args)]
        return call.with_changes(args=args)

    def _scheduled_rate(self, call: cst.Call) -> bool:
        return any(self._is_scheduled_rate(arg, index) for index, arg in enumerate(call.args))

    def _is_scheduled_rate(self, arg: cst.Arg, index: int) -> bool:
        is_rate = (arg.keyword is None and index == 0) or (arg.keyword is not None and arg.keyword.value == "learning_rate")
        return is_rate and isinstance(arg.value, cst.Name) and arg.value.value in self.schedules

    def _tf1_momentum(self, call: cst.Call) -> str:
        """MomentumOptimizer on a decaying rate: Keras' SGD arguments, TF1's update (the TF1Momentum class)."""
        keras_sgd = cst.parse_expression(keras_optimizers.optimizer("train.MomentumOptimizer", self.spelled(call)).code)
        return source(self._with_schedule(keras_sgd.with_changes(func=cst.Name("TF1Momentum"))))

    def _is_minimize(self, call: cst.Call) -> bool:
        func = call.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "minimize"
                and (is_name(func.value, self.optimizer_name or "") or func.value is self.optimizer_call)):
            return False
        args = bound_values(call, ("loss", "global_step", "var_list"))
        if "var_list" in args:
            raise Unsupported(args["var_list"], "minimize(var_list=...): Keras trains every trainable variable of the "
                                                "model; train only some by hand (a custom train_step)")
        loss = args.get("loss")
        if not is_name(loss, self.loss_name or ""):
            what = f"`{self.code(loss)}`" if loss is not None else "its loss"
            raise Unsupported(call, f"minimize() of {what}, which is not a tf.losses loss of the model's output: a loss "
                                    "written by hand has no Keras loss the migration knows; write it as a Keras loss "
                                    "function (y_true, y_pred) by hand")
        if not self._is_global_step(args.get("global_step")):
            raise Unsupported(call, "minimize() must advance the global step (global_step=tf1.train.get_global_step())")
        return True

    def _is_update_ops(self, call: cst.Call) -> bool:
        if self.api(call.func) != "get_collection" or not call.args:
            return False
        return self.api(call.args[0].value) == "GraphKeys.UPDATE_OPS"

    def _update_ops_count(self, call: cst.Call) -> int | None:
        """For `control_dependencies(<get_collection(UPDATE_OPS)>)`: the batch norms whose updates it held."""
        inputs = bound_values(call, ("control_inputs",)).get("control_inputs")
        if isinstance(inputs, cst.Call) and self._is_update_ops(inputs):
            return len(self.batch_norms)
        return self.update_ops.get(inputs.value) if isinstance(inputs, cst.Name) else None

    def _train_op_after_updates(self, statement: cst.With) -> None:
        """Only `train_op = optimizer.minimize(...)` may run after the updates: Keras runs them itself."""
        body = statement.body.body
        if not (len(body) == 1 and (assign := single_assign(body[0])) and isinstance(assign[1], cst.Call)
                and self._is_minimize(assign[1])):
            raise Unsupported(statement, "control_dependencies(UPDATE_OPS) around anything but "
                                         "`train_op = optimizer.minimize(...)` is not migrated yet")

