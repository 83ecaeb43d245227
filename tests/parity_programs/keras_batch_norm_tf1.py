"""An Estimator program as TF 1.x wrote it (the shape of training-data-analyst's batch_normalization blog trainer):
helpers apply `tf.keras.layers` on the model_fn's tensors, a Conv2D and Dense each followed by a Keras
BatchNormalization called with `training=` the mode (4-D inputs normalized by the fused kernel, 2-D by the other),
and the train op runs under `tf.control_dependencies(UPDATE_OPS)`, which held none of the Keras layers' updates: TF1
never updated their moving statistics, and evaluated with those it made them with.

Run (on TF 1.x): python tests/parity_programs/keras_batch_norm_tf1.py --model-dir /tmp/m
"""
import argparse

import numpy as np
import tensorflow as tf

rng = np.random.RandomState(3)
IMAGES = (rng.normal(size=(96, 4, 4, 2)) * 2 + 1).astype(np.float32)
LABELS = (IMAGES.mean(axis=(1, 2, 3)) > 1).astype(np.int64)


def input_fn():
  return tf.data.Dataset.from_tensor_slices(({"image": IMAGES}, LABELS)).repeat().batch(16)


def eval_input_fn():
  return tf.data.Dataset.from_tensor_slices(({"image": IMAGES}, LABELS)).batch(32)


def convolved(x, filters, training):
  x = tf.keras.layers.Conv2D(filters, 3, padding="same", use_bias=False)(x)
  bn = tf.keras.layers.BatchNormalization(momentum=0.9)
  return tf.nn.relu(bn(x, training=training))


def fully_connected(x, units, training):
  x = tf.keras.layers.Dense(units, use_bias=False)(x)
  return tf.keras.layers.BatchNormalization()(x, training=training)


def model_fn(features, labels, mode, params):
  in_training = mode == tf.estimator.ModeKeys.TRAIN
  net = convolved(features["image"], params["filters"], in_training)
  net = fully_connected(tf.layers.flatten(net), params["hidden"], in_training)
  logits = tf.keras.layers.Dense(2)(tf.nn.relu(net))
  loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
  if mode == tf.estimator.ModeKeys.EVAL:
    accuracy = tf.metrics.accuracy(labels=labels, predictions=tf.argmax(logits, 1))
    return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops={"accuracy": accuracy})
  update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
  optimizer = tf.train.AdamOptimizer(learning_rate=0.01)
  with tf.control_dependencies(update_ops):
    train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--model-dir", default="/tmp/keras_batch_norm")
  parser.add_argument("--train-steps", type=int, default=30)
  args = parser.parse_args()
  tf.logging.set_verbosity(tf.logging.INFO)
  estimator = tf.estimator.Estimator(model_fn, model_dir=args.model_dir, params={"filters": 3, "hidden": 8})
  estimator.train(input_fn, max_steps=args.train_steps)
  print(estimator.evaluate(eval_input_fn))


if __name__ == "__main__":
  main()
