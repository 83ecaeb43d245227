"""WRONG migration of adam_tf1.py: Adam with Keras' default epsilon.

Everything as in adam_tf2.py except the optimizer:
``keras.optimizers.legacy.Adam(0.01)`` keeps Keras' default epsilon, 1e-7,
where ``tf1.train.AdamOptimizer`` used 1e-8. On ordinary gradients the
difference hides in the noise; on this program's kernel gradients (1e-6 to
1e-5) it shrinks the first updates by tens of percent, the loss of step 2
already differs by about eight times the default tolerance, and the final kernel
is far from the TF1 one. A harness must report a mismatch from step 2: the
first step's loss is computed before any update and still agrees.

Run: python tests/parity_programs/adam_tf2_default_epsilon.py
"""
import os
import shutil
import tempfile

import numpy as np
import tensorflow as tf
import tf_keras as keras

NUM_FEATURES = 64

rng = np.random.RandomState(0)
features = rng.uniform(1e-4, 2e-4, size=(40, NUM_FEATURES)).astype(np.float32)
labels = rng.uniform(0.03, 0.06, size=(40, 1)).astype(np.float32)
eval_features = rng.uniform(1e-4, 2e-4, size=(12, NUM_FEATURES)).astype(np.float32)
eval_labels = rng.uniform(0.03, 0.06, size=(12, 1)).astype(np.float32)


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

dataset = tf.data.Dataset.from_tensor_slices((features, labels)).repeat().batch(4)
eval_dataset = tf.data.Dataset.from_tensor_slices(
    (eval_features, eval_labels)).repeat().batch(4)

with strategy.scope():
  model = keras.Sequential(
      [keras.Input(shape=(NUM_FEATURES,)), keras.layers.Dense(1)])
  model.compile(keras.optimizers.legacy.Adam(learning_rate=0.01),
                loss=keras.losses.MeanSquaredError())

model_dir = tempfile.mkdtemp()
if task_type == "evaluator":
  # The TF1 evaluator job: evaluate the chief's checkpoints, up to the last one.
  keras.utils.SidecarEvaluator(
      model, data=eval_dataset, checkpoint_dir=model_dir, steps=3,
      max_evaluations=1).start()
else:
  checkpoint = keras.callbacks.ModelCheckpoint(
      os.path.join(model_dir, "ckpt-{epoch}"), save_weights_only=True)
  model.fit(dataset, epochs=1, steps_per_epoch=20, callbacks=[checkpoint],
            verbose=2)
  eval_result = model.evaluate(eval_dataset, steps=3, return_dict=True, verbose=2)
  print("eval loss: %s" % eval_result["loss"])
shutil.rmtree(model_dir)
