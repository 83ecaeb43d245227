"""The TensorFlow "Creating custom Estimators" tutorial's program, in TensorFlow 1 (iris-like data inline).

Numeric feature columns built at module level and handed to the model_fn through
``params``, read with ``tf.compat.v1.feature_column.input_layer``; hidden layers
made in a ``for`` loop over ``params["hidden_units"]``; ``numpy_input_fn`` inputs;
``Estimator.train(steps=...)`` then ``evaluate``.

Run: python tests/parity_programs/custom_estimator_tf1.py
"""
import random
import shutil
import tempfile

import numpy as np
import tensorflow as tf

rng = np.random.RandomState(3)
labels = rng.randint(0, 3, size=60)
centres = rng.normal(scale=2.0, size=(3, 4))
measures = (centres[labels] + rng.normal(size=(60, 4))).astype(np.float32)
columns = {"SepalLength": measures[:, 0], "SepalWidth": measures[:, 1], "Petal": measures[:, 2:]}

feature_columns = [
    tf.feature_column.numeric_column(key="SepalLength"),
    tf.feature_column.numeric_column(key="SepalWidth"),
    tf.feature_column.numeric_column(key="Petal", shape=(2,)),
]

train_input_fn = tf.compat.v1.estimator.inputs.numpy_input_fn(
    x=columns, y=labels, batch_size=12, num_epochs=None, shuffle=False)
eval_input_fn = tf.compat.v1.estimator.inputs.numpy_input_fn(
    x=columns, y=labels, batch_size=20, shuffle=False)


def my_model(features, labels, mode, params):
  net = tf.compat.v1.feature_column.input_layer(features, params["feature_columns"])
  for units in params["hidden_units"]:
    net = tf.compat.v1.layers.dense(net, units=units, activation=tf.nn.relu)
  logits = tf.compat.v1.layers.dense(net, params["n_classes"], activation=None)
  loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
  optimizer = tf.compat.v1.train.AdagradOptimizer(learning_rate=0.1)
  train_op = optimizer.minimize(loss, global_step=tf.compat.v1.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


random.seed(42)
model_dir = tempfile.mkdtemp()
classifier = tf.estimator.Estimator(
    model_fn=my_model, model_dir=model_dir,
    config=tf.estimator.RunConfig(tf_random_seed=42),
    params={"feature_columns": feature_columns, "hidden_units": [10, 10], "n_classes": 3})
classifier.train(input_fn=train_input_fn, steps=20)
eval_result = classifier.evaluate(input_fn=eval_input_fn)
print("eval loss: %s" % eval_result["loss"])
shutil.rmtree(model_dir)
