"""The taxifare trainers' shape (training-data-analyst's feateng and Cloud Composer taxifare): `build_estimator(model_dir,
nbuckets, hidden_units)` computes the feature columns from its parameters (bucket boundaries of `np.linspace` of
`nbuckets`, crossed columns of `nbuckets * nbuckets` buckets) and returns the wide-and-deep estimator it makes on them;
`train_and_evaluate(args)` calls it with the command line's values.

Run (on TF 1.x): python tests/parity_programs/factory_columns_tf1.py --output_dir /tmp/m --nbuckets 4
"""
import argparse

import numpy as np
import tensorflow.compat.v1 as tf

INPUT_COLUMNS = [
    tf.feature_column.categorical_column_with_vocabulary_list("dayofweek", ["Sun", "Mon", "Tue"]),
    tf.feature_column.numeric_column("pickuplat"),
    tf.feature_column.numeric_column("pickuplon"),
    tf.feature_column.numeric_column("passengers"),
]

rng = np.random.RandomState(7)
ROWS = 96
FEATURES = {"dayofweek": rng.choice(["Sun", "Mon", "Tue", "Wed"], (ROWS, 1)),
            "pickuplat": rng.uniform(38, 42, (ROWS, 1)).astype(np.float32),
            "pickuplon": rng.uniform(-76, -72, (ROWS, 1)).astype(np.float32),
            "passengers": rng.randint(1, 5, (ROWS, 1)).astype(np.float32)}
LABELS = (FEATURES["pickuplat"] - 38 + 2 * FEATURES["passengers"]).astype(np.float32)


def build_estimator(model_dir, nbuckets, hidden_units):
  """Build an estimator starting from INPUT_COLUMNS: a wide-and-deep model."""
  (dayofweek, plat, plon, pcount) = INPUT_COLUMNS
  latbuckets = np.linspace(38.0, 42.0, nbuckets).tolist()
  lonbuckets = np.linspace(-76.0, -72.0, nbuckets).tolist()
  b_plat = tf.feature_column.bucketized_column(plat, latbuckets)
  b_plon = tf.feature_column.bucketized_column(plon, lonbuckets)
  ploc = tf.feature_column.crossed_column([b_plat, b_plon], nbuckets * nbuckets)
  wide_columns = [ploc, dayofweek, pcount]
  deep_columns = [tf.feature_column.embedding_column(ploc, 3), plat, plon]
  run_config = tf.estimator.RunConfig(save_checkpoints_secs=30, keep_checkpoint_max=3)
  estimator = tf.estimator.DNNLinearCombinedRegressor(
      model_dir=model_dir, linear_feature_columns=wide_columns, dnn_feature_columns=deep_columns,
      dnn_hidden_units=hidden_units, config=run_config)
  return estimator


def read_dataset(mode):
  def _input_fn():
    dataset = tf.data.Dataset.from_tensor_slices((FEATURES, LABELS))
    if mode == tf.estimator.ModeKeys.TRAIN:
      return dataset.repeat().batch(16)
    return dataset.batch(32)
  return _input_fn


def train_and_evaluate(args):
  estimator = build_estimator(args["output_dir"], args["nbuckets"], args["hidden_units"])
  train_spec = tf.estimator.TrainSpec(input_fn=read_dataset(tf.estimator.ModeKeys.TRAIN),
                                      max_steps=args["train_steps"])
  eval_spec = tf.estimator.EvalSpec(input_fn=read_dataset(tf.estimator.ModeKeys.EVAL), steps=None,
                                    throttle_secs=1)
  tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)


if __name__ == "__main__":
  parser = argparse.ArgumentParser()
  parser.add_argument("--output_dir", default="/tmp/factory_columns")
  parser.add_argument("--train_steps", type=int, default=20)
  parser.add_argument("--nbuckets", type=int, default=5)
  parser.add_argument("--hidden_units", type=int, nargs="+", default=[8, 4])
  train_and_evaluate(parser.parse_args().__dict__)
