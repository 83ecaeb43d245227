"""Census income, wide & deep: a canned DNNLinearCombinedClassifier as the TF 1.x tutorial wrote it.

The program writes its own census-like CSV (age, education, occupation, hours, income bracket),
reads it back with ``TextLineDataset`` + ``decode_csv``, and trains a
``tf.compat.v1.estimator.DNNLinearCombinedClassifier`` (v1, what TF 1.x's ``tf.estimator`` was):
the wide part on bucketized, vocabulary-list, hash-bucket and crossed columns, the deep part on a
numeric column, an indicator column and an embedding column. ``build_estimator()`` makes it,
``main`` trains it for ``--train_steps`` and evaluates it.

Run: python examples/census_wide_deep/train.py [--train_steps 20]
"""
import argparse
import os
import shutil
import tempfile

import numpy as np
import tensorflow as tf

CSV_COLUMNS = ["age", "education", "occupation", "hours_per_week", "income_bracket"]
CSV_DEFAULTS = [[0.0], [""], [""], [0.0], [""]]
EDUCATION = ["Bachelors", "HS-grad", "Masters", "Doctorate", "Some-college"]
OCCUPATIONS = ["Tech-support", "Sales", "Exec-managerial", "Craft-repair", "Farming-fishing",
               "Adm-clerical"]

parser = argparse.ArgumentParser()
parser.add_argument("--train_steps", type=int, default=20)
parser.add_argument("--batch_size", type=int, default=32)


def write_census_csv(path, rows, seed):
  """A census-like CSV: some educations outside the vocabulary, some occupations empty."""
  rng = np.random.RandomState(seed)
  with open(path, "w") as f:
    for _ in range(rows):
      age = rng.randint(17, 80)
      education = rng.choice(EDUCATION + ["Preschool"])
      occupation = rng.choice(OCCUPATIONS + [""])
      hours = rng.randint(10, 70)
      score = (education in ("Masters", "Doctorate")) + (hours > 45) + (age > 40) + rng.normal()
      rich = score > 1.5
      f.write("%d,%s,%s,%d,%s\n" % (age, education, occupation, hours, ">50K" if rich else "<=50K"))


def input_fn(data_file, num_epochs, shuffle, batch_size):
  def parse_csv(value):
    columns = tf.io.decode_csv(value, record_defaults=CSV_DEFAULTS)
    features = dict(zip(CSV_COLUMNS, columns))
    labels = features.pop("income_bracket")
    return features, tf.equal(labels, ">50K")

  dataset = tf.data.TextLineDataset(data_file)
  if shuffle:
    dataset = dataset.shuffle(buffer_size=1000, seed=3)
  dataset = dataset.map(parse_csv)
  return dataset.repeat(num_epochs).batch(batch_size)


def build_estimator(model_dir):
  age = tf.feature_column.numeric_column("age")
  hours = tf.feature_column.numeric_column("hours_per_week")
  education = tf.feature_column.categorical_column_with_vocabulary_list("education", EDUCATION)
  occupation = tf.feature_column.categorical_column_with_hash_bucket("occupation", hash_bucket_size=20)
  age_buckets = tf.feature_column.bucketized_column(age, boundaries=[18, 25, 30, 35, 40, 45, 50, 55, 60, 65])

  wide_columns = [education, occupation, age_buckets,
                  tf.feature_column.crossed_column([age_buckets, "education"], hash_bucket_size=50)]
  deep_columns = [hours,
                  tf.feature_column.indicator_column(education),
                  tf.feature_column.embedding_column(occupation, dimension=4)]

  config = tf.estimator.RunConfig(model_dir=model_dir, tf_random_seed=7, log_step_count_steps=1)
  return tf.compat.v1.estimator.DNNLinearCombinedClassifier(
      model_dir=model_dir,
      linear_feature_columns=wide_columns,
      dnn_feature_columns=deep_columns,
      dnn_hidden_units=[16, 8],
      config=config)


def main(argv):
  args = parser.parse_args(argv[1:])
  data_dir = tempfile.mkdtemp()
  train_file = os.path.join(data_dir, "adult.data")
  test_file = os.path.join(data_dir, "adult.test")
  write_census_csv(train_file, 512, seed=1)
  write_census_csv(test_file, 128, seed=2)

  model_dir = tempfile.mkdtemp()
  model = build_estimator(model_dir)
  model.train(input_fn=lambda: input_fn(train_file, None, True, args.batch_size), max_steps=args.train_steps)
  results = model.evaluate(input_fn=lambda: input_fn(test_file, 1, False, args.batch_size))
  for key in sorted(results):
    print("eval %s: %s" % (key, results[key]))
  shutil.rmtree(model_dir)
  shutil.rmtree(data_dir)


if __name__ == "__main__":
  tf.compat.v1.app.run(main)
