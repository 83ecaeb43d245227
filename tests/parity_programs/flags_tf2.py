"""tests/parity_programs/flags_tf1.py migrated to TensorFlow 2: absl flags, main(argv), absl's app.run.

The same flags (``--train_steps`` required), a Keras model trained under a
ParameterServerStrategy when TF_CONFIG names a cluster, locally otherwise.

Run: python tests/parity_programs/flags_tf2.py --train_steps 20
"""
import random
import shutil
import tempfile

import numpy as np
import tensorflow as tf
import tf_keras as keras
from absl import app, flags

flags.DEFINE_integer("train_steps", None, "training steps")
flags.DEFINE_integer("batch_size", 8, "examples per batch")
flags.DEFINE_float("learning_rate", 0.1, "gradient descent's learning rate")
flags.DEFINE_string("model_dir", None, "where checkpoints go (default: a temporary folder)")
flags.mark_flag_as_required("train_steps")
FLAGS = flags.FLAGS


def make_data(count, seed):
  rng = np.random.RandomState(seed)
  x = rng.normal(size=(count, 4)).astype(np.float32)
  y = (x @ np.array([[1.0], [-2.0], [0.5], [0.0]]) + 0.3 > 0).astype(np.float32)
  return x, y


def train_dataset():
  x, y = make_data(64, seed=1)
  return tf.data.Dataset.from_tensor_slices((x, y)).repeat().batch(FLAGS.batch_size)


def eval_dataset():
  x, y = make_data(16, seed=2)
  return tf.data.Dataset.from_tensor_slices((x, y)).batch(FLAGS.batch_size)


def strategy_for_this_task():
  """This task's type in the TF_CONFIG cluster, and the strategy it trains with."""
  resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
  if not resolver.cluster_spec().jobs:
    return None, tf.distribute.get_strategy()
  if resolver.task_type in ("ps", "worker"):
    server = tf.distribute.Server(
        resolver.cluster_spec(), job_name=resolver.task_type, task_index=resolver.task_id,
        protocol=resolver.rpc_layer or "grpc", start=True)
    server.join()
  return resolver.task_type, tf.distribute.experimental.ParameterServerStrategy(resolver)


def main(argv):
  del argv  # everything is in FLAGS
  random.seed(7)
  keras.utils.set_random_seed(7)
  model_dir = FLAGS.model_dir or tempfile.mkdtemp()
  _, strategy = strategy_for_this_task()
  with strategy.scope():
    model = keras.Sequential([keras.layers.Dense(6, activation="tanh"), keras.layers.Dense(1)])
    model.build((None, 4))
    optimizer = keras.optimizers.legacy.SGD(learning_rate=FLAGS.learning_rate)
    model.compile(optimizer, loss=keras.losses.BinaryCrossentropy(from_logits=True))
  model.fit(train_dataset(), epochs=1, steps_per_epoch=FLAGS.train_steps, verbose=2)
  tf.train.Checkpoint(model=model, optimizer=optimizer).save(model_dir + "/ckpt")
  result = model.evaluate(eval_dataset(), return_dict=True, verbose=2)
  print("eval loss: %s" % result["loss"])
  if not FLAGS.model_dir:
    shutil.rmtree(model_dir)


if __name__ == "__main__":
  app.run(main)
