"""An Estimator whose weights are split across parameter servers (TensorFlow 1).

A linear regression model_fn whose dense layer is built in
``tf1.variable_scope("linear", partitioner=tf1.fixed_size_partitioner(2))``: on
a parameter-server cluster the kernel's two shards live on different ps tasks.
The kernel has 5 rows, so the shards are uneven (3 rows and 2 rows); the [1]
bias stays whole. Without ``TF_CONFIG`` it trains locally; the variable is
partitioned all the same.

Run: python examples/partitioned/train.py
"""
import random
import shutil
import tempfile

import numpy as np
import tensorflow.compat.v1 as tf1
import tensorflow as tf
import tf_keras as keras

NUM_FEATURES = 5

# y = x . true_weights + 0.5 + noise, 40 training rows and 10 eval rows.
rng = np.random.RandomState(0)
true_weights = np.array([[1.0], [-2.0], [0.5], [3.0], [-1.0]])
train_x = rng.normal(size=(40, NUM_FEATURES)).astype(np.float32)
train_y = (train_x.dot(true_weights) + 0.5
           + rng.normal(scale=0.1, size=(40, 1))).astype(np.float32)
eval_x = rng.normal(size=(10, NUM_FEATURES)).astype(np.float32)
eval_y = (eval_x.dot(true_weights) + 0.5).astype(np.float32)


def _input_fn():
  return tf1.data.Dataset.from_tensor_slices(
      (train_x, train_y)).repeat().batch(8)


def _eval_input_fn():
  return tf1.data.Dataset.from_tensor_slices((eval_x, eval_y)).batch(10)


def _build_model(input_spec):
  """The TF1 model_fn `_model_fn` as a Keras model, compiled with its loss and optimizer."""
  model = keras.Sequential([
      keras.layers.Dense(units=1),
  ])
  model.build(input_spec.shape)
  optimizer = keras.optimizers.legacy.SGD(learning_rate=0.05)
  model.compile(optimizer, loss=keras.losses.MeanSquaredError())
  return model


# Under TF 2.x, tf1.layers draw their initializer seeds from Python's random
# module: seed it as well as the graph (RunConfig's tf_random_seed).
random.seed(42)

# Log "loss = ..., step = ..." after every step.
tf1.logging.set_verbosity(tf1.logging.INFO)

model_dir = tempfile.mkdtemp()


def strategy_for_this_task():
  """This task's type in the TF_CONFIG cluster, and the strategy it trains with."""
  # ps and worker tasks serve the chief and never return. Without TF_CONFIG the
  # program trains locally with the default strategy, as the TF1 program did.
  resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
  if not resolver.cluster_spec().jobs:
    return None, tf.distribute.get_strategy()
  if resolver.task_type in ("ps", "worker"):
    server = tf.distribute.Server(
        resolver.cluster_spec(),
        job_name=resolver.task_type,
        task_index=resolver.task_id,
        protocol=resolver.rpc_layer or "grpc",
        start=True)
    server.join()
  if resolver.task_type == "evaluator":
    return resolver.task_type, tf.distribute.get_strategy()
  return resolver.task_type, tf.distribute.experimental.ParameterServerStrategy(
      resolver,
      variable_partitioner=tf.distribute.experimental.partitioners.FixedShardsPartitioner(2))


keras.utils.set_random_seed(42)
task_type, strategy = strategy_for_this_task()

dataset = _input_fn()

with strategy.scope():
  model = _build_model(dataset.element_spec[0])

# RunConfig's checkpoints: at the end of training, the last 5 kept.
checkpoints = tf.train.CheckpointManager(
    tf.train.Checkpoint(model=model, optimizer=model.optimizer), model_dir, max_to_keep=5)
save_checkpoint = keras.callbacks.LambdaCallback(
    on_epoch_end=lambda epoch, logs: checkpoints.save(
        checkpoint_number=model.optimizer.iterations))
# Carry on from the latest checkpoint in model_dir, if any, as TF1 did.
checkpoints.restore_or_initialize()

eval_dataset = _eval_input_fn().repeat()

if task_type == "evaluator":
  # The TF1 evaluator job: evaluate the chief's checkpoints.
  keras.utils.SidecarEvaluator(
      model, data=eval_dataset, checkpoint_dir=model_dir, steps=1,
      max_evaluations=1).start()
else:
  # max_steps counts the steps of earlier runs too.
  steps_done = int(model.optimizer.iterations)
  if steps_done < 30:
    model.fit(
        dataset, epochs=1, steps_per_epoch=30 - steps_done, callbacks=[save_checkpoint], verbose=2)
eval_result = model.evaluate(eval_dataset, steps=1, return_dict=True, verbose=2)
print("eval loss: %s" % eval_result["loss"])

shutil.rmtree(model_dir)
