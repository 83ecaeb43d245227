"""A model_fn building its loss, train op and eval metrics in helpers of its module, each returning a value in some
modes and None in the others, as tensorflow-without-a-phd's MNIST trainer (mlengine/trainer/task.py) did: the
learning rate a floor plus an exponential decay of the global step, computed by another helper; Adam through
create_train_op (tf-slim's: tf.contrib.training's code); a batch norm of a momentum from params, and dropout.
tests/test_faithful_helpers.py proves tf-migrate's migration of it against it."""
import argparse
import math

import tensorflow.compat.v1 as tf
import tf_slim


def input_fn():
  rows = [[0.1 * ((3 * i + j) % 7) - 0.3 for j in range(6)] for i in range(16)]
  labels = [i % 3 for i in range(16)]
  return tf.data.Dataset.from_tensor_slices(({"x": rows}, labels)).repeat().batch(4)


# Learning rate with exponential decay and min value
def learn_rate(params, step):
  return params["lr1"] + tf.train.exponential_decay(params["lr0"], step, params["lr2"], 1 / math.e)


def model_loss(logits, labels, mode):
  if mode == tf.estimator.ModeKeys.TRAIN or mode == tf.estimator.ModeKeys.EVAL:
    loss = tf.reduce_mean(tf.losses.softmax_cross_entropy(tf.one_hot(labels, 3), logits)) * 100
    return loss
  else:
    return None


def model_train_op(loss, mode, params):
  if mode == tf.estimator.ModeKeys.TRAIN:
    lr = learn_rate(params, tf.train.get_or_create_global_step())
    tf.summary.scalar("learn_rate", lr)
    optimizer = tf.train.AdamOptimizer(lr)
    return tf_slim.training.create_train_op(loss, optimizer)
  else:
    return None


def model_eval_metrics(classes, labels, mode):
  if mode == tf.estimator.ModeKeys.TRAIN or mode == tf.estimator.ModeKeys.EVAL:
    accuracy = tf.metrics.accuracy(classes, labels)
    return {"accuracy": accuracy}
  else:
    return None


def model_fn(features, labels, mode, params):
  training = mode == tf.estimator.ModeKeys.TRAIN
  x = tf.layers.dense(features["x"], 8, use_bias=False)  # the batch norm centres it
  x = tf.nn.relu(tf.layers.batch_normalization(x, momentum=params["bnexp"], training=training))
  x = tf.layers.dropout(x, rate=params["dropout"], training=training)
  logits = tf.layers.dense(x, 3)
  classes = tf.argmax(logits, 1)
  loss = model_loss(logits, labels, mode)
  train_op = model_train_op(loss, mode, params)
  eval_metrics = model_eval_metrics(classes, labels, mode)
  return tf.estimator.EstimatorSpec(mode=mode, predictions={"classes": classes}, loss=loss, train_op=train_op,
                                    eval_metric_ops=eval_metrics)


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--model_dir", default="model")
  parser.add_argument("--train_steps", type=int, default=20)
  args = parser.parse_args()
  params = {"lr0": 0.05, "lr1": 0.001, "lr2": 5, "bnexp": 0.9, "dropout": 0.0}
  estimator = tf.estimator.Estimator(model_fn, params=params, config=tf.estimator.RunConfig(
      model_dir=args.model_dir, tf_random_seed=3, save_checkpoints_steps=10))
  estimator.train(input_fn, max_steps=args.train_steps)
  metrics = estimator.evaluate(input_fn, steps=2)
  print("eval loss %s, accuracy %s" % (metrics["loss"], metrics["accuracy"]))


if __name__ == "__main__":
  main()
