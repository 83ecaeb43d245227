"""A trainer written the 2018 way (issue 29): argparse main(), a --model_dir flag with a default folder beside
the program, a CSV read with TextLineDataset + decode_csv, 200 evaluation rows in batches of 32 (six full batches
and one of 8), EvalSpec(steps=7). The CSV files are made by the program, in its temporary folder."""
import argparse
import os
import tempfile

import numpy as np
import tensorflow.compat.v1 as tf

COLUMNS = ["a", "b", "label"]
DEFAULTS = [[0.0], [0.0], [0.0]]


def write_csv(path, rows, seed):
  rng = np.random.RandomState(seed)
  x = rng.normal(size=(rows, 2))
  y = x @ np.array([0.5, -1.0]) + 0.1
  with open(path, "w") as out:
    out.write(",".join(COLUMNS) + "\n")
    for (a, b), label in zip(x, y):
      out.write(f"{a:.6f},{b:.6f},{label:.6f}\n")


def parse(line):
  fields = tf.decode_csv(line, record_defaults=DEFAULTS)
  features = dict(zip(COLUMNS, fields))
  label = features.pop("label")
  return features, label


def make_input_fn(path, batch_size, training):
  def _input_fn():
    dataset = tf.data.TextLineDataset(path).skip(1).map(parse)
    if training:
      dataset = dataset.repeat()
    return dataset.batch(batch_size)
  return _input_fn


def model_fn(features, labels, mode):
  columns = [tf.feature_column.numeric_column("a"), tf.feature_column.numeric_column("b")]
  net = tf.feature_column.input_layer(features, columns)
  net = tf.layers.dense(net, 8, activation=tf.nn.relu)
  logits = tf.layers.dense(net, 1)
  predictions = tf.squeeze(logits, axis=1)
  loss = tf.losses.mean_squared_error(labels, predictions)
  train_op = tf.train.GradientDescentOptimizer(0.05).minimize(loss, global_step=tf.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--model_dir", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "model"))
  parser.add_argument("--train_steps", type=int, default=100)
  args = parser.parse_args()
  data = tempfile.mkdtemp()
  train_csv, eval_csv = os.path.join(data, "train.csv"), os.path.join(data, "eval.csv")
  write_csv(train_csv, 1000, seed=0)
  write_csv(eval_csv, 200, seed=1)
  config = tf.estimator.RunConfig(model_dir=args.model_dir, tf_random_seed=3, save_checkpoints_steps=100)
  estimator = tf.estimator.Estimator(model_fn=model_fn, config=config)
  train_spec = tf.estimator.TrainSpec(make_input_fn(train_csv, 32, True), max_steps=args.train_steps)
  eval_spec = tf.estimator.EvalSpec(make_input_fn(eval_csv, 32, False), steps=7)
  metrics, _ = tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)
  print("eval loss", metrics["loss"])


if __name__ == "__main__":
  main()
