"""tests/parity_programs/tpu_estimator_tf1.py migrated to TensorFlow 2 (without a TPU): Keras, absl flags.

The same flags; a functional Keras model on the ``{"x": ...}`` features, trained under a
ParameterServerStrategy when TF_CONFIG names a cluster, locally otherwise; TF1's Adam
(epsilon 1e-8).

Run: python tests/parity_programs/tpu_estimator_tf2.py --train_steps 20
"""
import random
import shutil
import tempfile

import numpy as np
import tensorflow as tf
import tf_keras as keras
from absl import app, flags

flags.DEFINE_bool("use_tpu", False, "train on a TPU (not in this migration)")
flags.DEFINE_integer("train_steps", 20, "training steps")
flags.DEFINE_integer("train_batch_size", 8, "global training batch size")
flags.DEFINE_integer("eval_batch_size", 4, "global eval batch size")
flags.DEFINE_integer("eval_steps", 3, "eval batches")
flags.DEFINE_integer("iterations_per_loop", 10, "steps per training loop")
flags.DEFINE_string("model_dir", None, "where checkpoints go (default: a temporary folder)")
FLAGS = flags.FLAGS

NUM_CLASSES = 3


def make_data(count, seed):
  rng = np.random.RandomState(seed)
  labels = rng.randint(0, NUM_CLASSES, size=count).astype(np.int32)
  centres = np.array([[1.0, 0.0, 0.5, -1.0], [-1.0, 1.0, 0.0, 0.5], [0.0, -1.0, -0.5, 1.0]])
  x = (centres[labels] + rng.normal(scale=0.8, size=(count, 4))).astype(np.float32)
  return {"x": x}, labels


def train_dataset(batch_size):
  features, labels = make_data(64, seed=1)
  return tf.data.Dataset.from_tensor_slices((features, labels)).repeat().batch(batch_size, drop_remainder=True)


def eval_dataset(batch_size):
  features, labels = make_data(12, seed=2)
  return tf.data.Dataset.from_tensor_slices((features, labels)).batch(batch_size, drop_remainder=True)


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
  random.seed(3)
  keras.utils.set_random_seed(3)
  model_dir = FLAGS.model_dir or tempfile.mkdtemp()
  _, strategy = strategy_for_this_task()
  with strategy.scope():
    x = keras.Input(shape=(4,), name="x")
    hidden = keras.layers.Dense(8, activation="relu")(x)
    logits = keras.layers.Dense(NUM_CLASSES)(hidden)
    model = keras.Model(inputs={"x": x}, outputs=logits)
    optimizer = keras.optimizers.legacy.Adam(learning_rate=0.01, epsilon=1e-8)
    model.compile(optimizer, loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
  model.fit(train_dataset(FLAGS.train_batch_size), epochs=1, steps_per_epoch=FLAGS.train_steps, verbose=2)
  tf.train.Checkpoint(model=model, optimizer=optimizer).save(model_dir + "/ckpt")
  result = model.evaluate(eval_dataset(FLAGS.eval_batch_size), steps=FLAGS.eval_steps, return_dict=True, verbose=2)
  print("eval loss: %s, accuracy: %s" % (result["loss"], result["accuracy"]))
  if not FLAGS.model_dir:
    shutil.rmtree(model_dir)


if __name__ == "__main__":
  app.run(main)
