"""A canned regressor wrapped as Google's training notebooks wrapped it (training-data-analyst's 06_structured
5_train): `add_metrics(estimator, my_rmse)`, then a `forward_features(estimator, key)` of the program's own (not
tf.contrib's), so that batch predictions carry each example's key; trained and exported by train_and_evaluate, then
predicting on the evaluation rows. TF1 forwarded the key to `predict` only: the exported signatures lack it.

Run: python tests/parity_programs/forward_features_by_hand_tf1.py --model-dir /tmp/m
"""
import argparse

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()
tf.logging.set_verbosity(tf.logging.INFO)

KEY_COLUMN = "key"
rng = np.random.RandomState(3)
ROWS = 64
FEATURES = {"x": rng.uniform(size=(ROWS,)).astype(np.float32), "z": rng.uniform(size=(ROWS,)).astype(np.float32),
            KEY_COLUMN: np.array(["row%d" % i for i in range(ROWS)])}
LABELS = (2 * FEATURES["x"] - FEATURES["z"]).astype(np.float32)


def input_fn():
  return tf.data.Dataset.from_tensor_slices((FEATURES, LABELS)).repeat().batch(16)


def eval_input_fn():
  return tf.data.Dataset.from_tensor_slices((FEATURES, LABELS)).batch(16)


def serving_input_fn():
  inputs = {"x": tf.placeholder(tf.float32, [None]), "z": tf.placeholder(tf.float32, [None]),
            KEY_COLUMN: tf.placeholder_with_default(tf.constant(["nokey"]), [None])}
  features = {key: tf.expand_dims(tensor, -1) for key, tensor in inputs.items()}
  return tf.estimator.export.ServingInputReceiver(features, inputs)


def my_rmse(labels, predictions):
  pred_values = predictions["predictions"]
  return {"rmse": tf.metrics.root_mean_squared_error(labels, pred_values)}


def forward_features(estimator, key):
  def new_model_fn(features, labels, mode, config):
    spec = estimator.model_fn(features, labels, mode, config)
    predictions = spec.predictions
    predictions[key] = features[key]
    spec = spec._replace(predictions=predictions)
    return spec
  return tf.estimator.Estimator(model_fn=new_model_fn, model_dir=estimator.model_dir, config=estimator.config)


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--model-dir", default="/tmp/forward_features_by_hand")
  parser.add_argument("--train-steps", type=int, default=20)
  args = parser.parse_args()
  run_config = tf.estimator.RunConfig(save_checkpoints_secs=300, keep_checkpoint_max=3)
  estimator = tf.estimator.LinearRegressor(
      feature_columns=[tf.feature_column.numeric_column("x"), tf.feature_column.numeric_column("z")],
      model_dir=args.model_dir, config=run_config)
  estimator = tf.estimator.add_metrics(estimator, my_rmse)
  estimator = forward_features(estimator, KEY_COLUMN)
  exporter = tf.estimator.LatestExporter("exporter", serving_input_fn)
  tf.estimator.train_and_evaluate(estimator, tf.estimator.TrainSpec(input_fn, max_steps=args.train_steps),
                                  tf.estimator.EvalSpec(eval_input_fn, steps=None, exporters=exporter))
  for prediction in estimator.predict(eval_input_fn):
    print("predicted %s %.9g" % (prediction[KEY_COLUMN].decode(), prediction["predictions"][0]))


if __name__ == "__main__":
  main()
