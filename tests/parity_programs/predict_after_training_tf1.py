"""A notebook's habit (training-data-analyst's b_estimator): a canned LinearRegressor trained and evaluated, then a
second one made on the same model_dir only to predict with the trained model ("Read the saved model and use it for
prediction").

Run: python tests/parity_programs/predict_after_training_tf1.py (in a folder of its own: it writes taxi_trained/)
"""
import itertools
import shutil

import numpy as np
import tensorflow as tf

FEATURES = ["pickuplon", "pickuplat", "passengers"]
rng = np.random.RandomState(4)
TRAIN = {key: rng.uniform(size=64).astype(np.float32) for key in FEATURES}
VALID = {key: rng.uniform(size=32).astype(np.float32) for key in FEATURES}
TRAIN_Y = TRAIN["pickuplon"] * 3 + TRAIN["passengers"]
VALID_Y = VALID["pickuplon"] * 3 + VALID["passengers"]
OUTDIR = "taxi_trained"


def make_input_fn(x, y, num_epochs):
  return tf.compat.v1.estimator.inputs.numpy_input_fn(
      x=x, y=y, batch_size=16, num_epochs=num_epochs, shuffle=False)


def make_feature_cols():
  return [tf.feature_column.numeric_column(k) for k in FEATURES]


shutil.rmtree(OUTDIR, ignore_errors=True)  # start fresh each time
model = tf.estimator.LinearRegressor(feature_columns=make_feature_cols(), model_dir=OUTDIR)
model.train(input_fn=make_input_fn(TRAIN, TRAIN_Y, num_epochs=10))


def print_rmse(model, name, x, y):
  metrics = model.evaluate(input_fn=make_input_fn(x, y, 1))
  print("RMSE on {} dataset = {}".format(name, np.sqrt(metrics["average_loss"])))


print_rmse(model, "validation", VALID, VALID_Y)

# Read the saved model and use it for prediction
model = tf.estimator.LinearRegressor(feature_columns=make_feature_cols(), model_dir=OUTDIR)
preds_iter = model.predict(input_fn=make_input_fn(VALID, None, 1))
print([pred["predictions"][0] for pred in list(itertools.islice(preds_iter, 5))])
