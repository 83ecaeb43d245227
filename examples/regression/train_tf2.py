"""Multi-worker Estimator training in TensorFlow 1: the canonical program.

The TF1 half of the TensorFlow guide "Migrate multi-worker CPU/GPU training":
an Estimator with a one-layer model_fn, trained and evaluated with
``train_and_evaluate``. Without ``TF_CONFIG`` it trains locally; with a
``TF_CONFIG`` cluster (chief, workers, ps, evaluator) the same code trains
distributed.

Run: python examples/regression/train.py
"""
import random
import shutil
import tempfile

import tensorflow as tf
import tensorflow.compat.v1 as tf1
import tf_keras as keras

features = [[1., 1.5], [2., 2.5], [3., 3.5]]
labels = [[0.3], [0.5], [0.7]]
eval_features = [[4., 4.5], [5., 5.5], [6., 6.5]]
eval_labels = [[0.8], [0.9], [1.]]


def _input_fn():
  return tf1.data.Dataset.from_tensor_slices((features, labels)).repeat().batch(1)


def _eval_input_fn():
  return tf1.data.Dataset.from_tensor_slices(
      (eval_features, eval_labels)).batch(1)


def _build_model(input_spec):
  """The TF1 model_fn `_model_fn` as a Keras model, compiled with its loss and optimizer."""
  model = keras.Sequential([
      keras.layers.Dense(units=1),
  ])
  model.build(input_spec.shape)
  optimizer = keras.optimizers.legacy.Adagrad(
      learning_rate=0.05, initial_accumulator_value=0.1, epsilon=1e-30)
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
      variable_partitioner=None)


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
      model, data=eval_dataset, checkpoint_dir=model_dir, steps=3,
      max_evaluations=1).start()
else:
  # max_steps counts the steps of earlier runs too.
  steps_done = int(model.optimizer.iterations)
  if steps_done < 20:
    model.fit(
        dataset, epochs=1, steps_per_epoch=20 - steps_done, callbacks=[save_checkpoint], verbose=2)
eval_result = model.evaluate(eval_dataset, steps=3, return_dict=True, verbose=2)
print("eval loss: %s" % eval_result["loss"])
shutil.rmtree(model_dir)
