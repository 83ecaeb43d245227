"""An Estimator program as TF1 code usually is: in `main`, run by `tf.app.run`, set by `tf.flags`.

`import tensorflow.compat.v1 as tf` with `tf.disable_v2_behavior()`, the usual spelling of
TF1 code kept running on TensorFlow 2. A classifier of three classes on a small synthetic
dataset; its steps, batch size, learning rate and model folder come from the command line.

Run: python examples/flags_app/train.py --train_steps 20 --learning_rate 0.05
"""
import random
import shutil
import tempfile

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()

flags = tf.flags
flags.DEFINE_integer("train_steps", 20, "Training steps, counted over every run in --model_dir.")
flags.DEFINE_integer("batch_size", 8, "Examples per batch.")
flags.DEFINE_float("learning_rate", 0.05, "Adagrad's learning rate.")
flags.DEFINE_string("model_dir", None, "Checkpoints (if not given: a temporary folder, removed).")
FLAGS = flags.FLAGS

rows = np.random.RandomState(0).uniform(-1.0, 1.0, size=(64, 4)).astype(np.float32)
classes = (rows[:, 0] > 0).astype(np.int64) + (rows[:, 1] > 0.5).astype(np.int64)


def train_input_fn():
  dataset = tf.data.Dataset.from_tensor_slices(({"x": rows}, classes))
  return dataset.repeat().batch(FLAGS.batch_size)


def eval_input_fn():
  dataset = tf.data.Dataset.from_tensor_slices(({"x": rows[:16]}, classes[:16]))
  return dataset.batch(FLAGS.batch_size)


def model_fn(features, labels, mode):
  hidden = tf.layers.dense(features["x"], 16, activation=tf.nn.relu)
  logits = tf.layers.dense(hidden, 3)
  loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
  accuracy = tf.metrics.accuracy(labels=labels, predictions=tf.argmax(logits, 1))
  tf.summary.scalar("accuracy", accuracy[1])
  if mode == tf.estimator.ModeKeys.EVAL:
    return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops={"accuracy": accuracy})
  optimizer = tf.train.AdagradOptimizer(FLAGS.learning_rate)
  train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def main(_):
  # Under TF 2.x, tf.layers draw their initializer seeds from Python's random
  # module: seed it as well as the graph (RunConfig's tf_random_seed).
  random.seed(42)
  model_dir = FLAGS.model_dir or tempfile.mkdtemp()
  config = tf.estimator.RunConfig(model_dir=model_dir, tf_random_seed=42, log_step_count_steps=1)
  estimator = tf.estimator.Estimator(model_fn=model_fn, config=config)
  estimator.train(input_fn=train_input_fn, max_steps=FLAGS.train_steps)
  metrics = estimator.evaluate(input_fn=eval_input_fn, steps=2)
  print("eval loss: %s" % metrics["loss"])
  print("eval accuracy: %s" % metrics["accuracy"])
  if not FLAGS.model_dir:
    shutil.rmtree(model_dir)


if __name__ == "__main__":
  tf.logging.set_verbosity(tf.logging.INFO)
  tf.app.run(main)
