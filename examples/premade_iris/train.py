"""The premade-estimator program of the TensorFlow 1 tutorials, on iris-like data.

A canned ``tf.estimator.DNNClassifier`` (v2: this module's ``tf`` is TF 2's) on four
numeric feature columns made in a loop over the data's keys, three classes, two hidden
layers of 10 units, built and driven in ``main(argv)`` under ``tf.compat.v1.app.run``
with its batch size and steps from argparse. The data are three Gaussian blobs drawn
with a fixed seed, in the shape of the iris CSV files.

Run: python examples/premade_iris/train.py [--batch_size 120] [--train_steps 20]
"""
import argparse
import shutil
import tempfile

import numpy as np
import tensorflow as tf

parser = argparse.ArgumentParser()
parser.add_argument("--batch_size", default=120, type=int, help="batch size")
parser.add_argument("--train_steps", default=20, type=int, help="number of training steps")

CSV_COLUMN_NAMES = ["SepalLength", "SepalWidth", "PetalLength", "PetalWidth", "Species"]
SPECIES = ["Setosa", "Versicolor", "Virginica"]


def load_data(seed=0):
  """(train_x, train_y), (test_x, test_y): dicts of feature columns and class ids."""
  rng = np.random.RandomState(seed)
  centres = np.array([[5.0, 3.4, 1.5, 0.2], [5.9, 2.8, 4.3, 1.3], [6.6, 3.0, 5.6, 2.0]])
  labels = np.repeat(np.arange(3), 50)
  rows = (centres[labels] + rng.normal(scale=0.3, size=(150, 4))).astype(np.float32)
  order = rng.permutation(150)
  rows, labels = rows[order], labels[order]
  names = CSV_COLUMN_NAMES[:4]
  split = lambda part: ({name: part[0][:, i] for i, name in enumerate(names)}, part[1])
  return split((rows[:120], labels[:120])), split((rows[120:], labels[120:]))


def train_input_fn(features, labels, batch_size):
  dataset = tf.data.Dataset.from_tensor_slices((dict(features), labels))
  return dataset.shuffle(1000).repeat().batch(batch_size)


def eval_input_fn(features, labels, batch_size):
  dataset = tf.data.Dataset.from_tensor_slices((dict(features), labels))
  return dataset.batch(batch_size)


def main(argv):
  args = parser.parse_args(argv[1:])
  (train_x, train_y), (test_x, test_y) = load_data()

  my_feature_columns = []
  for key in train_x.keys():
    my_feature_columns.append(tf.feature_column.numeric_column(key=key))

  model_dir = tempfile.mkdtemp()
  config = tf.estimator.RunConfig(model_dir=model_dir, tf_random_seed=7, log_step_count_steps=1)
  classifier = tf.estimator.DNNClassifier(
      feature_columns=my_feature_columns,
      hidden_units=[10, 10],
      n_classes=3,
      config=config)

  classifier.train(
      input_fn=lambda: train_input_fn(train_x, train_y, args.batch_size),
      steps=args.train_steps)

  eval_result = classifier.evaluate(
      input_fn=lambda: eval_input_fn(test_x, test_y, args.batch_size))
  print("eval accuracy: {accuracy:0.3f}, eval loss: {average_loss:0.4f}".format(**eval_result))
  shutil.rmtree(model_dir)


if __name__ == "__main__":
  tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)
  tf.compat.v1.app.run(main)
