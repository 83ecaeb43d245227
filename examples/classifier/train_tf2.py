"""A classifier in TensorFlow 2: the hand-written counterpart of train.py.

The same three Gaussian blobs, dict features and model as the custom
Estimator in train.py, as a functional Keras model with an input named "x":
a relu hidden layer and a logits layer, sparse softmax cross-entropy from
logits, Adam with TF1's epsilon, an accuracy metric, then ``fit``,
``evaluate`` and ``predict``. Trains under a ``ParameterServerStrategy`` when
``TF_CONFIG`` names this task the chief, with the default strategy otherwise.

Run: python examples/classifier/train_tf2.py
"""
import os
import shutil
import tempfile

import numpy as np
import tensorflow as tf
import tf_keras as keras

NUM_CLASSES = 3
BATCH_SIZE = 16

# 48 points in 4 dimensions around three centres, one class per centre.
rng = np.random.RandomState(0)
centres = rng.normal(scale=3.0, size=(NUM_CLASSES, 4))
train_y = np.repeat(np.arange(NUM_CLASSES), 16).astype(np.int32)
train_x = (centres[train_y] + rng.normal(size=(48, 4))).astype(np.float32)
eval_y = np.repeat(np.arange(NUM_CLASSES), 4).astype(np.int32)
eval_x = (centres[eval_y] + rng.normal(size=(12, 4))).astype(np.float32)


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
      resolver, variable_partitioner=None)


keras.utils.set_random_seed(42)
task_type, strategy = strategy_for_this_task()

dataset = tf.data.Dataset.from_tensor_slices(({"x": train_x}, train_y))
dataset = dataset.shuffle(48).repeat().batch(BATCH_SIZE)
# 12 eval rows make one batch: Estimator.evaluate ran one step.
eval_dataset = tf.data.Dataset.from_tensor_slices(({"x": eval_x}, eval_y))
eval_dataset = eval_dataset.repeat().batch(BATCH_SIZE)

with strategy.scope():
  inputs = keras.Input(shape=(4,), name="x")
  net = keras.layers.Dense(16, activation="relu")(inputs)
  logits = keras.layers.Dense(NUM_CLASSES)(net)
  model = keras.Model(inputs, logits)
  model.compile(
      optimizer=keras.optimizers.legacy.Adam(learning_rate=0.01, epsilon=1e-8),
      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
      metrics=[keras.metrics.SparseCategoricalAccuracy(name="accuracy")])

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
  print("eval accuracy: %s loss: %s" % (eval_result["accuracy"], eval_result["loss"]))

  probabilities = tf.nn.softmax(model.predict({"x": eval_x[::4]}, verbose=0))
  for expected, row in zip(eval_y[::4], probabilities.numpy()):
    class_id = np.argmax(row)
    print("prediction: class %d (%.3f), expected %d" % (class_id, row[class_id], expected))
shutil.rmtree(model_dir)
