"""A wide-and-deep program in the shape of Google's babyweight and taxifare trainers: the feature columns' sizes are
module globals the command line sets before the columns are made (`model.NEMBEDS = args.nembeds`), so only the
running program knows its buckets' boundaries (`np.linspace` of `NBUCKETS`), its crossed column's buckets and its
embedding's dimension.

Run (on TF 1.x): python tests/parity_programs/runtime_columns_tf1.py --model-dir /tmp/m --nbuckets 4 --nembeds 2
"""
import argparse

import numpy as np
import tensorflow.compat.v1 as tf

NBUCKETS = 10
NEMBEDS = 3
KINDS = ["Single(1)", "Twins(2)", "Triplets(3)"]

rng = np.random.RandomState(11)
ROWS = 96
FEATURES = {"gestation": rng.uniform(size=(ROWS, 1)).astype(np.float32),
            "mother_age": rng.uniform(size=(ROWS, 1)).astype(np.float32),
            "plurality": np.array(KINDS + ["Multiple(2+)"])[rng.randint(0, 4, size=(ROWS, 1))]}
LABELS = (3 * FEATURES["gestation"] + FEATURES["mother_age"] * (FEATURES["plurality"] == "Single(1)")).astype(np.float32)


def get_wide_deep():
  plurality = tf.feature_column.categorical_column_with_vocabulary_list("plurality", KINDS)
  gestation = tf.feature_column.numeric_column("gestation")
  mother_age = tf.feature_column.numeric_column("mother_age")
  gestation_buckets = tf.feature_column.bucketized_column(gestation, np.linspace(0, 1, NBUCKETS).tolist())
  age_buckets = tf.feature_column.bucketized_column(mother_age, np.linspace(0, 1, NBUCKETS).tolist())
  wide = [plurality, gestation_buckets, age_buckets]
  crossed = tf.feature_column.crossed_column(wide, hash_bucket_size=NBUCKETS * NBUCKETS * 4)
  deep = [gestation, mother_age, tf.feature_column.embedding_column(crossed, NEMBEDS)]
  return wide, deep


def input_fn():
  return tf.data.Dataset.from_tensor_slices((FEATURES, LABELS)).repeat().batch(16)


def eval_input_fn():
  return tf.data.Dataset.from_tensor_slices((FEATURES, LABELS)).batch(32)


def train_and_evaluate(output_dir, train_steps):
  wide, deep = get_wide_deep()
  estimator = tf.estimator.DNNLinearCombinedRegressor(
      model_dir=output_dir, linear_feature_columns=wide, dnn_feature_columns=deep, dnn_hidden_units=[8, 4])
  train_spec = tf.estimator.TrainSpec(input_fn, max_steps=train_steps)
  eval_spec = tf.estimator.EvalSpec(eval_input_fn, steps=None, throttle_secs=1)
  metrics, _ = tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)
  return metrics


def main():
  global NBUCKETS, NEMBEDS
  parser = argparse.ArgumentParser()
  parser.add_argument("--model-dir", default="/tmp/runtime_columns")
  parser.add_argument("--train-steps", type=int, default=30)
  parser.add_argument("--nbuckets", type=int, default=5)
  parser.add_argument("--nembeds", type=int, default=4)
  args = parser.parse_args()
  NBUCKETS, NEMBEDS = args.nbuckets, args.nembeds
  metrics = train_and_evaluate(args.model_dir, args.train_steps)
  print("average_loss %s" % metrics["average_loss"])


if __name__ == "__main__":
  main()
