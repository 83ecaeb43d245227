"""TFM301-303, TFM305, TFM309, TFM206, TFM401-402: an Estimator program becomes a Keras program trained with ParameterServerStrategy.

For developers: how TFM301 reads and writes a program. An Estimator (or a TPUEstimator with ``use_tpu=False``)
driven by ``train_and_evaluate`` or by ``train`` / ``evaluate`` / ``predict`` calls, wherever
the program stands: at module level or in ``main()`` / ``run(args)`` / ``if __name__ ==
"__main__":``, its Estimator made by a ``build_estimator(config)`` of another module, its specs
in helpers, its steps, batch sizes and directories from ``argparse``, ``tf.flags`` or
``params``. Its ``model_fn`` (rewrites/estimator/model_fn.py reads layers on ``features``, a
loss, metrics, mode branches, an optimizer and ``minimize``) becomes, where it stands, a
function building the compiled Keras model; before the first driver the program gets its
strategy (``strategy_for_this_task()``: ps and worker tasks serve, the chief trains with
``ParameterServerStrategy``, an evaluator evaluates checkpoints, no ``TF_CONFIG`` trains
locally), the training dataset, the model built in ``strategy.scope()`` and RunConfig's
checkpoints restored: its own (in ``model_dir``'s ``tf2`` folder), or else the TF1 program's latest in
``model_dir`` (every variable, the optimizer's slots and the step: the Keras layers are named after
TF1's variable scopes, so its names map onto them); each driver becomes ``fit`` (for ``max_steps`` over every run, as TF1
counted), ``evaluate``, or a generator of predictions. The program's own expressions stay:
``max_steps=args.train_steps`` becomes ``steps_per_epoch=args.train_steps - steps_done``, so its
command line keeps working. Every module it edits imports TF2 as ``tf`` and spells what stays
TF1 ``tf.compat.v1.X`` (rewrites/program/spelling.py). A program across modules is migrated in
all its files or none, with a finding in each. Float results may differ in the last bits:
prove the migration with ``tf-migrate parity``. An Estimator made by
``tf.keras.estimator.model_to_estimator`` gives way to its Keras model, made and compiled in
the strategy's scope (keras_model.py, keras_compile.py).

Before::

    # trainer/model.py
    import tensorflow.compat.v1 as tf

    def model_fn(features, labels, mode, params):
      logits = tf.layers.dense(features["x"], 1)
      loss = tf.losses.mean_squared_error(labels, logits)
      optimizer = tf.train.AdagradOptimizer(params["learning_rate"])
      train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
      return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    def build_estimator(config, learning_rate):
      return tf.estimator.Estimator(model_fn, config=config, params={"learning_rate": learning_rate})

    # trainer/task.py
    def main():
      args = parser.parse_args()
      config = tf.estimator.RunConfig(model_dir=args.job_dir, tf_random_seed=42)
      estimator = model.build_estimator(config, args.learning_rate)
      estimator.train(model.make_input_fn(args.train_file, tf.estimator.ModeKeys.TRAIN), max_steps=args.train_steps)

After::

    # trainer/model.py
    import tensorflow as tf
    import tf_keras as keras

    def build_model(input_spec, params):
      \"\"\"The TF1 model_fn `model_fn` as a Keras model, compiled with its loss and optimizer.\"\"\"
      features = {
          name: keras.Input(shape=spec.shape[1:], dtype=spec.dtype, name=name)
          for name, spec in input_spec.items()}
      logits = keras.layers.Dense(units=1, name="dense")(features["x"])
      model = keras.Model(inputs=features, outputs=logits)
      optimizer = keras.optimizers.legacy.Adagrad(
          learning_rate=params["learning_rate"], initial_accumulator_value=0.1, epsilon=1e-30)
      model.compile(optimizer, loss=keras.losses.MeanSquaredError())
      return model

    # trainer/task.py
    def strategy_for_this_task():
      ...  # TF_CONFIG roles: ps/worker serve, chief -> ParameterServerStrategy, none -> local

    def main():
      args = parser.parse_args()

      keras.utils.set_random_seed(42)
      task_type, strategy = strategy_for_this_task()

      dataset = model.make_input_fn(args.train_file, "train")()

      with strategy.scope():
        keras_model = model.build_model(
            dataset.element_spec[0], params={"learning_rate": args.learning_rate})
      ...  # RunConfig's checkpoints in args.job_dir/tf2, restored, or else TF1's in args.job_dir
      steps_done = int(keras_model.optimizer.iterations)
      if steps_done < args.train_steps:
        keras_model.fit(
            dataset,
            epochs=1,
            steps_per_epoch=args.train_steps - steps_done,
            ...

The rule pages, what `tf-migrate rules TFMnnn` prints, are in rules.py.
"""

from __future__ import annotations

import libcst as cst

from rewrites.estimator import framework_mode
from rewrites.estimator.migration import Migration, Outcome, Reported
from rewrites.program.modules import Tree


def migrate(tree: Tree, enabled: frozenset[str], keras: str = "auto") -> Outcome:
    """The family's work on the modules of ``tree``: new texts of the modules it changes, and findings."""
    outcome = Migration(tree, enabled, keras).run()
    for view in tree.entries:
        left = [f for f in outcome.findings if f.view is view and f.rule == "TFM302" and isinstance(
            f.node, cst.FunctionDef) and f.node.name.value == "model_fn" and view.parent(f.node) is view.module]
        code = framework_mode.driver(view) if left else None
        if code is None:
            continue
        trial = Migration(framework_mode.tried(tree, view, code), enabled, keras).run()
        lines = tree.sources[view.path].count("\n") + 1
        mine = [f for f in trial.findings if f.view.path == view.path]
        function = next(s for s in mine[0].view.module.body if isinstance(s, cst.FunctionDef)
                        and s.name.value == "model_fn") if mine else None
        for finding in mine:  # what the block the module did not have says is said at its model_fn
            if finding.view.position(finding.node)[0] > lines:
                finding.node = function
        if view.path in trial.texts and not any(f.rule == "TFM302" for f in mine):
            trial.findings.insert(0, Reported("TFM301", mine[0].view, function, framework_mode.MIGRATED))
            return trial
        outcome.findings = [f for f in outcome.findings if f not in left] + [
            Reported(f.rule, f.view, f.node, "SageMaker framework mode's training, written out, is not migrated: "
                     + f.message) for f in mine if f.rule == "TFM302"]
    return outcome
