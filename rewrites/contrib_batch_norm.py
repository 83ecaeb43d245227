"""TFM009: tf.contrib.layers' (and slim's) batch_norm, normalizing as it did with tf.compat.v1.layers.

TFM009 contrib-batch-norm

What it does: a call `tf.contrib.layers.batch_norm(inputs, ..., scope=...)` (or `slim.batch_norm`) becomes a call
of `tf1_batch_norm`, a function written once in the module, with its arguments carried over to
`tf.compat.v1.layers.batch_normalization`'s: `decay` as `momentum`, `is_training` as `training`, `scope` as `name`,
and `center`, `scale`, `epsilon`, `reuse`, `trainable`, `fused` as they were. The defaults that differ are written
out (slim's `decay=0.999`, `scale=False`, `is_training=True`); an `activation_fn` is applied to the result, as slim
applied it. `tf1_batch_norm` normalizes a 2-D input as a 4-D one, as contrib did.
Why: TensorFlow 2 has no tf.contrib, and tf-slim 1.1.0's `batch_norm`, the same code, does not build on
TensorFlow 2.15 or later. `tf.compat.v1.layers.batch_normalization` makes the same variables under the same names
(`<scope>/beta`, `gamma`, `moving_mean`, `moving_variance`) and normalizes alike, in a TF1 graph and in TF 2 code
(a model_fn kept as written and run in Keras, TFM310). Only contrib normalized a 2-D input with the fused kernel,
whose moving variance takes each batch's unbiased variance: `tf1_batch_norm` does too.
What may differ: where the moving mean and variance are updated. With the default `updates_collections` both
add the updates to `tf.GraphKeys.UPDATE_OPS`, as before. With `updates_collections=None` slim updated them as the
layer ran; so does the new layer in TF 2 code (Keras, eager, `tf.function`), but in a TF1 graph it adds them to
UPDATE_OPS, which the train op must then run: the finding says so, and where `is_training` is True, that an
evaluation updates them too (TF1's evaluation session dropped them; the Keras model keeps them). In a module that
runs a TF1 session such a call stays. A call without a `scope` (slim named its variables `BatchNorm`, uniquely,
which no `name` can reproduce), with other arguments, `*args` / `**kwargs`, in a module whose `arg_scope` sets
batch_norm's arguments, or one that names something `tf1_batch_norm` stays, and TFM003 names tf.contrib there.

Before:

    import tensorflow.compat.v1 as tf

    def normalized(x, training):
      return tf.contrib.layers.batch_norm(x, decay=0.9, center=True, is_training=training, scope="bn")

After:

    import tensorflow.compat.v1 as tf


    def tf1_batch_norm(inputs, **arguments):
      \"\"\"tf.layers.batch_normalization, normalizing as tf.contrib.layers.batch_norm did.\"\"\"
      # contrib's batch_norm normalized a 2-D input as a 4-D one with the fused kernel, whose
      # moving variance takes each batch's unbiased variance; the layer's 2-D path takes the
      # biased one.
      if inputs.shape.rank != 2 or arguments.get("fused") is False:
        return tf.layers.batch_normalization(inputs, **arguments)
      channels = inputs.shape[-1]
      outputs = tf.layers.batch_normalization(tf.reshape(inputs, [-1, 1, 1, channels]), **arguments)
      return tf.reshape(outputs, [-1, channels])


    def normalized(x, training):
      return tf1_batch_norm(x, momentum=0.9, center=True, scale=False, training=training, name="bn")

Finding:

    4:10: TFM009 [numeric] `tf.contrib.layers.batch_norm` -> `tf1_batch_norm` (written in the module):
    tf.layers.batch_normalization with the same variables, normalizing as contrib did (a 2-D input as 4-D, with the
    fused kernel)
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import PositionProvider

from rewrites.base import TFCodemod
from rewrites.program.helper_classes import with_helper
from rewrites.syntax import bind_arguments, is_name, is_none, source, subtree
from templates import wrap

RULE = "TFM009"
HELPER = "tf1_batch_norm"
BATCH_NORM = frozenset({"contrib.layers.batch_norm", "contrib.slim.batch_norm", "contrib.layers.python.layers.batch_norm",
                        "contrib.layers.python.layers.layers.batch_norm"})
# slim's batch_norm(inputs, decay=0.999, center=True, scale=False, epsilon=0.001, activation_fn=None, ...).
PARAMETERS = ("inputs", "decay", "center", "scale", "epsilon", "activation_fn", "param_initializers",
              "param_regularizers", "updates_collections", "is_training", "reuse", "variables_collections",
              "outputs_collections", "trainable", "batch_weights", "fused", "data_format", "zero_debias_moving_mean",
              "scope", "renorm", "renorm_clipping", "renorm_decay", "adjustment")
# slim's argument -> batch_normalization's, with slim's default where batch_normalization's differs.
CARRIED = (("decay", "momentum", "0.999"), ("center", "center", None), ("scale", "scale", "False"),
           ("epsilon", "epsilon", None), ("is_training", "training", "True"), ("trainable", "trainable", None),
           ("reuse", "reuse", None), ("scope", "name", None), ("fused", "fused", None))
SESSIONS = frozenset({"Session", "InteractiveSession", "train.MonitoredTrainingSession", "train.MonitoredSession",
                      "train.SingularMonitoredSession", "train.Supervisor"})
UPDATE_OPS = "GraphKeys.UPDATE_OPS"
SAME = "with the same variables, normalizing as contrib did (a 2-D input as 4-D, with the fused kernel)"
IN_PLACE = ("; slim updated the moving mean and variance as the layer ran (updates_collections=None), as this layer "
            "does in TF 2 code (Keras, a model_fn kept as written){}; in a TF1 graph it adds the updates to "
            "tf.GraphKeys.UPDATE_OPS, which the train op must run")
EVALUATED = (", in an evaluation too (is_training=True), where TF1's evaluation session then dropped them and the "
             "Keras model keeps them")


class Rewrite(TFCodemod):
    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        self._spelled: cst.BaseExpression | None = None  # batch_normalization, as the module spells it
        calls = [call for call in subtree(node) if isinstance(call, cst.Call)]
        self._sessions = any(self.api(call.func) in SESSIONS for call in calls)
        self._left = any(isinstance(name, cst.Name) and name.value == HELPER for name in subtree(node)) or any(
            self.api(name) in BATCH_NORM for scope in calls if (self.api(scope.func) or "").endswith("arg_scope")
            for name in subtree(scope) if isinstance(name, (cst.Name, cst.Attribute)))

    def _batch_normalization(self) -> cst.BaseExpression:
        """`tf.layers.batch_normalization` through the module's `import tensorflow.compat.v1 as tf`, else
        `tf.compat.v1.layers.batch_normalization` through its (or a new) `import tensorflow as tf`."""
        if self._existing_tensorflow_import(self._module) is None:
            v1 = next((alias.evaluated_alias for statement in self._module.body
                       if isinstance(statement, cst.SimpleStatementLine) for small in statement.body
                       if isinstance(small, cst.Import) for alias in small.names
                       if alias.evaluated_name == "tensorflow.compat.v1" and alias.asname), None)
            if v1 is not None:
                return cst.parse_expression(f"{v1}.layers.batch_normalization")
        return self.tf2("compat.v1.layers.batch_normalization")

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if self.api(original.func) not in BATCH_NORM or self._left:
            return updated
        bound = bind_arguments(updated, list(PARAMETERS))
        if bound is None or "scope" not in bound or "inputs" not in bound:
            return updated
        given = {name: arg.value for name, (_, arg) in bound.items()}
        if set(given) - {"inputs", "activation_fn", "updates_collections", *(old for old, _, _ in CARRIED)}:
            return updated
        collections = bound["updates_collections"][1].value if "updates_collections" in bound else None
        in_place = collections is not None and is_none(collections)
        written = bind_arguments(original, list(PARAMETERS))  # what the API reading needs: the nodes as parsed
        if collections is not None and not in_place and self.api(written["updates_collections"][1].value) != \
                UPDATE_OPS or \
                in_place and self._sessions or not self.wants(RULE, original):
            return updated
        args = [cst.Arg(given["inputs"])]
        for old, new, default in CARRIED:
            value = given.get(old, cst.parse_expression(default) if default else None)
            if value is not None:
                args.append(cst.Arg(value, keyword=cst.Name(new), equal=_EQUAL))
        self._spelled = self._batch_normalization()
        made: cst.BaseExpression = cst.Call(cst.Name(HELPER), args)
        activation = given.get("activation_fn")
        if activation is not None and not is_none(activation):
            made = cst.Call(activation, [cst.Arg(made)])
        training = given.get("is_training")
        always = training is None or is_name(training, "True")
        note = IN_PLACE.format(EVALUATED if always else "") if in_place else ""
        made = cst.parse_expression(wrap(source(made), self.get_metadata(PositionProvider, original).start.column))
        return self.replace(RULE, original, made, f"`{source(original.func)}` -> `{HELPER}` (written in the "
                                                  f"module): {source(self._spelled)} {SAME}{note}")

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        module = super().leave_Module(original_node, updated_node)
        if self._spelled is None:
            return module
        spelled = source(self._spelled)
        return with_helper(module, HELPER, "tf1_batch_norm.py.j2", batch_normalization=spelled,
                           tf=spelled.split(".")[0])


_EQUAL = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))
