"""Weights split across parameter servers in TensorFlow 2: the counterpart of train.py.

The same linear regression as train.py, as a Keras ``Dense`` layer named
"linear", trained with plain gradient descent. TF1's per-variable
``fixed_size_partitioner(2)`` becomes the strategy's
``FixedShardsPartitioner(2)``: under a ``ParameterServerStrategy`` the [5, 1]
kernel is created as two uneven shards (3 rows and 2 rows) on the two ps
tasks; the [1] bias cannot be split and stays whole, as in TF1. Without
``TF_CONFIG`` the default strategy trains locally and nothing is split.

Run: python examples/partitioned/train_tf2.py
"""
import os
import shutil
import tempfile

import numpy as np
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


def strategy_for_this_task():
  """This task's type in the TF_CONFIG cluster and the strategy it trains with.

  ps and worker tasks serve the chief and never return. Without TF_CONFIG the
  program trains locally with the default strategy.
  """
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

dataset = tf.data.Dataset.from_tensor_slices((train_x, train_y)).repeat().batch(8)
eval_dataset = tf.data.Dataset.from_tensor_slices((eval_x, eval_y)).repeat().batch(10)

with strategy.scope():
  linear = keras.layers.Dense(1, name="linear")
  model = keras.Sequential([keras.Input(shape=(NUM_FEATURES,)), linear])
  model.compile(keras.optimizers.legacy.SGD(learning_rate=0.05),
                loss=keras.losses.MeanSquaredError())

model_dir = tempfile.mkdtemp()
if task_type == "evaluator":
  # The TF1 evaluator job: evaluate the chief's checkpoints, up to the last one.
  keras.utils.SidecarEvaluator(
      model, data=eval_dataset, checkpoint_dir=model_dir, steps=1,
      max_evaluations=1).start()
else:
  checkpoint = keras.callbacks.ModelCheckpoint(
      os.path.join(model_dir, "ckpt-{epoch}"), save_weights_only=True)
  model.fit(dataset, epochs=1, steps_per_epoch=30, callbacks=[checkpoint],
            verbose=2)
  eval_result = model.evaluate(eval_dataset, steps=1, return_dict=True, verbose=2)
  print("eval loss: %s" % eval_result["loss"])

  # Sharded or not, the kernel reads as one full [5, 1] tensor.
  print("linear/kernel: %s" % tf.convert_to_tensor(linear.kernel).numpy().ravel())
shutil.rmtree(model_dir)
