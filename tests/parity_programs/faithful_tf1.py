"""A model_fn tier 1 cannot translate (issue 30's shape (a)), kept as written by tier 2: its net built by a helper
in a loop over params["hidden_units"], a hand-written softmax cross-entropy, tf.cond on the mode, get_variable with
an L2 regularizer added through tf.losses.get_regularization_loss(); eval metrics; checkpoints in model_dir."""
import argparse

import numpy as np
import tensorflow.compat.v1 as tf


def examples(seed):
  rng = np.random.RandomState(seed)
  x = rng.normal(size=(96, 4)).astype(np.float32)
  y = (x[:, 0] + x[:, 1] > 0).astype(np.int64) + (x[:, 2] > 1).astype(np.int64)
  return {"x": x}, y


def train_input_fn():
  return tf.data.Dataset.from_tensor_slices(examples(0)).repeat().batch(16)


def eval_input_fn():
  return tf.data.Dataset.from_tensor_slices(examples(1)).batch(16)


def dense_stack(net, hidden_units, training):
  for index, units in enumerate(hidden_units):
    net = tf.layers.dense(net, units, activation=tf.nn.relu, name="hidden_%d" % index)
    net = tf.cond(training, lambda: net * 0.9, lambda: net)
  return net


def model_fn(features, labels, mode, params):
  training = tf.constant(mode == tf.estimator.ModeKeys.TRAIN)
  net = dense_stack(features["x"], params["hidden_units"], training)
  weights = tf.get_variable("logits_w", [params["hidden_units"][-1], 3],
                            regularizer=lambda w: 0.01 * tf.nn.l2_loss(w))
  logits = tf.matmul(net, weights)
  onehot = tf.one_hot(labels, 3)
  loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=onehot, logits=logits))
  loss += tf.losses.get_regularization_loss()
  if mode == tf.estimator.ModeKeys.EVAL:
    accuracy = tf.metrics.accuracy(labels=labels, predictions=tf.argmax(logits, 1))
    metrics = {"accuracy": accuracy, "mean_logit": tf.metrics.mean(logits)}
    return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops=metrics)
  optimizer = tf.train.AdamOptimizer(params["learning_rate"])
  train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--model_dir", default="model")
  parser.add_argument("--train_steps", type=int, default=30)
  args = parser.parse_args()
  params = {"hidden_units": [16, 8], "learning_rate": 0.01}
  config = tf.estimator.RunConfig(model_dir=args.model_dir, tf_random_seed=1, save_checkpoints_steps=10)
  estimator = tf.estimator.Estimator(model_fn, params=params, config=config)
  train_spec = tf.estimator.TrainSpec(train_input_fn, max_steps=args.train_steps)
  eval_spec = tf.estimator.EvalSpec(eval_input_fn, steps=None)
  metrics, _ = tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)
  print("eval loss: %s, accuracy %s, mean logit %s" % (metrics["loss"], metrics["accuracy"], metrics["mean_logit"]))


if __name__ == "__main__":
  main()
