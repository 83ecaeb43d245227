"""An Estimator program as TF 1.x wrote it: a plain `import tensorflow as tf` reaching tf.logging,
tf.train.AdamOptimizer and tf.placeholder; a model_fn of tf.contrib.layers (fully_connected, an
l2_regularizer); train_and_evaluate with a FinalExporter, which exports when training reaches max_steps; TF 1.x's
private `tf_logging._get_logger()` handed a stream handler, as SageMaker's script-mode MNIST did.

Run (on TF 1.x): python tests/parity_programs/tf1_era_contrib_tf1.py --model-dir /tmp/m
"""
import argparse
import logging
import sys

import numpy as np
import tensorflow as tf
from tensorflow.python.platform import tf_logging

rng = np.random.RandomState(5)
FEATURES = rng.normal(size=(96, 4)).astype(np.float32)
LABELS = (FEATURES.sum(axis=1) > 0).astype(np.int64)


def input_fn():
  dataset = tf.data.Dataset.from_tensor_slices(({"x": FEATURES}, LABELS))
  return dataset.repeat().batch(16)


def eval_input_fn():
  return tf.data.Dataset.from_tensor_slices(({"x": FEATURES}, LABELS)).batch(32)


def serving_input_fn():
  x = tf.placeholder(tf.float32, [None, 4], name="x")
  return tf.estimator.export.ServingInputReceiver({"x": x}, {"x": x})


def model_fn(features, labels, mode, params):
  net = tf.contrib.layers.fully_connected(
      features["x"], params["hidden"],
      weights_regularizer=tf.contrib.layers.l2_regularizer(0.01))
  logits = tf.contrib.layers.fully_connected(net, 2, activation_fn=None)
  if mode == tf.estimator.ModeKeys.PREDICT:
    return tf.estimator.EstimatorSpec(mode, predictions={"logits": logits})
  loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
  loss += tf.losses.get_regularization_loss()
  optimizer = tf.train.AdamOptimizer(learning_rate=0.01)
  train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--model-dir", default="/tmp/tf1_era_contrib")
  parser.add_argument("--train-steps", type=int, default=30)
  args = parser.parse_args()
  tf.logging.set_verbosity(tf.logging.INFO)
  tf_logging._get_logger().handlers = [logging.StreamHandler(sys.stdout)]
  estimator = tf.estimator.Estimator(model_fn, model_dir=args.model_dir, params={"hidden": 8})
  exporter = tf.estimator.FinalExporter("served", serving_input_fn)
  tf.estimator.train_and_evaluate(
      estimator,
      tf.estimator.TrainSpec(input_fn, max_steps=args.train_steps),
      tf.estimator.EvalSpec(eval_input_fn, steps=None, exporters=[exporter], throttle_secs=1))


if __name__ == "__main__":
  main()
