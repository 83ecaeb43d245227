"""A census-style custom Estimator as TF 1.x wrote it (cloudml-samples' census/customestimator): a model_fn made by a
factory reads a vocabulary column, a hashed one and a number through `input_layer`, turns the class names into ids with
a tf.contrib.lookup table, and is exported by a LatestExporter of placeholders per feature and by one of parsed
tf.Examples.

Run (on TF 1.x): python tests/parity_programs/vocabulary_export_tf1.py --model-dir /tmp/m
"""
import argparse

import numpy as np
import tensorflow as tf

CLASSES = [" <=50K", " >50K"]
WORKCLASSES = ["Private", "Self-emp", "Gov"]
OCCUPATIONS = ["Sales", "Tech", "Craft", "Admin", "Farming"]

rng = np.random.RandomState(7)
ROWS = 96
FEATURES = {"age": rng.uniform(18, 70, size=(ROWS, 1)).astype(np.float32),
            "workclass": np.array(WORKCLASSES + ["Never-worked"])[rng.randint(0, 4, size=(ROWS, 1))],
            "occupation": np.array(OCCUPATIONS)[rng.randint(0, 5, size=(ROWS, 1))]}
LABELS = np.array(CLASSES)[((FEATURES["age"][:, 0] > 40) ^ (FEATURES["workclass"][:, 0] == "Gov")).astype(int)]

workclass = tf.feature_column.categorical_column_with_vocabulary_list("workclass", WORKCLASSES)
occupation = tf.feature_column.categorical_column_with_hash_bucket("occupation", hash_bucket_size=20)
age = tf.feature_column.numeric_column("age")
INPUT_COLUMNS = [workclass, occupation, age]


def generate_model_fn(embedding_size=3, hidden_units=None, learning_rate=0.01):
  """The model_fn, its sizes given."""

  def _model_fn(mode, features, labels):
    columns = [tf.feature_column.indicator_column(workclass),
               tf.feature_column.embedding_column(occupation, dimension=embedding_size),
               age]
    inputs = tf.feature_column.input_layer(features, columns)
    for units in hidden_units:
      inputs = tf.layers.dense(inputs, units, activation=tf.nn.relu)
    logits = tf.layers.dense(inputs, len(CLASSES))
    predicted_indices = tf.argmax(logits, 1)
    if mode == tf.estimator.ModeKeys.PREDICT:
      predictions = {"classes": predicted_indices, "probabilities": tf.nn.softmax(logits)}
      export_outputs = {"prediction": tf.estimator.export.PredictOutput(predictions)}
      return tf.estimator.EstimatorSpec(mode, predictions=predictions, export_outputs=export_outputs)
    table = tf.contrib.lookup.index_table_from_tensor(tf.constant(CLASSES))
    label_indices = table.lookup(labels)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(logits=logits, labels=label_indices))
    if mode == tf.estimator.ModeKeys.TRAIN:
      optimizer = tf.train.AdamOptimizer(learning_rate)
      train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
      return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)
    eval_metric_ops = {"accuracy": tf.metrics.accuracy(label_indices, predicted_indices)}
    return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops=eval_metric_ops)

  return _model_fn


def json_serving_input_fn():
  inputs = {"age": tf.placeholder(tf.float32, [None]),
            "workclass": tf.placeholder(tf.string, [None]),
            "occupation": tf.placeholder(tf.string, [None])}
  features = {key: tf.expand_dims(tensor, -1) for key, tensor in inputs.items()}
  return tf.estimator.export.ServingInputReceiver(features, inputs)


def example_serving_input_fn():
  examples = tf.placeholder(tf.string, [None])
  features = tf.parse_example(examples, tf.feature_column.make_parse_example_spec(INPUT_COLUMNS))
  return tf.estimator.export.ServingInputReceiver(features, {"example_proto": examples})


def input_fn():
  return tf.data.Dataset.from_tensor_slices((FEATURES, LABELS)).repeat().batch(16)


def eval_input_fn():
  return tf.data.Dataset.from_tensor_slices((FEATURES, LABELS)).batch(32)


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--model-dir", default="/tmp/vocabulary_export")
  parser.add_argument("--train-steps", type=int, default=30)
  args = parser.parse_args()
  estimator = tf.estimator.Estimator(generate_model_fn(hidden_units=[8]), model_dir=args.model_dir)
  exporters = [tf.estimator.LatestExporter("json", json_serving_input_fn),
               tf.estimator.LatestExporter("example", example_serving_input_fn)]
  metrics, _ = tf.estimator.train_and_evaluate(
      estimator,
      tf.estimator.TrainSpec(input_fn, max_steps=args.train_steps),
      tf.estimator.EvalSpec(eval_input_fn, steps=None, exporters=exporters, throttle_secs=1))
  print("accuracy %s" % metrics["accuracy"])


if __name__ == "__main__":
  main()
