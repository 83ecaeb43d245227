"""RMSprop in TensorFlow 2: the right migration of rmsprop_tf1.py.

``tf1.train.RMSPropOptimizer(0.01)`` becomes
``keras.optimizers.legacy.RMSprop(0.01, rho=0.9, epsilon=1e-10)``, and its
mean-square slots ("rms") are created with ones before training, as TF1
initialised them (Keras would start them at zeros). ``add_slot`` creates each
slot in the strategy's scope, on the parameter server of its variable, and
``fit`` then finds the slots already there. A slot of ones depends only on
the variable's shape, not on its value: loading other initial weights into the
model later (as the parity harness does) leaves the slots right. The harness
must report parity.

Run: python tests/parity_programs/rmsprop_tf2.py
"""
import os
import shutil
import tempfile

import tensorflow as tf
import tf_keras as keras

features = [[1., 1.5], [2., 2.5], [3., 3.5]]
labels = [[0.3], [0.5], [0.7]]
eval_features = [[4., 4.5], [5., 5.5], [6., 6.5]]
eval_labels = [[0.8], [0.9], [1.]]


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

dataset = tf.data.Dataset.from_tensor_slices((features, labels)).repeat().batch(1)
eval_dataset = tf.data.Dataset.from_tensor_slices(
    (eval_features, eval_labels)).repeat().batch(1)

with strategy.scope():
  model = keras.Sequential([keras.Input(shape=(2,)), keras.layers.Dense(1)])
  optimizer = keras.optimizers.legacy.RMSprop(
      learning_rate=0.01, rho=0.9, epsilon=1e-10)
  model.compile(optimizer, loss=keras.losses.MeanSquaredError())
  # TF1 started the mean-square accumulators at ones, Keras at zeros.
  for variable in model.trainable_variables:
    optimizer.add_slot(variable, "rms", initializer="ones")

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
