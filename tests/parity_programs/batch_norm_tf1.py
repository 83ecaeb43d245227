"""An Estimator program as TF 1.x wrote it, normalizing with tf.contrib.layers.batch_norm in the two ways real
programs did: in a helper, with `updates_collections=None` (the moving statistics updated as the layer runs), as
DeepFM-style recommenders did; and with the default update collections, whose updates the train op runs under
`tf.control_dependencies(UPDATE_OPS)`, and an activation_fn. Both normalize 2-D inputs, which contrib
normalized with the fused kernel.

Run (on TF 1.x): python tests/parity_programs/batch_norm_tf1.py --model-dir /tmp/m
"""
import argparse

import numpy as np
import tensorflow as tf

rng = np.random.RandomState(11)
FEATURES = (rng.normal(size=(96, 4)) * 3 + 1).astype(np.float32)
LABELS = (FEATURES.sum(axis=1) > 4).astype(np.int64)


def input_fn():
  dataset = tf.data.Dataset.from_tensor_slices(({"x": FEATURES}, LABELS))
  return dataset.repeat().batch(16)


def eval_input_fn():
  return tf.data.Dataset.from_tensor_slices(({"x": FEATURES}, LABELS)).batch(32)


def batch_norm_layer(x, train_phase, scope_bn):
  return tf.contrib.layers.batch_norm(x, decay=0.9, center=True, scale=True, updates_collections=None,
                                      is_training=train_phase, scope=scope_bn)


def model_fn(features, labels, mode, params):
  train_phase = mode == tf.estimator.ModeKeys.TRAIN
  net = batch_norm_layer(features["x"], train_phase, "bn_input")
  net = tf.contrib.layers.fully_connected(net, params["hidden"], activation_fn=None, scope="hidden")
  net = tf.contrib.layers.batch_norm(net, decay=0.8, activation_fn=tf.nn.relu, is_training=train_phase,
                                     scope="bn_hidden")
  logits = tf.contrib.layers.fully_connected(net, 2, activation_fn=None, scope="logits")
  if mode == tf.estimator.ModeKeys.PREDICT:
    return tf.estimator.EstimatorSpec(mode, predictions={"logits": logits})
  loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
  update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
  with tf.control_dependencies(update_ops):
    optimizer = tf.train.GradientDescentOptimizer(learning_rate=0.1)
    train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--model-dir", default="/tmp/batch_norm")
  parser.add_argument("--train-steps", type=int, default=30)
  args = parser.parse_args()
  estimator = tf.estimator.Estimator(model_fn, model_dir=args.model_dir, params={"hidden": 8})
  estimator.train(input_fn, max_steps=args.train_steps)
  print(estimator.evaluate(eval_input_fn))


if __name__ == "__main__":
  main()
