"""Adam on a decaying learning rate, its wide layer split by a partitioner (TensorFlow 1).

A regression network in `main()` with argparse flags, as training jobs are written: its
first layer is built in `tf.variable_scope("wide", partitioner=min_max_variable_partitioner(
max_partitions=3, min_slice_size=256))`, so its [48, 8] kernel is split in three (16 rows of
float32 each, 512 bytes, a slice of at least 256), and it trains with
`tf.train.AdamOptimizer` on `tf.train.exponential_decay` of the global step. The checkpoints go
to --model_dir and a run resumes from them: TF1's Adam keeps two slots per variable and
`beta1_power` / `beta2_power` beside them, and the rate depends on the step.

Run: python examples/adam_schedule/train.py --train_steps 30 --model_dir /tmp/adam_schedule
"""
import argparse
import random
import shutil
import tempfile

import numpy as np
import tensorflow.compat.v1 as tf

NUM_FEATURES = 48

# y = x . w + noise, 96 training rows and 24 eval rows.
rng = np.random.RandomState(4)
true_weights = rng.normal(size=(NUM_FEATURES, 1)) / 4
train_x = rng.normal(size=(96, NUM_FEATURES)).astype(np.float32)
train_y = (train_x.dot(true_weights) + rng.normal(scale=0.1, size=(96, 1))).astype(np.float32)
eval_x = rng.normal(size=(24, NUM_FEATURES)).astype(np.float32)
eval_y = eval_x.dot(true_weights).astype(np.float32)


def train_input_fn(batch_size):
  dataset = tf.data.Dataset.from_tensor_slices(({"x": train_x}, train_y))
  return dataset.repeat().batch(batch_size)


def eval_input_fn():
  return tf.data.Dataset.from_tensor_slices(({"x": eval_x}, eval_y)).batch(24)


def model_fn(features, labels, mode, params):
  partitioner = tf.min_max_variable_partitioner(max_partitions=3, min_slice_size=256)
  with tf.variable_scope("wide", partitioner=partitioner):
    hidden = tf.layers.dense(features["x"], 8, activation=tf.nn.relu)
  predictions = tf.layers.dense(hidden, 1)
  loss = tf.losses.mean_squared_error(labels=labels, predictions=predictions)
  learning_rate = tf.train.exponential_decay(
      params["learning_rate"], tf.train.get_global_step(), decay_steps=5,
      decay_rate=0.7, staircase=True)
  optimizer = tf.train.AdamOptimizer(learning_rate)
  train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def main():
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--train_steps", type=int, default=30, help="global step to train to")
  parser.add_argument("--learning_rate", type=float, default=0.05)
  parser.add_argument("--batch_size", type=int, default=8)
  parser.add_argument("--model_dir", help="checkpoints (a temporary folder, removed, if not given)")
  args = parser.parse_args()

  # Under TF 2.x, tf.layers draw their initializer seeds from Python's random
  # module: seed it as well as the graph (RunConfig's tf_random_seed).
  random.seed(42)
  tf.logging.set_verbosity(tf.logging.INFO)  # logs the loss at each step
  model_dir = args.model_dir or tempfile.mkdtemp()
  config = tf.estimator.RunConfig(
      model_dir=model_dir, tf_random_seed=42, log_step_count_steps=1)
  estimator = tf.estimator.Estimator(
      model_fn=model_fn, config=config, params={"learning_rate": args.learning_rate})
  train_spec = tf.estimator.TrainSpec(
      input_fn=lambda: train_input_fn(args.batch_size), max_steps=args.train_steps)
  eval_spec = tf.estimator.EvalSpec(input_fn=eval_input_fn, steps=1)
  eval_result, _ = tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)
  print("eval loss: %s" % eval_result["loss"])
  if not args.model_dir:
    shutil.rmtree(model_dir)


if __name__ == "__main__":
  main()
