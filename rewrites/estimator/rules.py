"""The pages of the Estimator family's rules: what `tf-migrate rules TFMnnn` prints (tests/test_rules_cmd.py
runs their examples).

TFM301 estimator-program

What it does: an Estimator program (or a TPUEstimator with use_tpu=False) driven by train_and_evaluate or by
train, evaluate and predict calls becomes a Keras program: its model_fn becomes, where it stands, a function
building the compiled Keras model of the same layers, loss and optimizer; before the first driver the program
gets its strategy (with TF_CONFIG's cluster, the chief trains with ParameterServerStrategy, parameter server
and worker tasks serve, an evaluator evaluates checkpoints; without TF_CONFIG it trains locally), the training
dataset, the model built in the strategy's scope and the checkpoints of RunConfig restored: its own (in
model_dir's tf2 folder), or else the TF1 program's latest in model_dir. train becomes fit for max_steps over
every run, as TF1 counted, evaluate becomes evaluate, predict a generator of predictions; a driver in a function
defined where the Estimator is trained, or at a caller of a training function returning it, uses the Keras
model bound there, and estimator.eval_dir() / model_dir are the directories TF1 used. The program's own
expressions (flags, arguments, params) stay, so its command line keeps working. A program across modules is
migrated in all its files or none, with a finding in each. An Estimator made by
tf.keras.estimator.model_to_estimator gives way to its Keras model: the statements making and compiling it move
into the strategy's scope (or the function making it is called there; a factory that returned the Estimator
returns the model), compiled with the optimizer model_to_estimator trained with. A module of SageMaker's legacy
framework mode (model_fn, train_input_fn, eval_input_fn and serving_input_fn, which the TF 1.11 and earlier
containers trained: no Estimator, no main) gets the `if __name__ == "__main__":` block doing what the container did
(hyperparameters from SM_HPS, training_steps 1000 and evaluation_steps 100 unless given, the training channel, the
Servo export), migrated like any other.
Why: TensorFlow 2 has no Estimator that trains under ParameterServerStrategy; Keras' fit does.
The loss fit and evaluate report stays TF1's, the mean of the batches' losses: where the eval input ends (a
short last batch), the model compiles the generated TF1EvalLoss metric, named `loss`.
What may differ: float results, in the last bits, and what the finding says (for example, the eval loss of a
model_to_estimator model, which keeps its own compile); prove the migration with `tf-migrate parity`.

Before:

    import tensorflow.compat.v1 as tf


    def input_fn():
      return tf.data.Dataset.from_tensor_slices(({"x": [[1.0], [2.0]]}, [[0.5], [0.7]])).repeat().batch(2)


    def model_fn(features, labels, mode):
      predictions = tf.layers.dense(features["x"], 1)
      loss = tf.losses.mean_squared_error(labels, predictions)
      train_op = tf.train.AdagradOptimizer(0.1).minimize(loss, global_step=tf.train.get_global_step())
      return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


    estimator = tf.estimator.Estimator(model_fn, model_dir="/tmp/model")
    estimator.train(input_fn, max_steps=100)

After:

    ...
    def build_model(input_spec):
      \"\"\"The TF1 model_fn `model_fn` as a Keras model, compiled with its loss and optimizer.\"\"\"
      features = {
          name: keras.Input(shape=spec.shape[1:], dtype=spec.dtype, name=name)
          for name, spec in input_spec.items()}
      predictions = keras.layers.Dense(units=1, name="dense")(features["x"])
      model = keras.Model(inputs=features, outputs=predictions)
      optimizer = keras.optimizers.legacy.Adagrad(
          learning_rate=0.1, initial_accumulator_value=0.1, epsilon=1e-30)
      model.compile(optimizer, loss=keras.losses.MeanSquaredError())
      return model
    ...  # strategy_for_this_task(), and restore_tf1_checkpoint(path, model)
    task_type, strategy = strategy_for_this_task()

    dataset = input_fn()

    with strategy.scope():
      model = build_model(dataset.element_spec[0])
    ...  # RunConfig's checkpoints in /tmp/model/tf2, restored, or else TF1's in /tmp/model
    steps_done = int(model.optimizer.iterations)
    if steps_done < 100:
      model.fit(
          dataset, epochs=1, steps_per_epoch=100 - steps_done, callbacks=[save_checkpoint], verbose=2)

Finding:

    16:1: TFM301 [numeric] Estimator program -> Keras fit under ParameterServerStrategy; prove it with tf-migrate
    parity

TFM302 estimator-manual

What it does: reports an Estimator program in a shape the migration cannot carry over safely and leaves every
file of it as it is: another model_fn structure, custom hooks, exporters, a canned estimator other than
TFM309's, a TPU in use, an Estimator passed to code the migration cannot follow, a model_fn in a module outside
the paths given, a rule it needs switched off. Every Estimator, Estimator subclass and tf.contrib.learn runner
the migration leaves gets one.
Why: a half-migrated program would neither run as TF1 nor as TensorFlow 2.
What may differ: the program is unchanged; the finding points at the construct and says what a person should
do.

Before:

    import tensorflow.compat.v1 as tf


    def input_fn():
      return tf.data.Dataset.from_tensor_slices(({"x": [[1.0], [2.0]]}, [[0.5], [0.7]])).repeat().batch(2)


    def model_fn(features, labels, mode):
      predictions = tf.layers.dense(features["x"], 1)
      loss = tf.losses.mean_squared_error(labels, predictions)
      train_op = tf.train.AdagradOptimizer(0.1).minimize(loss, global_step=tf.train.get_global_step())
      return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


    estimator = tf.estimator.Estimator(model_fn, model_dir="/tmp/model")
    estimator.train(input_fn, max_steps=100, hooks=[MyHook()])

After:

    import tensorflow.compat.v1 as tf


    def input_fn():
      return tf.data.Dataset.from_tensor_slices(({"x": [[1.0], [2.0]]}, [[0.5], [0.7]])).repeat().batch(2)


    def model_fn(features, labels, mode):
      predictions = tf.layers.dense(features["x"], 1)
      loss = tf.losses.mean_squared_error(labels, predictions)
      train_op = tf.train.AdagradOptimizer(0.1).minimize(loss, global_step=tf.train.get_global_step())
      return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


    estimator = tf.estimator.Estimator(model_fn, model_dir="/tmp/model")
    estimator.train(input_fn, max_steps=100, hooks=[MyHook()])

Finding:

    16:49: TFM302 [manual] Estimator program left as it is: a SessionRunHook runs in TF1's session loop: rewrite
    it as a Keras callback by hand (epoch-level: ParameterServerStrategy refuses batch-level custom callbacks)

TFM303 eval-steps

What it does: with TFM301, an eval input function whose dataset does not repeat gets .repeat(), and evaluate
runs exactly the EvalSpec's steps batches of it.
Why: ParameterServerStrategy needs an eval dataset that repeats.
What may differ: TF1 stopped at the end of the eval input if that came first; the two evaluate the same
batches only if the input has at least that many.

Before:

    import tensorflow.compat.v1 as tf


    def input_fn():
      return tf.data.Dataset.from_tensor_slices(({"x": [[1.0], [2.0]]}, [[0.5], [0.7]])).repeat().batch(2)


    def eval_input_fn():
      return tf.data.Dataset.from_tensor_slices(({"x": [[3.0]]}, [[0.9]])).batch(1)


    def model_fn(features, labels, mode):
      predictions = tf.layers.dense(features["x"], 1)
      loss = tf.losses.mean_squared_error(labels, predictions)
      train_op = tf.train.AdagradOptimizer(0.1).minimize(loss, global_step=tf.train.get_global_step())
      return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


    estimator = tf.estimator.Estimator(model_fn, model_dir="/tmp/model")
    tf.estimator.train_and_evaluate(
        estimator, tf.estimator.TrainSpec(input_fn, max_steps=100), tf.estimator.EvalSpec(eval_input_fn, steps=10))

After:

    ...
    eval_dataset = eval_input_fn().repeat()
    ...
    model.evaluate(eval_dataset, steps=10, return_dict=True, verbose=2)

Finding:

    21:65: TFM303 [numeric] the eval input does not repeat: TF1 stopped at its end, the migrated evaluate runs
    exactly steps=10 batches (the same if it has at least that many)

TFM305 tpu-estimator

What it does: with TFM301, a TPUEstimator is migrated like an Estimator, its batch sizes reaching the input
functions as params["batch_size"] (under TPUStrategy the global batch, as train_batch_size was). Where its
use_tpu may be true (a literal, its default, or a flag) and the program names its TPU (the TPUClusterResolver
given to RunConfig as cluster=, a tpu or tpu_name flag beside the use_tpu flag, or master=), the migrated
program picks its strategy at run time: TPUStrategy on that TPU when it is named (and the flag asks for it),
else the CPU/GPU path of every migrated program (ParameterServerStrategy with TF_CONFIG, else local);
TPUConfig's iterations_per_loop becomes compile's steps_per_execution. A TPUEstimator that names no TPU, or
whose use_tpu is False, trains on CPU/GPU workers.
Why: TPUEstimator is gone from TensorFlow 2; TPUStrategy trains the same Keras model on a TPU.
What may differ: the TPU path is generated but not verified by tf-migrate (it was tested without a TPU); the
CPU/GPU path is the one verified. What only a TPU runs in the model_fn (bfloat16_scope, outside_compilation,
tpu_function, a host_call) and model parallelism (num_cores_per_replica) are left for a person: TFM302.

Before:

    import tensorflow.compat.v1 as tf

    tf.flags.DEFINE_bool("use_tpu", True, "Train on a TPU.")
    tf.flags.DEFINE_string("tpu", None, "The TPU to train on.")
    FLAGS = tf.flags.FLAGS


    def input_fn(params):
      dataset = tf.data.Dataset.from_tensor_slices(({"x": [[1.0], [2.0]]}, [[0.5], [0.7]]))
      return dataset.repeat().batch(params["batch_size"], drop_remainder=True)


    def model_fn(features, labels, mode, params):
      predictions = tf.layers.dense(features["x"], 1)
      loss = tf.losses.mean_squared_error(labels, predictions)
      train_op = tf.train.AdagradOptimizer(0.1).minimize(loss, global_step=tf.train.get_global_step())
      return tf.estimator.tpu.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)


    def main(_):
      config = tf.estimator.tpu.RunConfig(
          model_dir="/tmp/model", tpu_config=tf.estimator.tpu.TPUConfig(iterations_per_loop=100))
      estimator = tf.estimator.tpu.TPUEstimator(
          model_fn, config=config, use_tpu=FLAGS.use_tpu, train_batch_size=2)
      estimator.train(input_fn, max_steps=100)


    if __name__ == "__main__":
      tf.app.run(main)

After:

    ...
      model.compile(optimizer, loss=keras.losses.MeanSquaredError(), steps_per_execution=100)
      return model


    def strategy_for_this_task(tpu):
      \"\"\"This task's type and its strategy: TPUStrategy on the TPU named, else as TF_CONFIG says.\"\"\"
      if tpu:
        # Generated by tf-migrate, not verified by it (it was tested without a TPU).
        resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu)
        tf.config.experimental_connect_to_cluster(resolver)
        tf.tpu.experimental.initialize_tpu_system(resolver)
        return None, tf.distribute.TPUStrategy(resolver)
    ...
    def main(_):
      task_type, strategy = strategy_for_this_task(FLAGS.tpu if FLAGS.use_tpu else None)
    ...

Finding:

    24:40: TFM305 [exact] TPUEstimator -> the strategy picked at run time: TPUStrategy on the TPU `FLAGS.tpu`
    names when `FLAGS.use_tpu` is true (generated, not verified here: tf-migrate was tested without a TPU), else
    the CPU/GPU path, the one verified (ParameterServerStrategy with TF_CONFIG, else local); iterations_per_loop
    -> compile(steps_per_execution=100)

TFM309 canned-estimator

What it does: a canned DNN, Linear or DNNLinearCombined (wide and deep) Classifier or Regressor stands where a
model_fn would: the migration writes the function building the Keras model of the same layers and feature
columns, with its head's loss and metrics and the optimizer its version made, then migrates the program as
TFM301 does.
Why: TensorFlow 2 has no canned Estimators that train under ParameterServerStrategy.
What may differ: float results, in the last bits; the estimator's version matters (version 1,
tf.compat.v1.estimator, and version 2 differ in optimizer, learning rate and whether the loss is summed or
averaged over the batch): the finding says which version the spelling was taken as, and which eval metrics TF1
reported that the Keras model does not.

Before:

    import tensorflow.compat.v1 as tf


    def input_fn():
      return tf.data.Dataset.from_tensor_slices(({"x": [[1.0], [2.0]]}, [[0.5], [0.7]])).repeat().batch(2)


    columns = [tf.feature_column.numeric_column("x")]
    estimator = tf.estimator.DNNRegressor(hidden_units=[4], feature_columns=columns, model_dir="/tmp/model")
    estimator.train(input_fn, max_steps=100)

After:

    ...
    def build_dnn_regressor_model(input_spec):
      \"\"\"TF1's canned DNNRegressor as a Keras model, compiled as it trained.\"\"\"
    ...
      net = keras.layers.Dense(units=4, activation="relu", name="dnn/hiddenlayer_0")(net)
      logits = keras.layers.Dense(units=1, name="dnn/logits")(net)
      model = keras.Model(inputs=features, outputs=logits)
      optimizer = keras.optimizers.legacy.Adagrad(
          learning_rate=0.05, initial_accumulator_value=0.1, epsilon=1e-30)
      model.compile(
          optimizer,
          loss=keras.losses.MeanSquaredError(reduction="sum"),
          metrics=[keras.metrics.MeanSquaredError(name="average_loss")])
      return model
    ...

Finding:

    9:13: TFM309 [numeric] canned DNNRegressor -> a Keras model of the same layers, trained as v1
    (tf.compat.v1.estimator.DNNRegressor): Adagrad at 0.05, the loss summed over the batch

TFM310 model-fn-kept

What it does: with TFM301, a model_fn tier 1 cannot translate into Keras layers (a helper building the net, a
loss written by hand, tf.cond, get_variable with its own initializer or regularizer) is kept as written and run
in a generated Keras model whose call is decorated with tf.compat.v1.keras.utils.track_tf1_style_variables
(tier 2). Only what TF2 cannot run inside a tf.function changes: the optimizer (the same Keras optimizer as tier
1) is compiled with the model and applied to the model_fn's loss in the generated train_step; minimize (or
tf.contrib.layers.optimize_loss, as the optimizer it made, in its variable scope in TF1's checkpoints, or
create_train_op, tf.contrib.training's or slim's, as minimize of its optimizer, the step checking the loss as its
check_numerics did), the global step and the batch norms' UPDATE_OPS around it go; what the optimizer's arguments read in the model_fn
(arithmetic of params and the module's names, a tf.train decay schedule of the global step: the Keras schedule)
goes to the build function with it, and a summary or named tensor of the rate goes with the rate; each
EstimatorSpec returns {"loss": loss} (also when held in a name). Where the
model_fn added tf.losses.get_regularization_loss(), which reads nothing inside the shim, the step adds the
regularizers Keras tracked. eval_metric_ops of tf.metrics accuracy, mean, mean_squared_error,
root_mean_squared_error and mean_absolute_error become the Keras metrics of the same name, updated with the
tensors the model_fn gave TF1's. A Keras layer the model_fn's module makes in a function (`tf.keras.layers.Dense(n)
(net)` in a helper) is made through a generated tf1_keras_layer (get_or_create_layer): once, at the model's first
call, as TF1 made it once in its graph; not one made outside the model_fn's code, an application or loaded model
(which may hold batch normalizations), a Keras layer's regularizer where the model_fn adds TF1's regularization
losses (which held none), a model built on the model_fn's tensors. A Keras batch normalization is made with
momentum=1.0, which keeps the moving statistics TF1 never updated (their updates were never in UPDATE_OPS) and
evaluated with; a layer that computes otherwise in training (batch normalization, dropout) must be called with
`training=`: TF1 ran one called without it in inference mode. The variables keep their TF1 names (a Keras layer's:
`dense/kernel`, as TF1 named them): TF1's checkpoints, slots and step carry over. The finding names the construct
that kept the model_fn from tier 1.
Why: the model_fn's own code, computed by TF2, is what keeps the numbers when there is no Keras pair for it.
What may differ: float results, in the last bits, and random ops in the model_fn draw other numbers; prove it
with `tf-migrate parity`. Not migrated yet (TFM302): other eval metrics, optimizer arguments the model_fn
computes with TensorFlow (other than a decay schedule), gradients computed or applied by hand, predict, the global step read besides minimize, partitioned variables, a
model_fn method or one taking config, TPUEstimator, a tf.Variable the model's code makes (made again at each
call; a Scaffold's fed one becomes get_variable); code TF 2 cannot run at all (tf.contrib) keeps the program
as it is.

Before:

    import tensorflow.compat.v1 as tf


    def input_fn():
      return tf.data.Dataset.from_tensor_slices(({"x": [[1.0], [2.0]]}, [0, 1])).repeat().batch(2)


    def model_fn(features, labels, mode, params):
      logits = tf.layers.dense(features["x"], 2)
      loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
      optimizer = tf.train.AdamOptimizer(params["learning_rate"])
      train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
      return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


    estimator = tf.estimator.Estimator(model_fn, params={"learning_rate": 0.1})
    estimator.train(input_fn, max_steps=100)

After:

    ...
    def model_fn(features, labels, mode, params):
      logits = tf.compat.v1.layers.dense(features["x"], 2)
      loss = tf.compat.v1.reduce_mean(tf.compat.v1.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
      return {"loss": loss}


    class ModelFnModel(keras.Model):
      \"\"\"The TF1 model_fn `model_fn`, run as written inside Keras.\"\"\"
    ...
      @tf.compat.v1.keras.utils.track_tf1_style_variables
      def call(self, inputs, training=False):
        features, labels = inputs
        # Entered again at each call, TF1's scope names unnamed layers as the first call did
        # (`dense`, not `dense_1`): as TF1 named them, once, in its graph.
        with tf.compat.v1.variable_scope(tf.compat.v1.get_variable_scope()):
          return model_fn(features, labels, "train" if training else "eval", self.params)
    ...
    def build_model(dataset, params):
      \"\"\"The TF1 model_fn `model_fn` as a Keras model, compiled with its optimizer.\"\"\"
      model = ModelFnModel(params)
      model(next(iter(dataset)))  # the model_fn's code makes its variables
      model.compile(TF1Adam(learning_rate=params["learning_rate"], epsilon=1e-08))
      return model

Finding:

    8:1: TFM310 [numeric] model_fn kept as written and run in Keras (tier 2: track_tf1_style_variables, TF1's
    variable names); tier 1 stopped at line 10: `tf.nn.sparse_softmax_cross_entropy_with_logits(labels=lab...` inside
    tf.reduce_mean(...) in the model_fn: bind it to a name first (`logits = tf.layers.dense(...)`), then apply
    tf.reduce_mean to the name, and run tf-migrate again

TFM206 partitioner-scope

What it does: with TFM301, reports where a partitioner TF1 attached to a variable_scope (or one get_variable),
moved onto ParameterServerStrategy, now also splits other variables: at the first layer with weights outside
the partitioned scope.
Why: ParameterServerStrategy takes one partitioner for every variable the model creates.
What may differ: only where the variables are placed (split across the parameter servers); the numbers are the
same.

Before:

    import tensorflow.compat.v1 as tf


    def input_fn():
      return tf.data.Dataset.from_tensor_slices(({"x": [[1.0], [2.0]]}, [[0.5], [0.7]])).repeat().batch(2)


    def model_fn(features, labels, mode):
      with tf.variable_scope("hidden", partitioner=tf.fixed_size_partitioner(2)):
        hidden = tf.layers.dense(features["x"], 4)
      predictions = tf.layers.dense(hidden, 1)
      loss = tf.losses.mean_squared_error(labels, predictions)
      train_op = tf.train.AdagradOptimizer(0.1).minimize(loss, global_step=tf.train.get_global_step())
      return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


    estimator = tf.estimator.Estimator(model_fn, model_dir="/tmp/model")
    estimator.train(input_fn, max_steps=100)

After:

    ...
          variable_partitioner=tf.distribute.experimental.partitioners.FixedShardsPartitioner(2))
    ...

Finding:

    11:17: TFM206 [exact] the partitioner moves onto ParameterServerStrategy, which applies it to every variable
    the program creates, so the variables made here, not partitioned in TF1, are split too (placement only: the
    numbers are the same)

TFM401 keras-numerics

What it does: with TFM301, migrates a model_fn piece whose Keras counterpart computes the same thing only up to
a known difference, and says what may differ: MomentumOptimizer with a learning rate that is not a constant,
log_loss (which Keras clips), dropout's random masks, batch normalization whose update operations TF1 never ran,
an embedding_lookup on a partitioned table with TF1's "mod" strategy.
Why: the Keras piece is the closest there is; the difference is said rather than hidden.
What may differ: what the finding says; prove the migration with `tf-migrate parity`.

Before:

    import tensorflow.compat.v1 as tf


    def input_fn():
      return tf.data.Dataset.from_tensor_slices(({"x": [[1.0], [2.0]]}, [[0.5], [0.7]])).repeat().batch(2)


    def model_fn(features, labels, mode):
      hidden = tf.layers.dropout(features["x"], 0.5, training=mode == tf.estimator.ModeKeys.TRAIN)
      predictions = tf.layers.dense(hidden, 1)
      loss = tf.losses.mean_squared_error(labels, predictions)
      train_op = tf.train.AdagradOptimizer(0.1).minimize(loss, global_step=tf.train.get_global_step())
      return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


    estimator = tf.estimator.Estimator(model_fn, model_dir="/tmp/model")
    estimator.train(input_fn, max_steps=100)

After:

    ...
      hidden = keras.layers.Dropout(rate=0.5)(features["x"])
      predictions = keras.layers.Dense(units=1, name="dense")(hidden)
    ...

Finding:

    9:12: TFM401 [numeric] dropout masks are random: TF1 and Keras drop different units, so the two runs agree
    only statistically

TFM402 model-fn-logging

What it does: with TFM301, tf.summary and tf.logging calls in the model_fn (and tf.identity naming a tensor for
a logging hook) go.
Why: they ran in TF1's graph and do not change what the model computes; the Keras model has no place for them.
What may differ: nothing the model computes; log from a Keras callback, or keras.callbacks.TensorBoard.

Before:

    import tensorflow.compat.v1 as tf


    def input_fn():
      return tf.data.Dataset.from_tensor_slices(({"x": [[1.0], [2.0]]}, [[0.5], [0.7]])).repeat().batch(2)


    def model_fn(features, labels, mode):
      predictions = tf.layers.dense(features["x"], 1)
      loss = tf.losses.mean_squared_error(labels, predictions)
      tf.summary.scalar("loss", loss)
      train_op = tf.train.AdagradOptimizer(0.1).minimize(loss, global_step=tf.train.get_global_step())
      return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


    estimator = tf.estimator.Estimator(model_fn, model_dir="/tmp/model")
    estimator.train(input_fn, max_steps=100)

After:

    ...
      predictions = keras.layers.Dense(units=1, name="dense")(features["x"])
      model = keras.Model(inputs=features, outputs=predictions)
    ...

Finding:

    11:3: TFM402 [exact] tf.summary.scalar served TF1's graph (summaries, tensors named for a logging hook): the
    Keras model has no place for it, so it goes; log from a Keras callback or keras.callbacks.TensorBoard
"""
