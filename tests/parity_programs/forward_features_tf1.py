"""A canned regressor as TF 1.x's babyweight trainer wrapped it: `tf.contrib.estimator.forward_features(estimator,
KEY_COLUMN)`, so that batch predictions and the exported `predict` signature carry each example's key; trained and
exported by train_and_evaluate, then predicting on the evaluation rows.

Run (on TF 1.x): python tests/parity_programs/forward_features_tf1.py --model-dir /tmp/m
"""
import argparse

import numpy as np
import tensorflow as tf

tf.logging.set_verbosity(tf.logging.INFO)

KEY_COLUMN = "key"
rng = np.random.RandomState(2)
ROWS = 64
FEATURES = {"x": rng.uniform(size=(ROWS,)).astype(np.float32), KEY_COLUMN: np.array(["row%d" % i for i in range(ROWS)])}
LABELS = (2 * FEATURES["x"]).astype(np.float32)


def input_fn():
  return tf.data.Dataset.from_tensor_slices((FEATURES, LABELS)).repeat().batch(16)


def eval_input_fn():
  return tf.data.Dataset.from_tensor_slices((FEATURES, LABELS)).batch(16)


def serving_input_fn():
  inputs = {"x": tf.placeholder(tf.float32, [None]),
            KEY_COLUMN: tf.placeholder_with_default(tf.constant(["nokey"]), [None])}
  features = {key: tf.expand_dims(tensor, -1) for key, tensor in inputs.items()}
  return tf.estimator.export.ServingInputReceiver(features, inputs)


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--model-dir", default="/tmp/forward_features")
  parser.add_argument("--train-steps", type=int, default=20)
  args = parser.parse_args()
  estimator = tf.estimator.DNNRegressor(hidden_units=[4], feature_columns=[tf.feature_column.numeric_column("x")],
                                        model_dir=args.model_dir)
  estimator = tf.contrib.estimator.forward_features(estimator, KEY_COLUMN)
  exporter = tf.estimator.LatestExporter("exporter", serving_input_fn)
  tf.estimator.train_and_evaluate(estimator, tf.estimator.TrainSpec(input_fn, max_steps=args.train_steps),
                                  tf.estimator.EvalSpec(eval_input_fn, steps=None, exporters=exporter))
  for prediction in estimator.predict(eval_input_fn):
    print("predicted %s %s" % (prediction[KEY_COLUMN], prediction["predictions"]))


if __name__ == "__main__":
  main()
