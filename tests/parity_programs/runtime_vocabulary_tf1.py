"""The Titanic tutorial's shape (tensorflow/docs, tutorials/estimator/linear): each categorical column's vocabulary is
read from the training data as the program runs (`dftrain[feature_name].unique()`), its key the loop's, strings for
some columns and integers for others; here a wide-and-deep classifier weighs them and a crossed column of one
(the wide part) and embeds them (the deep part).

Run (on TF 1.x): python tests/parity_programs/runtime_vocabulary_tf1.py --model-dir /tmp/m
"""
import argparse

import numpy as np
import pandas as pd
import tensorflow.compat.v1 as tf

rng = np.random.RandomState(5)
ROWS = 96
dftrain = pd.DataFrame({
    "sex": rng.choice(["male", "female"], ROWS),
    "n_siblings_spouses": rng.randint(0, 4, ROWS),
    "class": rng.choice(["First", "Second", "Third"], ROWS),
    "age": rng.uniform(1, 80, ROWS).astype(np.float32),
    "fare": rng.uniform(5, 100, ROWS).astype(np.float32)})
y_train = ((dftrain["sex"] == "female") | (dftrain["class"] == "First")).astype(np.int64)
dfeval = dftrain.sample(frac=0.5, random_state=1)
dfeval.loc[dfeval.index[:3], "class"] = "Crew"  # not in the vocabulary: TF1 drops it
y_eval = y_train[dfeval.index]

CATEGORICAL_COLUMNS = ["sex", "n_siblings_spouses", "class"]
NUMERIC_COLUMNS = ["age", "fare"]

feature_columns, deep_columns = [], []
for feature_name in CATEGORICAL_COLUMNS:
  vocabulary = dftrain[feature_name].unique()
  categorical = tf.feature_column.categorical_column_with_vocabulary_list(feature_name, vocabulary)
  feature_columns.append(categorical)
  deep_columns.append(tf.feature_column.embedding_column(categorical, 2))
  if feature_name == "class":
    feature_columns.append(tf.feature_column.crossed_column([categorical, "sex"], hash_bucket_size=7))

for feature_name in NUMERIC_COLUMNS:
  feature_columns.append(tf.feature_column.numeric_column(feature_name, dtype=tf.float32))


def make_input_fn(data_df, label_df, num_epochs=10, shuffle=True, batch_size=16):
  def input_function():
    ds = tf.data.Dataset.from_tensor_slices((dict(data_df), label_df))
    if shuffle:
      ds = ds.shuffle(1000, seed=3)
    return ds.batch(batch_size).repeat(num_epochs)
  return input_function


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--model-dir", default="/tmp/runtime_vocabulary")
  parser.add_argument("--train-steps", type=int, default=20)
  args = parser.parse_args()
  estimator = tf.estimator.DNNLinearCombinedClassifier(
      model_dir=args.model_dir, linear_feature_columns=feature_columns,
      dnn_feature_columns=deep_columns, dnn_hidden_units=[4])
  estimator.train(make_input_fn(dftrain, y_train), max_steps=args.train_steps)
  result = estimator.evaluate(make_input_fn(dfeval, y_eval, num_epochs=1, shuffle=False))
  print("accuracy %s" % result["accuracy"])


if __name__ == "__main__":
  main()
