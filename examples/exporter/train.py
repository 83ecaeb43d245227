"""A trainer that exports its model for serving, in the shape of the Cloud ML Engine samples.

A canned ``DNNClassifier`` of three classes on three numeric feature columns, trained and
evaluated by ``train_and_evaluate``, whose EvalSpec exports SavedModels: a
``LatestExporter`` of serialized ``tf.Example`` requests
(``build_parsing_serving_input_receiver_fn`` of ``make_parse_example_spec``), keeping
the last two, a ``BestExporter`` of the same requests with its default compare function
(the lowest eval loss), and a ``FinalExporter`` of a hand-written serving function whose
placeholders take one value per example. The data are three Gaussian blobs drawn with a
fixed seed.

Run: python examples/exporter/train.py [--train-steps 20] [--model-dir DIR]
(without --model-dir the checkpoints and exports go to a temporary folder, removed at the end)
"""
import argparse
import shutil
import tempfile

import numpy as np
import tensorflow.compat.v1 as tf

FEATURES = ["length", "width", "depth"]


def make_data(rows, seed):
  """`rows` examples: a dict of the features (and of a `key` naming each example, which the model
  does not read and a client does not send) and a class id of 0, 1 or 2."""
  state = np.random.RandomState(seed)
  labels = state.randint(0, 3, size=rows)
  centres = np.array([[1.0, 0.5, 0.2], [2.0, 1.5, 0.8], [3.0, 1.0, 1.6]])
  values = (centres[labels] + 0.3 * state.normal(size=(rows, 3))).astype(np.float32)
  features = {name: values[:, index] for index, name in enumerate(FEATURES)}
  features["key"] = np.array(["%d-%d" % (seed, row) for row in range(rows)])
  return features, labels


def make_input_fn(data, mode, batch_size):
  def input_fn():
    dataset = tf.data.Dataset.from_tensor_slices(data)
    if mode == tf.estimator.ModeKeys.TRAIN:
      dataset = dataset.repeat()
    return dataset.batch(batch_size)
  return input_fn


def serving_input_fn():
  """One value of each feature per example, as a client sends them in JSON."""
  placeholders = {name: tf.placeholder(tf.float32, [None]) for name in FEATURES}
  features = {name: tf.expand_dims(tensor, -1) for name, tensor in placeholders.items()}
  return tf.estimator.export.ServingInputReceiver(features, placeholders)


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--train-steps", type=int, default=20)
  parser.add_argument("--batch-size", type=int, default=16)
  parser.add_argument("--model-dir", help="checkpoints and exports (default: a temporary folder)")
  args = parser.parse_args()

  model_dir = args.model_dir or tempfile.mkdtemp()
  columns = [tf.feature_column.numeric_column(name) for name in FEATURES]
  config = tf.estimator.RunConfig(model_dir=model_dir, tf_random_seed=11, log_step_count_steps=1)
  estimator = tf.estimator.DNNClassifier(hidden_units=[8, 8], feature_columns=columns, n_classes=3, config=config)

  examples = tf.estimator.export.build_parsing_serving_input_receiver_fn(
      tf.feature_column.make_parse_example_spec(columns))
  exporters = [
      tf.estimator.LatestExporter("exporter", examples, exports_to_keep=2),
      tf.estimator.BestExporter(name="best", serving_input_receiver_fn=examples),
      tf.estimator.FinalExporter("final", serving_input_fn),
  ]
  train_spec = tf.estimator.TrainSpec(
      make_input_fn(make_data(256, seed=0), tf.estimator.ModeKeys.TRAIN, args.batch_size),
      max_steps=args.train_steps)
  eval_spec = tf.estimator.EvalSpec(
      make_input_fn(make_data(64, seed=1), tf.estimator.ModeKeys.EVAL, args.batch_size),
      steps=4, exporters=exporters)
  result, _ = tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)
  print("eval loss: %s" % result["loss"])
  print("eval accuracy: %s" % result["accuracy"])
  if not args.model_dir:
    shutil.rmtree(model_dir)


if __name__ == "__main__":
  tf.logging.set_verbosity(tf.logging.INFO)
  main()
