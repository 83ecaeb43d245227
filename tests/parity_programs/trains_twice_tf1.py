"""A notebook's habit: train, evaluate and export a model, then train a bigger one under the same name (a longer run,
another model_dir). The parity harness compares the first."""
import numpy as np
import tensorflow.compat.v1 as tf

rng = np.random.RandomState(0)
X = rng.uniform(-1, 1, size=(256, 2)).astype(np.float32)
Y = (X[:, :1] * 3.0 - X[:, 1:] + 0.5).astype(np.float32)
COLUMNS = [tf.feature_column.numeric_column("a"), tf.feature_column.numeric_column("b")]


def input_fn(training):
    dataset = tf.data.Dataset.from_tensor_slices(({"a": X[:, :1], "b": X[:, 1:]}, Y))
    if training:
        dataset = dataset.shuffle(256, seed=1).repeat()
    return dataset.batch(32)


def serving_input_fn():
    inputs = {"a": tf.placeholder(tf.float32, [None, 1]), "b": tf.placeholder(tf.float32, [None, 1])}
    return tf.estimator.export.ServingInputReceiver(inputs, inputs)


model = tf.estimator.DNNRegressor(hidden_units=[8], feature_columns=COLUMNS, model_dir="short_run")
train_spec = tf.estimator.TrainSpec(input_fn=lambda: input_fn(True), max_steps=50)
eval_spec = tf.estimator.EvalSpec(input_fn=lambda: input_fn(False), steps=None,
                                  exporters=tf.estimator.FinalExporter("exporter", serving_input_fn))
tf.estimator.train_and_evaluate(model, train_spec, eval_spec)

model = tf.estimator.DNNRegressor(hidden_units=[16, 8], feature_columns=COLUMNS, model_dir="long_run")
train_spec = tf.estimator.TrainSpec(input_fn=lambda: input_fn(True), max_steps=500)
eval_spec = tf.estimator.EvalSpec(input_fn=lambda: input_fn(False), steps=None,
                                  exporters=tf.estimator.FinalExporter("exporter", serving_input_fn))
tf.estimator.train_and_evaluate(model, train_spec, eval_spec)
