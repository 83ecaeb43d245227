"""An Estimator program as TF 1.x wrote it, whose model_fn looks things up in tf.contrib.lookup's tables: the
words of a vocabulary file (an out-of-vocabulary bucket for the rest) and the class names the labels are.

Run (on TF 1.x): python tests/parity_programs/lookup_tables_tf1.py --model-dir /tmp/m
"""
import argparse
import os
import tempfile

import numpy as np
import tensorflow as tf

CLASSES = ["bird", "cat", "dog"]
WORDS = os.path.join(tempfile.mkdtemp(), "words.txt")
with open(WORDS, "w") as vocabulary:
  vocabulary.write("red\ngreen\nblue\n")

rng = np.random.RandomState(3)
FEATURES = {"x": rng.normal(size=(96, 4)).astype(np.float32),
            "word": np.array(["red", "green", "blue", "pink", "grey"])[rng.randint(0, 5, size=96)]}
LABELS = np.array(CLASSES)[(FEATURES["x"][:, 0] > 0).astype(int) + (FEATURES["word"] == "red")]


def input_fn():
  return tf.data.Dataset.from_tensor_slices((FEATURES, LABELS)).repeat().batch(16)


def eval_input_fn():
  return tf.data.Dataset.from_tensor_slices((FEATURES, LABELS)).batch(32)


def model_fn(features, labels, mode, params):
  words = tf.contrib.lookup.index_table_from_file(WORDS, num_oov_buckets=1)
  embeddings = tf.get_variable("words", [4, 3])
  net = tf.concat([features["x"], tf.nn.embedding_lookup(embeddings, words.lookup(features["word"]))], axis=1)
  logits = tf.layers.dense(tf.layers.dense(net, params["hidden"], tf.nn.relu), len(CLASSES))
  classes = tf.contrib.lookup.index_table_from_tensor(mapping=tf.constant(CLASSES, dtype=tf.string))
  labels = classes.lookup(labels)
  loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
  if mode == tf.estimator.ModeKeys.EVAL:
    accuracy = tf.metrics.accuracy(labels=labels, predictions=tf.argmax(logits, 1))
    return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops={"accuracy": accuracy})
  optimizer = tf.train.AdamOptimizer(learning_rate=0.01)
  train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--model-dir", default="/tmp/lookup_tables")
  parser.add_argument("--train-steps", type=int, default=30)
  args = parser.parse_args()
  estimator = tf.estimator.Estimator(model_fn, model_dir=args.model_dir, params={"hidden": 8})
  metrics, _ = tf.estimator.train_and_evaluate(
      estimator,
      tf.estimator.TrainSpec(input_fn, max_steps=args.train_steps),
      tf.estimator.EvalSpec(eval_input_fn, steps=None, throttle_secs=1))
  print("accuracy %s" % metrics["accuracy"])


if __name__ == "__main__":
  main()
