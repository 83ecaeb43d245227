"""A TPUEstimator program trained without a TPU (`--use_tpu=false`, the default): an Estimator.

TPU programs are written for `tf.estimator.tpu.TPUEstimator`, `tpu.RunConfig` with a
`TPUConfig`, and a model_fn returning a `TPUEstimatorSpec` whose eval metrics are a
`(metric_fn, tensors)` pair; the batch size reaches the input functions as
`params["batch_size"]`, and the optimizer is wrapped for TPUs only when one is used.
With `use_tpu=False` it trains on the CPU like any Estimator.

Run: python examples/tpu_estimator/train.py --train_steps 20
"""
import random
import shutil
import tempfile

import numpy as np
import tensorflow as tf
import tf_keras as keras

flags = tf.compat.v1.app.flags
flags.DEFINE_bool("use_tpu", False, "Train on a TPU.")
flags.DEFINE_integer("train_steps", 20, "Training steps, counted over every run in --model_dir.")
flags.DEFINE_integer("train_batch_size", 8, "Examples per training batch.")
flags.DEFINE_integer("eval_batch_size", 8, "Examples per evaluation batch.")
flags.DEFINE_integer("iterations_per_loop", 10, "Steps a TPU runs per call of the host.")
flags.DEFINE_string("model_dir", None, "Checkpoints (if not given: a temporary folder, removed).")
FLAGS = flags.FLAGS

images = np.random.RandomState(1).uniform(0.0, 1.0, size=(64, 6, 6, 1)).astype(np.float32)
digits = (images.mean(axis=(1, 2, 3)) * 20).astype(np.int64) % 4


def train_input_fn(params):
  dataset = tf.data.Dataset.from_tensor_slices((images, digits))
  return dataset.repeat().batch(params["batch_size"], drop_remainder=True)


def eval_input_fn(params):
  dataset = tf.data.Dataset.from_tensor_slices((images[:32], digits[:32]))
  return dataset.batch(params["batch_size"], drop_remainder=True)


def build_model(input_spec, params):
  """The TF1 model_fn `model_fn` as a Keras model, compiled with its loss and optimizer."""
  model = keras.Sequential([
      keras.layers.Conv2D(
          filters=4, kernel_size=3, data_format="channels_last", activation="relu"),
      keras.layers.MaxPooling2D(pool_size=2, strides=2, data_format="channels_last"),
      keras.layers.Flatten(data_format="channels_last"),
      keras.layers.Dense(units=4),
  ])
  model.build(input_spec.shape)
  optimizer = keras.optimizers.legacy.Adam(learning_rate=0.01, epsilon=1e-08)
  model.compile(
      optimizer,
      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
      metrics=[keras.metrics.SparseCategoricalAccuracy(name="accuracy")])
  return model


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


def main(argv):
  del argv
  # Under TF 2.x, tf.layers draw their initializer seeds from Python's random
  # module: seed it as well as the graph (RunConfig's tf_random_seed).
  random.seed(42)
  model_dir = FLAGS.model_dir or tempfile.mkdtemp()

  keras.utils.set_random_seed(42)
  task_type, strategy = strategy_for_this_task()

  dataset = train_input_fn(params={"batch_size": FLAGS.train_batch_size})

  with strategy.scope():
    model = build_model(dataset.element_spec[0], params={"batch_size": FLAGS.train_batch_size})

  # RunConfig's checkpoints: at the end of training, the last 5 kept.
  checkpoints = tf.train.CheckpointManager(
      tf.train.Checkpoint(model=model, optimizer=model.optimizer), model_dir, max_to_keep=5)
  save_checkpoint = keras.callbacks.LambdaCallback(
      on_epoch_end=lambda epoch, logs: checkpoints.save(
          checkpoint_number=model.optimizer.iterations))
  # Carry on from the latest checkpoint in model_dir, if any, as TF1 did.
  checkpoints.restore_or_initialize()

  # max_steps counts the steps of earlier runs too.
  steps_done = int(model.optimizer.iterations)
  if steps_done < FLAGS.train_steps:
    model.fit(
        dataset,
        epochs=1,
        steps_per_epoch=FLAGS.train_steps - steps_done,
        callbacks=[save_checkpoint],
        verbose=2)
  metrics = model.evaluate(
      eval_input_fn(params={"batch_size": FLAGS.eval_batch_size}).repeat(),
      steps=4,
      return_dict=True,
      verbose=2)
  print("eval loss: %s" % metrics["loss"])
  print("eval accuracy: %s" % metrics["accuracy"])
  if not FLAGS.model_dir:
    shutil.rmtree(model_dir)


if __name__ == "__main__":
  tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)
  tf.compat.v1.app.run(main)
